"""Tri-HE on the Item and Compare pages: an item's response is the benchmark's reference answer, and a
model's run brings its own answer with the triplets extracted from it. Shown side by side as "Response"
and "Extracted", the reference answer read as the text the model's triplets came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db.access import OPERATOR
from db.engine import make_engine
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set
from db.repositories.labeling import add_span
from db.transfer import import_file, import_predictions

APP = str(Path(__file__).resolve().parents[2] / "app.py")
REFERENCE = "The lamp is on because the room is dark."
ANSWER = "A **cat** <b>sleeps</b> on the bed."  # the model's words, shown as written
UNTRIPLED = "I cannot say."  # an answer the run extracted no triplet from
BENCHMARK: dict[str, Any] = {
    "2374892": {
        "instance": [
            {"question": "Why is the room lit?", "answer": REFERENCE, "triplet": ["(lamp, is, on)"]},
            {"question": "Is it night?", "answer": "Yes, it is night.", "triplet": ["(sky, is, dark)"]},
        ],
        "triplets": ["(lamp, on, desk)"],
        "all_object": ["lamp", "desk"],
        "object": ["lamp"],
    }
}


def _with_run(benchmark: dict[str, Any]) -> dict[str, Any]:
    run: dict[str, Any] = json.loads(json.dumps(benchmark))
    first, second = run["2374892"]["instance"]
    first.update(
        {"llava": ANSWER, "llava_triplets": ["(cat, sleeps on, bed)"], "llava_triplets_judgements": ["no"]}
    )
    second.update({"llava": UNTRIPLED, "llava_triplets": [], "llava_triplets_judgements": []})
    return run


@pytest.fixture
def trihe_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    engine = make_engine(sqlite_url)
    data = json.dumps(BENCHMARK).encode()
    found = import_file(engine, data, actor=OPERATOR, source="tri-he.json", format_name="trihe")
    assert found.ok and found.dataset, found.problems
    run = import_predictions(
        engine,
        json.dumps(_with_run(BENCHMARK)).encode(),
        actor=OPERATOR,
        source="llava.json",
        dataset=found.dataset,
        detector="llava",
        format_name="trihe-judgments",
    )
    assert run.ok, run.problems
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return found.dataset


def _texts(at: AppTest) -> str:
    return "\n".join([m.value for m in [*at.markdown, *at.caption]] + [h.proto.body for h in at.get("html")])


def _opened(page: str, dataset: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": dataset, **query})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_the_item_page_calls_the_response_the_reference_and_shows_the_runs_answer(trihe_db: str) -> None:
    at = _opened("app_pages/item.py", trihe_db)
    texts = _texts(at)
    assert "**Reference answer**" in texts
    # The run judged its own answer: no "Spans of" picker offers its (no) spans over the reference.
    assert "span(s) from" not in texts
    assert not [box for box in at.selectbox if box.label == "Spans of"]
    assert "**Response**" not in texts
    assert "**Extracted · Detector · llava**" in texts
    assert "**Its answer**" in texts
    assert "A **cat** &lt;b&gt;sleeps&lt;/b&gt; on the bed." in texts  # literal, not rendered
    assert "A <b>sleeps" not in texts


def test_compare_calls_the_response_the_reference(trihe_db: str) -> None:
    assert "**Reference answer**" in _texts(_opened("app_pages/compare.py", trihe_db))


def test_a_runs_answer_is_shown_where_it_gave_no_triplet(trihe_db: str) -> None:
    """Its answer was found only in the raw output: with no triplet, the run had no section at all."""
    texts = _texts(_opened("app_pages/item.py", trihe_db, item="2374892/1"))
    assert "**Extracted · Detector · llava**" in texts
    assert UNTRIPLED in texts
    assert "No triplet extracted from this answer." in texts


def test_spans_marked_on_the_reference_answer_are_still_offered(trihe_db: str, sqlite_url: str) -> None:
    """A label set without an answer of its own (a person's spans on the reference) marks the reference."""
    engine = make_engine(sqlite_url)
    ann = get_or_create_annotator(engine, "ann")
    dataset = get_dataset(engine, trihe_db)
    assert dataset is not None
    item = get_item(engine, dataset.id, "2374892/0")
    assert item is not None
    add_span(engine, human_label_set(engine, dataset.id, ann.id).id, item.id, 4, 8, None, ann.id)
    engine.dispose()
    at = _opened("app_pages/item.py", trihe_db)
    assert [box.options for box in at.selectbox if box.label == "Spans of"] == [["Annotator · ann"]]
    assert "**Reference answer** · 1 span(s) from Annotator · ann" in _texts(at)
