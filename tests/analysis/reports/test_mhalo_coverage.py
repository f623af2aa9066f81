"""Which runs MHALO's Table 3 scores, and how it scores an item a run gave no answer on.

MHALO (section 4.1) scores a sample the model did not accomplish as 0 and counts it against IF; an item
a text-answering run left without any output is such a sample, not a clean "flagged nothing". A run of
sentence scores alone locates no spans: it is left out of the span tables, and a note says so.
"""

from __future__ import annotations

import json

import pytest

from analysis.reports import mhalo
from analysis.reports.data import ReportFilter
from analysis.reports.spans import load_span_inputs
from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.datasets import list_datasets
from db.transfer import import_predictions
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceScoreRecord,
    SpanRecord,
)

RESPONSE = "A man is sitting on a red bench."


def _store(engine) -> int:
    items = [ItemRecord(external_id=ext, response=RESPONSE, subset="MC") for ext in ("a", "b", "c")]
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[Annotations(ext, spans=[SpanRecord(23, 26)]) for ext in ("a", "b", "c")],  # "red"
    )
    scores = LabelSetRecord(
        kind="detector",
        name="scorer",
        annotations=[Annotations(ext, sentence_scores=[SentenceScoreRecord(0, 20.0)]) for ext in "abc"],
    )
    dataset = DatasetRecord(name="bench", source_format="canonical", label_kinds=["span", "sentence"])
    import_bundle(engine, Bundle(dataset, items=items, label_sets=[gold, scores]), actor=OPERATOR)
    tagged = "<Tagged_Text>A man is sitting on a <hallucination>red</hallucination> bench.</Tagged_Text>"
    joined = "<Tagged_Text>A man is<hallucination>sitting</hallucination> on a red bench.</Tagged_Text>"
    outputs = [{"id": "a", "output": tagged}, {"id": "b", "output": joined}]  # none for c
    run = import_predictions(
        engine,
        json.dumps(outputs).encode(),
        actor=OPERATOR,
        source="tagger.json",
        dataset="bench",
        detector="tagger",
        format_name="mhalo-outputs",
    )
    assert run.ok, run.problems
    return next(d.id for d in list_datasets(engine) if d.name == "bench")


def test_an_item_without_an_output_scores_zero_and_a_run_without_spans_is_left_out(engine) -> None:
    inputs = load_span_inputs(engine, _store(engine))
    report = mhalo.build(inputs, ReportFilter())
    table = report.tables["table3"].frame.set_index("detector")
    assert list(table.index) == ["tagger"]  # the sentence scorer has no spans to score
    # a: exact (1.0); b joins two words at a tag: not MHALO's format, 0; c: no output at all, 0.
    assert table.at["tagger", "Average · IF"] == pytest.approx(100 / 3)
    assert table.at["tagger", "Average · F1_IoU"] == pytest.approx(100 / 3)
    assert table.at["tagger", "Average · F1_M"] == pytest.approx(100 / 3)
    assert report.notes == (
        "tagger gave no output on 1 of these 3 items: each scores 0 there and counts against its IF, "
        "as a failed output does.",
        "Not in these tables (no spans or tagged outputs, so nothing to score as spans): scorer.",
    )
    spans = inputs.spans
    assert [spans.answered(spans.span_detectors[0].id, k) for k in range(3)] == [True, True, False]


def test_the_notes_name_only_the_runs_the_filter_keeps(engine) -> None:
    inputs = load_span_inputs(engine, _store(engine))
    report = mhalo.build(inputs, ReportFilter(detectors=("tagger",)))
    assert report.notes[0].startswith("tagger gave no output on 1 of these 3 items")
    assert len(report.notes) == 1  # the scorer is filtered away, so not named as left out
