"""Sentence-level detection: AUROC overall, per group, and detector x captioner tables (AlignBench).

AlignBench (section 4, "Setups") scores every caption sentence 0-100 with each detector and reports the
AUROC "within each captioner" (Table 3); its self-preference view (Figure 8, left) is the detector x
captioner matrix normalised by each detector's average AUROC. AUROC here is the Mann-Whitney statistic
``U / (n_pos · n_neg)`` with ties counted one half, computed from average ranks in O(n log n), or in
O(n) by counting each value when the scores are whole numbers in a small range (0-100, a 1-5 rating).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Hashable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics._validation import as_1d_float_array, as_binary_labels, as_int, check_confidence
from metrics.bootstrap import cell_seed, percentile_interval
from metrics.key_order import counted_ranks, group_codes, worth_counting

# Bootstrap resamples are drawn in chunks so memory stays near chunk x group size.
_RESAMPLE_CHUNK_CELLS = 4_000_000
# One multinomial draw per histogram cell costs about as much as resampling ~16 items.
_MULTINOMIAL_ITEMS_PER_CELL = 16


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
    return _mann_whitney(y, s, n_pos, n_neg)


def _mann_whitney(y: np.ndarray, s: np.ndarray, n_pos: int, n_neg: int) -> float:
    """AUROC of labels ``y`` (both classes present) under scores ``s``: counted per value when the
    scores are whole numbers in a small range (a detector answering 0-100), else from sorted ranks."""
    counted = _whole_number_keys(s)
    if counted is None:
        return _auroc_sorted(y, s, n_pos, n_neg)
    key, n_keys = counted
    hist = np.bincount(key * 2 + y.astype(np.int64), minlength=2 * n_keys).reshape(1, n_keys, 2)
    # The same doubled U as the ranks give, an exact integer, divided as Python divides integers.
    return int(_doubled_u(hist)[0]) / (2 * n_pos * n_neg)


def _whole_number_keys(s: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``s - min(s)`` as integers and how many values that range spans, when every score lies a whole
    number above the lowest (whole-number scores, or such scores all shifted alike) and the range is
    worth counting (:func:`metrics.key_order.worth_counting`); None otherwise (a fraction apart, NaN,
    an infinity, a wide range). Equal scores get equal keys, distinct ones distinct keys, in order."""
    if s.size == 0:
        return None
    low, high = float(s.min()), float(s.max())
    if not (math.isfinite(low) and math.isfinite(high)) or not worth_counting(int(high - low) + 1, s.size):
        return None
    shifted = s - low
    key = shifted.astype(np.int64)
    # Whole differences, and each score exactly the lowest plus its key: distinct scores that round to
    # one difference (-2.5 and 1.5 + 2**-52 lie "4" apart) cannot both come back, so they are sorted.
    if not (np.array_equal(key, shifted) and np.array_equal(key + low, s)):
        return None
    return key, int(high - low) + 1


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


