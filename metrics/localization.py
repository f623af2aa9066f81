"""Hallucinated-segment localization in a sentence (AlignBench section 4.2, Table 5 and Table H).

AlignBench gives a detector a sentence known to contain a hallucination and asks it to mark the wrong
words. Table 5 reports precision: a predicted span is correct if its IoU with some gold span of the
same sentence is at least 0.3 (appendix E.1, "Evaluation metric in hallucination localization").
Table H reports the mean over sentences of the IoU between predicted and gold segments.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metrics._validation import Span, as_span_list, check_threshold
from metrics.matching import iou
from metrics.span_batches import _check_pair, _same_item_pairs


def localization_precision(
    preds: Sequence[Sequence[Span]], golds: Sequence[Sequence[Span]], threshold: float = 0.3
) -> float:
    """Share of predicted spans that hit a gold span of their item (AlignBench Table 5, appendix E.1).

    A predicted span is correct if ``IoU(pred, g) >= threshold`` for at least one gold span ``g`` of the
    same item; ``precision = correct predicted spans / all predicted spans`` over all items. Several
    predictions may hit the same gold span (this is precision, not a matching). Returns 0.0 when there
    are no predicted spans at all, including when there are no items.
    """
    pred, gold = _check_pair(preds, golds)
    threshold = check_threshold(threshold)
    if pred.starts.size == 0:
        return 0.0
    pairs = _same_item_pairs(pred, gold)
    correct = np.unique(pairs.pred[pairs.iou >= threshold]).size
    return correct / pred.starts.size


def mean_iou(preds: Sequence[Sequence[Span]], golds: Sequence[Sequence[Span]]) -> float:
    """Mean over items of the IoU of the units covered by predictions vs by gold (AlignBench Table H).

    Per item, ``P`` is the set of units covered by any predicted span and ``G`` likewise for gold;
    ``IoU = |P ∩ G| / |P ∪ G|``, 1.0 when both are empty. Overlapping spans count their units once.
    Raises ``ValueError`` when there are no items.
    """
    pred_lists = list(preds)
    gold_lists = list(golds)
    if len(pred_lists) != len(gold_lists):
        raise ValueError(
            f"preds and golds must have one entry per item, got {len(pred_lists)} and {len(gold_lists)}"
        )
    if not pred_lists:
        raise ValueError("no items: mean IoU is undefined")
    total = 0.0
    for i, (p, g) in enumerate(zip(pred_lists, gold_lists, strict=True)):
        total += coverage_iou(as_span_list(p, f"preds[{i}]"), as_span_list(g, f"golds[{i}]"))
    return total / len(pred_lists)


def coverage_iou(pred: list[Span], gold: list[Span]) -> float:
    """IoU of the unit sets covered by two validated span lists; 1.0 when both cover nothing."""
    a, b = _merge(pred), _merge(gold)
    covered_a = sum(e - s for s, e in a)
    covered_b = sum(e - s for s, e in b)
    if covered_a == 0 and covered_b == 0:
        return 1.0
    inter = 0
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if hi > lo:
            inter += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return iou(inter, covered_a, covered_b)


def _merge(spans: list[Span]) -> list[Span]:
    """Sorted, disjoint intervals covering the same units (adjacent spans merge)."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]
