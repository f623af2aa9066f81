"""Segment localization (AlignBench Table 5 precision at IoU 0.3, Table H mean IoU)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import localization_precision, mean_iou
from tests.metrics.metric_reference import iou, span_lists


class TestLocalizationPrecision:
    def test_hand_example(self):
        preds = [[(0, 3), (5, 6)], [(2, 4)], []]
        golds = [[(0, 10)], [(3, 4)], [(0, 1)]]
        # (0,3) vs (0,10): IoU 0.3 -> correct (>=); (5,6): 0.1 -> wrong; (2,4) vs (3,4): 0.5 -> correct.
        assert localization_precision(preds, golds) == pytest.approx(2 / 3)
        assert localization_precision(preds, golds, threshold=0.31) == pytest.approx(1 / 3)

    def test_several_predictions_may_hit_one_gold(self):
        assert localization_precision([[(0, 2), (0, 2), (1, 2)]], [[(0, 2)]]) == 1.0

    def test_no_predicted_spans_gives_zero(self):
        assert localization_precision([[], []], [[(0, 1)], []]) == 0.0
        assert localization_precision([], []) == 0.0

    def test_predictions_never_match_gold_of_another_item(self):
        assert localization_precision([[(0, 1)], []], [[], [(0, 1)]]) == 0.0

    def test_validation(self):
        with pytest.raises(ValueError, match="one entry per item"):
            localization_precision([[]], [])
        with pytest.raises(ValueError):
            localization_precision([[(1, 0)]], [[]])
        with pytest.raises(ValueError, match="threshold"):
            localization_precision([[]], [[]], threshold=2)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(span_lists, span_lists), max_size=8), st.sampled_from([0.1, 0.3, 0.5]))
    def test_equals_literal_definition(self, pairs, threshold):
        preds = [p for p, _ in pairs]
        golds = [g for _, g in pairs]
        flags = [any(iou(p, g) >= threshold for g in gs) for ps, gs in pairs for p in ps]
        expected = sum(flags) / len(flags) if flags else 0.0
        assert localization_precision(preds, golds, threshold) == pytest.approx(expected)


class TestMeanIou:
    def test_hand_example(self):
        preds = [[(0, 2), (1, 4)], [], [(0, 1)]]
        golds = [[(2, 6)], [], []]
        # Item 0: P = {0..3}, G = {2..5} -> 2 / 6; item 1: both empty -> 1; item 2: 0.
        assert mean_iou(preds, golds) == pytest.approx((2 / 6 + 1 + 0) / 3)

    def test_no_items_raises(self):
        with pytest.raises(ValueError, match="no items"):
            mean_iou([], [])

    def test_validation(self):
        with pytest.raises(ValueError, match="one entry per item"):
            mean_iou([[]], [[], []])
        with pytest.raises(ValueError, match=r"golds\[0\]"):
            mean_iou([[]], [[(-1, 2)]])

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(span_lists, span_lists), min_size=1, max_size=8))
    def test_equals_set_definition(self, pairs):
        expected = []
        for ps, gs in pairs:
            p_units = {u for s, e in ps for u in range(s, e)}
            g_units = {u for s, e in gs for u in range(s, e)}
            union = p_units | g_units
            expected.append(len(p_units & g_units) / len(union) if union else 1.0)
        value = mean_iou([p for p, _ in pairs], [g for _, g in pairs])
        assert value == pytest.approx(sum(expected) / len(expected))
        assert mean_iou([g for _, g in pairs], [p for p, _ in pairs]) == pytest.approx(value)
