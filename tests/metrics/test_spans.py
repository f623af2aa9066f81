"""F1_IoU and F1_M of one item (MHALO section 2.3) against worked examples, brute force and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from metrics import f1_iou, f1_m, parse_tagged, span_iou, token_spans
from metrics.matching import match_spans
from metrics.span_batches import f1_iou_per_item
from tests.metrics.metric_reference import brute_f1_iou, brute_f1_m, span_lists

GOLD_TAGGED = "<hallucination>A toothbrush</hallucination> is being washed in the sink."
TOOTHBRUSH_OUTPUTS = {
    # MHALO appendix E, Table 18: GPT-4o and Gemini tag two words, Claude one long phrase.
    "gpt-4o": "<hallucination>toothbrush</hallucination> is being <hallucination>washed</hallucination> in the sink.",
    "gemini": "A <hallucination>toothbrush</hallucination> is being <hallucination>washed</hallucination> in the sink.",
    "claude": "<hallucination>A toothbrush is being washed</hallucination> in the sink.",
    "halodet": GOLD_TAGGED,
}


def _token_spans_of(tagged: str) -> list[tuple[int, int]]:
    text, spans = parse_tagged(tagged)
    return token_spans(text, spans)


class TestToothbrushExample:
    """MHALO appendix E: gold tags "A toothbrush"; the paper's F1_IoU are 2/3, 2/3, 0 and 1."""

    def test_spans_are_whitespace_tokens(self):
        assert _token_spans_of(GOLD_TAGGED) == [(0, 2)]
        assert _token_spans_of(TOOTHBRUSH_OUTPUTS["gemini"]) == [(1, 2), (4, 5)]
        assert _token_spans_of(TOOTHBRUSH_OUTPUTS["claude"]) == [(0, 5)]
        # GPT-4o dropped the leading "A", so its own token numbering starts one word later.
        assert _token_spans_of(TOOTHBRUSH_OUTPUTS["gpt-4o"]) == [(0, 1), (3, 4)]

    @pytest.mark.parametrize(
        ("detector", "expected"), [("gpt-4o", 2 / 3), ("gemini", 2 / 3), ("claude", 0.0), ("halodet", 1.0)]
    )
    def test_f1_iou_in_tokens(self, detector, expected):
        gold = _token_spans_of(GOLD_TAGGED)
        assert f1_iou(_token_spans_of(TOOTHBRUSH_OUTPUTS[detector]), gold) == pytest.approx(expected)

    def test_why_tokens_give_these_numbers(self):
        # "toothbrush" covers 1 of the 2 gold tokens: IoU exactly 0.5 passes the >= 0.5 test;
        # "washed" overlaps nothing, so M = 1 and F1 = 2 / (2 + 1).
        assert span_iou((1, 2), (0, 2)) == 0.5
        # Claude's 5-token span shares 2 tokens with the gold: IoU 0.4 < 0.5, nothing matches.
        assert span_iou((0, 5), (0, 2)) == 0.4

    def test_f1_m_in_tokens(self):
        gold = [(0, 2)]
        # Gemini: PM_R(gold) = 1/2 (toothbrush inside), PM_P = (0 + 0) / 2 -> F1_M = 0.
        assert f1_m([(1, 2), (4, 5)], gold) == 0.0
        # Claude: the gold sits inside the prediction -> precision 2/5, recall 0 -> 0.
        assert f1_m([(0, 5)], gold) == 0.0
        assert f1_m(gold, gold) == 1.0


