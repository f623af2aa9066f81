"""Dataset-level span-detection scores as the papers report them.

MHALO (section 4.1, Table 3) reports, per subset and on average, the mean over items of F1_M and
F1_IoU, where an item whose detector output failed the format scores 0 on both, next to IF, the share
of items whose output followed the format. The "Average" columns of Table 3 are item-weighted: they
are the mean over all 2,155 items, not the mean of the five subset scores: weighting HALODET-4B's subset
scores by subset size (500 x 4, 155) gives 63.01 / 53.77 against the printed 63.01 / 53.76, while the
plain mean of the five subsets would be 64.08 / 54.81.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metrics._validation import Span, check_threshold
from metrics.key_order import group_codes
from metrics.span_batches import (
    PackedSpans,
    SpanPairs,
    _f1_iou_scores,
    _f1_m_scores,
    _format_mask,
    _pairs_of,
    pack_spans,
    scored_predictions,
)

OVERALL = "overall"


def span_detection_table(
    subsets: Sequence[Hashable] | np.ndarray,
    preds: Sequence[Sequence[Span] | None] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    follows_format: Sequence[bool] | np.ndarray,
    threshold: float = 0.5,
    *,
    pairs: SpanPairs | None = None,
) -> dict[Hashable, dict[str, float]]:
    """Mean F1_M, mean F1_IoU and IF rate of one detector, per subset and overall (MHALO Table 3).

    For item ``i``: ``s_i = f1(preds[i], golds[i])`` if ``follows_format[i]`` else 0, for both F1_M and
    F1_IoU (MHALO section 4.1: "samples on which the model fails to accomplish the task will receive a
    score of zero"). Per group: ``f1_m = mean s_i``, ``f1_iou = mean s_i``, ``if_rate = mean
    follows_format[i]`` and ``n`` the number of items. ``"overall"`` pools every item (item-weighted,
    as MHALO's "Average" column). Scores are fractions in [0, 1], not percentages.

    Parameters
    ----------
    subsets : one hashable per item (e.g. "RLHF-V"); groups appear in order of first appearance.
    preds : one span list per item; may be ``None`` where the format failed (it is not read there);
        or a :class:`PackedSpans`.
    golds : one span list per item, or a :class:`PackedSpans` packed once for every detector.
    follows_format : one bool per item, usually :func:`metrics.follows_format` of the raw output.
    threshold : IoU threshold of F1_IoU.
    pairs : the :func:`metrics.span_batches.span_pairs` of the scored predictions
        (:func:`metrics.span_batches.scored_predictions`) and the packed golds, when already made.

    Returns
    -------
    ``{subset: {"f1_m", "f1_iou", "if_rate", "n"}, ..., "overall": {...}}``
    """
    labels, codes = _group_codes(subsets)
    n_items = codes.size
    if n_items == 0:
        raise ValueError("no items to score")
    if OVERALL in labels:
        raise ValueError(f"{OVERALL!r} is reserved for the pooled row; rename that subset")
    ok = _format_mask(follows_format, n_items)
    pred = scored_predictions(preds, ok)
    gold = pack_spans(golds, "golds")
    if gold.n_items != n_items:
        raise ValueError(f"golds must have one entry per item ({n_items}), got {gold.n_items}")

    threshold = check_threshold(threshold)
    pairs = _pairs_of(pred, gold, pairs, threshold)  # shared by both scores
    f1_m_scores = np.where(ok, _f1_m_scores(pred, gold, pairs), 0.0)
    f1_iou_scores = np.where(ok, _f1_iou_scores(pred, gold, pairs, threshold), 0.0)

    counts = np.bincount(codes, minlength=len(labels))
    sums_m = np.bincount(codes, weights=f1_m_scores, minlength=len(labels))
    sums_iou = np.bincount(codes, weights=f1_iou_scores, minlength=len(labels))
    sums_ok = np.bincount(codes, weights=ok.astype(np.float64), minlength=len(labels))
    table: dict[Hashable, dict[str, float]] = {}
    for k, label in enumerate(labels):
        n = int(counts[k])
        table[label] = {
            "f1_m": float(sums_m[k] / n),
            "f1_iou": float(sums_iou[k] / n),
            "if_rate": float(sums_ok[k] / n),
            "n": n,
        }
    table[OVERALL] = {
        "f1_m": float(f1_m_scores.mean()),
        "f1_iou": float(f1_iou_scores.mean()),
        "if_rate": float(ok.mean()),
        "n": n_items,
    }
    return table


def _group_codes(groups: Sequence[Hashable] | np.ndarray) -> tuple[list[Hashable], np.ndarray]:
    """Integer code per item, groups numbered in order of first appearance (a numpy array of names is
    coded at once: :func:`metrics.key_order.group_codes`)."""
    try:
        return group_codes(groups)
    except TypeError:
        raise ValueError("subsets must be hashable") from None


def aggregate_spans(
    items: Iterable[Mapping[str, Any] | Any], threshold: float = 0.5
) -> dict[Hashable, dict[str, float]]:
    """:func:`span_detection_table` for records with fields ``subset``, ``pred_spans``, ``gold_spans``, ``follows_format``.

    Records may be mappings or objects with those attributes (e.g. dataclasses or ORM rows).
    """
    subsets, preds, golds, ok = [], [], [], []
    for i, item in enumerate(items):
        missing = [k for k in ("subset", "gold_spans", "follows_format") if _field(item, k) is None]
        if missing:
            raise ValueError(f"items[{i}] lacks {', '.join(missing)}")
        subsets.append(_field(item, "subset"))
        preds.append(_field(item, "pred_spans"))
        golds.append(_field(item, "gold_spans"))
        ok.append(bool(_field(item, "follows_format")))
    return span_detection_table(subsets, preds, golds, ok, threshold)


def _field(item: Mapping[str, Any] | Any, key: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def clean_response_accuracy(
    preds: Sequence[Sequence[Span] | None] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    follows_format: Sequence[bool] | np.ndarray | None = None,
) -> float:
    """Accuracy on responses without hallucination (MHALO section 5.3, Figure 6).

    Over the items whose gold annotation has no span, the share where the detector flagged nothing:
    ``acc = |{i : gold_i = ∅ and pred_i = ∅ and format ok}| / |{i : gold_i = ∅}|``. A detector is right on
    a clean response only if it flags nothing; an output that failed the format counts as wrong, as
    failures score 0 everywhere in MHALO. Raises ``ValueError`` when no item is clean. Span lists or
    :class:`PackedSpans`, on either side.
    """
    gold = pack_spans(golds, "golds")
    if len(preds) != gold.n_items:
        raise ValueError(f"preds and golds must have one entry per item, got {len(preds)} and {gold.n_items}")
    ok = _format_mask(follows_format, gold.n_items)
    clean = gold.counts == 0
    if not clean.any():
        raise ValueError("no item without gold spans: accuracy on clean responses is undefined")
    # Only the clean items' predictions are read (and checked).
    read = (
        preds
        if isinstance(preds, PackedSpans)
        else [p if c else [] for p, c in zip(preds, clean.tolist(), strict=True)]
    )
    flagged_nothing = ok & (scored_predictions(read, ok).counts == 0)
    return float(flagged_nothing[clean].sum() / clean.sum())
