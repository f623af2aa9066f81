"""Span-detection scores of one item: F1_IoU and F1_M (MHALO, section 2.3).

A span is a half-open interval ``(start, end)`` of units (tokens or characters; the caller decides).
These functions score one item; the matching F1_IoU counts is :func:`metrics.matching.match_spans`, the
one matching engine, and :mod:`metrics.span_batches` computes the same numbers for thousands of items at
once.
"""

from __future__ import annotations

from collections.abc import Sequence

from metrics._validation import Span, as_span_list, check_threshold
from metrics.matching import match_spans


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
    return match_spans(pred, gold, threshold).f1


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
