"""Calibration of token-level hallucination probabilities (HalLoc supplement, section B).

HalLoc reports the Expected Calibration Error (equal-width bins) and the Adaptive Calibration Error
(equal-count bins) of per-token hallucination probabilities, and, because hallucinated tokens are rare,
also each error on the positive and the negative tokens separately with their mean ("Avg", footnote 3).
Here ``probs`` are the predicted probabilities of the positive class and ``labels`` the 0/1 truth, so a
bin compares the positive rate ("accuracy") with the mean probability ("confidence").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metrics._validation import as_binary_labels, as_probabilities, check_positive_int


def _checked(
    probs: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray, n_bins: int
) -> tuple[np.ndarray, np.ndarray, int]:
    p = as_probabilities(probs, "probs")
    y = as_binary_labels(labels, "labels")
    if p.size != y.size:
        raise ValueError(f"probs and labels must have the same length, got {p.size} and {y.size}")
    if p.size == 0:
        raise ValueError("no probabilities: calibration error is undefined")
    return p, y, check_positive_int(n_bins, "n_bins")


def _uniform_bins(p: np.ndarray, n_bins: int) -> np.ndarray:
    # int() of a non-negative float64 truncates like floor; p == 1.0 falls in the last bin.
    return np.minimum((p * n_bins).astype(np.int64), n_bins - 1)


def _adaptive_bins(n: int, n_bins: int) -> np.ndarray:
    """Group number of each position of the sorted data: the first ``n % n_bins`` groups get one extra."""
    size, extra = divmod(n, n_bins)
    sizes = np.full(n_bins, size, dtype=np.int64)
    sizes[:extra] += 1
    return np.repeat(np.arange(n_bins), sizes)


def _sort_like_stable(p: np.ndarray, y: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """``p`` and ``y`` ordered by ``p`` as a stable sort would order them, for the ACE groups.

    A stable sort of a million floats is several times slower than numpy's default (SIMD) sort. The
    order within a run of equal probabilities only matters when the run straddles a group boundary
    (elsewhere the whole run lands in one group), so sort unstably and put just those runs back in
    input order.
    """
    order = np.argsort(p)
    sorted_p = p[order]
    sizes = np.bincount(_adaptive_bins(p.size, n_bins), minlength=n_bins)
    for cut in np.cumsum(sizes)[:-1].tolist():
        if 0 < cut < p.size and sorted_p[cut - 1] == sorted_p[cut]:
            lo = int(np.searchsorted(sorted_p, sorted_p[cut], side="left"))
            hi = int(np.searchsorted(sorted_p, sorted_p[cut], side="right"))
            order[lo:hi] = np.sort(order[lo:hi])
    return sorted_p, y[order]


def _bin_stats(p: np.ndarray, y: np.ndarray, bins: np.ndarray, n_bins: int) -> tuple[np.ndarray, ...]:
    count = np.bincount(bins, minlength=n_bins)
    prob_sum = np.bincount(bins, weights=p, minlength=n_bins)
    label_sum = np.bincount(bins, weights=y, minlength=n_bins)
    return count, prob_sum, label_sum


def ece(probs: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray, n_bins: int = 10) -> float:
    """Expected Calibration Error with equal-width bins (HalLoc supplement, section B, footnote 1).

    Bin of ``p``: ``min(int(p · n_bins), n_bins - 1)`` in float64 (0.3 with 10 bins is bin 3).
    ``ECE = Σ_b |B_b| / n · |mean(labels in B_b) - mean(probs in B_b)|``, empty bins contributing 0.

    >>> ece([0.25, 0.75], [0, 1])
    0.25
    """
    p, y, n_bins = _checked(probs, labels, n_bins)
    count, prob_sum, label_sum = _bin_stats(p, y, _uniform_bins(p, n_bins), n_bins)
    filled = count > 0
    gaps = np.abs(label_sum[filled] / count[filled] - prob_sum[filled] / count[filled])
    return float(np.sum(count[filled] / p.size * gaps))


def ace(probs: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray, n_bins: int = 10) -> float:
    """Adaptive Calibration Error with equal-count bins (HalLoc supplement, section B, footnote 2).

    Sort by probability (stable, so ties keep input order), cut into ``n_bins`` consecutive groups of
    as-equal-as-possible size (the first ``n mod n_bins`` groups get one extra), and take
    ``ACE = mean over non-empty groups of |mean(labels) - mean(probs)|``.
    """
    p, y, n_bins = _checked(probs, labels, n_bins)
    sorted_p, sorted_y = _sort_like_stable(p, y, n_bins)
    count, prob_sum, label_sum = _bin_stats(sorted_p, sorted_y, _adaptive_bins(p.size, n_bins), n_bins)
    filled = count > 0
    gaps = np.abs(label_sum[filled] / count[filled] - prob_sum[filled] / count[filled])
    return float(gaps.mean())


def reliability_diagram(
    probs: Sequence[float] | np.ndarray,
    labels: Sequence[int] | np.ndarray,
    n_bins: int = 10,
    strategy: str = "uniform",
) -> dict[str, np.ndarray]:
    """Per-bin data of a reliability diagram, the picture behind :func:`ece` and :func:`ace`.

    ``strategy="uniform"`` uses the ECE bins, ``"adaptive"`` the ACE groups. Returns arrays of length
    ``n_bins``: ``lower``/``upper`` (bin edges; for adaptive groups the smallest and largest probability
    in the group), ``count``, ``confidence`` (mean probability), ``accuracy`` (positive rate) and
    ``gap`` (``accuracy - confidence``); the means are NaN for empty bins. ``pandas.DataFrame(result)``
    gives a table ready to plot.
    """
    p, y, n_bins = _checked(probs, labels, n_bins)
    if strategy == "uniform":
        bins = _uniform_bins(p, n_bins)
        lower = np.arange(n_bins) / n_bins
        upper = np.arange(1, n_bins + 1) / n_bins
    elif strategy == "adaptive":
        p, y = _sort_like_stable(p, y, n_bins)
        bins = _adaptive_bins(p.size, n_bins)
        lower = np.full(n_bins, np.nan)
        upper = np.full(n_bins, np.nan)
        starts = np.searchsorted(bins, np.arange(n_bins), side="left")
        ends = np.searchsorted(bins, np.arange(n_bins), side="right")
        filled = ends > starts
        lower[filled] = p[starts[filled]]
        upper[filled] = p[ends[filled] - 1]
    else:
        raise ValueError(f"strategy must be 'uniform' or 'adaptive', got {strategy!r}")
    count, prob_sum, label_sum = _bin_stats(p, y, bins, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = prob_sum / count
        accuracy = label_sum / count
    return {
        "lower": lower,
        "upper": upper,
        "count": count,
        "confidence": confidence,
        "accuracy": accuracy,
        "gap": accuracy - confidence,
    }


def calibration_by_label(
    probs: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray, n_bins: int = 10
) -> dict[str, dict[str, float]]:
    """ECE and ACE on positive and negative tokens separately, and their mean (HalLoc, footnote 3).

    Hallucinated tokens are rare, so a low overall error can hide a poor fit on them. HalLoc's tables
    report each error restricted to tokens of one true label and "Avg", the macro average of the two.
    Returns ``{"ece": {"positive", "negative", "average"}, "ace": {...}}``; a label with no tokens
    gives NaN and the average is then NaN too.
    """
    p, y, n_bins = _checked(probs, labels, n_bins)
    result: dict[str, dict[str, float]] = {}
    for name, measure in (("ece", ece), ("ace", ace)):
        per_label = {}
        for key, value in (("positive", 1), ("negative", 0)):
            mask = y == value
            per_label[key] = measure(p[mask], y[mask], n_bins) if mask.any() else float("nan")
        per_label["average"] = (per_label["positive"] + per_label["negative"]) / 2
        result[name] = per_label
    return result
