"""Adjudication: how much annotators disagree on an item, and the rules that turn agreed labels into gold.

Everything here is pure: the annotators' labels of one item come in as plain mappings, a number or a
decision goes out. The store (``db.repositories.adjudication``) reads the labels, hands them to these
functions and writes what they decide; it is given :data:`DISAGREEMENT` and a rule of :data:`RULES`
by its caller, because the store never imports this layer.

Labels of one item and task, per annotator id:

- spans: ``(start, end, type)`` in characters of the response. Spans are compared in whitespace
  tokens through the one matching engine (:mod:`metrics.matching`), as MHALO scores them (section 2.3)
  and as the Agreement page compares annotators; a span that covers no token never matches anything.
- units (sentences, claims, triplets, rated segments): unit → ``(verdict, detail)``, the verdict being
  "correct"/"incorrect"/"unknown", "hallucination"/"non-hallucination", "yes"/"no", or a rating
  ``(score, nothing_flagged_correct)``; the detail is the error type, claim type or wrong part (None
  when not given). An annotator who took part in an item but left a unit unlabelled abstains on it.

Weights are ``annotator id → (weight, trusted)``; an annotator without one counts ``(1.0, True)``.

Disagreement (0 = all alike, 1 = nothing alike):

- spans: ``1 − mean F1_IoU`` over every pair of annotators at the IoU threshold (MHALO eq. 5-6);
- sentences, claims, triplets: the share of units that not every annotator labelled alike (verdict and
  detail; a missing label is a difference);
- ratings: the mean over rated segments of ``(max − min) / (scale max − scale min)``; a segment judged
  "nothing flagged" counts 0 when every rater judged alike and 1 otherwise, and so does a segment a
  rater left unrated.

The rules (each returns per item either the gold labels or ``None`` with the reason for review):

**majority** — AlignBench merges its five workers' labels "based on majority voting" with
"annotator-specific weights ... trusted annotators given higher weights" (section 3.2 and appendix
D.2); MHALO's MC set "employed a majority voting system" over three annotators (appendix A.3). A unit
takes the verdict whose annotators carry *more than half* of the total weight of the item's annotators
(abstentions count in the total); without one (a tie, or three verdicts none of which has a majority)
the item goes to review. The detail is the weighted plurality of the details the majority gave (an
annotator who gave none does not vote on it); tied details send the item to review.
Spans are grouped into clusters (:func:`span_clusters`); a cluster becomes a gold span when its
annotators carry more than half of the total weight (exactly half is a tie: review). Its offsets are
those most of its annotators gave exactly (ties → the earliest start, then the shortest); its type is
the weighted plurality of its annotators' types (untyped spans do not vote; a tie sends the item to
review).

**unanimity** — every annotator labels every unit alike (verdict and detail); for spans, every pair of
annotators' span sets matches completely (a maximum matching at the threshold pairs every span) and
the matched spans carry one type. MHALO's MC set counted an item consistent only when every labelled
segment matched exactly (appendix A.3); a threshold of 1.0 asks for the same words here. Anything else
goes to review.

**alignbench** — majority, with AlignBench's stricter handling of hallucinations: "if one trusted
annotator or two annotators labeled an item as incorrect, the authors manually reviewed it, since
hallucinations are more difficult to detect reliably than correctness" (appendix D.2, "Voting and
Quality Control"). So an item goes to review when a trusted annotator, or two annotators of any kind,
gave a unit the flagged verdict ("incorrect" for sentences, "hallucination" for claims, "no" for
triplets) — even when the majority agrees — and, for spans, when a trusted annotator, or two
annotators, marked spans the majority result left out. Ratings carry no flagged verdict: there the
rule is majority.

Span clusters are built greedily so that the result does not depend on the order annotators come in:
every remaining span is a candidate seed; a seed's supporters are the annotators holding a remaining
span that matches it (token IoU ≥ threshold, from :func:`metrics.matching.iou_matrix`), each annotator
counted once with their closest such span. The seed with the most supporting weight wins (ties → the
offsets most annotators gave exactly, then the earliest, then the shortest); its supporters' spans form
a cluster and leave the pool. This repeats until no span is left, so minority spans form clusters too
(the ones a reviewer may still merge in).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final, TypeVar

import numpy as np

from metrics.matching import iou_matrix, match_spans, tokens_of_char_span
from metrics.spans import f1_iou

SpanLabel = tuple[int, int, str | None]
RatingVerdict = tuple[float | None, bool | None]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)
Weights = Mapping[int, tuple[float, bool]]

DEFAULT_THRESHOLD: Final = 0.5
DEFAULT_WEIGHT: Final = (1.0, True)
MAJORITY, UNANIMITY, ALIGNBENCH = "majority", "unanimity", "alignbench"
RULE_NAMES: Final = (MAJORITY, UNANIMITY, ALIGNBENCH)
# The verdict AlignBench's stricter rule watches for, per task (ratings have none).
FLAGGED: Final = {"sentences": "incorrect", "claims": "hallucination", "triplets": "no"}


def _weight(weights: Weights, annotator: int) -> tuple[float, bool]:
    return weights.get(annotator, DEFAULT_WEIGHT)


def _more_than_half(part: float, total: float) -> bool:
    """``part > total / 2``, with an exact half (up to rounding of the weights) not counting."""
    return part * 2 > total and not math.isclose(part * 2, total)


def _plurality(votes: Iterable[tuple[V, float]]) -> tuple[V | None, bool]:
    """The value with the most weight and whether it is tied with another; (None, False) without votes."""
    tally: dict[V, float] = {}
    for value, weight in votes:
        tally[value] = tally.get(value, 0.0) + weight
    if not tally:
        return None, False
    ranked = sorted(tally.items(), key=lambda kv: -kv[1])
    best, top = ranked[0]
    tied = len(ranked) > 1 and math.isclose(ranked[1][1], top)
    return best, tied


# ------------------------------------------------------------------------------------- span clusters


@dataclass(frozen=True)
class SpanCluster:
    """Annotators' spans that match one another: the unit a span merge works on."""

    start: int  # the offsets most members gave (ties: earliest, then shortest)
    end: int
    type: str | None  # weighted plurality of the members' types; None when untyped or tied
    type_tied: bool
    members: tuple[tuple[int, SpanLabel], ...]  # (annotator, their span), by annotator id
    support: float  # the weight of the members' annotators

    @property
    def annotators(self) -> tuple[int, ...]:
        return tuple(a for a, _ in self.members)

    @property
    def label(self) -> SpanLabel:
        return (self.start, self.end, self.type)


