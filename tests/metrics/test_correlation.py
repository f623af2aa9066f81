"""Correlation with human scores (MHALO Figure 4, Tri-HE Table 3): SciPy values plus intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metrics import correlations


def _data(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 5, n).astype(float)  # MHALO's 1-4 scale
    metric = np.clip(human / 4 + rng.normal(scale=0.2, size=n), 0, 1)
    return metric, human


def test_point_values_equal_scipy():
    metric, human = _data()
    result = correlations(metric, human, n_resamples=200)
    assert result["pearson"]["r"] == pytest.approx(stats.pearsonr(metric, human).statistic)
    assert result["spearman"]["r"] == pytest.approx(stats.spearmanr(metric, human).statistic)
    assert result["kendall"]["r"] == pytest.approx(stats.kendalltau(metric, human).statistic)
    assert result["pearson"]["p_value"] == pytest.approx(stats.pearsonr(metric, human).pvalue)
    for name in ("pearson", "spearman", "kendall"):
        row = result[name]
        assert set(row) == {"r", "p_value", "low", "high"}
        assert -1 <= row["low"] <= row["r"] <= row["high"] <= 1


def test_bootstrap_replicates_equal_scipy_on_the_same_resamples():
    from metrics.bootstrap import bootstrap_indices
    from metrics.correlation import _bootstrap

    metric, human = _data(n=30)
    indices = bootstrap_indices(30, 25, seed=5)
    boot = _bootstrap(metric, human, indices)
    for b, idx in enumerate(indices):
        x, y = metric[idx], human[idx]
        assert boot["pearson"][b] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
        assert boot["spearman"][b] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert boot["kendall"][b] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_reproducible_with_seed():
    metric, human = _data()
    assert correlations(metric, human, n_resamples=100, seed=1) == correlations(
        metric, human, n_resamples=100, seed=1
    )


def test_perfect_agreement():
    x = [0.1, 0.4, 0.5, 0.9]
    result = correlations(x, [1, 2, 3, 4], n_resamples=100)
    assert result["spearman"]["r"] == pytest.approx(1.0)
    assert result["kendall"]["low"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("metric", "human", "message"),
    [
        ([0.1, 0.2], [1, 2], "at least 3"),
        ([0.5, 0.5, 0.5], [1, 2, 3], "constant"),
        ([0.1, 0.2, 0.3], [1, 2], "same length"),
        ([0.1, float("inf"), 0.3], [1, 2, 3], "infinite"),
    ],
)
def test_invalid_input(metric, human, message):
    with pytest.raises(ValueError, match=message):
        correlations(metric, human)
