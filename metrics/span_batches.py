"""F1_IoU and F1_M for many items at once, vectorised with numpy.

A benchmark table scores every detector on every item (MHALO: 12 detectors x 2,155 items), so calling
the one-item functions in a loop would spend most of its time in the interpreter. Here all items' spans
live in flat arrays (:class:`PackedSpans`), every (pred, gold) pair of the same item that can count
(at an IoU threshold above 0, only those that overlap) is scored in one numpy pass, and the maximum
matchings of all items are found by a single call to SciPy's Hopcroft-Karp
on the disjoint union of the per-item graphs (:func:`metrics.matching.matched_per_group`). IoU and the
matching are those of :mod:`metrics.matching`; the results equal :func:`metrics.f1_iou` and
:func:`metrics.f1_m` (the property tests hold the two paths together).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from metrics._validation import Span, as_span, check_threshold
from metrics.key_order import lex_order
from metrics.matching import (
    iou,
    matched_per_group,
    matched_per_group_of,
    matching_pairs_per_group,
    overlap,
)

_BOOL_TYPES = {bool, np.bool_}
_TEXT_TYPES = {str, bytes, np.str_, np.bytes_}

#: The thresholds of an F1_IoU curve, written as k/10 so that 0.3 is exactly the float 0.3.
DEFAULT_CURVE_THRESHOLDS: tuple[float, ...] = tuple(k / 10 for k in range(1, 10))


@dataclass(frozen=True, eq=False)
class PackedSpans:
    """The span lists of many items in flat arrays (CSR layout).

    Spans of item ``i`` are ``starts[offsets[i]:offsets[i + 1]]`` / ``ends[...]``, in input order.
    Build it with :func:`pack_spans`; pack gold spans once and reuse them for every detector.
    """

    starts: np.ndarray
    ends: np.ndarray
    offsets: np.ndarray

    @property
    def n_items(self) -> int:
        return self.offsets.size - 1

    def __len__(self) -> int:
        return self.n_items

    @cached_property
    def counts(self) -> np.ndarray:
        """Number of spans of each item."""
        return np.diff(self.offsets)

    @cached_property
    def item_of_span(self) -> np.ndarray:
        """For every span, the index of the item it belongs to."""
        return np.repeat(np.arange(self.n_items), self.counts)

    def item(self, i: int) -> list[Span]:
        """The spans of item ``i`` as a list of int pairs."""
        lo, hi = self.offsets[i], self.offsets[i + 1]
        return list(zip(self.starts[lo:hi].tolist(), self.ends[lo:hi].tolist(), strict=True))

    def span_rows(self, items: np.ndarray) -> np.ndarray:
        """Positions in the flat arrays of the spans of ``items`` (item indices, in that order)."""
        items = np.asarray(items, dtype=np.int64)
        counts = self.counts[items]
        begin = self.offsets[:-1][items]
        within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        rows: np.ndarray = np.repeat(begin, counts) + within
        return rows

    def take(self, items: np.ndarray) -> PackedSpans:
        """The spans of ``items`` (item indices, in that order) as a packed list of their own."""
        items = np.asarray(items, dtype=np.int64)
        offsets = np.zeros(items.size + 1, dtype=np.int64)
        np.cumsum(self.counts[items], out=offsets[1:])
        rows = self.span_rows(items)
        return PackedSpans(self.starts[rows], self.ends[rows], offsets)

    def select(self, mask: np.ndarray) -> PackedSpans:
        """Keep only the spans where ``mask`` (one bool per span) is true; items stay in place."""
        counts = np.bincount(self.item_of_span[mask], minlength=self.n_items)
        offsets = np.zeros(self.n_items + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return PackedSpans(self.starts[mask], self.ends[mask], offsets)


def pack_spans(span_lists: Sequence[Sequence[Span]] | PackedSpans, what: str = "spans") -> PackedSpans:
    """Validate a list of per-item span lists and pack it into flat arrays.

    ``None`` is not an item: use ``[]`` for an item without spans. A :class:`PackedSpans` is returned
    unchanged, so functions taking span lists also take packed ones.
    """
    if isinstance(span_lists, PackedSpans):
        return span_lists
    if span_lists is None or isinstance(span_lists, str | bytes):
        raise ValueError(f"{what} must be a list with one list of spans per item")
    items = list(span_lists)
    try:
        counts = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    except TypeError:
        bad = next(i for i, item in enumerate(items) if not hasattr(item, "__len__"))
        raise ValueError(f"{what}[{bad}] must be a list of (start, end) spans, got {items[bad]!r}") from None
    if _TEXT_TYPES & set(map(type, items)):
        bad = next(i for i, item in enumerate(items) if isinstance(item, str | bytes))
        raise ValueError(f"{what}[{bad}] must be a list of (start, end) spans, got a string")
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat = list(chain.from_iterable(items))
    arr = _flat_span_array(flat, items, offsets, what)
    starts = np.ascontiguousarray(arr[:, 0])
    ends = np.ascontiguousarray(arr[:, 1])
    if starts.size and ((starts < 0).any() or (starts >= ends).any()):
        _raise_first_bad_span(items, what)
    return PackedSpans(starts, ends, offsets)


def _flat_span_array(flat: list[Any], items: list[Any], offsets: np.ndarray, what: str) -> np.ndarray:
    if not flat:
        return np.zeros((0, 2), dtype=np.int64)
    try:
        arr = np.array(flat)
    except (TypeError, ValueError):
        arr = None
    # numpy turns True into 1 without complaint; the scalar checker rejects booleans, so must we.
    if (
        arr is not None
        and arr.ndim == 2
        and arr.shape[1] == 2
        and arr.dtype.kind in "iuf"
        and not _BOOL_TYPES & set(map(type, chain.from_iterable(flat)))
    ):
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64, copy=False)
        if np.isfinite(arr).all() and (arr == np.floor(arr)).all():
            return arr.astype(np.int64)
    # Something is unusual (bools, strings, fractions, ragged pairs): let the scalar checker explain.
    out = np.empty((len(flat), 2), dtype=np.int64)
    for i, item in enumerate(items):
        for k, span in enumerate(item):
            out[offsets[i] + k] = as_span(span, f"{what}[{i}][{k}]")
    return out


def _raise_first_bad_span(items: list[Any], what: str) -> None:
    for i, item in enumerate(items):
        for k, span in enumerate(item):
            as_span(span, f"{what}[{i}][{k}]")
    raise AssertionError("unreachable: a bad span was detected but not found")


@dataclass(frozen=True, eq=False)
class SpanPairs:
    """Every (pred, gold) pair of the same item of two packed span lists, with what IoU and
    containment need: where F1_IoU, F1_M, the F1_IoU curve and the per-type recall all start.

    Scoring one detector several ways (MHALO Table 3, the curve and Figure 5), make it once with
    :func:`span_pairs` and pass it to each measure instead of letting each pair the spans again.
    ``overlapping``: only the pairs whose spans overlap are held (:func:`_overlapping_pairs`), enough
    for every measure but F1_IoU at a threshold of 0.
    """

    preds: PackedSpans  # the spans it pairs: a measure given these pairs must be given these spans
    golds: PackedSpans
    pred: np.ndarray  # index into the packed preds
    gold: np.ndarray  # index into the packed golds
    inter: np.ndarray  # |p ∩ g| in units
    pred_len: np.ndarray
    gold_len: np.ndarray
    overlapping: bool = False

    @cached_property
    def iou(self) -> np.ndarray:
        return iou(self.inter, self.pred_len, self.gold_len)


def span_pairs(
    preds: Sequence[Sequence[Span]] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    threshold: float = 0.0,
) -> SpanPairs:
    """The :class:`SpanPairs` of ``preds`` and ``golds`` (packed; pass the packed lists to the measures)
    that the measures at IoU thresholds of ``threshold`` and above need: with ``threshold`` above 0,
    only the overlapping pairs (:func:`_pairs_for`). A detector's spans and the gold ones of an item
    mostly lie apart (five pairs in six at 10 K items x 12 detectors), and every measure given the
    pairs works through all of them. A measure at a threshold of 0 given such pairs makes all of them."""
    pred, gold = _check_pair(preds, golds)
    return _pairs_for(pred, gold, check_threshold(threshold))


def _pairs_of(pred: PackedSpans, gold: PackedSpans, pairs: SpanPairs | None, threshold: float) -> SpanPairs:
    """``pairs`` when made of these very spans, or the pairs made now when none are given; all the pairs
    when the measure counts those at IoU 0 (``threshold``, its lowest) and ``pairs`` hold only
    overlapping ones."""
    if pairs is None:
        return _same_item_pairs(pred, gold)
    if pairs.preds is not pred or pairs.golds is not gold:
        raise ValueError("pairs must be the span_pairs of the (scored) preds and the golds given")
    if pairs.overlapping and threshold <= 0:
        return _same_item_pairs(pred, gold)
    return pairs


def _same_item_pairs(pred: PackedSpans, gold: PackedSpans) -> SpanPairs:
    pred_item = pred.item_of_span
    per_pred = gold.counts[pred_item]
    total = int(per_pred.sum())
    pair_pred = np.repeat(np.arange(pred_item.size), per_pred)
    # The k-th pair of a pred span points at the k-th gold span of the same item.
    first_pair = np.cumsum(per_pred) - per_pred
    pair_gold = np.arange(total) + np.repeat(gold.offsets[:-1][pred_item] - first_pair, per_pred)
    ps, pe = pred.starts[pair_pred], pred.ends[pair_pred]
    gs, ge = gold.starts[pair_gold], gold.ends[pair_gold]
    return SpanPairs(pred, gold, pair_pred, pair_gold, overlap(ps, pe, gs, ge), pe - ps, ge - gs)


# Keys packing an item and a span end into one int64 stay below this (else all pairs are made).
_KEY_ROOM = 1 << 62


def _overlapping_pairs(pred: PackedSpans, gold: PackedSpans) -> SpanPairs:
    """The pairs of :func:`_same_item_pairs` whose spans overlap, in the same order (by pred, then gold).

    They are all that a measure counting overlaps sees: F1_IoU at a threshold above 0 (only overlapping
    pairs reach it), F1_M (containment needs an overlap) and the boundary errors (a pair apart has IoU
    0, where a prediction's best starts anyway). At 10 K items x 12 detectors eight in nine pairs of a
    detector's and another's spans of an item lie apart; making, scoring and dropping them was most of
    the time of the failure finder's disagreement, 66 pairs of detectors.

    Each pred span's candidates are found by two binary searches over the gold spans of every item in
    order of start: those starting before it ends, from the first whose item's running furthest end
    passes its start (spans of one item may nest, so ends alone are in no order).
    """
    gold_item = gold.item_of_span  # nondecreasing: spans are packed item after item
    g_starts, g_ends = gold.starts, gold.ends
    order: np.ndarray | None = None
    if g_starts.size > 1 and not bool(
        ((gold_item[1:] != gold_item[:-1]) | (g_starts[1:] >= g_starts[:-1])).all()
    ):
        order = lex_order((g_starts, gold_item))  # within each item by start; items stay in place
        g_starts, g_ends = g_starts[order], g_ends[order]
    width = max(int(pred.ends.max(initial=0)), int(gold.ends.max(initial=0))) + 1
    if (
        pred.n_items * width >= _KEY_ROOM
        or min(int(pred.starts.min(initial=0)), int(gold.starts.min(initial=0))) < 0
    ):
        pairs = _same_item_pairs(pred, gold)
        apart = pairs.inter == 0
        if not apart.any():
            return pairs
        near = ~apart
        return SpanPairs(
            pred,
            gold,
            pairs.pred[near],
            pairs.gold[near],
            pairs.inter[near],
            pairs.pred_len[near],
            pairs.gold_len[near],
            overlapping=True,
        )
    base = gold_item * width
    # Per item, the furthest end so far (the keys of earlier items all lie below).
    reach = np.maximum.accumulate(base + g_ends)
    pred_base = pred.item_of_span * width
    hi = np.searchsorted(base + g_starts, pred_base + pred.ends, side="left")
    lo = np.searchsorted(reach, pred_base + pred.starts, side="right")
    count = np.maximum(hi - lo, 0)
    total = int(count.sum())
    pair_pred = np.repeat(np.arange(pred.starts.size), count)
    at = np.arange(total) + np.repeat(lo - (np.cumsum(count) - count), count)
    ps, pe = pred.starts[pair_pred], pred.ends[pair_pred]
    gs, ge = g_starts[at], g_ends[at]
    inter = overlap(ps, pe, gs, ge)
    near = inter > 0
    pair_pred, at, ps, pe, gs, ge, inter = (a[near] for a in (pair_pred, at, ps, pe, gs, ge, inter))
    pair_gold = at if order is None else order[at]
    if order is not None:  # back to the golds' own order within each pred's pairs
        again = lex_order((pair_gold, pair_pred))
        pair_pred, pair_gold, ps, pe, gs, ge, inter = (
            a[again] for a in (pair_pred, pair_gold, ps, pe, gs, ge, inter)
        )
    return SpanPairs(pred, gold, pair_pred, pair_gold, inter, pe - ps, ge - gs, overlapping=True)


def _pairs_for(pred: PackedSpans, gold: PackedSpans, threshold: float) -> SpanPairs:
    """The pairs a measure at IoU ``threshold`` needs: only the overlapping ones above 0."""
    return _overlapping_pairs(pred, gold) if threshold > 0 else _same_item_pairs(pred, gold)


def _check_pair(preds: Any, golds: Any) -> tuple[PackedSpans, PackedSpans]:
    pred = pack_spans(preds, "preds")
    gold = pack_spans(golds, "golds")
    if pred.n_items != gold.n_items:
        raise ValueError(
            f"preds and golds must have one entry per item, got {pred.n_items} and {gold.n_items}"
        )
    return pred, gold


def _matched_per_item(
    pred: PackedSpans, gold: PackedSpans, pairs: SpanPairs, valid: np.ndarray
) -> np.ndarray:
    """Size of the maximum matching of each item over the pairs marked valid."""
    return matched_per_group(
        pairs.pred[valid], pairs.gold[valid], pred.item_of_span, gold.starts.size, pred.n_items
    )


def _f1_from_matches(matched: np.ndarray, n_pred: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    total = n_pred + n_gold
    scores = np.ones(matched.size, dtype=np.float64)  # both empty -> 1.0
    has_any = total > 0
    scores[has_any] = 2 * matched[has_any] / total[has_any]
    return scores


def f1_iou_per_item(
    preds: Sequence[Sequence[Span]] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    threshold: float = 0.5,
) -> np.ndarray:
    """F1_IoU of every item (MHALO section 2.3, eq. 4-6), equal to ``[f1_iou(p, g) for p, g in ...]``.

    ``preds`` and ``golds`` hold one span list per item (or are :class:`PackedSpans`). Returns a float
    array with one score per item. Format failures are not known here: see
    :func:`metrics.span_detection_table`, which scores them 0.
    """
    pred, gold = _check_pair(preds, golds)
    threshold = check_threshold(threshold)
    return _f1_iou_scores(pred, gold, _pairs_for(pred, gold, threshold), threshold)


def _f1_iou_scores(pred: PackedSpans, gold: PackedSpans, pairs: SpanPairs, threshold: float) -> np.ndarray:
    matched = _matched_per_item(pred, gold, pairs, pairs.iou >= threshold)
    return _f1_from_matches(matched, pred.counts, gold.counts)


def f1_iou_curve(
    preds: Sequence[Sequence[Span]] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    thresholds: Sequence[float] = DEFAULT_CURVE_THRESHOLDS,
    follows_format: Sequence[bool] | np.ndarray | None = None,
    *,
    pairs: SpanPairs | None = None,
) -> np.ndarray:
    """Mean F1_IoU over items at each IoU threshold (MHALO eq. 6 with the 0.5 of eq. 5 varied).

    The curve shows how much of a detector's score depends on boundary precision: a detector whose
    score collapses between 0.5 and 0.9 finds the right places but not the exact words. Items whose
    ``follows_format`` is false score 0 at every threshold, as in MHALO section 4.1. ``pairs``, when
    given, are the :func:`span_pairs` of these packed ``preds`` and ``golds``.

    Returns an array of the same length as ``thresholds`` (default 0.1, 0.2, ..., 0.9).
    """
    pred, gold = _check_pair(preds, golds)
    if pred.n_items == 0:
        raise ValueError("no items to score")
    checked = [check_threshold(t, "each threshold") for t in thresholds]
    ok = _format_mask(follows_format, pred.n_items)
    pairs = _pairs_of(pred, gold, pairs, min(checked, default=1.0))
    # Most pairs of an item's spans do not overlap: keep those any threshold lets through, once.
    kept = pairs.iou >= min(checked, default=1.0)
    rows, cols, iou = pairs.pred[kept], pairs.gold[kept], pairs.iou[kept]
    # Matched at every threshold at once: the items where spans compete are found once, at the lowest.
    matched_at = matched_per_group_of(
        rows, cols, pred.item_of_span, gold.starts.size, pred.n_items, [iou >= t for t in checked]
    )
    curve = np.empty(len(checked), dtype=np.float64)
    for k, matched in enumerate(matched_at):
        scores = _f1_from_matches(matched, pred.counts, gold.counts)
        curve[k] = np.where(ok, scores, 0.0).mean()
    return curve


def scored_predictions(preds: Sequence[Sequence[Span] | None] | PackedSpans, ok: np.ndarray) -> PackedSpans:
    """The predictions that are scored, packed: :func:`read_predictions`, also of packed spans (whose
    format failures lose their spans). Packed spans come back as they are, the same object, when no
    format failure holds a span: scored once, they can be given to each measure with their pairs."""
    if isinstance(preds, PackedSpans):
        if preds.n_items != ok.size:
            raise ValueError(f"preds must have one entry per item ({ok.size}), got {preds.n_items}")
        kept = ok[preds.item_of_span]
        return preds if kept.all() else preds.select(kept)  # the same spans when none is dropped
    pred_lists = list(preds)
    if len(pred_lists) != ok.size:
        raise ValueError(f"preds must have one entry per item ({ok.size}), got {len(pred_lists)}")
    return pack_spans(read_predictions(pred_lists, ok), "preds")


def read_predictions(pred_lists: Sequence[Sequence[Span] | None], ok: np.ndarray) -> list[Sequence[Span]]:
    """The span lists that are scored: a format failure's prediction is never read and counts as no
    spans (it may be ``None``); ``None`` where the format held is an error."""
    out: list[Sequence[Span]] = []
    for i, (spans, good) in enumerate(zip(pred_lists, ok.tolist(), strict=True)):
        if not good:
            out.append([])
        elif spans is None:
            raise ValueError(f"preds[{i}] is None although follows_format[{i}] is true")
        else:
            out.append(spans)
    return out


def _format_mask(follows_format: Sequence[bool] | np.ndarray | None, n_items: int) -> np.ndarray:
    if follows_format is None:
        return np.ones(n_items, dtype=bool)
    mask = np.asarray(follows_format)
    if mask.ndim != 1 or mask.size != n_items:
        raise ValueError(f"follows_format must have one bool per item ({n_items}), got shape {mask.shape}")
    if mask.dtype != np.bool_:
        if mask.dtype.kind not in "iu" or not np.isin(mask, (0, 1)).all():
            raise ValueError("follows_format must contain booleans")
        mask = mask.astype(bool)
    return mask


def f1_m_per_item(
    preds: Sequence[Sequence[Span]] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
) -> np.ndarray:
    """F1_M of every item (MHALO section 2.3, eq. 1-3), equal to ``[f1_m(p, g) for p, g in ...]``."""
    pred, gold = _check_pair(preds, golds)
    return _f1_m_scores(pred, gold, _same_item_pairs(pred, gold))


def _f1_m_scores(pred: PackedSpans, gold: PackedSpans, pairs: SpanPairs) -> np.ndarray:
    # p ⊆ g exactly when their intersection is all of p.
    pm_r = np.zeros(gold.starts.size, dtype=np.float64)
    inside_gold = pairs.inter == pairs.pred_len
    np.maximum.at(pm_r, pairs.gold[inside_gold], pairs.pred_len[inside_gold] / pairs.gold_len[inside_gold])
    pm_p = np.zeros(pred.starts.size, dtype=np.float64)
    inside_pred = pairs.inter == pairs.gold_len
    np.maximum.at(pm_p, pairs.pred[inside_pred], pairs.gold_len[inside_pred] / pairs.pred_len[inside_pred])

    n_pred, n_gold = pred.counts, gold.counts
    both = (n_pred > 0) & (n_gold > 0)
    recall = np.bincount(gold.item_of_span, weights=pm_r, minlength=gold.n_items)[both] / n_gold[both]
    precision = np.bincount(pred.item_of_span, weights=pm_p, minlength=pred.n_items)[both] / n_pred[both]
    denom = precision + recall
    f1 = np.zeros(both.sum(), dtype=np.float64)
    nonzero = denom > 0
    f1[nonzero] = 2 * precision[nonzero] * recall[nonzero] / denom[nonzero]

    scores = np.where((n_pred == 0) & (n_gold == 0), 1.0, 0.0)
    scores[both] = f1
    return scores


@dataclass(frozen=True)
class ItemMatchings:
    """What :func:`metrics.matching.match_spans` says about every item, computed for all items at once.

    ``n_matched``: size of the item's maximum matching; ``n_boundary``: predictions whose largest IoU with
    a gold span of the item lies in ``[low, high)``; ``f1_iou`` and ``f1_m``: the item's scores, as
    :func:`f1_iou_per_item` and :func:`f1_m_per_item` give them (from the same pairs of spans). Which
    gold spans the matching pairs is :func:`matched_gold_spans`, asked for apart: it alone needs the
    matching itself in items where spans compete, and only one view of the failure finder shows it.
    """

    n_matched: np.ndarray
    n_boundary: np.ndarray
    f1_iou: np.ndarray
    f1_m: np.ndarray


def item_matchings(
    preds: Sequence[Sequence[Span]] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    threshold: float = 0.5,
    boundary: tuple[float, float] = (0.2, 0.5),
) -> ItemMatchings:
    """Per item, ``match_spans(preds[i], golds[i], threshold)``'s matching size and boundary errors, and
    the item's F1_IoU and F1_M, equal to calling them item by item (the tests check this). Matching
    sizes come from one Hopcroft-Karp call over all items."""
    pred, gold = _check_pair(preds, golds)
    threshold = check_threshold(threshold)
    pairs = _pairs_for(pred, gold, threshold)  # F1_M and the boundary errors need only overlaps too
    ious = pairs.iou
    best = np.zeros(pred.starts.size)  # a prediction's largest IoU, 0 when it overlaps no gold span
    np.maximum.at(best, pairs.pred, ious)
    low, high = boundary
    n_boundary = np.bincount(pred.item_of_span[(low <= best) & (best < high)], minlength=pred.n_items)
    n_matched = _matched_per_item(pred, gold, pairs, ious >= threshold)
    f1_iou = _f1_from_matches(n_matched, pred.counts, gold.counts)
    return ItemMatchings(n_matched, n_boundary, f1_iou, _f1_m_scores(pred, gold, pairs))


def matched_gold_spans(
    preds: Sequence[Sequence[Span]] | PackedSpans,
    golds: Sequence[Sequence[Span]] | PackedSpans,
    threshold: float = 0.5,
) -> np.ndarray:
    """The gold spans that ``match_spans(preds[i], golds[i], threshold)`` pairs with a prediction, item
    by item, as sorted indices into the packed gold spans (``gold.item_of_span`` names their items).

    Where the matching pairs every gold span that has a qualifying partner, which gold spans it finds is
    settled whatever the matching (it holds where no two spans compete, and in most items where they
    do); only the other items are solved one by one, with ``match_spans``' own assignment, as there the
    IoU decides which gold span is left out.
    """
    pred, gold = _check_pair(preds, golds)
    threshold = check_threshold(threshold)
    pairs = _pairs_for(pred, gold, threshold)
    ious = pairs.iou
    valid = ious >= threshold
    n_matched = _matched_per_item(pred, gold, pairs, valid)
    found = np.zeros(gold.starts.size, dtype=bool)
    found[pairs.gold[valid]] = True  # every gold span with a qualifying partner, to begin with
    gold_item = gold.item_of_span
    n_partners = np.bincount(gold_item[found], minlength=pred.n_items)
    solved = np.flatnonzero(n_matched < n_partners)
    if solved.size == 0:
        return np.flatnonzero(found)
    is_solved = np.zeros(pred.n_items, dtype=bool)
    is_solved[solved] = True
    found &= ~is_solved[gold_item]
    # The qualifying pairs of the solved items, which lie together, by pred then gold: in each item the
    # order np.nonzero gives in its IoU matrix, as match_spans would see them.
    hard = np.flatnonzero(valid & is_solved[gold_item[pairs.gold]])
    cols = pairs.gold[hard]
    chosen = matching_pairs_per_group(pairs.pred[hard], cols, ious[hard], gold_item[cols])
    found[cols[chosen]] = True
    return np.flatnonzero(found)
