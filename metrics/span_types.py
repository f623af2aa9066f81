"""Span-detection scores broken down by hallucination type (MHALO section 5.2, Figure 5).

MHALO's Figure 5 asks, for each hallucination type, how often a detector found the gold hallucinations
of that type. MHALO's detectors output untyped tags, so "found" cannot depend on the predicted type:
here a gold span counts as detected when at least one prediction of the same item overlaps it with
``IoU >= threshold`` (MHALO had GPT-4o judge this, appendix B.3; the IoU rule is its reproducible
stand-in, with the same threshold as F1_IoU). Detectors that do output typed spans (e.g. ZINA-style
``<number>three</number>``) additionally get a per-type F1_IoU computed on the spans of that type only.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import chain

import numpy as np

from metrics._validation import Span, check_threshold
from metrics.key_order import first_appearance_codes
from metrics.span_batches import (
    PackedSpans,
    SpanPairs,
    _format_mask,
    _pairs_of,
    f1_iou_per_item,
    pack_spans,
    scored_predictions,
)


def f1_iou_by_type(
    preds: Sequence[Sequence[Span] | None] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    gold_types: Sequence[Sequence[Hashable]] | np.ndarray,
    pred_types: Sequence[Sequence[Hashable]] | None = None,
    threshold: float = 0.5,
    follows_format: Sequence[bool] | np.ndarray | None = None,
    *,
    pairs: SpanPairs | None = None,
) -> dict[Hashable, dict[str, float | int | None]]:
    """Per hallucination type: detection rate of gold spans and, for typed detectors, F1_IoU.

    For each type ``t`` (in order of first appearance in ``gold_types``, then ``pred_types``):

    - ``n_gold``: number of gold spans of type ``t``;
    - ``recall``: share of those gold spans matched by at least one prediction of the same item, of any
      type, with ``IoU >= threshold`` (MHALO Figure 5, "accuracy" per type); NaN when ``n_gold`` is 0;
    - ``f1_iou``: only when ``pred_types`` is given, else ``None``: the mean over items that have a gold
      or predicted span of type ``t`` of ``f1_iou(pred spans of type t, gold spans of type t)``
      (MHALO eq. 6 restricted to one type). Items without any span of type ``t`` are left out, as they
      would score a vacuous 1.0;
    - ``n_items``: the number of items in that mean (``None`` with untyped predictions).

    Items whose ``follows_format`` is false detect nothing and score 0, as in MHALO section 4.1.
    ``pairs``, when given, are the :func:`metrics.span_batches.span_pairs` of the scored predictions
    and the packed golds.
    ``gold_types[i]`` (and ``pred_types[i]``) hold one label per span of item ``i``; ``gold_types`` may
    also be a 1-D numpy array with one label per gold span, in packed order (as for packed ``golds``).
    """
    threshold = check_threshold(threshold)
    gold = pack_spans(golds, "golds")
    ok = _format_mask(follows_format, gold.n_items)
    if len(preds) != gold.n_items:
        raise ValueError(f"preds and golds must have one entry per item, got {len(preds)} and {gold.n_items}")
    pred = scored_predictions(preds, ok)

    codes: dict[Hashable, int] = {}
    gold_code = _type_codes(gold_types, gold.counts, codes, "gold_types")
    pred_code = None
    if pred_types is not None:
        typed = [
            t if good else []
            for t, good in zip(_as_lists(pred_types, gold.n_items, "pred_types"), ok.tolist(), strict=True)
        ]
        pred_code = _type_codes(typed, pred.counts, codes, "pred_types")

    pairs = _pairs_of(pred, gold, pairs, threshold)
    detected = np.zeros(gold.starts.size, dtype=bool)
    detected[pairs.gold[pairs.iou >= threshold]] = True
    n_types = len(codes)
    n_gold = np.bincount(gold_code, minlength=n_types)
    n_detected = np.bincount(gold_code, weights=detected.astype(np.float64), minlength=n_types)

    result: dict[Hashable, dict[str, float | int | None]] = {}
    for label, k in codes.items():
        row: dict[str, float | int | None] = {
            "n_gold": int(n_gold[k]),
            "recall": float(n_detected[k] / n_gold[k]) if n_gold[k] else float("nan"),
            "f1_iou": None,
            "n_items": None,
        }
        if pred_code is not None:
            sub_pred = pred.select(pred_code == k)
            sub_gold = gold.select(gold_code == k)
            relevant = (sub_pred.counts + sub_gold.counts) > 0
            scores = f1_iou_per_item(sub_pred, sub_gold, threshold)
            row["f1_iou"] = float(scores[relevant].mean())
            row["n_items"] = int(relevant.sum())
        result[label] = row
    return result


def _as_lists(values: Sequence[Sequence[Hashable]], n_items: int, what: str) -> list[list[Hashable]]:
    lists = [list(v) for v in values]
    if len(lists) != n_items:
        raise ValueError(f"{what} must have one entry per item ({n_items}), got {len(lists)}")
    return lists


def _type_codes(
    types: Sequence[Sequence[Hashable]] | np.ndarray,
    span_counts: np.ndarray,
    codes: dict[Hashable, int],
    what: str,
) -> np.ndarray:
    if isinstance(types, np.ndarray):
        return _flat_type_codes(types, int(span_counts.sum()), codes, what)
    lists = _as_lists(types, span_counts.size, what)
    for i, (labels, count) in enumerate(zip(lists, span_counts.tolist(), strict=True)):
        if len(labels) != count:
            raise ValueError(f"{what}[{i}] has {len(labels)} labels for {count} spans")
    try:
        return np.fromiter(
            (codes.setdefault(t, len(codes)) for t in chain.from_iterable(lists)),
            dtype=np.int64,
            count=int(span_counts.sum()),
        )
    except TypeError:
        raise ValueError(f"{what} must hold hashable labels") from None


def _flat_type_codes(types: np.ndarray, n_spans: int, codes: dict[Hashable, int], what: str) -> np.ndarray:
    """Codes of one label per span, given flat: each distinct label is coded once, in order of first
    appearance, as for per-item lists."""
    if types.ndim != 1 or types.size != n_spans:
        raise ValueError(f"{what} must hold one label per span ({n_spans}), got shape {types.shape}")
    if types.dtype.kind in "USiu":  # text or integer labels: numpy finds the distinct ones at once
        labels, inverse = first_appearance_codes(types)  # integer codes are counted, not sorted
        mapped = np.fromiter(
            (codes.setdefault(label, len(codes)) for label in labels.tolist()),
            dtype=np.int64,
            count=labels.size,
        )
        coded: np.ndarray = mapped[inverse]
        return coded
    try:
        return np.fromiter(
            (codes.setdefault(t, len(codes)) for t in types.tolist()), dtype=np.int64, count=n_spans
        )
    except TypeError:
        raise ValueError(f"{what} must hold hashable labels") from None
