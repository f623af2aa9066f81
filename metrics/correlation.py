"""Correlation of an automatic metric with human judgement, with bootstrap intervals.

MHALO (section 5.1, Figure 4) validates F1_IoU and F1_M by their Pearson correlation with human scores
per item; Tri-HE (Table 3) does the same for its judges. Pearson measures linear agreement, Spearman
and Kendall only the ordering, which is what matters when a metric is used to rank detectors, so all
three are reported. Intervals are percentile bootstrap intervals over items (:mod:`metrics.bootstrap`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from metrics._validation import as_1d_float_array, check_confidence, check_positive_int
from metrics.bootstrap import bootstrap_indices, percentile_interval

_CHUNK_CELLS = 2_000_000


def correlations(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Pearson, Spearman and Kendall (tau-b) correlation of ``metric`` with ``human``, with intervals.

    Pearson ``r = Σ (x - x̄)(y - ȳ) / sqrt(Σ (x - x̄)² Σ (y - ȳ)²)`` (MHALO section 5.1, Tri-HE Table 3);
    Spearman is Pearson on average ranks; Kendall's tau-b counts concordant minus discordant pairs,
    corrected for ties. P-values are SciPy's two-sided tests of zero correlation. The interval resamples
    items with replacement; resamples where one side is constant are skipped.

    Returns ``{"pearson": {"r", "p_value", "low", "high"}, "spearman": {...}, "kendall": {...}}``.
    Raises ``ValueError`` for fewer than 3 items or a constant input (correlation is undefined).
    """
    x = as_1d_float_array(metric, "metric", allow_inf=False)
    y = as_1d_float_array(human, "human", allow_inf=False)
    if x.size != y.size:
        raise ValueError(f"metric and human must have the same length, got {x.size} and {y.size}")
    if x.size < 3:
        raise ValueError("correlation needs at least 3 items")
    if np.all(x == x[0]) or np.all(y == y[0]):
        raise ValueError("correlation is undefined when metric or human scores are constant")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    confidence = check_confidence(confidence)

    from scipy import stats  # here, not at the top: importing a file must not load scipy

    points = {
        "pearson": stats.pearsonr(x, y),
        "spearman": stats.spearmanr(x, y),
        "kendall": stats.kendalltau(x, y),
    }
    boot = _bootstrap(x, y, bootstrap_indices(x.size, n_resamples, seed))
    result = {}
    for name, test in points.items():
        low, high = percentile_interval(boot[name], confidence)
        result[name] = {"r": float(test.statistic), "p_value": float(test.pvalue), "low": low, "high": high}
    return result


def _bootstrap(x: np.ndarray, y: np.ndarray, indices: np.ndarray) -> dict[str, np.ndarray]:
    from scipy import stats

    n_resamples, n = indices.shape
    out = {name: np.empty(n_resamples) for name in ("pearson", "spearman", "kendall")}
    chunk = max(1, _CHUNK_CELLS // n)
    for first in range(0, n_resamples, chunk):
        idx = indices[first : first + chunk]
        xs, ys = x[idx], y[idx]
        rows = slice(first, first + idx.shape[0])
        out["pearson"][rows] = _rowwise_pearson(xs, ys)
        out["spearman"][rows] = _rowwise_pearson(stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant resamples give NaN, which is what we want
            out["kendall"][rows] = [stats.kendalltau(a, b).statistic for a, b in zip(xs, ys, strict=True)]
    return out


def _rowwise_pearson(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    xc = xs - xs.mean(axis=1, keepdims=True)
    yc = ys - ys.mean(axis=1, keepdims=True)
    denom = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r: np.ndarray = (xc * yc).sum(axis=1) / denom
    r[denom == 0] = np.nan
    clipped: np.ndarray = np.clip(r, -1.0, 1.0)
    return clipped