class TestF1IoU:
    def test_edge_cases_of_empty_lists(self):
        assert f1_iou([], []) == 1.0
        assert f1_iou([(0, 1)], []) == 0.0
        assert f1_iou([], [(0, 1)]) == 0.0

    def test_threshold_is_compared_with_greater_or_equal_on_the_float_ratio(self):
        # 3/10 is the same float as the literal 0.3, whereas 0.3 * 10 > 3 in floating point.
        assert f1_iou([(0, 3)], [(0, 10)], threshold=0.3) == 1.0
        assert f1_iou([(0, 1)], [(0, 3)], threshold=1 / 3) == 1.0
        assert f1_iou([(0, 1)], [(0, 3)], threshold=0.34) == 0.0

    def test_one_to_one_matching_not_counting_every_overlap(self):
        # Two predictions on one gold: only one can be matched.
        assert f1_iou([(0, 2), (0, 2)], [(0, 2)]) == pytest.approx(2 / 3)
        # Only (0, 2)-(0, 2) reaches 0.5; the other overlaps are 1/3.
        assert f1_iou([(0, 2), (2, 4)], [(1, 3), (0, 2)]) == pytest.approx(2 * 1 / 4)
        assert f1_iou([(0, 2), (1, 2)], [(0, 2), (1, 3)], threshold=0.5) == 1.0

    def test_maximum_matching_needs_augmenting_paths(self):
        # At 0.6, p0 = (1, 3) fits g0 = (0, 3) and g1 = (1, 4) (IoU 2/3 each); p1 = (0, 3) fits only g0.
        # Taking the first free partner would give p0 -> g0 and strand p1; the maximum matching is 2.
        assert f1_iou([(1, 3), (0, 3)], [(0, 3), (1, 4)], threshold=0.6) == 1.0

    def test_threshold_zero_allows_any_pair(self):
        assert f1_iou([(0, 1)], [(5, 6)], threshold=0.0) == 1.0

    @pytest.mark.parametrize(
        "bad",
        [[(2, 2)], [(3, 1)], [(-1, 2)], [(0.5, 2)], [(True, 2)], [(1, 2, 3)], ["ab"], [None], None, "01"],
    )
    def test_invalid_spans_raise(self, bad):
        with pytest.raises(ValueError):
            f1_iou(bad, [(0, 1)])
        with pytest.raises(ValueError):
            f1_m([(0, 1)], bad)

    def test_integral_floats_and_numpy_integers_are_spans(self):
        assert f1_iou([(np.int64(0), np.int32(2))], [(0.0, 2.0)]) == 1.0
        assert f1_iou(np.array([[0, 2]]), [[0, 2]]) == 1.0

    @pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan"), "0.5", None, True])
    def test_invalid_threshold_raises(self, threshold):
        with pytest.raises(ValueError):
            f1_iou([(0, 1)], [(0, 1)], threshold=threshold)

    @settings(max_examples=200, deadline=None)
    @given(span_lists, span_lists, st.sampled_from([0.0, 0.1, 0.3, 0.5, 2 / 3, 0.9, 1.0]))
    def test_equals_brute_force_matching(self, pred, gold, threshold):
        assert f1_iou(pred, gold, threshold) == brute_f1_iou(pred, gold, threshold)

    @settings(max_examples=200, deadline=None)
    @given(span_lists, span_lists, st.randoms(use_true_random=False))
    def test_symmetric_bounded_and_order_free(self, pred, gold, rnd):
        score = f1_iou(pred, gold)
        assert 0.0 <= score <= 1.0
        assert f1_iou(gold, pred) == score
        shuffled = list(pred)
        rnd.shuffle(shuffled)
        assert f1_iou(shuffled, gold) == score

    @settings(max_examples=100, deadline=None)
    @given(span_lists, span_lists)
    def test_non_increasing_in_threshold(self, pred, gold):
        scores = [f1_iou(pred, gold, t / 10) for t in range(11)]
        assert scores == sorted(scores, reverse=True)

    @settings(max_examples=100, deadline=None)
    @given(span_lists)
    def test_perfect_on_itself(self, spans):
        assert f1_iou(spans, spans, threshold=1.0) == 1.0

    @settings(max_examples=100, deadline=None)
    @given(st.sets(st.integers(0, 30), max_size=10), st.sets(st.integers(0, 30), max_size=10))
    def test_unit_spans_equal_token_f1_of_scikit_learn(self, pred_units, gold_units):
        """With one-unit spans IoU >= 0.5 means equality, so F1_IoU and F1_M are the binary F1."""
        if not pred_units and not gold_units:
            return
        pred = [(u, u + 1) for u in pred_units]
        gold = [(u, u + 1) for u in gold_units]
        y_true = [u in gold_units for u in range(31)]
        y_pred = [u in pred_units for u in range(31)]
        expected = f1_score(y_true, y_pred, zero_division=0.0)
        assert f1_iou(pred, gold) == pytest.approx(expected)
        assert f1_m(pred, gold) == pytest.approx(expected)


