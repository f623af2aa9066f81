"""Agreement measures against scikit-learn, statsmodels and Krippendorff's published example."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from metrics import (
    cohen_kappa,
    cohen_table,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
    spans_to_unit_labels,
)
from tests.metrics.metric_reference import brute_alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units.
_OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
KRIPPENDORFF_UNITS = [[v for v in unit if v is not None] for unit in zip(*_OBSERVERS, strict=True)]


class TestKrippendorffAlpha:
    def test_published_worked_example(self):
        assert round(krippendorff_alpha(KRIPPENDORFF_UNITS, "nominal"), 3) == 0.743
        assert round(krippendorff_alpha(KRIPPENDORFF_UNITS, "interval"), 3) == 0.849

    def test_default_level_is_nominal(self):
        assert krippendorff_alpha(KRIPPENDORFF_UNITS) == krippendorff_alpha(KRIPPENDORFF_UNITS, "nominal")

    def test_single_value_overall_is_perfect(self):
        assert krippendorff_alpha([[1, 1], [1, 1, 1], [1]]) == 1.0
        assert krippendorff_alpha([[0.1, 0.1], [0.1, 0.1, 0.1]], "interval") == 1.0

    def test_units_with_one_rating_are_ignored(self):
        assert krippendorff_alpha([*KRIPPENDORFF_UNITS, [7], []]) == krippendorff_alpha(KRIPPENDORFF_UNITS)

    def test_systematic_disagreement_is_negative(self):
        assert krippendorff_alpha([["a", "b"], ["b", "a"]]) < 0

    @pytest.mark.parametrize(
        ("ratings", "level", "message"),
        [
            ([[1], [2]], "nominal", "pairable"),
            ([], "nominal", "pairable"),
            ([[1, 2]], "ordinal", "level"),
            ([[1, "a"]], "interval", "numbers"),
            ([[1, float("nan")]], "interval", "finite"),
            ([[1, None]], "nominal", "None"),
            ([[[1], [1]]], "nominal", "hashable"),
        ],
    )
    def test_invalid_input(self, ratings, level, message):
        with pytest.raises(ValueError, match=message):
            krippendorff_alpha(ratings, level)

    @settings(max_examples=150, deadline=None)
    @given(
        st.lists(st.lists(st.integers(0, 4), max_size=5), min_size=1, max_size=10).filter(
            lambda units: any(len(u) >= 2 for u in units)
        ),
        st.sampled_from(["nominal", "interval"]),
    )
    def test_equals_explicit_coincidence_matrix(self, units, level):
        assert krippendorff_alpha(units, level) == pytest.approx(brute_alpha(units, level), abs=1e-9)

    @settings(max_examples=100, deadline=None)
    @given(
        st.lists(st.lists(st.integers(0, 3), min_size=2, max_size=4), min_size=1, max_size=8),
        st.randoms(use_true_random=False),
    )
    def test_order_of_units_and_ratings_does_not_matter(self, units, rnd):
        value = krippendorff_alpha(units)
        shuffled = [rnd.sample(u, len(u)) for u in units]
        rnd.shuffle(shuffled)
        assert krippendorff_alpha(shuffled) == pytest.approx(value)


class TestCohenKappa:
    def test_single_identical_category_is_perfect(self):
        assert cohen_kappa(["x", "x"], ["x", "x"]) == 1.0

    def test_hand_example(self):
        # p_o = 0.5, p_e = 0.5 -> 0.
        assert cohen_kappa([0, 0, 1, 1], [0, 1, 0, 1]) == 0.0

    @settings(max_examples=100, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abcd")), min_size=1, max_size=40))
    def test_equals_scikit_learn(self, rows):
        a = [x for x, _ in rows]
        b = [y for _, y in rows]
        if len(set(a)) == 1 and a == b:
            return  # scikit-learn returns NaN here; the contract says 1.0 (tested above)
        expected = cohen_kappa_score(a, b)
        value = cohen_kappa(a, b)
        if math.isnan(expected):
            return
        assert value == pytest.approx(expected, abs=1e-12)
        assert cohen_kappa(b, a) == value

    @pytest.mark.parametrize(
        ("a", "b", "message"), [([], [], "no items"), ([1], [1, 2], "same items"), ([None], [1], "None")]
    )
    def test_invalid_input(self, a, b, message):
        with pytest.raises(ValueError, match=message):
            cohen_kappa(a, b)


ratings_tables = st.integers(2, 5).flatmap(
    lambda m: st.lists(st.lists(st.sampled_from("xyz"), min_size=m, max_size=m), min_size=1, max_size=15)
)


class TestFleissKappa:
    def test_one_category_overall_is_perfect(self):
        assert fleiss_kappa([["a", "a"], ["a", "a"]]) == 1.0

    def test_textbook_example(self):
        # Fleiss (1971)-style check: two items, complete disagreement on one of them.
        ratings = [["a", "a", "a"], ["a", "b", "b"]]
        p_bar = (1 + 1 / 3) / 2
        p_e = (4 / 6) ** 2 + (2 / 6) ** 2
        assert fleiss_kappa(ratings) == pytest.approx((p_bar - p_e) / (1 - p_e))
        assert observed_agreement(ratings) == pytest.approx(p_bar)

    @settings(max_examples=100, deadline=None)
    @given(ratings_tables)
    def test_equals_statsmodels(self, ratings):
        table, _ = aggregate_raters(np.array(ratings))
        if len({v for item in ratings for v in item}) == 1:
            return
        assert fleiss_kappa(ratings) == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)

    @settings(max_examples=100, deadline=None)
    @given(ratings_tables)
    def test_observed_agreement_is_the_mean_share_of_agreeing_pairs(self, ratings):
        shares = []
        for item in ratings:
            pairs = [(i, j) for i in range(len(item)) for j in range(len(item)) if i != j]
            shares.append(sum(item[i] == item[j] for i, j in pairs) / len(pairs))
        assert observed_agreement(ratings) == pytest.approx(np.mean(shares))

    @pytest.mark.parametrize(
        ("ratings", "message"),
        [
            ([], "no items"),
            ([["a"], ["b"]], "at least 2"),
            ([["a", "b"], ["a"]], "same number"),
            ([["a", None]], "None"),
        ],
    )
    def test_invalid_input(self, ratings, message):
        with pytest.raises(ValueError, match=message):
            fleiss_kappa(ratings)


def test_cohen_table_uses_items_both_annotators_rated():
    ratings = {
        "ann": ["h", "n", "h", None],
        "bob": ["h", "n", "n", "n"],
        "cy": [None, None, None, "h"],
    }
    table = cohen_table(ratings)
    assert table["ann"]["ann"] == 1.0
    assert (
        table["ann"]["bob"]
        == table["bob"]["ann"]
        == pytest.approx(cohen_kappa(["h", "n", "h"], ["h", "n", "n"]))
    )
    assert table["bob"]["cy"] == cohen_kappa(["n"], ["h"])
    assert math.isnan(table["ann"]["cy"])
    with pytest.raises(ValueError, match="one entry per item"):
        cohen_table({"a": [1], "b": [1, 2]})


class TestSpansToUnitLabels:
    def test_untyped_spans(self):
        units = spans_to_unit_labels({"ann": [(1, 3)], "bob": [(2, 4)], "cy": []}, n_units=5)
        assert units == [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 0]]
        assert krippendorff_alpha(units) == pytest.approx(brute_alpha(units))

    def test_typed_spans_and_custom_outside_label(self):
        units = spans_to_unit_labels([[(0, 2, "object")], [(1, 2, "number")]], n_units=3, outside="none")
        assert units == [["object", "none"], ["object", "number"], ["none", "none"]]

    def test_overlapping_spans_of_one_annotator(self):
        assert spans_to_unit_labels([[(0, 2), (1, 3)]], n_units=3) == [[1], [1], [1]]
        with pytest.raises(ValueError, match="second label"):
            spans_to_unit_labels([[(0, 2, "a"), (1, 3, "b")]], n_units=3)

    @pytest.mark.parametrize(
        ("annotations", "n_units", "message"),
        [
            ([[(0, 5)]], 3, "past the 3 units"),
            ([[(0,)]], 3, "start, end"),
            ([[(2, 1)]], 3, "empty"),
            ([[]], 0, "n_units"),
        ],
    )
    def test_invalid_input(self, annotations, n_units, message):
        with pytest.raises(ValueError, match=message):
            spans_to_unit_labels(annotations, n_units)
