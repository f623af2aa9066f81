"""Which predicted span matched which gold span under F1_IoU, and why the others did not.

:func:`metrics.f1_iou` only counts ``M``, the size of a maximum one-to-one matching between predicted
and gold spans in which a pair may match only if ``IoU >= threshold`` (MHALO section 2.3, eq. 5).
Showing a detector's output needs the matching itself: which prediction matched which gold span and
with what IoU, which predictions are false positives and which gold spans were missed.

:func:`match_spans` finds a matching of exactly that size (so ``2M / (|pred| + |gold|)`` equals
``metrics.f1_iou``) and, among the maximum matchings, one with the largest total IoU, so that where
several are possible the drawing pairs each prediction with the gold span it overlaps most. Spans are
half-open ``(start, end)`` intervals of units; pass token spans to get MHALO's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from metrics import token_spans

Span = tuple[int, int]


@dataclass(frozen=True)
class MatchedPair:
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
        """``2M / (|pred| + |gold|)``: F1_IoU of the item (1.0 when both lists are empty)."""
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


def _checked(spans: Sequence[Sequence[int]], what: str) -> list[Span]:
    out = []
    for span in spans:
        start, end = (int(v) for v in span)
        if not 0 <= start < end:
            raise ValueError(
                f"{what} span {(start, end)} is empty, reversed or negative: need 0 <= start < end"
            )
        out.append((start, end))
    return out


def _iou(a: Span, b: Span) -> float:
    inter = min(a[1], b[1]) - max(a[0], b[0])
    return 0.0 if inter <= 0 else inter / ((a[1] - a[0]) + (b[1] - b[0]) - inter)


def iou_matrix(pred: Sequence[Span], gold: Sequence[Span]) -> np.ndarray:
    """``IoU(pred[i], gold[j])`` for every pair, as a ``len(pred) × len(gold)`` float array."""
    p, g = _checked(pred, "pred"), _checked(gold, "gold")
    return np.array([[_iou(a, b) for b in g] for a in p], dtype=np.float64).reshape(len(p), len(g))


def _best(iou: list[list[float]]) -> tuple[tuple[int | None, float], ...]:
    """Per row: the column with the largest positive IoU (first on ties), or (None, 0.0)."""
    out: list[tuple[int | None, float]] = []
    for row in iou:
        best = max(range(len(row)), key=row.__getitem__, default=None)
        out.append((best, row[best]) if best is not None and row[best] > 0 else (None, 0.0))
    return tuple(out)


def _assign(iou: list[list[float]], allowed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs of a maximum matching over ``allowed`` with the most IoU among maximum matchings."""
    rows = [r for r, _ in allowed]
    cols = [c for _, c in allowed]
    if len(set(rows)) == len(rows) and len(set(cols)) == len(cols):
        return allowed  # no span has two candidates: every candidate pair is in the matching
    weights = np.zeros((len(iou), len(iou[0])))
    big = min(weights.shape) + 1
    for r, c in allowed:
        weights[r, c] = big + iou[r][c]
    chosen = set(allowed)
    found = linear_sum_assignment(weights, maximize=True)
    return [(int(r), int(c)) for r, c in zip(*found, strict=True) if (r, c) in chosen]


def match_spans(pred: Sequence[Span], gold: Sequence[Span], threshold: float = 0.5) -> SpanMatching:
    """A maximum matching of ``pred`` to ``gold`` where a pair qualifies when ``IoU >= threshold``.

    The matching has the size :func:`metrics.f1_iou` counts (MHALO eq. 5), and among matchings of that
    size the largest total IoU. Where some span has several candidates it is solved as an assignment
    problem: each qualifying pair weighs ``K + IoU`` with ``K = min(|pred|, |gold|) + 1``, other pairs
    0. As ``IoU <= 1``, one more pair always outweighs any gain in IoU (``(k + 1)·K > k·(K + 1)`` for
    ``k < K``), so the optimum is a maximum matching first and the one with the most IoU second.

    >>> m = match_spans([(1, 2), (4, 5)], [(0, 2)])  # MHALO appendix E, "A toothbrush is being washed"
    >>> [(p.pred, p.gold, p.iou) for p in m.pairs], m.false_positives, round(m.f1, 4)
    ([(0, 0, 0.5)], (1,), 0.6667)
    """
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold!r}")
    p, g = _checked(pred, "pred"), _checked(gold, "gold")
    iou = [[_iou(a, b) for b in g] for a in p]
    allowed = [(r, c) for r, row in enumerate(iou) for c, value in enumerate(row) if value >= threshold]
    pairs = [MatchedPair(r, c, iou[r][c]) for r, c in _assign(iou, allowed)] if allowed else []
    return SpanMatching(
        n_pred=len(p),
        n_gold=len(g),
        threshold=float(threshold),
        pairs=tuple(sorted(pairs, key=lambda pair: pair.pred)),
        best_for_pred=_best(iou),
        best_for_gold=_best([list(column) for column in zip(*iou, strict=True)] if p else [[] for _ in g]),
    )


def token_span_of(text: str, start: int, end: int) -> Span | None:
    """The token span :func:`metrics.token_spans` gives the character span ``[start, end)``.

    ``None`` when the span covers no token (only whitespace) or is empty: the MHALO measures drop such
    a span, so it takes no part in the matching either.
    """
    if start >= end:
        return None
    found = token_spans(text, [(start, end)])
    return found[0] if found else None
