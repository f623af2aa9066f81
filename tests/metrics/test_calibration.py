"""ECE and ACE (HalLoc supplement, section B) against a literal loop, plus reliability diagrams."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import ace, calibration_by_label, ece, reliability_diagram

probabilities = st.floats(0.0, 1.0, allow_nan=False)
calibration_data = st.lists(
    st.tuples(probabilities | st.sampled_from([0.0, 0.1, 0.3, 0.5, 1.0]), st.integers(0, 1)),
    min_size=1,
    max_size=60,
)


def literal_ece(probs, labels, n_bins):
    bins = {}
    for p, y in zip(probs, labels, strict=True):
        bins.setdefault(min(int(p * n_bins), n_bins - 1), []).append((p, y))
    n = len(probs)
    return sum(
        len(b) / n * abs(sum(y for _, y in b) / len(b) - sum(p for p, _ in b) / len(b)) for b in bins.values()
    )


def literal_ace(probs, labels, n_bins):
    order = sorted(range(len(probs)), key=lambda i: probs[i])  # sorted() is stable
    groups = np.array_split(np.array(order), n_bins)  # first n % n_bins groups get one extra
    gaps = [abs(np.mean([labels[i] for i in g]) - np.mean([probs[i] for i in g])) for g in groups if len(g)]
    return sum(gaps) / len(gaps)


class TestEce:
    def test_bin_edges_follow_the_contract(self):
        # 0.3 * 10 == 3.0 exactly: bin 3, so it is not mixed with the 0.25 in bin 2.
        assert ece([0.3, 0.25], [1, 0], n_bins=10) == pytest.approx(0.5 * 0.7 + 0.5 * 0.25)
        # p == 1.0 lands in the last bin, together with 0.95.
        assert ece([1.0, 0.95], [1, 1], n_bins=10) == pytest.approx(abs(1 - 0.975))

    def test_perfectly_calibrated(self):
        assert ece([0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0]) == 0.0
        assert ece([0.0, 1.0], [0, 1]) == 0.0

    @settings(max_examples=200, deadline=None)
    @given(calibration_data, st.integers(1, 15))
    def test_equals_literal_loop(self, rows, n_bins):
        probs = [p for p, _ in rows]
        labels = [y for _, y in rows]
        assert ece(probs, labels, n_bins) == pytest.approx(literal_ece(probs, labels, n_bins), abs=1e-12)
        assert 0.0 <= ece(probs, labels, n_bins) <= 1.0

    def test_float32_input_is_binned_in_float64(self):
        p32 = np.array([0.3], dtype=np.float32)  # slightly above 0.3 in float64 -> still bin 3
        assert ece(p32, [1]) == pytest.approx(1 - float(p32[0]))


class TestAce:
    def test_hand_example(self):
        # Sorted: 0.1(0) 0.2(1) | 0.6(1) 0.9(1); groups of 2.
        assert ace([0.9, 0.1, 0.6, 0.2], [1, 0, 1, 1], n_bins=2) == pytest.approx((0.35 + 0.25) / 2)

    def test_uneven_split_and_stable_ties(self):
        # n = 5, 2 bins -> sizes 3 and 2; the tie at 0.5 keeps input order (labels 1 then 0).
        probs = [0.5, 0.5, 0.5, 0.5, 0.5]
        labels = [1, 1, 1, 0, 0]
        assert ace(probs, labels, n_bins=2) == pytest.approx((0.5 + 0.5) / 2)

    def test_more_bins_than_items_uses_the_non_empty_ones(self):
        assert ace([0.2, 0.9], [0, 1], n_bins=10) == pytest.approx((0.2 + 0.1) / 2)

    @settings(max_examples=200, deadline=None)
    @given(calibration_data, st.integers(1, 15))
    def test_equals_literal_loop(self, rows, n_bins):
        probs = [p for p, _ in rows]
        labels = [y for _, y in rows]
        assert ace(probs, labels, n_bins) == pytest.approx(literal_ace(probs, labels, n_bins), abs=1e-12)

    @pytest.mark.parametrize("seed", range(5))
    def test_long_ties_across_group_boundaries_keep_input_order(self, seed):
        # Large enough for numpy's unstable sort to reorder ties (small arrays use a stable insertion sort).
        rng = np.random.default_rng(seed)
        probs = rng.choice([0.1, 0.2, 0.3, 0.7], 20_000).tolist()
        labels = rng.integers(0, 2, 20_000).tolist()
        assert ace(probs, labels, n_bins=7) == pytest.approx(literal_ace(probs, labels, 7), abs=1e-12)
        diagram = reliability_diagram(probs, labels, n_bins=7, strategy="adaptive")
        assert np.abs(diagram["gap"]).mean() == pytest.approx(literal_ace(probs, labels, 7), abs=1e-12)


@pytest.mark.parametrize("measure", [ece, ace])
@pytest.mark.parametrize(
    ("probs", "labels", "n_bins", "message"),
    [
        ([], [], 10, "no probabilities"),
        ([0.5, 1.2], [0, 1], 10, r"\[0, 1\]"),
        ([-0.1], [0], 10, r"\[0, 1\]"),
        ([float("nan")], [0], 10, "NaN"),
        ([0.5], [2], 10, "0 and 1"),
        ([0.5], [0, 1], 10, "same length"),
        ([0.5], [1], 0, "n_bins"),
        ([0.5], [1], 2.5, "n_bins"),
    ],
)
def test_invalid_input(measure, probs, labels, n_bins, message):
    with pytest.raises(ValueError, match=message):
        measure(probs, labels, n_bins)


class TestReliabilityDiagram:
    @settings(max_examples=100, deadline=None)
    @given(calibration_data, st.integers(1, 12), st.sampled_from(["uniform", "adaptive"]))
    def test_bins_reproduce_ece_and_ace(self, rows, n_bins, strategy):
        probs = [p for p, _ in rows]
        labels = [y for _, y in rows]
        diagram = reliability_diagram(probs, labels, n_bins, strategy)
        assert all(len(v) == n_bins for v in diagram.values())
        assert diagram["count"].sum() == len(rows)
        filled = diagram["count"] > 0
        gaps = np.abs(diagram["gap"][filled])
        if strategy == "uniform":
            weighted = np.sum(diagram["count"][filled] / len(rows) * gaps)
            assert weighted == pytest.approx(ece(probs, labels, n_bins), abs=1e-12)
        else:
            assert gaps.mean() == pytest.approx(ace(probs, labels, n_bins), abs=1e-12)
            assert (diagram["lower"][filled] <= diagram["upper"][filled]).all()
        assert np.isnan(diagram["confidence"][~filled]).all()

    def test_uniform_edges(self):
        diagram = reliability_diagram([0.05, 0.95], [0, 1], n_bins=4)
        assert diagram["lower"].tolist() == [0.0, 0.25, 0.5, 0.75]
        assert diagram["upper"].tolist() == [0.25, 0.5, 0.75, 1.0]
        assert diagram["count"].tolist() == [1, 0, 0, 1]

    def test_unknown_strategy(self):
        with pytest.raises(ValueError, match="strategy"):
            reliability_diagram([0.5], [1], strategy="quantile")


def test_calibration_by_label_is_halloc_macro_average():
    probs = [0.9, 0.8, 0.2, 0.1, 0.3]
    labels = [1, 1, 0, 0, 0]
    result = calibration_by_label(probs, labels, n_bins=10)
    assert result["ece"]["positive"] == pytest.approx(ece([0.9, 0.8], [1, 1]))
    assert result["ece"]["negative"] == pytest.approx(ece([0.2, 0.1, 0.3], [0, 0, 0]))
    assert result["ece"]["average"] == pytest.approx(
        (result["ece"]["positive"] + result["ece"]["negative"]) / 2
    )
    assert result["ace"]["negative"] == pytest.approx(ace([0.2, 0.1, 0.3], [0, 0, 0]))
    only_negative = calibration_by_label([0.1], [0])
    assert math.isnan(only_negative["ece"]["positive"]) and math.isnan(only_negative["ece"]["average"])
