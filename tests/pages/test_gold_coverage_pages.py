"""A response MHALO gold leaves untagged has no hallucination: covered by gold, its sentences correct."""

from __future__ import annotations

import json
import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.sentence_labels import shown_sentence_labels
from db.access import OPERATOR
from db.engine import make_engine
from db.importer import import_bundle
from formats.mhalo import FORMAT
from tests.pages.demo_store import APP

RECORDS = [
    {
        "question": "What is on the table?",
        "test_solution": "A red cube is on the table. A ball lies next to it.",
        "hallucinated_solution": "A <hallucination>red</hallucination> cube is on the table. A ball lies next to it.",
    },
    {
        "question": "What colour is the ball?",
        "test_solution": "The ball is blue. It sits on the floor.",
        "hallucinated_solution": "The ball is blue. It sits on the floor.",  # no tag: no hallucination
    },
]


@pytest.fixture
def mhalo_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    engine = make_engine(sqlite_url)
    result = FORMAT.read(json.dumps(RECORDS).encode(), source="tiny_mhalo.json")
    assert result.bundle is not None and not result.errors
    import_bundle(engine, result.bundle, actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    return sqlite_url


def _sentence_labels(at: AppTest) -> list[str]:
    body = "\n".join(element.proto.body for element in at.get("html"))
    return re.findall(r'<li class="hs-sentence" data-label="([^"]*)"', body)


def _open(page: str, item: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": "tiny_mhalo", "item": item, "user": "tester"})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_home_counts_the_clean_item_as_gold_covered(mhalo_db: str) -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception, at.exception
    (progress,) = at.get("progress")
    assert progress.proto.text.endswith(
        "0 / 2 items marked done by at least one annotator on some task · gold on 2"
    ), progress.proto.text


def test_item_view_shows_the_sentences_of_a_clean_item_as_correct(mhalo_db: str) -> None:
    at = _open("app_pages/item.py", "tiny_mhalo-1")
    assert _sentence_labels(at) == ["correct", "correct"]
    at = _open("app_pages/item.py", "tiny_mhalo-0")  # the tagged one: its span's sentence is wrong
    assert _sentence_labels(at) == ["incorrect", "correct"]


def test_label_sentences_shows_gold_on_a_clean_item(mhalo_db: str) -> None:
    at = _open("app_pages/sentences.py", "tiny_mhalo-1")
    at.sidebar.toggle[0].set_value(True).run()
    captions = [c.value for c in at.caption if c.value.startswith(("▶ Sentence", "Sentence"))]
    assert len(captions) == 2 and all("gold: correct" in c for c in captions), captions


def test_shown_sentence_labels() -> None:
    sentences = [(0, 10), (11, 20)]
    assert shown_sentence_labels(sentences, {}, [], False) == [None, None]
    assert shown_sentence_labels(sentences, {}, [], True) == ["correct", "correct"]
    assert shown_sentence_labels(sentences, {}, [(12, 14)], True) == ["correct", "incorrect"]
    # A label set that labels sentences itself is taken at its word.
    assert shown_sentence_labels(sentences, {1: "unknown"}, [(0, 2)], True) == [None, "unknown"]
