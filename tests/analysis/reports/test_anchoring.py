"""Anchoring numbers, checked against values worked out by hand."""

from __future__ import annotations

import math

from analysis.reports.anchoring import build
from db.repositories.preannotation import AnchoringUnit

# Tokens of the response: aa [0] · bb [1] · cc [2] · dd [3] · ee [4] (characters 0-2, 3-5, 6-8, 9-11, 12-14).
TEXT = "aa bb cc dd ee"


def _spans(annotator: str, item: str, detector_spans, annotator_spans) -> AnchoringUnit:
    return AnchoringUnit(
        annotator, "D", "spans", item, TEXT, detector_spans=detector_spans, annotator_spans=annotator_spans
    )


def _sentences(annotator: str, draft: dict[int, str], now: dict[int, str]) -> AnchoringUnit:
    return AnchoringUnit(annotator, "S", "sentences", "i1", TEXT, detector_labels=draft, annotator_labels=now)


def test_span_and_sentence_anchoring_by_hand() -> None:
    units = [
        # i1: "aa bb" kept as is; "dd" widened to "dd ee" (tokens [3,5) vs [3,4): IoU 1/2, still matched,
        # changed); "cc" added. M = 2 of 3 + 2 spans: F1 = 4/5; matched IoUs 1 and 1/2.
        _spans("A", "i1", ((0, 5, "X"), (9, 11, "Y")), ((0, 5, "X"), (6, 8, None), (9, 14, "Y"))),
        # i2: the detector's "bb" removed: F1 = 0.
        _spans("A", "i2", ((3, 5, "X"),), ()),
        # i3: nothing on either side: F1 = 1 (both lists empty).
        _spans("A", "i3", (), ()),
        # B kept the one span but retyped it: matched at IoU 1, changed.
        _spans("B", "i1", ((0, 2, "X"),), ((0, 2, "Z"),)),
        _sentences("A", {0: "incorrect", 1: "correct", 2: "correct"}, {0: "incorrect", 1: "incorrect"}),
        _sentences("B", {0: "correct"}, {0: "correct", 1: "unknown"}),
    ]
    report = build(units, "tiny")
    spans = report.tables["spans"].frame.set_index("annotator")
    a = spans.loc["A"]
    assert (a["items"], a["detector spans"], a["kept"], a["changed"], a["removed"], a["added"]) == (
        3,
        3,
        1,
        1,
        1,
        1,
    )
    assert math.isclose(a["F1_IoU"], 100 * (0.8 + 0 + 1) / 3)
    assert math.isclose(a["mean IoU"], 75.0)
    b = spans.loc["B"]
    assert (b["kept"], b["changed"], b["removed"], b["added"], b["F1_IoU"], b["mean IoU"]) == (
        0,
        1,
        0,
        0,
        100.0,
        100.0,
    )
    sentences = report.tables["sentences"].frame.set_index("annotator")
    assert sentences.loc["A", ["draft labels", "kept", "changed", "unlabeled"]].tolist() == [3, 1, 1, 1]
    assert sentences.loc["A", "kept (%)"] == 50.0
    assert sentences.loc["B", ["draft labels", "kept", "changed", "unlabeled", "kept (%)"]].tolist() == [
        1,
        1,
        0,
        0,
        100.0,
    ]
    assert report.provenance.n_items == 3
    assert report.provenance.label_sets == ("A", "B", "Detector · D", "Detector · S")


def test_no_preannotation_says_so() -> None:
    report = build([], "tiny")
    assert report.tables == {} and report.notes == (
        "No annotator has started an item from a detector on this dataset.",
    )
