"""Slow, literal reference implementations and hypothesis strategies shared by the metric tests.

Each reference follows the wording of the metrics contract as directly as possible (brute force over
all matchings, explicit sets of units, explicit coincidence matrices), so that a disagreement with the
fast implementation points at the fast one.
"""

from __future__ import annotations

from itertools import permutations

from hypothesis import strategies as st

# Spans over a short text so that overlaps, containments and duplicates are frequent.
span_strategy = st.tuples(st.integers(0, 12), st.integers(1, 6)).map(lambda t: (t[0], t[0] + t[1]))
span_lists = st.lists(span_strategy, max_size=5)


def iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    units_a, units_b = set(range(*a)), set(range(*b))
    return len(units_a & units_b) / len(units_a | units_b)


def brute_max_matching(pred: list, gold: list, threshold: float) -> int:
    """Try every injective assignment of the smaller side into the larger one."""
    small, large, flip = (pred, gold, False) if len(pred) <= len(gold) else (gold, pred, True)
    best = 0
    for chosen in permutations(range(len(large)), len(small)):
        count = 0
        for i, j in enumerate(chosen):
            a, b = (large[j], small[i]) if flip else (small[i], large[j])
            count += iou(a, b) >= threshold
        best = max(best, count)
    return best


def brute_f1_iou(pred: list, gold: list, threshold: float = 0.5) -> float:
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    return 2 * brute_max_matching(pred, gold, threshold) / (len(pred) + len(gold))


def _pm(outer: tuple[int, int], others: list) -> float:
    """The three-case partial-match score of the contract, case by case."""
    if any(o == outer for o in others):
        return 1.0
    contained = [(e - s) / (outer[1] - outer[0]) for s, e in others if set(range(s, e)) <= set(range(*outer))]
    return max(contained) if contained else 0.0


def brute_f1_m(pred: list, gold: list) -> float:
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    rec = sum(_pm(g, pred) for g in gold) / len(gold)
    prec = sum(_pm(p, gold) for p in pred) / len(pred)
    return 0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)


def brute_auroc(labels: list, scores: list) -> float:
    pos = [s for y, s in zip(labels, scores, strict=True) if y == 1]
    neg = [s for y, s in zip(labels, scores, strict=True) if y == 0]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def brute_alpha(units: list[list], level: str = "nominal") -> float:
    """Krippendorff's alpha from an explicit coincidence matrix (Krippendorff 2011, section C)."""
    pairable = [u for u in units if len(u) >= 2]
    values = sorted({v for u in pairable for v in u})
    o = {(c, k): 0.0 for c in values for k in values}
    for u in pairable:
        for i, c in enumerate(u):
            for j, k in enumerate(u):
                if i != j:
                    o[c, k] += 1 / (len(u) - 1)
    n_c = {c: sum(o[c, k] for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c, k):
        return float(c != k) if level == "nominal" else (c - k) ** 2

    d_o = sum(o[c, k] * delta(c, k) for c in values for k in values) / n
    d_e = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n * (n - 1))
    return 1.0 if d_e == 0 else 1 - d_o / d_e
