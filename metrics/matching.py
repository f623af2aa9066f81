"""The one span matching engine: IoU, and the maximum IoU matching that F1_IoU counts (MHALO section 2.3).

Every place that pairs predicted with gold spans goes through this module: :func:`metrics.f1_iou` of one
item, the batched scores of :mod:`metrics.span_batches` (all items of a benchmark at once), the Compare
page's span colours, the failure finder's boundary errors and the agreement between annotators' spans.

- :func:`iou` is the formula, ``|a ∩ b| / |a ∪ b|`` with ``|a ∪ b| = len(a) + len(b) - |a ∩ b|`` (MHALO
  eq. 4), on scalars or numpy arrays alike; :func:`overlap` gives ``|a ∩ b|``.
- :func:`match_spans` returns the matching itself for one item: which prediction matched which gold
  span with what IoU, the false positives, the missed gold spans, and each span's closest partner.
- :func:`matched_per_group` is the batched path: the size of a maximum matching of many items at once,
  equal to ``match_spans(...).n_matched`` item by item (the property tests check this).

Spans are half-open ``(start, end)`` intervals of units; pass token spans (:func:`tokens_of_char_span`)
to get MHALO's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from metrics._validation import Span as Span  # re-exported: the span type callers pass in
from metrics._validation import as_span, as_span_list, check_threshold
from metrics.tagged_text import token_spans

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@overload
def overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> int: ...
@overload
def overlap(a_start: IntArray, a_end: IntArray, b_start: IntArray, b_end: IntArray) -> IntArray: ...
def overlap(a_start: Any, a_end: Any, b_start: Any, b_end: Any) -> Any:
    """``|a ∩ b|`` in units (0 when the spans do not overlap), for scalars or arrays of spans."""
    inter = np.minimum(a_end, b_end) - np.maximum(a_start, b_start)
    if isinstance(inter, np.ndarray):
        return np.maximum(inter, 0)
    return max(int(inter), 0)


@overload
def iou(inter: int, a_len: int, b_len: int) -> float: ...
@overload
def iou(inter: IntArray, a_len: IntArray, b_len: IntArray) -> FloatArray: ...
def iou(inter: Any, a_len: Any, b_len: Any) -> Any:
    """Intersection over union from the overlap and the two lengths (MHALO eq. 4)."""
    if isinstance(inter, np.ndarray):
        return inter / (a_len + b_len - inter)
    return inter / (a_len + b_len - inter) if inter else 0.0


def span_iou(a: Sequence[int], b: Sequence[int]) -> float:
    """Intersection over union of two spans, measured in units.

    >>> span_iou((0, 2), (1, 2))
    0.5
    """
    a_start, a_end = as_span(a, "a")
    b_start, b_end = as_span(b, "b")
    return iou(overlap(a_start, a_end, b_start, b_end), a_end - a_start, b_end - b_start)


def iou_matrix(pred: Sequence[Span], gold: Sequence[Span]) -> FloatArray:
    """``IoU(pred[i], gold[j])`` for every pair, as a ``len(pred) × len(gold)`` float array."""
    p = np.asarray(as_span_list(pred, "pred"), dtype=np.int64).reshape(-1, 2)
    g = np.asarray(as_span_list(gold, "gold"), dtype=np.int64).reshape(-1, 2)
    inter = overlap(p[:, None, 0], p[:, None, 1], g[None, :, 0], g[None, :, 1])
    return iou(inter, (p[:, 1] - p[:, 0])[:, None], (g[:, 1] - g[:, 0])[None, :])


@dataclass(frozen=True)
class MatchedPair:
    """One pair of a matching: a predicted and a gold span (indices into their lists) and their IoU."""

    pred: int  # index into the predicted spans
    gold: int  # index into the gold spans
    iou: float


@dataclass(frozen=True)
class SpanMatching:
    """A maximum IoU matching of one item, with each span's best overlap for the unmatched ones."""

    n_pred: int
    n_gold: int
    threshold: float
    pairs: tuple[MatchedPair, ...]  # sorted by pred index
    # For every pred (gold): the gold (pred) span it overlaps most and that IoU; (None, 0.0) if none.
    best_for_pred: tuple[tuple[int | None, float], ...]
    best_for_gold: tuple[tuple[int | None, float], ...]

    @property
    def n_matched(self) -> int:
        return len(self.pairs)

    @property
    def f1(self) -> float:
        """``F1_IoU = 2M / (|pred| + |gold|)`` of the item (MHALO eq. 5); 1.0 when both lists are empty."""
        total = self.n_pred + self.n_gold
        return 1.0 if total == 0 else 2 * self.n_matched / total

    def partner_of_pred(self, pred: int) -> MatchedPair | None:
        return next((pair for pair in self.pairs if pair.pred == pred), None)

    def partner_of_gold(self, gold: int) -> MatchedPair | None:
        return next((pair for pair in self.pairs if pair.gold == gold), None)

    @property
    def false_positives(self) -> tuple[int, ...]:
        """Indices of the predictions no gold span was matched to."""
        matched = {pair.pred for pair in self.pairs}
        return tuple(i for i in range(self.n_pred) if i not in matched)

    @property
    def missed(self) -> tuple[int, ...]:
        """Indices of the gold spans no prediction was matched to."""
        matched = {pair.gold for pair in self.pairs}
        return tuple(j for j in range(self.n_gold) if j not in matched)

    @property
    def matched_gold(self) -> frozenset[int]:
        return frozenset(pair.gold for pair in self.pairs)


