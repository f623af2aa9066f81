"""Counts on the progress views read with a thousands separator, as the home card's always did: the
annotation pages said "0 / 1234 done" beside a home card's "1,234", and the locked note, shared by
both, lost the separator the card had given it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from components.annotation_frame import locked_words
from db.access import OPERATOR
from db.engine import make_engine
from db.transfer import import_file
from tests.pages.demo_store import APP

N_ITEMS = 1_234


def test_the_locked_note_counts_with_a_separator() -> None:
    assert locked_words(1) == "1 locked: gold was shown to you"
    assert locked_words(1_234) == "1,234 locked: gold was shown to you"


@pytest.fixture
def big_store(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    lines = [{"record": "dataset", "format_version": 1, "name": "big", "source_format": "canonical"}] + [
        {"record": "item", "external_id": f"i{k:04}", "response": "A cat. A dog."} for k in range(N_ITEMS)
    ]
    engine = make_engine(sqlite_url)
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    assert import_file(engine, data, actor=OPERATOR, source="big.jsonl").ok
    engine.dispose()
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return sqlite_url


def test_an_annotation_pages_bar_counts_with_a_separator(big_store: str) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"dataset": "big", "item": "i0000", "user": "tester"})
    at.run()
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    assert [p.proto.text for p in at.get("progress")] == ["0 / 1,234 done"]
