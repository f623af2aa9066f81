"""Span-detection scores of one item: F1_IoU and F1_M (MHALO, section 2.3).

A span is a half-open interval ``(start, end)`` of units (tokens or characters; the caller decides).
These functions score one item exactly in plain Python, which is the fastest way for the handful of
spans an item has; :mod:`metrics.span_batches` computes the same numbers for thousands of items at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from metrics._validation import Span, as_span, as_span_list, check_threshold

# Above this many candidate pairs the C implementation of Hopcroft-Karp beats augmenting paths in Python.
_PYTHON_MATCHING_MAX_PAIRS = 1024


def span_iou(a: Sequence[int], b: Sequence[int]) -> float:
    """Intersection over union of two spans, measured in units.

    ``IoU(a, b) = |a ∩ b| / |a ∪ b|`` with ``|a ∪ b| = len(a) + len(b) - |a ∩ b|`` (MHALO eq. 4).

    >>> span_iou((0, 2), (1, 2))
    0.5
    """
    a_start, a_end = as_span(a, "a")
    b_start, b_end = as_span(b, "b")
    return _iou(a_start, a_end, b_start, b_end)


def _iou(a_start: int, a_end: int, b_start: int, b_end: int) -> float:
    inter = min(a_end, b_end) - max(a_start, b_start)
    if inter <= 0:
        return 0.0
    return inter / ((a_end - a_start) + (b_end - b_start) - inter)


def f1_iou(pred: Sequence[Span], gold: Sequence[Span], threshold: float = 0.5) -> float:
    """F1_IoU of one item (MHALO section 2.3, equations 4-6).

    ``M`` is the size of a maximum one-to-one matching between predicted and gold spans in which a pair
    may be matched only if ``IoU >= threshold``; ``F1_IoU = 2M / (|pred| + |gold|)``. Matching on IoU
    rather than exact boundaries is what lets "black" or "pants" both count for a gold "black pants".

    Both lists empty gives 1.0 (nothing to find, nothing claimed); exactly one empty gives 0.0.

    Parameters
    ----------
    pred, gold : list of (start, end)
        Half-open spans in any order; duplicates are kept and each needs its own partner.
    threshold : float in [0, 1]
        A pair qualifies when the float ``inter / union`` is ``>=`` this value.

    >>> f1_iou([(1, 2), (4, 5)], [(0, 2)])  # MHALO appendix E, Gemini on "A toothbrush ..."
    0.6666666666666666
    """
    pred = as_span_list(pred, "pred")
    gold = as_span_list(gold, "gold")
    threshold = check_threshold(threshold)
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    matched = max_iou_matching(pred, gold, threshold)
    return 2 * matched / (len(pred) + len(gold))


def max_iou_matching(pred: list[Span], gold: list[Span], threshold: float) -> int:
    """Size of a maximum matching between validated span lists, pairs allowed when IoU >= threshold."""
    if len(pred) * len(gold) > _PYTHON_MATCHING_MAX_PAIRS:
        return _matching_size_scipy(pred, gold, threshold)
    adjacency = [
        [j for j, (gs, ge) in enumerate(gold) if _iou(ps, pe, gs, ge) >= threshold] for ps, pe in pred
    ]
    return _augmenting_path_matching(adjacency, len(gold))


def _augmenting_path_matching(adjacency: list[list[int]], n_right: int) -> int:
    """Kuhn's augmenting-path algorithm: exact, and cheapest for the few spans of one item."""
    owner = [-1] * n_right

    def augment(left: int, seen: list[bool]) -> bool:
        for right in adjacency[left]:
            if not seen[right]:
                seen[right] = True
                if owner[right] == -1 or augment(owner[right], seen):
                    owner[right] = left
                    return True
        return False

    size = 0
    for left, neighbours in enumerate(adjacency):
        if not neighbours:
            continue
        # Greedy first: a free neighbour needs no search, which settles most real items at once.
        free = next((r for r in neighbours if owner[r] == -1), -1)
        if free != -1:
            owner[free] = left
            size += 1
        elif augment(left, [False] * n_right):
            size += 1
    return size


def _matching_size_scipy(pred: list[Span], gold: list[Span], threshold: float) -> int:
    p = np.asarray(pred, dtype=np.int64)
    g = np.asarray(gold, dtype=np.int64)
    inter = np.minimum(p[:, None, 1], g[None, :, 1]) - np.maximum(p[:, None, 0], g[None, :, 0])
    np.maximum(inter, 0, out=inter)
    union = (p[:, None, 1] - p[:, None, 0]) + (g[None, :, 1] - g[None, :, 0]) - inter
    rows, cols = np.nonzero(inter / union >= threshold)
    graph = csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(len(pred), len(gold)))
    return int(np.count_nonzero(maximum_bipartite_matching(graph, perm_type="column") >= 0))


def f1_m(pred: Sequence[Span], gold: Sequence[Span]) -> float:
    """F1_M of one item: harmonic mean of partial-match precision and recall (MHALO section 2.3, eq. 1-3).

    ``PM_R(g)`` is 1 if a prediction equals ``g``, else the largest ``len(p) / len(g)`` over predictions
    ``p ⊆ g``, else 0; ``PM_P(p)`` is the mirror image over gold spans contained in ``p``.
    ``Rec = mean PM_R`` over gold, ``Prec = mean PM_P`` over predictions and
    ``F1_M = 2·Prec·Rec / (Prec + Rec)`` (0 when both are 0). The partial-match idea follows
    Jafari et al. (2024), as cited by MHALO.

    Both lists empty gives 1.0; exactly one empty gives 0.0.

    A prediction strictly inside a gold span earns recall on that gold span but no precision, and one
    strictly around a gold span earns precision but no recall:

    >>> f1_m([(0, 1), (3, 5)], [(0, 2), (3, 4)])  # Rec = (1/2 + 0) / 2, Prec = (0 + 1/2) / 2
    0.25
    """
    pred = as_span_list(pred, "pred")
    gold = as_span_list(gold, "gold")
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    recall = sum(_best_contained_ratio(g, pred) for g in gold) / len(gold)
    precision = sum(_best_contained_ratio(p, gold) for p in pred) / len(pred)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _best_contained_ratio(outer: Span, candidates: list[Span]) -> float:
    """Largest ``len(c) / len(outer)`` over candidates inside ``outer`` (an equal span gives 1.0)."""
    start, end = outer
    length = end - start
    best = 0.0
    for c_start, c_end in candidates:
        if c_start >= start and c_end <= end:
            ratio = (c_end - c_start) / length
            if ratio > best:
                best = ratio
    return best