def _group_index(groups: Sequence[Hashable] | np.ndarray, n: int) -> tuple[list[Hashable], np.ndarray]:
    """Group names in order of first appearance, and each entry's position among them."""
    if len(groups) != n:
        raise ValueError(f"groups must have one entry per sentence ({n}), got {len(groups)}")
    try:
        return group_codes(groups)
    except TypeError:
        raise ValueError("groups must be hashable") from None


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
        result.append(_mann_whitney(yg, s[members], n_pos, n_neg) if n_pos and n_neg else float("nan"))
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
        normalized: np.ndarray = self.auroc / np.nanmean(self.auroc, axis=1, keepdims=True)
        return normalized

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
    intervals, each cell's sentences are resampled with replacement, ``n_resamples`` times (percentile
    bootstrap; each cell's interval is marginal, drawn independently of the other cells); resamples that
    miss a class are skipped. ``n_resamples=0`` skips the bootstrap. Each cell draws from its own random
    stream, seeded by ``seed`` and the cell's detector and group names (:func:`~metrics.bootstrap.cell_seed`):
    a cell's interval is the same whichever other detectors or groups share the table.

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
    n_groups = len(names)
    classes = np.bincount(codes * 2 + y, minlength=2 * n_groups).reshape(n_groups, 2)
    n_neg, n_pos = classes[:, 0].astype(np.int64), classes[:, 1].astype(np.int64)
    both = [g for g in range(n_groups) if n_pos[g] and n_neg[g]]
    shape = (len(detectors), n_groups)
    point = np.full(shape, np.nan)
    low = np.full(shape, np.nan)
    high = np.full(shape, np.nan)
    members = _GroupMembers(codes, n_groups)

    def interval(d: int, g: int, hist: np.ndarray | None) -> tuple[float, float]:
        rng = np.random.default_rng(cell_seed(seed, detectors[d], names[g]))
        if hist is not None:
            drawn = _bootstrap_counted(hist, n_resamples, rng)
            if drawn is not None:
                return percentile_interval(drawn, confidence)
        at = members.of(g)
        key, n_keys = _dense_rank(score_rows[d][at])
        return percentile_interval(_bootstrap_auroc(y[at], key, n_keys, n_resamples, rng), confidence)

    # numpy draws the resamples without holding the GIL, so the cells' bootstraps share the cores.
    intervals: list[tuple[int, int, Future[tuple[float, float]]]] = []
    # (The pool starts its threads on the first submitted cell: none when no interval is asked for.)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for d, scores in enumerate(score_rows):
            hists = _group_histograms(y, scores, codes, n_groups)
            for g in both:
                if hists is not None:
                    point[d, g] = int(_doubled_u(hists[g : g + 1])[0]) / (2 * int(n_pos[g]) * int(n_neg[g]))
                else:
                    at = members.of(g)
                    point[d, g] = _mann_whitney(y[at], scores[at], int(n_pos[g]), int(n_neg[g]))
                if n_resamples:
                    cell = None if hists is None else hists[g]
                    intervals.append((d, g, pool.submit(interval, d, g, cell)))
        for d, g, drawn in intervals:
            low[d, g], high[d, g] = drawn.result()
    return AurocTable(detectors, names, point, low, high, n_pos, n_neg, confidence, n_resamples)


class _GroupMembers:
    """Each group's entries (positions in the input), sorted out once and only when a cell needs them:
    a table of whole-number scores is counted per group without them (:func:`_group_histograms`)."""

    def __init__(self, codes: np.ndarray, n_groups: int) -> None:
        self._codes, self._n_groups = codes, n_groups
        self._order: np.ndarray | None = None
        self._bounds: np.ndarray | None = None
        self._lock = threading.Lock()

    def of(self, g: int) -> np.ndarray:
        with self._lock:
            if self._order is None or self._bounds is None:
                self._order = np.argsort(self._codes, kind="stable")
                self._bounds = np.searchsorted(self._codes[self._order], np.arange(self._n_groups + 1))
            order, bounds = self._order, self._bounds
        return order[bounds[g] : bounds[g + 1]]


