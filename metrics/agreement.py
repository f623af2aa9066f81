"""Inter-annotator agreement: Cohen's and Fleiss' kappa, observed agreement, Krippendorff's alpha.

MHALO reports Fleiss' kappa (section 2.2) and Cohen's kappa (appendix A.5) for its annotations;
AlignBench reports Fleiss' kappa next to the observed agreement P̄ (appendix D.3), because with
strongly imbalanced labels a high P̄ can go with a low kappa. Krippendorff's alpha handles missing
ratings and interval data, and, with spans cut into per-unit labels (:func:`spans_to_unit_labels`),
agreement on span annotations.

Counts are kept as Python integers until the last division, so results do not depend on the order in
which labels arrive.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from metrics._validation import as_list, as_span, check_no_missing, check_positive_int


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters, unweighted, nominal labels (Cohen 1960; MHALO appendix A.5).

    ``κ = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of items rated alike and
    ``p_e = Σ_k p_a(k) p_b(k)`` the agreement expected from each rater's label frequencies. When both
    raters use one identical category ``p_e = 1`` and the result is defined as 1.0.
    """
    first = as_list(a, "a")
    second = as_list(b, "b")
    if len(first) != len(second):
        raise ValueError(f"a and b must rate the same items, got {len(first)} and {len(second)} ratings")
    if not first:
        raise ValueError("no items: kappa is undefined")
    check_no_missing(first, "a")
    check_no_missing(second, "b")
    return _cohen_from_lists(first, second)


def _cohen_from_lists(first: list[Hashable], second: list[Hashable]) -> float:
    n = len(first)
    agree = sum(1 for x, y in zip(first, second, strict=True) if x == y)
    count_a, count_b = Counter(first), Counter(second)
    chance = sum(count * count_b[label] for label, count in count_a.items())  # n² · p_e
    if chance == n * n:
        return 1.0
    return (n * agree - chance) / (n * n - chance)


def _rating_table(ratings: Sequence[Sequence[Hashable]]) -> tuple[list[Counter[Hashable]], int]:
    """Label counts of every item, checking that every item has the same number (>= 2) of ratings."""
    items = as_list(ratings, "ratings")
    if not items:
        raise ValueError("no items: agreement is undefined")
    counts = []
    n_raters = None
    for i, item in enumerate(items):
        labels = as_list(item, f"ratings[{i}]")
        check_no_missing(labels, f"ratings[{i}]")
        if n_raters is None:
            n_raters = len(labels)
        elif len(labels) != n_raters:
            raise ValueError(
                f"every item needs the same number of ratings: ratings[{i}] has {len(labels)}, not {n_raters}"
            )
        counts.append(Counter(labels))
    if n_raters is None or n_raters < 2:
        raise ValueError("agreement needs at least 2 ratings per item")
    return counts, n_raters


def _sum_agreeing_pairs(counts: list[Counter[Hashable]]) -> int:
    return sum(c * (c - 1) for item in counts for c in item.values())


