"""The comparison and failure pages on a dataset with detector runs and no gold label set.

The failure finder listed F1 columns of zeros and presets that could find nothing; without gold it now
leaves out what is measured against gold, keeps each run's own output, and says in one line what is
not shown and where gold comes from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceScoreRecord,
    SpanRecord,
)
from tests.pages.conftest import serve

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DATASET = "runs only"
TIMEOUT = 30
RESPONSE = "A red cube sits on a table. It is blue."


def runs(*, gold: bool = False) -> Bundle:
    """Two span runs (d1, d2) and a run of sentence scores (judge) on two items; gold only if asked."""
    items = [
        ItemRecord(external_id="a", response=RESPONSE, prompt="What is shown?"),
        ItemRecord(external_id="b", response="Two dogs play.", prompt="What is shown?"),
    ]
    d1 = [Annotations(item="a", spans=[SpanRecord(2, 5)]), Annotations(item="b", spans=[])]
    d2 = [
        Annotations(item="a", spans=[SpanRecord(6, 10), SpanRecord(21, 26, "Object")]),
        Annotations(item="b", spans=[SpanRecord(4, 8)]),
    ]
    judge = [
        Annotations(item="a", sentence_scores=[SentenceScoreRecord(0, 20.0), SentenceScoreRecord(1, 80.0)])
    ]
    label_sets = [
        LabelSetRecord(kind="detector", name="d1", annotations=d1),
        LabelSetRecord(kind="detector", name="d2", annotations=d2),
        LabelSetRecord(kind="detector", name="judge", annotations=judge),
    ]
    if gold:
        gold_spans = [Annotations(item="a", spans=[SpanRecord(2, 5)]), Annotations(item="b", spans=[])]
        label_sets.insert(0, LabelSetRecord(kind="gold", name="gold", annotations=gold_spans))
    return Bundle(
        dataset=DatasetRecord(DATASET, "canonical", label_kinds=["span", "sentence"]),
        items=items,
        label_sets=label_sets,
    )


@pytest.fixture
def no_gold_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    return serve(sqlite_url, runs(), monkeypatch)


@pytest.fixture
def gold_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    return serve(sqlite_url, runs(gold=True), monkeypatch)


def _open(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = DATASET
    at.run()
    at.query_params.update(query)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _html(at: AppTest) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def _text(at: AppTest) -> str:
    """Everything the page wrote as Markdown, captions and warnings (not the message about gold)."""
    return "\n".join(e.value for kind in ("markdown", "caption", "warning") for e in at.get(kind))


def _says_no_gold(at: AppTest) -> None:
    said = [i.value for i in at.info if "no gold label set" in i.value]
    assert len(said) == 1 and "not shown" in said[0] and "import" in said[0], said
    links = {link.proto.page for link in at.get("page_link")}
    assert {"import_data", "adjudicate"} <= links, links


def test_compare_says_the_dataset_has_no_gold(no_gold_db: str) -> None:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["dataset"] = DATASET
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    said = [w.value for w in at.warning]
    assert any("no gold label set" in w for w in said), said


def test_failures_without_gold_count_spans_and_score_nothing(no_gold_db: str) -> None:
    at = _open("app_pages/failures.py")
    _says_no_gold(at)
    assert not at.warning
    table = at.dataframe[0].value
    assert list(table.columns) == ["item", "disagreement", "d1 · spans", "d2 · spans", "format failures"] + [
        "subset",
        "source model",
    ]
    assert list(table["d1 · spans"]) == [1, 0] and list(table["d2 · spans"]) == [2, 1]
    preset = next(s for s in at.selectbox if s.label == "Preset")
    assert preset.options == ["All items", "Format failures"]
    labels = [w.label for kind in ("selectbox", "multiselect") for w in at.get(kind)]
    assert "…misses what Y finds" not in labels and "Hallucination type present" not in labels
    # Disagreement is 1 − F1_IoU between two runs, and its caption says so; nothing else names a score.
    assert "F1 values" not in _text(at) and "false positive" not in _text(at), _text(at)


def test_failures_without_gold_name_a_links_preset_that_needs_gold(no_gold_db: str) -> None:
    at = _open("app_pages/failures.py", preset="clean-flagged")
    assert any("needs a gold label set" in w.value for w in at.warning), [w.value for w in at.warning]
    assert list(at.dataframe[0].value["item"]) == ["a", "b"]
    assert "preset" not in at.query_params


def test_failures_with_gold_score_as_before(gold_db: str) -> None:
    at = _open("app_pages/failures.py")
    assert not any("no gold label set" in i.value for i in at.info)
    table = at.dataframe[0].value
    assert {"d1 · F1_IoU", "d1 · FP", "gold spans", "clean"} <= set(table.columns)
    assert len(next(s for s in at.selectbox if s.label == "Preset").options) == 5
