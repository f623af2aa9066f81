"""Percentile bootstrap confidence intervals over items.

None of the five papers reports intervals, but their tables compare numbers a few points apart on a
few hundred items, so Spanlight shows every headline number with one. The method is Efron's
percentile bootstrap: resample the items with replacement, recompute the statistic, and take the
``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles. Resampling uses a numpy Generator
seeded explicitly, so the same call always gives the same interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from metrics._validation import as_int, check_confidence, check_positive_int


def percentile_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The central ``confidence`` interval of bootstrap replicates, ignoring NaN replicates.

    Returns ``(nan, nan)`` when no replicate is finite.
    """
    confidence = check_confidence(confidence)
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[~np.isnan(finite)]
    if finite.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return float(low), float(high)


def cell_seed(seed: int, *names: Hashable) -> list[int]:
    """A seed for one cell of a table of intervals: ``seed`` followed by 32-bit words of the SHA-256 of
    each name's text.

    Drawing each cell from its own stream keeps its interval the same whichever other cells a table
    holds (a detector added, a captioner filtered out), and lets the cells be drawn in any order or at
    once. The text, not Python's ``hash``, keeps the seed the same in every process.
    """
    words = [as_int(seed, "seed")]
    for name in names:
        digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).digest()
        words.extend(int.from_bytes(digest[k : k + 4], "little") for k in range(0, 16, 4))
    return words


def bootstrap_indices(n_items: int, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Indices of ``n_resamples`` resamples of ``n_items`` items, shape ``(n_resamples, n_items)``."""
    n_items = check_positive_int(n_items, "n_items")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    return np.random.default_rng(seed).integers(0, n_items, size=(n_resamples, n_items))


def bootstrap_ci(
    statistic: Callable[..., float],
    *samples: Any,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Point estimate and percentile bootstrap interval of ``statistic(*samples)``.

    ``samples`` are sequences with one entry per item (e.g. labels and scores); every resample draws
    the same item indices from all of them, so paired data stay paired. ``statistic`` receives numpy
    arrays (object arrays for non-numeric data). A resample on which the statistic raises
    ``ValueError`` or returns NaN (e.g. AUROC of a resample holding one class) is skipped.

    Returns ``(point, low, high)``; ``low`` and ``high`` are NaN if every resample was skipped.

    >>> point, low, high = bootstrap_ci(np.mean, [1.0, 2.0, 3.0, 4.0], n_resamples=200)
    >>> point, low <= point <= high
    (2.5, True)
    """
    if not samples:
        raise ValueError("bootstrap_ci needs at least one sample")
    arrays = [_as_item_array(s, k) for k, s in enumerate(samples)]
    n = arrays[0].shape[0]
    if any(a.shape[0] != n for a in arrays):
        raise ValueError(f"samples must have the same length, got {[a.shape[0] for a in arrays]}")
    if n == 0:
        raise ValueError("no items to resample")
    confidence = check_confidence(confidence)
    point = float(statistic(*arrays))
    replicates = np.empty(check_positive_int(n_resamples, "n_resamples"), dtype=np.float64)
    for b, idx in enumerate(bootstrap_indices(n, n_resamples, seed)):
        try:
            replicates[b] = float(statistic(*(a[idx] for a in arrays)))
        except ValueError:
            replicates[b] = np.nan
    low, high = percentile_interval(replicates, confidence)
    return point, low, high


def _as_item_array(sample: Any, k: int) -> np.ndarray:
    if isinstance(sample, np.ndarray):
        arr = sample
    else:
        values = list(sample)
        try:
            converted: np.ndarray | None = np.asarray(values)
        except ValueError:  # ragged nested lists, e.g. one span list per item
            converted = None
        if converted is not None and converted.ndim == 1 and converted.dtype.kind in "biuf":
            arr = converted
        else:
            arr = np.empty(len(values), dtype=object)
            for i, value in enumerate(values):  # element-wise, so nested lists stay whole objects
                arr[i] = value
    if arr.ndim == 0:
        raise ValueError(f"sample {k} must have one entry per item")
    return arr
