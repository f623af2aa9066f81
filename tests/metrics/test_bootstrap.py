"""Percentile bootstrap intervals: reproducible, paired, and tolerant of undefined resamples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics import auroc, bootstrap_ci, bootstrap_indices, percentile_interval


def test_same_seed_same_interval_other_seed_other_interval():
    data = np.random.default_rng(0).normal(size=50)
    first = bootstrap_ci(np.mean, data, n_resamples=300, seed=3)
    assert first == bootstrap_ci(np.mean, data, n_resamples=300, seed=3)
    assert first != bootstrap_ci(np.mean, data, n_resamples=300, seed=4)
    assert first[0] == pytest.approx(data.mean())
    assert first[1] < first[0] < first[2]


def test_interval_of_the_mean_matches_the_normal_approximation():
    data = np.random.default_rng(1).normal(loc=2.0, size=400)
    point, low, high = bootstrap_ci(np.mean, data, n_resamples=2000)
    half_width = 1.96 * data.std(ddof=1) / math.sqrt(data.size)
    assert (high - low) / 2 == pytest.approx(half_width, rel=0.1)


def test_samples_stay_paired():
    labels = [0, 0, 0, 1, 1, 1]
    scores = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]
    # Perfectly separated data stay separated in every resample that holds both classes.
    assert bootstrap_ci(auroc, labels, scores, n_resamples=200) == (1.0, 1.0, 1.0)


def test_resamples_where_the_statistic_is_undefined_are_skipped():
    labels = [0, 1, 1, 1, 1, 1, 1, 1]
    scores = [0.5, 0.1, 0.9, 0.8, 0.7, 0.6, 0.4, 0.3]
    point, low, high = bootstrap_ci(auroc, labels, scores, n_resamples=300)
    assert point == auroc(labels, scores)
    assert 0.0 <= low <= high <= 1.0


def test_all_resamples_undefined_gives_nan_bounds():
    def undefined(values):
        if len(set(values.tolist())) == 1:
            return 1.0
        raise ValueError("undefined on mixed data")

    point, low, high = bootstrap_ci(undefined, [1, 1, 1], n_resamples=20)
    assert point == 1.0 and low == 1.0 and high == 1.0
    assert math.isnan(percentile_interval(np.array([np.nan, np.nan]))[0])


def test_non_numeric_items_are_resampled_whole():
    spans = [[(0, 1)], [], [(2, 3), (4, 5)]]
    lengths = bootstrap_ci(lambda items: float(np.mean([len(x) for x in items])), spans, n_resamples=50)
    assert lengths[0] == 1.0


def test_indices_shape_and_validation():
    idx = bootstrap_indices(5, 7, seed=0)
    assert idx.shape == (7, 5) and idx.min() >= 0 and idx.max() < 5
    with pytest.raises(ValueError):
        bootstrap_indices(0, 7)
    with pytest.raises(ValueError, match="same length"):
        bootstrap_ci(np.mean, [1, 2], [1])
    with pytest.raises(ValueError, match="no items"):
        bootstrap_ci(np.mean, [])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(np.mean, [1.0], confidence=1.0)
    with pytest.raises(ValueError, match="at least one sample"):
        bootstrap_ci(np.mean)
