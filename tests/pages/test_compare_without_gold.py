"""The comparison and failure pages on a dataset with detector runs and no gold label set.

The comparison page once drew a "Gold · 0 gold span(s)" track and scored each run against it (F1_IoU
0.00, every span a red false positive), and the failure finder listed F1 columns of zeros and presets
that could find nothing. Without gold both now leave out what is measured against gold, keep each
run's own output, and say in one line what is not shown and where gold comes from.
"""

from __future__ import annotations

import re
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
SCORED = ("F1", "false positive", "missed", "matched")  # words of a measure against gold


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


def test_compare_without_gold_shows_each_runs_output_and_no_scores(no_gold_db: str) -> None:
    at = _open("app_pages/compare.py", item="a")
    _says_no_gold(at)
    assert not any("gold" in w.value for w in at.warning), [w.value for w in at.warning]
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["d1", "d2"]  # no empty gold track
    heads = [m.value for m in at.markdown if m.value.startswith("**d")]
    assert heads == ["**d1** · 1 span(s) · format ✓", "**d2** · 2 span(s) · format ✓"]
    assert 'title="d2 · pred #2 «table» · type: Object"' in _html(at)  # the run's spans, explained
    assert "hs-fate-" not in _html(at) and "hs-legend" not in _html(at)
    assert not any(word in _text(at) for word in SCORED), _text(at)
    assert not [b for b in at.button if "F1" in b.label] and not at.toggle
    grid = next(d.value for d in at.dataframe if "sentence" in d.value.columns)
    assert list(grid.columns) == ["#", "sentence", "judge"] and list(grid["judge"]) == [20.0, 80.0]
    next(b for b in at.button if b.label == "Next item ▶").click().run()
    assert not at.exception, at.exception
    heads = [m.value for m in at.markdown if m.value.startswith("**d")]
    assert heads == ["**d1** · 0 span(s) · format ✓", "**d2** · 1 span(s) · format ✓"]


def test_compare_with_gold_scores_as_before(gold_db: str) -> None:
    at = _open("app_pages/compare.py", item="a")
    assert not any("no gold label set" in i.value for i in at.info)
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["Gold", "d1", "d2"]
    heads = [m.value for m in at.markdown if m.value.startswith("**d")]
    assert heads[0].startswith("**d1** · F1_IoU 1.00 · F1_M 1.00 · format ✓ · 1 span(s): 1 matched")
    assert "hs-fate-matched" in _html(at) and "hs-fate-false-positive" in _html(at)
    assert [b.label for b in at.button if "F1" in b.label] == ["Best F1_IoU first", "Worst F1_IoU first"]
    grid = next(d.value for d in at.dataframe if "sentence" in d.value.columns)
    assert "gold" in grid.columns


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