def _best(ious: FloatArray) -> tuple[tuple[int | None, float], ...]:
    """Per row: the column with the largest positive IoU (first on ties), or (None, 0.0)."""
    out: list[tuple[int | None, float]] = []
    for row in ious:
        if row.size and row.max() > 0:
            best = int(np.argmax(row))
            out.append((best, float(row[best])))
        else:
            out.append((None, 0.0))
    return tuple(out)


def _assign(ious: FloatArray, rows: IntArray, cols: IntArray) -> list[tuple[int, int]]:
    """The pairs of a maximum matching over the allowed ``(rows, cols)`` with the most IoU among those.

    Solved as an assignment problem: each allowed pair weighs ``K + IoU`` with
    ``K = min(|pred|, |gold|) + 1``, other pairs 0. As ``IoU <= 1``, one more pair always outweighs any
    gain in IoU (``(k + 1)·K > k·(K + 1)`` for ``k < K``), so the optimum is a maximum matching first
    and the one with the most IoU second.
    """
    row_list, col_list = rows.tolist(), cols.tolist()
    allowed = list(zip(row_list, col_list, strict=True))
    used_rows, used_cols = sorted(set(row_list)), sorted(set(col_list))
    if len(used_rows) == len(allowed) and len(used_cols) == len(allowed):
        return allowed  # no span has two candidates: every candidate pair is in the matching
    # Items hold a handful of spans, so plain lists index the small matrix faster than numpy would.
    row_at = {r: k for k, r in enumerate(used_rows)}
    col_at = {c: k for k, c in enumerate(used_cols)}
    weights = np.zeros((len(used_rows), len(used_cols)))
    weights[[row_at[r] for r in row_list], [col_at[c] for c in col_list]] = (
        min(weights.shape) + 1 + ious[rows, cols]
    )
    from scipy.optimize import linear_sum_assignment  # here: the formats use metrics, and need no scipy

    chosen = set(allowed)
    found_rows, found_cols = linear_sum_assignment(weights, maximize=True)
    pairs = (
        (used_rows[r], used_cols[c]) for r, c in zip(found_rows.tolist(), found_cols.tolist(), strict=True)
    )
    return [pair for pair in pairs if pair in chosen]


def matching_pairs(ious: FloatArray, threshold: float) -> list[tuple[int, int]]:
    """The ``(pred, gold)`` pairs of :func:`match_spans`' matching, from the item's IoU matrix."""
    rows, cols = np.nonzero(ious >= threshold)
    return _assign(ious, rows, cols) if rows.size else []


def matching_pairs_per_group(rows: IntArray, cols: IntArray, ious: FloatArray, group: IntArray) -> IntArray:
    """Which of the qualifying pairs of many items :func:`matching_pairs` puts in each item's matching,
    as sorted indices into the pairs: the same assignment problem, solved item by item, with the
    bookkeeping around it done for all items at once (9,900 items at 10 K items x 12 detectors spent
    two thirds of their time in it, one at a time).

    ``rows``, ``cols``: the pairs' predicted and gold spans, numbered so that within an item they run in
    the order of the item's own; ``ious``: their IoU; ``group``: their item. An item's pairs lie
    together, in the order :func:`numpy.nonzero` gives them in its IoU matrix (by row, then column).
    """
    n = rows.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    ends = np.r_[starts[1:], n]
    # A span's place among the item's spans that have a qualifying pair (``_assign``'s used rows and
    # columns, compacted): its rank among all such spans, less that of the item's first.
    row_ids, row_rank = np.unique(rows, return_inverse=True)
    col_ids, col_rank = np.unique(cols, return_inverse=True)
    first_row = np.minimum.reduceat(row_rank, starts)
    first_col = np.minimum.reduceat(col_rank, starts)
    n_rows = np.maximum.reduceat(row_rank, starts) - first_row + 1
    n_cols = np.maximum.reduceat(col_rank, starts) - first_col + 1
    size = ends - starts
    at_row = row_rank - np.repeat(first_row, size)
    at_col = col_rank - np.repeat(first_col, size)
    # ``_assign``'s weights, K + IoU with K = min(|rows|, |cols|) + 1, in the same float arithmetic.
    weight = np.repeat(np.minimum(n_rows, n_cols) + 1, size) + ious
    chosen = np.zeros(n, dtype=bool)
    # No span with two candidates: every pair is in the matching (``_assign``'s shortcut).
    plain = (n_rows == size) & (n_cols == size)
    chosen[np.repeat(plain, size)] = True
    from scipy.optimize import linear_sum_assignment  # here: the formats use metrics, and need no scipy

    for lo, hi, nr, nc in zip(
        starts[~plain].tolist(),
        ends[~plain].tolist(),
        n_rows[~plain].tolist(),
        n_cols[~plain].tolist(),
        strict=True,
    ):
        r, c = at_row[lo:hi], at_col[lo:hi]
        weights = np.zeros((nr, nc))
        weights[r, c] = weight[lo:hi]
        pair = np.full((nr, nc), -1, dtype=np.int64)
        pair[r, c] = np.arange(lo, hi)
        found = pair[linear_sum_assignment(weights, maximize=True)]
        chosen[found[found >= 0]] = True
    return np.flatnonzero(chosen)