class TestMatchingImplementations:
    @settings(max_examples=50, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 8)), min_size=1, max_size=45), st.data())
    def test_the_engine_and_the_batched_path_agree(self, raw, data):
        spans = [(s, s + n) for s, n in raw]
        gold = data.draw(
            st.lists(
                st.sampled_from(spans) | st.tuples(st.integers(0, 60), st.just(70)), min_size=1, max_size=45
            )
        )
        threshold = data.draw(st.sampled_from([0.1, 0.3, 0.5]))
        matched = match_spans(spans, gold, threshold).n_matched
        assert f1_iou_per_item([spans], [gold], threshold)[0] == 2 * matched / (len(spans) + len(gold))

    def test_large_lists(self):
        pred = [(i, i + 2) for i in range(0, 200, 2)]
        gold = [(i, i + 1) for i in range(0, 200, 2)]
        assert len(pred) * len(gold) > 1024
        assert match_spans(pred, gold, 0.5).n_matched == 100
        assert f1_iou(pred, gold) == 1.0


class TestF1M:
    def test_partial_credit_each_way(self):
        # Rec = (1/2 + 0) / 2, Prec = (0 + 1/2) / 2.
        assert f1_m([(0, 1), (3, 5)], [(0, 2), (3, 4)]) == pytest.approx(0.25)

    def test_best_contained_prediction_counts(self):
        # Gold (0, 10) contains predictions of length 2 and 5: PM_R = 0.5; each prediction's PM_P = 0.
        assert f1_m([(0, 2), (3, 8)], [(0, 10)]) == 0.0
        # Add an exact hit: Rec = 1, Prec = 1/3.
        assert f1_m([(0, 2), (3, 8), (0, 10)], [(0, 10)]) == pytest.approx(2 * (1 / 3) / (4 / 3))

    def test_exact_match_and_false_alarm(self):
        assert f1_m([(0, 2), (5, 6)], [(0, 2)]) == pytest.approx(2 / 3)

    def test_edge_cases_of_empty_lists(self):
        assert f1_m([], []) == 1.0
        assert f1_m([(0, 1)], []) == 0.0
        assert f1_m([], [(0, 1)]) == 0.0

    @settings(max_examples=200, deadline=None)
    @given(span_lists, span_lists)
    def test_equals_literal_definition(self, pred, gold):
        assert f1_m(pred, gold) == pytest.approx(brute_f1_m(pred, gold), abs=1e-15)

    @settings(max_examples=200, deadline=None)
    @given(span_lists, span_lists, st.randoms(use_true_random=False))
    def test_symmetric_bounded_and_order_free(self, pred, gold, rnd):
        score = f1_m(pred, gold)
        assert 0.0 <= score <= 1.0
        assert f1_m(gold, pred) == pytest.approx(score, abs=1e-15)
        shuffled = list(gold)
        rnd.shuffle(shuffled)
        assert f1_m(pred, shuffled) == pytest.approx(score, abs=1e-15)


def test_span_iou_checks_and_measures():
    assert span_iou((0, 4), (2, 6)) == pytest.approx(2 / 6)
    assert span_iou((0, 1), (1, 2)) == 0.0
    with pytest.raises(ValueError):
        span_iou((1, 1), (0, 2))