def _mode_offsets(members: Sequence[tuple[int, SpanLabel]]) -> tuple[int, int]:
    counts = Counter((s, e) for _, (s, e, _t) in members)
    return min(counts, key=lambda se: (-counts[se], se[0], se[1] - se[0]))


def _cluster(members: list[tuple[int, SpanLabel]], weights: Weights) -> SpanCluster:
    start, end = _mode_offsets(members)
    type_, tied = _plurality((t, _weight(weights, a)[0]) for a, (_, _, t) in members if t is not None)
    members.sort(key=lambda m: m[0])
    return SpanCluster(
        start=start,
        end=end,
        type=None if tied else type_,
        type_tied=tied,
        members=tuple(members),
        support=sum(_weight(weights, a)[0] for a, _ in members),
    )


def span_clusters(
    response: str,
    votes: Mapping[int, Sequence[SpanLabel]],
    weights: Weights,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[SpanCluster]:
    """Every annotator's spans grouped into clusters of matching spans (see the module docstring), in
    text order. A span covering no token forms a cluster of its own."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the IoU threshold lies in [0, 1]; got {threshold!r}")
    spans = [
        (a, span) for a in sorted(votes) for span in sorted(votes[a], key=lambda s: (s[0], s[1], s[2] or ""))
    ]
    tokens = [tokens_of_char_span(response, s, e) for _, (s, e, _t) in spans]
    scored = [k for k, t in enumerate(tokens) if t is not None]
    ious = np.zeros((len(spans), len(spans)))
    if scored:
        found = [t for t in tokens if t is not None]
        ious[np.ix_(scored, scored)] = iou_matrix(found, found)
    annotators = sorted(votes)
    owner = np.array([annotators.index(a) for a, _ in spans], dtype=np.int64)
    weight = np.array([_weight(weights, a)[0] for a in annotators])
    # matches[i, j]: span j may join a cluster seeded by span i (another annotator's, IoU ≥ threshold).
    matches = (ious >= threshold) & (owner[:, None] != owner[None, :])
    matches[:, [k for k, t in enumerate(tokens) if t is None]] = False
    matches[[k for k, t in enumerate(tokens) if t is None], :] = False
    own = np.eye(len(annotators), dtype=bool)[owner]  # own[k, a]: span k is annotator a's
    left = np.ones(len(spans), dtype=bool)
    clusters: list[SpanCluster] = []
    while left.any():
        # Which annotators support each seed (themselves included), and the weight they carry.
        supported = ((matches & left[None, :]).astype(np.int64) @ own.astype(np.int64) > 0) | own
        support = supported.astype(float) @ weight
        # How many annotators gave exactly these offsets (each counted once).
        exact = Counter(
            (s, e) for (s, e), _ in {(spans[k][1][:2], spans[k][0]) for k in np.flatnonzero(left)}
        )

        candidates = [int(k) for k in np.flatnonzero(left)]
        # The most support, then the offsets most annotators gave, the earliest, the shortest, the first.
        ranks = {
            k: (
                -float(support[k]),
                -exact[spans[k][1][:2]],
                spans[k][1][0],
                spans[k][1][1] - spans[k][1][0],
                k,
            )
            for k in candidates
        }
        seed = min(candidates, key=ranks.__getitem__)
        members = [seed]
        for a in np.flatnonzero(supported[seed]):
            if a == owner[seed]:
                continue
            theirs = np.flatnonzero(left & matches[seed] & (owner == a))
            members.append(int(theirs[np.argmax(ious[seed, theirs])]))  # the closest; ties: the first
        left[members] = False
        clusters.append(_cluster([spans[k] for k in members], weights))
    return sorted(clusters, key=lambda c: (c.start, c.end, c.annotators))


def _describe(response: str, start: int, end: int) -> str:
    quoted = response[start:end]
    return f"“{quoted[:40]}{'…' if len(quoted) > 40 else ''}” ({start}–{end})"


# ------------------------------------------------------------------------------------- disagreement


def span_disagreement(
    response: str, votes: Mapping[int, Sequence[SpanLabel]], threshold: float = DEFAULT_THRESHOLD
) -> float:
    """``1 − mean pairwise F1_IoU`` of the annotators' spans in tokens; 0.0 with fewer than two."""
    tokens = {
        a: [t for s, e, _ in spans if (t := tokens_of_char_span(response, s, e)) is not None]
        for a, spans in votes.items()
    }
    pairs = list(combinations(sorted(tokens), 2))
    if not pairs:
        return 0.0
    return 1.0 - sum(f1_iou(tokens[a], tokens[b], threshold) for a, b in pairs) / len(pairs)


def _units(votes: Mapping[int, Mapping[K, tuple[V, str | None]]]) -> list[K]:
    """Every unit some annotator labelled, in the order the annotators' labels list them."""
    return list(dict.fromkeys(unit for a in sorted(votes) for unit in votes[a]))


def _unanimous(votes: Mapping[int, Mapping[K, tuple[V, str | None]]], unit: K) -> bool:
    given = [labels.get(unit) for labels in votes.values()]
    return None not in given and len(set(given)) == 1


def unit_disagreement(votes: Mapping[int, Mapping[K, tuple[V, str | None]]]) -> float:
    """The share of units not every annotator labelled alike; 0.0 with fewer than two annotators."""
    units = _units(votes)
    if len(votes) < 2 or not units:
        return 0.0
    return sum(not _unanimous(votes, unit) for unit in units) / len(units)


def rating_disagreement(
    votes: Mapping[int, Mapping[K, tuple[RatingVerdict, str | None]]],
    scales: Mapping[K, tuple[float, float]],
) -> float:
    """Mean over rated segments of the spread of the scores as a share of the scale (see the module)."""
    units = _units(votes)
    if len(votes) < 2 or not units:
        return 0.0
    total = 0.0
    for unit in units:
        given = [labels.get(unit) for labels in votes.values()]
        verdicts = [g[0] for g in given if g is not None]
        scores = [score for score, _ in verdicts if score is not None]
        if len(verdicts) < len(given) or len(scores) not in (0, len(verdicts)):
            total += 1.0  # someone left it unrated, or some scored it and some judged "nothing flagged"
        elif scores:
            low, high = scales.get(unit, (min(scores), max(scores)))
            total += (max(scores) - min(scores)) / (high - low) if high > low else 0.0
        else:
            total += 0.0 if len(set(verdicts)) == 1 else 1.0
    return total / len(units)


@dataclass(frozen=True)
class DisagreementMeasure:
    """The three measures under one name, as the store's read of items in disagreement is handed them."""

    def spans(self, response: str, votes: Mapping[int, Sequence[SpanLabel]], threshold: float) -> float:
        return span_disagreement(response, votes, threshold)

    def units(self, votes: Mapping[int, Mapping[K, tuple[V, str | None]]]) -> float:
        return unit_disagreement(votes)

    def ratings(
        self,
        votes: Mapping[int, Mapping[K, tuple[RatingVerdict, str | None]]],
        scales: Mapping[K, tuple[float, float]],
    ) -> float:
        return rating_disagreement(votes, scales)


DISAGREEMENT: Final = DisagreementMeasure()


# ------------------------------------------------------------------------------------------ rules


def _name(unit_names: Mapping[K, str], unit: K) -> str:
    return unit_names.get(unit, str(unit))


def majority_units(
    votes: Mapping[int, Mapping[K, tuple[V, str | None]]],
    weights: Weights,
    unit_names: Mapping[K, str],
) -> tuple[dict[K, tuple[V, str | None]], dict[K, str]]:
    """Per unit the weighted-majority label, and for the units without one the reason.

    A verdict needs more than half of the weight of every annotator of the item; the detail is the
    weighted plurality of the details given with the winning verdict.
    """
    total = sum(_weight(weights, a)[0] for a in votes)
    decided: dict[K, tuple[V, str | None]] = {}
    undecided: dict[K, str] = {}
    for unit in _units(votes):
        given = [(a, labels[unit]) for a, labels in votes.items() if unit in labels]
        verdict, _ = _plurality((label[0], _weight(weights, a)[0]) for a, label in given)
        carried = sum(_weight(weights, a)[0] for a, label in given if label[0] == verdict)
        if verdict is None or not _more_than_half(carried, total):
            undecided[unit] = f"no weighted majority on {_name(unit_names, unit)}"
            continue
        detail, tied = _plurality(
            (label[1], _weight(weights, a)[0]) for a, label in given if label[0] == verdict and label[1]
        )
        if tied:
            undecided[unit] = f"the details given for {_name(unit_names, unit)} tie"
            continue
        decided[unit] = (verdict, detail)
    return decided, undecided


def majority_spans(
    clusters: Sequence[SpanCluster], weights: Weights, annotators: Iterable[int]
) -> list[SpanCluster]:
    """The clusters whose annotators carry more than half of the weight of all of the item's annotators."""
    total = sum(_weight(weights, a)[0] for a in annotators)
    return [c for c in clusters if _more_than_half(c.support, total)]


@dataclass(frozen=True)
class Rule:
    """One bulk-promotion rule (see the module docstring). Each method returns ``(gold, None)`` when the
    item can be promoted, ``(None, reason)`` when it needs review."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in RULE_NAMES:
            raise ValueError(f"Unknown rule {self.name!r}; choose one of {', '.join(RULE_NAMES)}.")

    def spans(
        self,
        response: str,
        votes: Mapping[int, Sequence[SpanLabel]],
        weights: Weights,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> tuple[list[SpanLabel] | None, str | None]:
        clusters = span_clusters(response, votes, weights, threshold)
        if self.name == UNANIMITY:
            return self._unanimous_spans(response, votes, clusters, threshold)
        chosen = majority_spans(clusters, weights, votes)
        total = sum(_weight(weights, a)[0] for a in votes)
        half = next((c for c in clusters if math.isclose(c.support * 2, total) and total > 0), None)
        if half is not None:
            return None, (
                "annotators carrying exactly half of the weight marked span "
                f"{_describe(response, half.start, half.end)}"
            )
        tied = next((c for c in chosen if c.type_tied), None)
        if tied is not None:
            return None, f"the types given for span {_describe(response, tied.start, tied.end)} tie"
        if self.name == ALIGNBENCH:
            left_out = [(a, span) for c in clusters if c not in chosen for a, span in c.members]
            trusted = next(((a, s) for a, s in left_out if _weight(weights, a)[1]), None)
            if trusted is not None:
                return None, (
                    f"a trusted annotator marked span {_describe(response, trusted[1][0], trusted[1][1])}, "
                    "which the majority left out"
                )
            if len({a for a, _ in left_out}) >= 2:
                return None, "two annotators marked spans the majority left out"
        return [c.label for c in chosen], None

    @staticmethod
    def _unanimous_spans(
        response: str,
        votes: Mapping[int, Sequence[SpanLabel]],
        clusters: Sequence[SpanCluster],
        threshold: float,
    ) -> tuple[list[SpanLabel] | None, str | None]:
        tokens = {a: [tokens_of_char_span(response, s, e) for s, e, _ in spans] for a, spans in votes.items()}
        for a, b in combinations(sorted(tokens), 2):
            first, second = tokens[a], tokens[b]
            if None in first or None in second:
                return None, "a span covers no word, so it cannot be matched"
            matched = match_spans([t for t in first if t], [t for t in second if t], threshold).n_matched
            if not matched == len(first) == len(second):
                return None, "the annotators' spans do not all match one another"
        everyone = len(votes)
        for cluster in clusters:
            if len(cluster.members) != everyone:
                return None, "the annotators' spans match pairwise but not as one set"
            if len({span[2] for _, span in cluster.members}) > 1:
                return None, f"the types of span {_describe(response, cluster.start, cluster.end)} differ"
        return [(c.start, c.end, c.members[0][1][2]) for c in clusters], None

    def units(
        self,
        task: str,
        votes: Mapping[int, Mapping[K, tuple[V, str | None]]],
        weights: Weights,
        unit_names: Mapping[K, str],
    ) -> tuple[dict[K, tuple[V, str | None]] | None, str | None]:
        if self.name == UNANIMITY:
            for unit in _units(votes):
                if not _unanimous(votes, unit):
                    return None, f"the annotators' labels of {_name(unit_names, unit)} differ"
            first = votes[min(votes)] if votes else {}
            return {unit: first[unit] for unit in _units(votes)}, None
        if self.name == ALIGNBENCH and task in FLAGGED:
            flagged = FLAGGED[task]
            for unit in _units(votes):
                raised = [a for a, labels in votes.items() if unit in labels and labels[unit][0] == flagged]
                if any(_weight(weights, a)[1] for a in raised):
                    return None, f"a trusted annotator labelled {_name(unit_names, unit)} “{flagged}”"
                if len(raised) >= 2:
                    return None, f"two annotators labelled {_name(unit_names, unit)} “{flagged}”"
        decided, undecided = majority_units(votes, weights, unit_names)
        if undecided:
            return None, next(iter(undecided.values()))
        return decided, None


RULES: Final = {name: Rule(name) for name in RULE_NAMES}