def match_spans(pred: Sequence[Span], gold: Sequence[Span], threshold: float = 0.5) -> SpanMatching:
    """A maximum matching of ``pred`` to ``gold`` in which a pair qualifies when ``IoU >= threshold``.

    Its size ``M`` is the one F1_IoU counts (MHALO eq. 5); among matchings of that size it has the
    largest total IoU, so where several are possible each prediction is paired with the gold span it
    overlaps most.

    >>> m = match_spans([(1, 2), (4, 5)], [(0, 2)])  # MHALO appendix E, "A toothbrush is being washed"
    >>> [(p.pred, p.gold, p.iou) for p in m.pairs], m.false_positives, round(m.f1, 4)
    ([(0, 0, 0.5)], (1,), 0.6667)
    """
    threshold = check_threshold(threshold)
    ious = iou_matrix(pred, gold)
    chosen = matching_pairs(ious, threshold)
    pairs = sorted((MatchedPair(r, c, float(ious[r, c])) for r, c in chosen), key=lambda pair: pair.pred)
    return SpanMatching(
        n_pred=ious.shape[0],
        n_gold=ious.shape[1],
        threshold=threshold,
        pairs=tuple(pairs),
        best_for_pred=_best(ious),
        best_for_gold=_best(ious.T),
    )


def matched_per_group(
    rows: IntArray, cols: IntArray, group_of_row: IntArray, n_cols: int, n_groups: int
) -> IntArray:
    """Size of a maximum matching per group of a disjoint union of bipartite graphs (the batched path).

    ``(rows[k], cols[k])`` are the allowed pairs (predicted span, gold span) of all items together;
    ``group_of_row`` names each predicted span's item. A maximum matching of a disjoint union is the
    union of the per-item maximum matchings, so one call to SciPy's Hopcroft-Karp scores every item.
    """
    every = np.ones(rows.size, dtype=bool)
    return matched_per_group_of(rows, cols, group_of_row, n_cols, n_groups, [every])[0]


def matched_per_group_of(
    rows: IntArray,
    cols: IntArray,
    group_of_row: IntArray,
    n_cols: int,
    n_groups: int,
    subsets: Sequence[np.ndarray],
) -> list[IntArray]:
    """:func:`matched_per_group` of each of ``subsets`` of the pairs (boolean masks), as an F1_IoU
    curve asks at nine thresholds.

    A pair whose two spans have no other candidate partner is its own component: it is in every maximum
    matching, so only the other pairs go to Hopcroft-Karp, and the plain ones are counted. Those pairs
    are found, and their spans numbered, once for all the subsets: a pair plain among all the pairs is
    plain among any subset of them."""
    group = group_of_row[rows]
    row_degree = np.bincount(rows, minlength=group_of_row.size)
    col_degree = np.bincount(cols, minlength=n_cols)
    hard = (row_degree[rows] > 1) | (col_degree[cols] > 1)
    if not hard.any():
        return [np.bincount(group[subset], minlength=n_groups) for subset in subsets]
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    # Only the spans of those pairs enter the graph, numbered afresh: Hopcroft-Karp pays for every
    # vertex, and at a high IoU threshold a dozen competing pairs would otherwise stand among 70 K spans.
    row_ids, row_at = _renumbered(rows[hard], group_of_row.size)
    col_ids, col_at = _renumbered(cols[hard], n_cols)
    group_of_hard_row = group_of_row[row_ids]
    found = []
    for subset in subsets:
        chosen = subset[hard]
        graph = csr_matrix(
            (np.ones(int(chosen.sum()), dtype=np.int8), (row_at[chosen], col_at[chosen])),
            shape=(row_ids.size, col_ids.size),
        )
        partner = maximum_bipartite_matching(graph, perm_type="column")
        found.append(
            np.bincount(group[subset & ~hard], minlength=n_groups)
            + np.bincount(group_of_hard_row[partner >= 0], minlength=n_groups)
        )
    return found


def _renumbered(ids: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """The distinct ``ids`` (of ``0 … n − 1``) in order, and each id's position among them."""
    used = np.zeros(n, dtype=bool)
    used[ids] = True
    distinct = np.flatnonzero(used)
    position = np.cumsum(used) - 1
    return distinct, position[ids]


def tokens_of_char_span(text: str, start: int, end: int) -> Span | None:
    """The token span :func:`metrics.token_spans` gives the character span ``[start, end)``.

    ``None`` when the span covers no token (only whitespace) or is empty: the MHALO measures drop such
    a span, so it takes no part in the matching either.
    """
    if start >= end:
        return None
    found = token_spans(text, [(start, end)])
    return found[0] if found else None
