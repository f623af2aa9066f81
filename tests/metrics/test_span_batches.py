"""The vectorised per-item scores must equal the one-item functions exactly, on any mix of items."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import (
    DEFAULT_CURVE_THRESHOLDS,
    PackedSpans,
    f1_iou,
    f1_iou_curve,
    f1_iou_per_item,
    f1_m,
    f1_m_per_item,
    pack_spans,
)
from metrics.matching import match_spans
from metrics.span_batches import item_matchings, matched_gold_spans
from tests.metrics.metric_reference import span_lists

items = st.lists(st.tuples(span_lists, span_lists), max_size=12)


@settings(max_examples=200, deadline=None)
@given(items, st.sampled_from([0.0, 0.2, 0.5, 0.75, 1.0]))
def test_f1_iou_per_item_equals_the_loop(pairs, threshold):
    preds = [p for p, _ in pairs]
    golds = [g for _, g in pairs]
    expected = [f1_iou(p, g, threshold) for p, g in pairs]
    assert f1_iou_per_item(preds, golds, threshold).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(items)
def test_f1_m_per_item_equals_the_loop(pairs):
    preds = [p for p, _ in pairs]
    golds = [g for _, g in pairs]
    expected = [f1_m(p, g) for p, g in pairs]
    assert f1_m_per_item(preds, golds).tolist() == pytest.approx(expected, abs=1e-15)


def test_matching_is_per_item_not_across_items():
    # The same spans in different items must never be matched with each other.
    preds = [[(0, 2)], []]
    golds = [[], [(0, 2)]]
    assert f1_iou_per_item(preds, golds).tolist() == [0.0, 0.0]
    assert f1_m_per_item(preds, golds).tolist() == [0.0, 0.0]


def test_items_needing_augmenting_paths_are_solved_exactly():
    preds = [[(1, 3), (0, 3)], [(0, 1)], [(1, 3), (0, 3)]]
    golds = [[(0, 3), (1, 4)], [(0, 1)], [(1, 4), (0, 3)]]
    assert f1_iou_per_item(preds, golds, threshold=0.6).tolist() == [1.0, 1.0, 1.0]


class TestPacking:
    def test_round_trip(self):
        lists = [[(3, 4), (0, 2)], [], [(5, 9)]]
        packed = pack_spans(lists)
        assert isinstance(packed, PackedSpans)
        assert len(packed) == 3
        assert packed.counts.tolist() == [2, 0, 1]
        assert [packed.item(i) for i in range(3)] == lists
        assert pack_spans(packed) is packed

    def test_select_keeps_items_in_place(self):
        packed = pack_spans([[(0, 1), (2, 3)], [], [(4, 5)]])
        kept = packed.select(np.array([False, True, True]))
        assert [kept.item(i) for i in range(3)] == [[(2, 3)], [], [(4, 5)]]
        none = packed.select(np.zeros(3, dtype=bool))
        assert none.counts.tolist() == [0, 0, 0]

    def test_empty_input(self):
        assert pack_spans([]).n_items == 0
        assert f1_iou_per_item([], []).size == 0
        assert pack_spans([[], []]).counts.tolist() == [0, 0]

    def test_integral_floats_are_accepted(self):
        assert pack_spans([[(0.0, 2.0)]]).item(0) == [(0, 2)]

    @pytest.mark.parametrize(
        ("bad", "message"),
        [
            ([[(2, 1)]], r"spans\[0\]\[0\]"),
            ([[(0, 1)], [(0, 1), (-1, 3)]], r"spans\[1\]\[1\]"),
            ([[(0, 1.5)]], "integer"),
            ([[(True, 2)]], "boolean"),
            ([[(0, 1, 2)]], "pair"),
            ([[(0, 1)], None], r"spans\[1\]"),
            ([[(0, 1)], 5], r"spans\[1\]"),
            (["ab"], "string"),
            (None, "one list of spans per item"),
        ],
    )
    def test_bad_input_names_the_item(self, bad, message):
        with pytest.raises(ValueError, match=message):
            pack_spans(bad)

    def test_mismatched_lengths(self):
        with pytest.raises(ValueError, match="one entry per item"):
            f1_iou_per_item([[]], [[], []])


class TestCurve:
    def test_default_thresholds_are_exact_tenths(self):
        assert DEFAULT_CURVE_THRESHOLDS == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

    @settings(max_examples=100, deadline=None)
    @given(st.lists(st.tuples(span_lists, span_lists, st.booleans()), min_size=1, max_size=10))
    def test_equals_mean_of_per_item_scores(self, rows):
        preds = [p for p, _, _ in rows]
        golds = [g for _, g, _ in rows]
        ok = [f for _, _, f in rows]
        curve = f1_iou_curve(preds, golds, follows_format=ok)
        for value, threshold in zip(curve, DEFAULT_CURVE_THRESHOLDS, strict=True):
            expected = np.mean([f1_iou(p, g, threshold) if f else 0.0 for p, g, f in rows])
            assert value == pytest.approx(expected, abs=1e-12)
        assert list(curve) == sorted(curve, reverse=True)

    def test_custom_thresholds_and_errors(self):
        curve = f1_iou_curve([[(0, 3)]], [[(0, 10)]], thresholds=[0.3, 0.31])
        assert curve.tolist() == [1.0, 0.0]
        with pytest.raises(ValueError, match="no items"):
            f1_iou_curve([], [])
        with pytest.raises(ValueError, match="threshold"):
            f1_iou_curve([[]], [[]], thresholds=[1.2])
        with pytest.raises(ValueError, match="follows_format"):
            f1_iou_curve([[]], [[]], follows_format=[True, False])


def _per_item(found: np.ndarray, golds: list[list[tuple[int, int]]]) -> list[tuple[int, ...]]:
    """Indices into the packed gold spans, as sorted indices within each item."""
    assert found.tolist() == sorted(set(found.tolist()))
    packed = pack_spans(golds)
    item = packed.item_of_span[found]
    within = found - packed.offsets[:-1][item]
    return [tuple(within[item == k].tolist()) for k in range(len(golds))]


@settings(max_examples=300, deadline=None)
@given(items, st.sampled_from([0.0, 0.2, 0.5, 0.75, 1.0]))
def test_item_matchings_equal_match_spans_item_by_item(pairs, threshold):
    preds = [p for p, _ in pairs]
    golds = [g for _, g in pairs]
    found = item_matchings(preds, golds, threshold, (0.2, 0.5))
    gold_found = _per_item(matched_gold_spans(preds, golds, threshold), golds)
    assert len(gold_found) == len(pairs)
    for k, (p, g) in enumerate(pairs):
        matching = match_spans(p, g, threshold)
        assert found.n_matched[k] == matching.n_matched
        assert gold_found[k] == tuple(sorted(matching.matched_gold))
        assert found.n_boundary[k] == sum(0.2 <= iou < 0.5 for _, iou in matching.best_for_pred)
        assert found.f1_iou[k] == f1_iou(p, g, threshold)
        assert found.f1_m[k] == pytest.approx(f1_m(p, g), abs=1e-15)


def test_item_matchings_solve_items_whose_spans_compete():
    # One prediction qualifies for two gold spans and two predictions for one: the matching decides.
    preds = [[(0, 4), (5, 6)], [(0, 2), (0, 3)]]
    golds = [[(0, 3), (1, 4), (5, 6)], [(0, 2)]]
    found = item_matchings(preds, golds, 0.5)
    gold_found = _per_item(matched_gold_spans(preds, golds, 0.5), golds)
    assert found.n_matched.tolist() == [2, 1] and gold_found[1] == (0,) and 2 in gold_found[0]
    assert gold_found[0] == tuple(sorted(match_spans(preds[0], golds[0], 0.5).matched_gold))


@settings(max_examples=200, deadline=None)
@given(st.lists(span_lists, max_size=8), st.data())
def test_take_keeps_the_chosen_items_spans_in_their_order(lists, data):
    packed = pack_spans(lists)
    chosen = data.draw(st.lists(st.integers(0, len(lists) - 1), max_size=10)) if lists else []
    taken = packed.take(np.array(chosen, dtype=np.int64))
    assert [taken.item(k) for k in range(taken.n_items)] == [[tuple(s) for s in lists[i]] for i in chosen]
    rows = packed.span_rows(np.array(chosen, dtype=np.int64))
    assert packed.starts[rows].tolist() == [s[0] for i in chosen for s in lists[i]]


def test_packed_predictions_lose_their_spans_where_the_format_failed():
    preds = pack_spans([[(0, 2)], [(1, 3)], []])
    golds = [[(0, 2)], [(1, 3)], []]
    from metrics import span_detection_table

    listed = span_detection_table(["a", "a", "b"], [[(0, 2)], None, []], golds, [True, False, True])
    packed = span_detection_table(["a", "a", "b"], preds, golds, [True, False, True])
    assert packed == listed and packed["a"]["f1_iou"] == 0.5
    with pytest.raises(ValueError, match="one entry per item"):
        span_detection_table(["a"], preds, [[]], [True])


typed_items = st.lists(
    st.tuples(
        span_lists, span_lists, st.lists(st.sampled_from(["object", "count", "attribute"]), max_size=6)
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=150, deadline=None)
@given(typed_items, st.data())
def test_pairs_made_once_score_as_the_pairs_each_measure_makes(items, data):
    from metrics import f1_iou_by_type, span_detection_table
    from metrics.span_batches import scored_predictions, span_pairs

    golds = pack_spans([g for _, g, _ in items])
    types = [(t * len(g))[: len(g)] or ["object"] * len(g) for _, g, t in items]
    flat_types = np.array([t for item in types for t in item], dtype=str)
    ok = np.array(data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items))), dtype=bool)
    preds = scored_predictions(pack_spans([p for p, _, _ in items]), ok)
    pairs = span_pairs(preds, golds)
    subsets = ["s"] * len(items)

    assert span_detection_table(subsets, preds, golds, ok, 0.5, pairs=pairs) == span_detection_table(
        subsets, preds, golds, ok, 0.5
    )
    assert (
        f1_iou_curve(preds, golds, follows_format=ok, pairs=pairs).tolist()
        == f1_iou_curve(preds, golds, follows_format=ok).tolist()
    )
    # Integer codes of the types count as the types do, in the same order.
    names, codes = np.unique(flat_types, return_inverse=True)
    by_name = f1_iou_by_type(preds, golds, flat_types, follows_format=ok)
    by_code = f1_iou_by_type(preds, golds, codes, follows_format=ok, pairs=pairs)
    assert [names[k] for k in by_code] == list(by_name)
    assert list(by_code.values()) == list(by_name.values())  # every type here has a gold span: no NaN


@settings(max_examples=150, deadline=None)
@given(typed_items, st.data(), st.sampled_from([0.0, 0.1, 0.5, 1.0]))
def test_overlapping_pairs_score_as_every_pair_does(items, data, threshold):
    """The pairs made for the measures at ``threshold`` and above (only the overlapping ones above 0)
    give every measure the values all the pairs of each item give, at a threshold of 0 too (such a
    measure makes all the pairs itself)."""
    from metrics import f1_iou_by_type, span_detection_table
    from metrics.span_batches import scored_predictions, span_pairs

    golds = pack_spans([g for _, g, _ in items])
    types = [t for _, g, names in items for t in ((names * len(g))[: len(g)] or ["object"] * len(g))]
    ok = np.array(data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items))), dtype=bool)
    preds = scored_predictions(pack_spans([p for p, _, _ in items]), ok)
    every, few = span_pairs(preds, golds), span_pairs(preds, golds, threshold)
    if threshold > 0:
        assert bool((few.inter > 0).all())
    subsets = [("a", "b")[k % 2] for k in range(len(items))]
    for at in (threshold, 0.0):
        assert span_detection_table(subsets, preds, golds, ok, at, pairs=few) == span_detection_table(
            subsets, preds, golds, ok, at, pairs=every
        )
        assert f1_iou_by_type(preds, golds, np.array(types), threshold=at, follows_format=ok, pairs=few) == (
            f1_iou_by_type(preds, golds, np.array(types), threshold=at, follows_format=ok, pairs=every)
        )  # every type here has a gold span: no NaN
    curve = (0.0, 0.1, 0.5, 0.9)
    assert (
        f1_iou_curve(preds, golds, curve, follows_format=ok, pairs=few).tolist()
        == f1_iou_curve(preds, golds, curve, follows_format=ok, pairs=every).tolist()
    )


def test_pairs_of_other_spans_are_refused():
    from metrics import span_detection_table
    from metrics.span_batches import span_pairs

    preds, golds = pack_spans([[(0, 2)]]), pack_spans([[(0, 2)]])
    other = span_pairs(pack_spans([[(0, 2)]]), golds)
    with pytest.raises(ValueError, match="span_pairs"):
        span_detection_table(["a"], preds, golds, [True], pairs=other)
    with pytest.raises(ValueError, match="span_pairs"):
        f1_iou_curve(preds, golds, pairs=span_pairs(preds, pack_spans([[(0, 2)]])))


def test_scored_packed_predictions_are_the_same_spans_when_no_failure_holds_one():
    from metrics.span_batches import scored_predictions

    preds = pack_spans([[(0, 2)], [], [(1, 3)]])
    assert scored_predictions(preds, np.array([True, False, True])) is preds
    dropped = scored_predictions(preds, np.array([True, True, False]))
    assert dropped is not preds and [dropped.item(k) for k in range(3)] == [[(0, 2)], [], []]


@pytest.mark.parametrize("threshold", [0.2, 1 / 3, 0.5])
def test_matched_gold_spans_of_many_competing_items_equal_match_spans(threshold):
    # Hundreds of items whose short spans on a few tokens compete, with many equal IoUs: the batched
    # assignment must pick, item by item, the very gold spans match_spans picks (ties included).
    rng = np.random.default_rng(7)

    def spans() -> list[tuple[int, int]]:
        starts = rng.integers(0, 8, size=int(rng.integers(0, 7)))
        return [(int(a), int(a + rng.integers(1, 4))) for a in starts]

    pairs = [(spans(), spans()) for _ in range(400)]
    preds = [p for p, _ in pairs]
    golds = [g for _, g in pairs]
    gold_found = _per_item(matched_gold_spans(preds, golds, threshold), golds)
    expected = [tuple(sorted(match_spans(p, g, threshold).matched_gold)) for p, g in pairs]
    assert gold_found == expected
    competing = sum(
        match_spans(p, g, threshold).n_matched
        < len({j for j in range(len(g)) if any(match_spans([q], [g[j]], threshold).n_matched for q in p)})
        for p, g in pairs
    )
    assert competing > 20  # the items solved one by one are well represented


@settings(max_examples=300, deadline=None)
@given(items)
def test_overlapping_pairs_are_the_pairs_that_overlap_in_their_order(pairs):
    # Spans in any order, nested or repeated: the pairs made by binary search are exactly those of the
    # full product whose spans overlap, in the product's order, with the same numbers.
    from metrics.span_batches import _overlapping_pairs, _same_item_pairs

    pred, gold = pack_spans([p for p, _ in pairs]), pack_spans([g for _, g in pairs])
    every = _same_item_pairs(pred, gold)
    near = every.inter > 0
    found = _overlapping_pairs(pred, gold)
    for name in ("pred", "gold", "inter", "pred_len", "gold_len"):
        assert getattr(found, name).tolist() == getattr(every, name)[near].tolist(), name


def test_overlapping_pairs_find_a_long_gold_span_behind_short_ones():
    # The long first gold span reaches past the short ones after it: it still pairs with the late pred.
    from metrics.span_batches import _overlapping_pairs

    found = _overlapping_pairs(
        pack_spans([[(5, 6), (0, 1)]]), pack_spans([[(0, 10), (1, 2), (3, 4), (4, 5)]])
    )
    assert list(zip(found.pred.tolist(), found.gold.tolist(), strict=True)) == [(0, 0), (1, 0)]
    assert f1_iou_per_item([[(5, 6)]], [[(0, 10), (1, 2), (3, 4), (4, 5)]], 0.1).tolist() == [
        f1_iou([(5, 6)], [(0, 10), (1, 2), (3, 4), (4, 5)], 0.1)
    ]
