"""Which detector runs MHALO's Table 3 scores: those that can locate spans.

A run of sentence scores alone has no span to score: scored as a span detector, it would read as one
that flagged nothing (perfect on every clean item). It is left out of the span tables, and a note says
so. An output that joins two words at a tag does not follow MHALO's format and scores 0 (section 4.1).
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
    items = [ItemRecord(external_id=ext, response=RESPONSE, subset="MC") for ext in ("a", "b")]
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[Annotations(ext, spans=[SpanRecord(23, 26)]) for ext in ("a", "b")],  # "red"
    )
    scores = LabelSetRecord(
        kind="detector",
        name="scorer",
        annotations=[Annotations(ext, sentence_scores=[SentenceScoreRecord(0, 20.0)]) for ext in "ab"],
    )
    dataset = DatasetRecord(name="bench", source_format="canonical", label_kinds=["span", "sentence"])
    import_bundle(engine, Bundle(dataset, items=items, label_sets=[gold, scores]), actor=OPERATOR)
    tagged = "<Tagged_Text>A man is sitting on a <hallucination>red</hallucination> bench.</Tagged_Text>"
    joined = "<Tagged_Text>A man is<hallucination>sitting</hallucination> on a red bench.</Tagged_Text>"
    run = import_predictions(
        engine,
        json.dumps([{"id": "a", "output": tagged}, {"id": "b", "output": joined}]).encode(),
        actor=OPERATOR,
        source="tagger.json",
        dataset="bench",
        detector="tagger",
        format_name="mhalo-outputs",
    )
    assert run.ok, run.problems
    return next(d.id for d in list_datasets(engine) if d.name == "bench")


def test_a_run_without_spans_is_left_out_and_named(engine) -> None:
    inputs = load_span_inputs(engine, _store(engine))
    report = mhalo.build(inputs, ReportFilter())
    table = report.tables["table3"].frame.set_index("detector")
    assert list(table.index) == ["tagger"]  # the sentence scorer has no spans to score
    # a: exact (1.0); b joins two words at a tag: not MHALO's format, 0.
    assert table.at["tagger", "Average · IF"] == pytest.approx(50)
    assert table.at["tagger", "Average · F1_IoU"] == pytest.approx(50)
    assert report.notes == (
        "Not in these tables (no spans or tagged outputs, so nothing to score as spans): scorer.",
    )
    assert [d.name for d in inputs.spans.span_detectors] == ["tagger"]


def test_the_note_names_only_the_runs_the_filter_keeps(engine) -> None:
    inputs = load_span_inputs(engine, _store(engine))
    assert mhalo.build(inputs, ReportFilter(detectors=("tagger",))).notes == ()