def _group_histograms(y: np.ndarray, s: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray | None:
    """``hist[g, k, c]``: entries of group ``g`` and class ``c`` whose score is the k-th value of the whole
    range of ``s`` (:func:`_whole_number_keys` over every group at once), counted in one pass; None
    when the scores are not such whole numbers.

    Within a group, the values that occur are its distinct scores in order, and the empty ones add
    nothing: its U (:func:`_doubled_u`, an exact integer) and its bootstrap histogram are the ones its
    own entries give, without picking them out of the million.
    """
    counted = _whole_number_keys(s)
    if counted is None or not worth_counting(n_groups * counted[1], s.size):
        return None  # (or too many groups times values to count: each cell is counted on its own)
    key, n_keys = counted
    flat = (codes * n_keys + key) * 2 + y
    return np.bincount(flat, minlength=n_groups * n_keys * 2).reshape(n_groups, n_keys, 2)


def _bootstrap_counted(hist: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray | None:
    """:func:`_bootstrap_auroc` of one group given its histogram over a range of scores (``hist[k, c]``),
    when it draws the histograms (few distinct scores); None when it would resample the entries."""
    distinct = hist[hist.sum(axis=1) > 0]  # its distinct scores in order: the dense ranks' histogram
    n = int(distinct.sum())
    n_cells = distinct.size
    if n_cells * _MULTINOMIAL_ITEMS_PER_CELL > n:
        return None
    return _multinomial_aurocs(distinct.ravel(), n, n_resamples, rng)


def _dense_rank(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Rank of each value among the distinct values (0-based), and the number of distinct values:
    ``np.unique``'s inverse, counted instead of sorted for whole-number scores in a small range."""
    counted = _whole_number_keys(values)
    if counted is None:
        uniques, inverse = np.unique(values, return_inverse=True)
        return inverse.astype(np.int64), uniques.size
    ranks, distinct = counted_ranks(*counted)
    return ranks, distinct.size


def _bootstrap_auroc(
    y: np.ndarray, key: np.ndarray, n_keys: int, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """AUROC of one detector on ``n_resamples`` bootstrap resamples of one group (NaN: a class is missing).

    AUROC only depends on how many positives and negatives sit at each distinct score, so a resample is
    reduced to that histogram. Drawing ``n`` items with replacement gives, over any partition of the
    items, a multinomial histogram with the partition's shares; with few distinct scores (detectors
    answering 0-100) the histogram is drawn directly from that multinomial, which has exactly the
    distribution of the resampled one at a fraction of the cost. With many distinct scores the items
    themselves are resampled and counted.
    """
    n = y.size
    cells = key * 2 + y.astype(np.int64)
    n_cells = 2 * n_keys
    if n_cells * _MULTINOMIAL_ITEMS_PER_CELL <= n:
        return _multinomial_aurocs(np.bincount(cells, minlength=n_cells), n, n_resamples, rng)
    out = np.empty(n_resamples, dtype=np.float64)
    chunk = max(1, min(n_resamples, _RESAMPLE_CHUNK_CELLS // n))
    for first in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - first)
        picked = cells[rng.integers(0, n, size=(b, n))]
        picked += np.arange(b, dtype=np.int64)[:, None] * n_cells
        hist = np.bincount(picked.ravel(), minlength=b * n_cells).reshape(b, n_keys, 2)
        out[first : first + b] = _auroc_from_histograms(hist)
    return out


def _multinomial_aurocs(counts: np.ndarray, n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """AUROC of ``n_resamples`` histograms drawn from the multinomial of ``counts`` (per dense rank and
    class, ``2 * rank + class``; ``n`` in all): :func:`_bootstrap_auroc` with few distinct scores."""
    n_cells = counts.size
    shares = counts / n
    # The multinomial is drawn as one binomial per cell in turn; an empty cell before the last
    # non-empty one draws nothing (its share is exactly 0) and leaves the rest as they were, so
    # leaving such cells out gives the very same histograms, from the same random numbers.
    last = int(np.flatnonzero(shares)[-1])
    drawn = np.ones(n_cells, dtype=bool)
    drawn[:last] = shares[:last] > 0
    drawn_hist = np.zeros((n_resamples, n_cells), dtype=np.int64)
    drawn_hist[:, drawn] = rng.multinomial(n, shares[drawn], size=n_resamples)
    return _auroc_from_histograms(drawn_hist.reshape(n_resamples, n_cells // 2, 2))


def _doubled_u(hist: np.ndarray) -> np.ndarray:
    """``2U`` per row of ``hist[b, k, c]`` (count of class ``c`` at the k-th smallest score), an exact
    integer: ``U = Σ_k pos_k · (neg below k + neg_k / 2)``."""
    negatives, positives = hist[:, :, 0], hist[:, :, 1]
    below = np.cumsum(negatives, axis=1) - negatives
    doubled: np.ndarray = (positives * (2 * below + negatives)).sum(axis=1)
    return doubled


def _auroc_from_histograms(hist: np.ndarray) -> np.ndarray:
    """AUROC per row of ``hist[b, k, c]``: count of class ``c`` (0 negative, 1 positive) at the k-th
    smallest distinct score. ``U = Σ_k pos_k · (neg below k + neg_k / 2)``, kept doubled as an integer."""
    negatives, positives = hist[:, :, 0], hist[:, :, 1]
    u_twice = _doubled_u(hist)
    n_pos = positives.sum(axis=1)
    n_neg = negatives.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = u_twice / (2.0 * n_pos * n_neg)
    result[(n_pos == 0) | (n_neg == 0)] = np.nan
    return result
