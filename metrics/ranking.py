"""Sentence-level detection: AUROC overall, per group, and detector x captioner tables (AlignBench).

AlignBench (section 4, "Setups") scores every caption sentence 0-100 with each detector and reports the
AUROC "within each captioner" (Table 3); its self-preference view (Figure 8, left) is the detector x
captioner matrix normalised by each detector's average AUROC. AUROC here is the Mann-Whitney statistic
``U / (n_pos · n_neg)`` with ties counted one half, computed from average ranks in O(n log n).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics._validation import as_1d_float_array, as_binary_labels, as_int, check_confidence
from metrics.bootstrap import percentile_interval

# Bootstrap resamples are drawn in chunks so memory stays near chunk x group size.
_RESAMPLE_CHUNK_CELLS = 4_000_000


def auroc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """Area under the ROC curve, as the Mann-Whitney probability (AlignBench section 4, Table 3).

    ``AUROC = (R_pos - n_pos (n_pos + 1) / 2) / (n_pos · n_neg)`` where ``R_pos`` is the sum of the
    average ranks of the positives: the probability that a random positive scores above a random
    negative, a tie counting one half. Labels are 0/1 (1 = positive), higher scores mean "more positive".
    Raises ``ValueError`` unless both classes are present.

    >>> auroc([0, 0, 1, 1], [0.1, 0.5, 0.5, 0.9])
    0.875
    """
    y = as_binary_labels(labels, "labels")
    s = as_1d_float_array(scores, "scores")
    if y.size != s.size:
        raise ValueError(f"labels and scores must have the same length, got {y.size} and {s.size}")
    return _auroc_checked(y, s)


def _auroc_checked(y: np.ndarray, s: np.ndarray) -> float:
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUROC needs both classes: labels contain only " + ("0" if n_pos == 0 else "1"))
    return _auroc_sorted(y, s, n_pos, n_neg)


def _auroc_sorted(y: np.ndarray, s: np.ndarray, n_pos: int, n_neg: int) -> float:
    order = np.argsort(s, kind="stable")
    sorted_scores = s[order]
    # Start of every run of equal scores; each run shares the average of its 1-based ranks.
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], s.size]
    pos_in_run = np.add.reduceat(y[order].astype(np.int64), starts)
    # Twice the average rank of a run, (start + 1 + end), keeps the rank sum an exact integer.
    twice_rank_sum = int(np.dot(pos_in_run, starts + 1 + ends))
    u_twice = twice_rank_sum - n_pos * (n_pos + 1)
    return u_twice / (2 * n_pos * n_neg)


def _group_index(groups: Sequence[Hashable], n: int) -> tuple[list[Hashable], np.ndarray]:
    index: dict[Hashable, int] = {}
    values = groups.tolist() if isinstance(groups, np.ndarray) else list(groups)
    if len(values) != n:
        raise ValueError(f"groups must have one entry per sentence ({n}), got {len(values)}")
    try:
        codes = np.fromiter((index.setdefault(g, len(index)) for g in values), dtype=np.int64, count=n)
    except TypeError:
        raise ValueError("groups must be hashable") from None
    return list(index), codes


def auroc_by_group(
    labels: Sequence[int], scores: Sequence[float], groups: Sequence[Hashable]
) -> dict[Hashable, float]:
    """AUROC within each group, e.g. each captioning model (AlignBench Table 3 computes it "within each
    captioner"). Groups appear in order of first appearance; a group lacking one class gets NaN, so a
    table keeps its shape and shows the hole."""
    y = as_binary_labels(labels, "labels")
    s = as_1d_float_array(scores, "scores")
    if y.size != s.size:
        raise ValueError(f"labels and scores must have the same length, got {y.size} and {s.size}")
    names, codes = _group_index(groups, y.size)
    return {name: value for name, value in zip(names, _grouped_auroc(y, s, codes, len(names)), strict=True)}


def _grouped_auroc(y: np.ndarray, s: np.ndarray, codes: np.ndarray, n_groups: int) -> list[float]:
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_groups + 1))
    result = []
    for g in range(n_groups):
        members = order[bounds[g] : bounds[g + 1]]
        yg = y[members]
        n_pos = int(yg.sum())
        n_neg = yg.size - n_pos
        result.append(_auroc_sorted(yg, s[members], n_pos, n_neg) if n_pos and n_neg else float("nan"))
    return result


@dataclass(frozen=True, eq=False)
class AurocTable:
    """AUROC of every detector (rows) within every group (columns), with bootstrap intervals.

    ``auroc``, ``low``, ``high``: arrays of shape ``(len(detectors), len(groups))``; ``low``/``high`` are
    NaN when no bootstrap was asked for or a group lacks a class. ``n_pos``/``n_neg`` count the
    sentences of each class per group.
    """

    detectors: list[Hashable]
    groups: list[Hashable]
    auroc: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    confidence: float
    n_resamples: int

    def normalized(self) -> np.ndarray:
        """Each row divided by that detector's mean AUROC over groups (AlignBench Figure 8, left):
        values below 1 on the diagonal of a detector x captioner table reveal self-preference."""
        return self.auroc / np.nanmean(self.auroc, axis=1, keepdims=True)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per cell, handy for a data frame or a chart."""
        return [
            {
                "detector": d,
                "group": g,
                "auroc": float(self.auroc[i, j]),
                "low": float(self.low[i, j]),
                "high": float(self.high[i, j]),
                "n_pos": int(self.n_pos[j]),
                "n_neg": int(self.n_neg[j]),
            }
            for i, d in enumerate(self.detectors)
            for j, g in enumerate(self.groups)
        ]


def auroc_table(
    labels: Sequence[int],
    scores_by_detector: Mapping[Hashable, Sequence[float]],
    groups: Sequence[Hashable],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AurocTable:
    """AUROC of each detector within each group, with percentile bootstrap intervals.

    The point estimates are :func:`auroc` per (detector, group) cell (AlignBench Table 3; with detectors
    and captioners as rows and columns this is the self-preference matrix of Figure 8). For the
    intervals, sentences are resampled with replacement within each group, ``n_resamples`` times, and
    the same resamples are shared by all detectors (a paired bootstrap, so detectors can be compared
    cell by cell); resamples that miss a class are skipped. ``n_resamples=0`` skips the bootstrap.

    ``labels`` and every score array have one entry per sentence; ``groups`` names each sentence's
    group (e.g. its captioning model). Sentences labelled "unknown" in AlignBench should be left out
    by the caller, as the paper does.
    """
    y = as_binary_labels(labels, "labels")
    n = y.size
    detectors = list(scores_by_detector)
    if not detectors:
        raise ValueError("scores_by_detector is empty")
    score_rows = []
    for name in detectors:
        s = as_1d_float_array(scores_by_detector[name], f"scores of {name!r}")
        if s.size != n:
            raise ValueError(f"scores of {name!r} have {s.size} entries for {n} labels")
        score_rows.append(s)
    n_resamples = as_int(n_resamples, "n_resamples")
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0")
    confidence = check_confidence(confidence)
    names, codes = _group_index(groups, n)

    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    shape = (len(detectors), len(names))
    point = np.full(shape, np.nan)
    low = np.full(shape, np.nan)
    high = np.full(shape, np.nan)
    n_pos = np.zeros(len(names), dtype=np.int64)
    n_neg = np.zeros(len(names), dtype=np.int64)
    rng = np.random.default_rng(seed)
    for g in range(len(names)):
        members = order[bounds[g] : bounds[g + 1]]
        yg = y[members]
        n_pos[g] = int(yg.sum())
        n_neg[g] = yg.size - n_pos[g]
        if not (n_pos[g] and n_neg[g]):
            continue
        # Every detector's scores of this group as small integer keys, so a resample is a histogram.
        keys = [_dense_rank(s[members]) for s in score_rows]
        for d in range(len(detectors)):
            point[d, g] = _auroc_sorted(yg, score_rows[d][members], int(n_pos[g]), int(n_neg[g]))
        if n_resamples:
            boot = _bootstrap_group(yg, keys, n_resamples, rng)
            for d in range(len(detectors)):
                low[d, g], high[d, g] = percentile_interval(boot[d], confidence)
    return AurocTable(detectors, names, point, low, high, n_pos, n_neg, confidence, n_resamples)


def _dense_rank(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Rank of each value among the distinct values (0-based), and the number of distinct values."""
    uniques, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(np.int64), uniques.size


def _bootstrap_group(
    y: np.ndarray, keys: list[tuple[np.ndarray, int]], n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """AUROC of every detector on every resample of one group; NaN where a resample lacks a class.

    A resample is summarised, per detector, by how many positives and negatives it holds at each
    distinct score; from that histogram the Mann-Whitney U is a cumulative sum, so each resample costs
    O(n) instead of a sort.
    """
    n = y.size
    out = np.empty((len(keys), n_resamples), dtype=np.float64)
    chunk = max(1, min(n_resamples, _RESAMPLE_CHUNK_CELLS // max(n, 1)))
    y64 = y.astype(np.int64)
    for first in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - first)
        idx = rng.integers(0, n, size=(b, n))
        picked_y = y64[idx]
        pos = picked_y.sum(axis=1)
        neg = n - pos
        usable = (pos > 0) & (neg > 0)
        row_offset = np.arange(b, dtype=np.int64)[:, None]
        for d, (key, n_keys) in enumerate(keys):
            # Cell (resample, distinct score, class) counted with one bincount.
            cell = (row_offset * n_keys + key[idx]) * 2 + picked_y
            hist = np.bincount(cell.ravel(), minlength=b * n_keys * 2).reshape(b, n_keys, 2)
            negatives, positives = hist[:, :, 0], hist[:, :, 1]
            below = np.cumsum(negatives, axis=1) - negatives
            u_twice = (positives * (2 * below + negatives)).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[d, first : first + b] = np.where(usable, u_twice / (2.0 * pos * neg), np.nan)
    return out