def observed_agreement(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' observed agreement P̄ (Fleiss 1971; reported next to kappa in AlignBench appendix D.3).

    ``P_i = Σ_j n_ij (n_ij - 1) / (m (m - 1))`` is the share of agreeing rater pairs on item ``i``
    (``n_ij`` raters put it in category ``j``, ``m`` raters per item); ``P̄ = mean_i P_i``.
    """
    counts, m = _rating_table(ratings)
    return _sum_agreeing_pairs(counts) / (len(counts) * m * (m - 1))


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa for a fixed number of raters per item (Fleiss 1971; MHALO section 2.2, AlignBench D.3).

    ``κ = (P̄ - P_e) / (1 - P_e)`` with P̄ as in :func:`observed_agreement` and ``P_e = Σ_j p_j²``,
    ``p_j`` the share of all ratings in category ``j``. One category used overall gives 1.0.
    ``ratings`` holds one list of category labels per item, all of the same length.
    """
    counts, m = _rating_table(ratings)
    n_items = len(counts)
    totals: Counter[Hashable] = Counter()
    for item in counts:
        totals.update(item)
    agreeing = _sum_agreeing_pairs(counts)  # P̄ = agreeing / d1
    d1 = n_items * m * (m - 1)
    square_sum = sum(c * c for c in totals.values())  # P_e = square_sum / d2
    d2 = (n_items * m) ** 2
    if square_sum == d2:
        return 1.0
    return (agreeing * d2 - square_sum * d1) / (d1 * (d2 - square_sum))


def cohen_table(
    ratings_by_annotator: Mapping[Hashable, Sequence[Hashable | None]],
) -> dict[Hashable, dict[Hashable, float]]:
    """Cohen's kappa of every pair of annotators, on the items both rated.

    ``ratings_by_annotator`` maps each annotator to one label per item, ``None`` where that annotator
    did not rate the item. Returns a nested dict ``table[a][b]`` (symmetric, 1.0 on the diagonal, NaN
    when two annotators share no item); ``pandas.DataFrame(table)`` shows it as a matrix.
    """
    names = list(ratings_by_annotator)
    columns = {name: as_list(ratings_by_annotator[name], f"ratings of {name!r}") for name in names}
    lengths = {len(c) for c in columns.values()}
    if len(lengths) > 1:
        raise ValueError("every annotator needs one entry per item (None where not rated)")
    table: dict[Hashable, dict[Hashable, float]] = {name: {} for name in names}
    for i, first in enumerate(names):
        table[first][first] = 1.0
        for second in names[i + 1 :]:
            shared = [
                (x, y)
                for x, y in zip(columns[first], columns[second], strict=True)
                if x is not None and y is not None
            ]
            value = _cohen_from_lists([x for x, _ in shared], [y for _, y in shared]) if shared else math.nan
            table[first][second] = table[second][first] = value
    return table


def krippendorff_alpha(ratings: Sequence[Sequence[Any]], level: str = "nominal") -> float:
    """Krippendorff's alpha for nominal or interval data with missing ratings (Krippendorff 2011).

    ``α = 1 - D_o / D_e`` from the coincidence matrix: every unit ``u`` with ``m_u >= 2`` ratings adds
    each ordered pair of its values with weight ``1 / (m_u - 1)``. With ``n`` the number of pairable
    values, ``D_o = (1/n) Σ_{c,k} o_ck δ²(c, k)`` and ``D_e = 1/(n(n-1)) Σ_{c,k} n_c n_k δ²(c, k)``, where
    ``δ² = [c ≠ k]`` (nominal) or ``(c - k)²`` (interval). Closed forms used here:
    nominal ``Σ o δ² = Σ_u (m_u² - Σ_c n_uc²) / (m_u - 1)``, interval
    ``Σ o δ² = Σ_u 2 m_u SS_u / (m_u - 1)`` with ``SS_u`` the sum of squared deviations in unit ``u``.

    ``ratings`` holds one list of values per unit (item), missing ratings simply left out; units with
    fewer than 2 ratings are ignored. A single value overall (no expected disagreement) gives 1.0;
    nothing pairable raises ``ValueError``. Checked against Krippendorff's (2011) worked example:
    nominal 0.743, interval 0.849.
    """
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    units = []
    for i, unit in enumerate(as_list(ratings, "ratings")):
        values = as_list(unit, f"ratings[{i}]")
        check_no_missing(values, f"ratings[{i}] (leave missing ratings out)")
        if level == "interval":
            values = [_as_interval_value(v, f"ratings[{i}]") for v in values]
        if len(values) >= 2:
            units.append(values)
    if not units:
        raise ValueError("no unit has 2 or more ratings: nothing is pairable")
    pooled = [v for unit in units for v in unit]
    try:
        if len(set(pooled)) == 1:
            return 1.0
    except TypeError:
        raise ValueError("nominal ratings must be hashable") from None
    n = len(pooled)
    if level == "nominal":
        observed = sum((len(u) ** 2 - sum(c * c for c in Counter(u).values())) / (len(u) - 1) for u in units)
        expected: float = n * n - sum(c * c for c in Counter(pooled).values())
        return 1.0 - (n - 1) * observed / expected
    observed = sum(2 * len(u) * _squared_deviations(u) / (len(u) - 1) for u in units)
    expected = 2 * n * _squared_deviations(pooled)
    return 1.0 - (n - 1) * observed / expected


def _as_interval_value(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what}: interval ratings must be numbers, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what}: interval ratings must be finite, got {value!r}")
    return number


def _squared_deviations(values: list[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values)


def spans_to_unit_labels(
    annotations: Mapping[Hashable, Sequence[Sequence[Any]]] | Sequence[Sequence[Sequence[Any]]],
    n_units: int,
    outside: Hashable = 0,
) -> list[list[Hashable]]:
    """Turn each annotator's spans over one text into per-unit labels, for :func:`krippendorff_alpha`.

    Units are whatever the spans count (tokens or characters), numbered ``0 .. n_units - 1``. A span is
    ``(start, end)``, labelling its units 1, or ``(start, end, label)`` for typed spans; units outside
    every span of an annotator get ``outside``. Returns one list per unit holding each annotator's label
    (annotators in the given order); annotators who did not annotate the text should be left out, not
    given an empty list, since an empty list means "nothing is hallucinated". Concatenate the lists of
    several texts to compute alpha over a corpus. Overlapping spans of one annotator with different
    labels raise ``ValueError``.
    """
    n_units = check_positive_int(n_units, "n_units")
    span_lists = (
        list(annotations.values())
        if isinstance(annotations, Mapping)
        else as_list(annotations, "annotations")
    )
    names = list(annotations) if isinstance(annotations, Mapping) else list(range(len(span_lists)))
    columns: list[list[Hashable]] = []
    for name, spans in zip(names, span_lists, strict=True):
        column: list[Hashable] = [outside] * n_units
        assigned: list[bool] = [False] * n_units
        for k, raw in enumerate(as_list(spans, f"spans of {name!r}")):
            span_what = f"span {k} of {name!r}"
            if isinstance(raw, str | bytes) or not hasattr(raw, "__len__") or len(raw) not in (2, 3):
                raise ValueError(f"{span_what} must be (start, end) or (start, end, label), got {raw!r}")
            start, end = as_span(raw[:2], span_what)
            label = raw[2] if len(raw) == 3 else 1
            if end > n_units:
                raise ValueError(f"{span_what} ends at {end}, past the {n_units} units")
            for unit in range(start, end):
                if assigned[unit] and column[unit] != label:
                    raise ValueError(f"{span_what} gives unit {unit} a second label {label!r}")
                column[unit] = label
                assigned[unit] = True
        columns.append(column)
    return [[column[unit] for column in columns] for unit in range(n_units)]
