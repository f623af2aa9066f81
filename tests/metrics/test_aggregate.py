"""Dataset-level tables (MHALO Table 3) and accuracy on clean responses (MHALO section 5.3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metrics import aggregate_spans, clean_response_accuracy, f1_iou, f1_m, pack_spans, span_detection_table
from tests.metrics.metric_reference import span_lists


def test_hand_computed_table():
    subsets = ["A", "A", "B"]
    golds = [[(0, 2)], [(3, 4)], []]
    preds = [[(1, 2), (4, 5)], None, []]
    ok = [True, False, True]
    table = span_detection_table(subsets, preds, golds, ok)
    assert list(table) == ["A", "B", "overall"]
    assert table["A"] == {"f1_m": 0.0, "f1_iou": pytest.approx(1 / 3), "if_rate": 0.5, "n": 2}
    assert table["B"] == {"f1_m": 1.0, "f1_iou": 1.0, "if_rate": 1.0, "n": 1}
    # Overall pools items (MHALO's "Average" is item-weighted), it does not average the subsets.
    assert table["overall"]["f1_iou"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert table["overall"]["f1_m"] == pytest.approx(1 / 3)
    assert table["overall"]["if_rate"] == pytest.approx(2 / 3)
    assert table["overall"]["n"] == 3


def test_mhalo_average_column_is_item_weighted():
    # HALODET-4B, MHALO Table 3: per-subset F1_M of 500, 500, 500, 500 and 155 items average to 63.01.
    subset_scores = {"RLHF-V": 49.11, "M-HalDetect": 56.49, "Geo170K": 70.64, "MathV360K": 73.39, "MC": 70.77}
    sizes = {"RLHF-V": 500, "M-HalDetect": 500, "Geo170K": 500, "MathV360K": 500, "MC": 155}
    pooled = sum(subset_scores[s] * sizes[s] for s in sizes) / sum(sizes.values())
    assert round(pooled, 2) == 63.01
    assert round(np.mean(list(subset_scores.values())), 2) != 63.01


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["x", "y", 3]), span_lists, span_lists, st.booleans()),
        min_size=1,
        max_size=15,
    )
)
def test_equals_per_item_definition(rows):
    subsets = [r[0] for r in rows]
    preds = [r[1] for r in rows]
    golds = [r[2] for r in rows]
    ok = [r[3] for r in rows]
    table = span_detection_table(subsets, preds, golds, ok, threshold=0.5)
    for name in [*dict.fromkeys(subsets), "overall"]:
        members = [r for r in rows if name == "overall" or r[0] == name]
        assert table[name]["n"] == len(members)
        assert table[name]["f1_m"] == pytest.approx(
            np.mean([f1_m(p, g) if f else 0.0 for _, p, g, f in members])
        )
        assert table[name]["f1_iou"] == pytest.approx(
            np.mean([f1_iou(p, g) if f else 0.0 for _, p, g, f in members])
        )
        assert table[name]["if_rate"] == pytest.approx(np.mean([f for *_, f in members]))


def test_gold_can_be_packed_once():
    golds = pack_spans([[(0, 1)], [(2, 3)]])
    table = span_detection_table(["s", "s"], [[(0, 1)], []], golds, [True, True])
    assert table["s"]["f1_iou"] == 0.5


class TestErrors:
    def test_no_items(self):
        with pytest.raises(ValueError, match="no items"):
            span_detection_table([], [], [], [])

    def test_reserved_subset_name(self):
        with pytest.raises(ValueError, match="reserved"):
            span_detection_table(["overall"], [[]], [[]], [True])

    def test_missing_prediction_of_a_well_formed_output(self):
        with pytest.raises(ValueError, match=r"preds\[0\] is None"):
            span_detection_table(["a"], [None], [[]], [True])

    def test_lengths(self):
        with pytest.raises(ValueError, match="preds"):
            span_detection_table(["a", "a"], [[]], [[], []], [True, True])
        with pytest.raises(ValueError, match="golds"):
            span_detection_table(["a"], [[]], [[], []], [True])
        with pytest.raises(ValueError, match="follows_format"):
            span_detection_table(["a"], [[]], [[]], [True, True])

    def test_unhashable_subset(self):
        with pytest.raises(ValueError, match="hashable"):
            span_detection_table([["a"]], [[]], [[]], [True])


@dataclass
class Row:
    subset: str
    pred_spans: list | None
    gold_spans: list
    follows_format: bool


def test_aggregate_spans_reads_dicts_and_objects():
    rows = [
        {"subset": "a", "pred_spans": [(0, 2)], "gold_spans": [(0, 2)], "follows_format": True},
        Row("a", None, [(0, 1)], False),
    ]
    table = aggregate_spans(rows)
    assert table["a"] == {"f1_m": 0.5, "f1_iou": 0.5, "if_rate": 0.5, "n": 2}
    with pytest.raises(ValueError, match=r"items\[0\] lacks gold_spans"):
        aggregate_spans([{"subset": "a", "follows_format": True}])


class TestCleanResponseAccuracy:
    def test_right_only_when_nothing_is_flagged(self):
        golds = [[], [], [], [(0, 1)]]
        preds = [[], [(2, 3)], None, [(0, 1)]]
        ok = [True, True, False, True]
        # Clean items: 0 (right), 1 (flagged something), 2 (format failure counts as wrong).
        assert clean_response_accuracy(preds, golds, ok) == pytest.approx(1 / 3)

    def test_without_format_flags(self):
        assert clean_response_accuracy([[], [(0, 1)]], [[], []]) == 0.5

    def test_needs_a_clean_item(self):
        with pytest.raises(ValueError, match="no item without gold spans"):
            clean_response_accuracy([[]], [[(0, 1)]])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(span_lists, st.booleans(), st.booleans()), min_size=1, max_size=10))
def test_clean_accuracy_of_packed_spans_equals_that_of_lists(rows):
    preds = [p for p, _, _ in rows]
    golds = [[] if clean else [(0, 1)] for _, clean, _ in rows]
    ok = [good for _, _, good in rows]
    assume(any(clean for _, clean, _ in rows))
    assert clean_response_accuracy(pack_spans(preds), pack_spans(golds), ok) == clean_response_accuracy(
        preds, golds, ok
    )
