"""Adjudication in the store: the annotators' labels of an item side by side, and gold written from them.

A reviewer promotes one item's labels of one task to gold (:func:`promote_item`: accept one
annotator's labels, merge them, or edit), or every agreed item at once by a rule
(:func:`promote_by_rule`). Either way the item's gold labels of that task are replaced in one
transaction: each changed row is logged in the :class:`~db.models.EditLog` with its before and after
(as labeling logs it, so history and undo see it), with one :class:`~db.models.Promotion` row, itself
logged with a digest of the annotators' labels it was made from. A rule skips an item whose latest
promotion was made from the labels the annotators hold now, so running it again changes nothing.
Gold imported with the dataset is changed or removed only as the caller confirms it, label by label
(:mod:`db.repositories.gold_origin`): a promotion first works out which gold rows it would replace,
writing nothing, and is refused whole if any came with the import and were not confirmed. It locks
those rows before it checks them and writes each over the version it checked, so what it replaces is
what it checked, also on PostgreSQL while an undo, a restore or an import commits alongside.
Two reviewers deciding one item from the same page both read gold as it was: the page passes the
:func:`gold_version` it showed, and a promotion over gold that changed since is refused
(:class:`GoldChanged`, naming who changed it and when), as a label edited meanwhile is.

What counts and how a rule decides lives in :mod:`analysis.adjudication`; the store never imports the
analysis layer, so callers hand in its :data:`~analysis.adjudication.DISAGREEMENT` measure and a rule
of :data:`~analysis.adjudication.RULES` (typed here as :class:`Measure` and :class:`Rule`).

Who takes part: every human label set with an annotator (the annotator's first one when they hold
several), on the items where it holds a label of the task or marked the item done for it; for
ratings, every rater. Weights come from :class:`~db.models.AnnotatorWeight`, as the Team page sets them
(``db.repositories.assignments``; 1.0 and trusted without a row).

Adjudicated ratings: a rating belongs to a rater, not to a label set, so gold ratings are ratings by a
dedicated account, ``gold`` (a disabled viewer that cannot log in, a name no person may take), which
the dataset's gold label set names as its annotator. Analyses find them through that link, and the
reports leave that account out of the raters (``report_inputs.ratings``). A reviewer's own ratings
could not serve: the reviewer may be one of the raters, and their adjudicated score would overwrite
their own rating.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol, TypeVar

from sqlalchemy import Engine, Select, func, select
from sqlalchemy.orm import Session, aliased

from db import models as m
from db.access import Actor, require_in
from db.engine import hold_name, read_session, write_session
from db.repositories.assignments import open_assigned_items
from db.repositories.gold_origin import (
    GoldRow,
    ImportedGold,
    ReplacesImportedGold,
    adjudicated,
    chunks,
    imported_among,
)
from db.repositories.label_sets import gold_raters
from db.repositories.labeling import ABSENT, StaleEdit, _log, _retried, _snapshot, _upsert

SpanLabel = tuple[int, int, str | None]
# A unit: a sentence's or claim's index, a triplet's id, a rated segment (rating task id, start, end).
UnitKey = int | tuple[int, int, int]
UnitLabel = tuple[str, str | None]  # (verdict, detail: error type, claim type, wrong part)
RatingVerdict = tuple[float | None, bool | None]  # (score, nothing_flagged_correct)
RatingLabel = tuple[RatingVerdict, str | None]
Weights = Mapping[int, tuple[float, bool]]
GoldLabels = Sequence[SpanLabel] | Mapping[UnitKey, UnitLabel] | Mapping[UnitKey, RatingLabel]
V = TypeVar("V", str, RatingVerdict)

# What a unit's verdict and detail may be, per task (ratings: a score on the task's scale, or the
# judgment of "nothing flagged"; details of sentences and claims: the dataset's taxonomy).
VERDICTS = {"sentences": m.SENTENCE_LABELS, "claims": m.CLAIM_LABELS, "triplets": m.TRIPLET_VERDICTS}
WRONG_PARTS = m.TRIPLET_WRONG_PARTS
TASKS = m.TASKS

GOLD_NAME = "gold"
# The account that holds a dataset's adjudicated ratings (see the module docstring).
GOLD_RATER = "gold"
MANUAL_METHODS = ("accept", "merge", "edit")
UNIT_TASKS = ("sentences", "claims", "triplets", "ratings")
_TASK_ENTITY = {
    "spans": "spans",
    "sentences": "sentence_labels",
    "claims": "claim_labels",
    "triplets": "triplet_judgments",
    "ratings": "ratings",
}


class Measure(Protocol):
    """How much an item's annotators disagree (``analysis.adjudication.DISAGREEMENT``)."""

    def spans(self, response: str, votes: Mapping[int, Sequence[SpanLabel]], threshold: float) -> float: ...

    def units(self, votes: Mapping[int, Mapping[UnitKey, UnitLabel]]) -> float: ...

    def ratings(
        self,
        votes: Mapping[int, Mapping[UnitKey, RatingLabel]],
        scales: Mapping[UnitKey, tuple[float, float]],
    ) -> float: ...


class Rule(Protocol):
    """A bulk-promotion rule (``analysis.adjudication.RULES``): gold, or None and the reason for review."""

    @property
    def name(self) -> str: ...

    def spans(
        self, response: str, votes: Mapping[int, Sequence[SpanLabel]], weights: Weights, threshold: float
    ) -> tuple[list[SpanLabel] | None, str | None]: ...

    def units(
        self,
        task: str,
        votes: Mapping[int, Mapping[UnitKey, tuple[V, str | None]]],
        weights: Weights,
        unit_names: Mapping[UnitKey, str],
    ) -> tuple[dict[UnitKey, tuple[V, str | None]] | None, str | None]: ...


# ------------------------------------------------------------------------------------------- views


@dataclass(frozen=True)
class ItemVotes:
    """What every annotator of one item said on one task, side by side."""

    item_id: int
    external_id: str
    position: int
    response: str
    task: str
    annotators: dict[int, str]  # id → name, in name order: everyone who took part in the item
    spans: dict[int, list[SpanLabel]] = field(default_factory=dict)
    units: dict[int, dict[UnitKey, UnitLabel]] = field(default_factory=dict)
    ratings: dict[int, dict[UnitKey, RatingLabel]] = field(default_factory=dict)
    unit_names: dict[UnitKey, str] = field(default_factory=dict)  # "sentence 2", "triplet 3 of X" …
    scales: dict[UnitKey, tuple[float, float]] = field(default_factory=dict)  # ratings: the task's scale

    @property
    def digest(self) -> str:
        """A fingerprint of the labels: a promotion made from them is still current while it matches."""
        parts = [
            (
                a,
                sorted(map(repr, self.spans.get(a, []))),
                sorted(map(repr, self.units.get(a, {}).items())),
                sorted(map(repr, self.ratings.get(a, {}).items())),
            )
            for a in sorted(self.annotators)
        ]
        return hashlib.sha256(repr((self.task, parts)).encode()).hexdigest()

    def labels_of(self, annotator_id: int) -> GoldLabels:
        """One annotator's labels, in the shape :func:`promote_item` takes (accepting them as they are)."""
        if self.task == "spans":
            return list(self.spans.get(annotator_id, []))
        if self.task == "ratings":
            return dict(self.ratings.get(annotator_id, {}))
        return dict(self.units.get(annotator_id, {}))


@dataclass(frozen=True)
class PromotionView:
    id: int
    method: str
    reviewer: str | None
    at: datetime
    sources: tuple[int, ...]
    digest: str | None  # of the annotators' labels it was made from


@dataclass(frozen=True)
class DisagreementRow:
    votes: ItemVotes
    disagreement: float
    review: str | None  # why the rule passed in sends the item to review, when one was given
    promotion: PromotionView | None  # the latest promotion of the item on this task
    promoted_current: bool  # made from the labels the annotators hold now


@dataclass(frozen=True)
class PromotionResult:
    promotion_id: int
    changes: int  # gold rows created, changed or removed
    log_ids: tuple[int, ...]


@dataclass(frozen=True)
class RuleSummary:
    rule: str
    task: str
    threshold: float
    dry_run: bool
    promoted: tuple[str, ...] = ()  # external ids of the items promoted (or that would be)
    replaced: int = 0  # of those, items whose gold held other labels before
    review: tuple[tuple[str, str], ...] = ()  # (external id, reason)
    unchanged: int = 0  # promoted before from the labels held now: skipped
    single: int = 0  # fewer than two annotators: not for a rule to decide
    # Of the gold labels replaced, those no promotion wrote (imported with the dataset, or put back).
    imported: ImportedGold = ImportedGold()

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "task": self.task,
            "threshold": self.threshold,
            "dry_run": self.dry_run,
            "promoted": len(self.promoted),
            "replaced_gold": self.replaced,
            "replaced_imported_gold": self.imported.to_dict(),
            "review": [{"item": item, "reason": reason} for item, reason in self.review],
            "unchanged": self.unchanged,
            "fewer_than_two_annotators": self.single,
            "promoted_items": list(self.promoted),
        }


@dataclass(frozen=True)
class Override:
    """One unit of a promoted item where gold differs from what the annotator said."""

    item_id: int
    external_id: str
    task: str
    unit: str
    theirs: str
    gold: str
    reviewer: str | None
    method: str
    at: datetime


class GoldChanged(StaleEdit):
    """The item's gold labels of the task changed since the page showed them (another reviewer
    promoted, an undo, an import): promoting now would overwrite a decision its reviewer never saw."""


# ------------------------------------------------------------------------------------------ reading


def _span_order(span: SpanLabel) -> tuple[int, int, str]:
    return (span[0], span[1], span[2] or "")


def _check_task(task: str) -> None:
    if task not in m.TASKS:
        raise ValueError(f"Unknown task {task!r}; choose one of {', '.join(m.TASKS)}.")


def _annotator_sets(session: Session, dataset_id: int) -> dict[int, tuple[int, str]]:
    """Human label set id → (annotator id, name): each annotator's first label set of the dataset."""
    rows = session.execute(
        select(m.LabelSet.id, m.Annotator.id, m.Annotator.name)
        .join(m.Annotator, m.Annotator.id == m.LabelSet.annotator_id)
        .where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "human")
        .order_by(m.LabelSet.id)
    ).all()
    first: dict[int, tuple[int, str]] = {}
    taken: set[int] = set()
    for label_set_id, annotator_id, name in rows:
        if annotator_id not in taken:
            taken.add(annotator_id)
            first[label_set_id] = (annotator_id, name)
    return first


def _gold_set(session: Session, dataset_id: int, *, lock: bool = False) -> m.LabelSet | None:
    """The dataset's gold label set (the first by name, as the reports take it)."""
    query = (
        select(m.LabelSet)
        .where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "gold")
        .order_by(func.lower(m.LabelSet.name), m.LabelSet.id)
        .limit(1)
    )
    return session.scalar(query.with_for_update() if lock else query)


def _gold_raters(session: Session) -> set[int]:
    """Accounts holding adjudicated ratings (named by a gold label set), left out of the raters."""
    return {holder for holder in session.scalars(gold_raters()) if holder is not None}


class _Collector:
    """Gathers one task's labels per item and annotator while the queries stream."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.names: dict[int, str] = {}
        self.taking_part: dict[int, set[int]] = defaultdict(set)
        self.spans: dict[int, dict[int, list[SpanLabel]]] = defaultdict(lambda: defaultdict(list))
        self.units: dict[int, dict[int, dict[UnitKey, UnitLabel]]] = defaultdict(lambda: defaultdict(dict))
        self.ratings: dict[int, dict[int, dict[UnitKey, RatingLabel]]] = defaultdict(
            lambda: defaultdict(dict)
        )
        self.unit_names: dict[int, dict[UnitKey, str]] = defaultdict(dict)
        self.scales: dict[int, dict[UnitKey, tuple[float, float]]] = defaultdict(dict)

    def join(self, item_id: int, annotator_id: int, name: str) -> None:
        self.names[annotator_id] = name
        self.taking_part[item_id].add(annotator_id)

    def votes(self, item: tuple[int, str, int, str]) -> ItemVotes:
        item_id, external_id, position, response = item
        who = sorted(self.taking_part.get(item_id, ()), key=lambda a: (self.names[a].lower(), a))
        spans, units, ratings = self.spans[item_id], self.units[item_id], self.ratings[item_id]
        return ItemVotes(
            item_id=item_id,
            external_id=external_id,
            position=position,
            response=response,
            task=self.task,
            annotators={a: self.names[a] for a in who},
            spans={a: sorted(spans[a], key=_span_order) for a in who} if self.task == "spans" else {},
            units={a: dict(units[a]) for a in who}
            if self.task in ("sentences", "claims", "triplets")
            else {},
            ratings={a: dict(ratings[a]) for a in who} if self.task == "ratings" else {},
            unit_names=dict(self.unit_names[item_id]),
            scales=dict(self.scales[item_id]),
        )


def _load(
    session: Session, dataset_id: int, task: str, item_ids: Sequence[int] | None = None
) -> list[ItemVotes]:
    """Every annotator's labels of ``task`` on the dataset's items (or on ``item_ids``), in dataset order."""
    _check_task(task)
    items_query = (
        select(m.Item.id, m.Item.external_id, m.Item.position, m.Item.response)
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Item.position)
    )
    if item_ids is not None:
        items_query = items_query.where(m.Item.id.in_(list(item_ids)))
    items = [(r[0], r[1], r[2], r[3]) for r in session.execute(items_query)]
    wanted = {row[0] for row in items}
    found = _Collector(task)
    if task == "ratings":
        _collect_ratings(session, dataset_id, wanted, found)
    else:
        _collect_labels(session, dataset_id, task, wanted, found)
    return [found.votes(item) for item in items]


def _collect_labels(
    session: Session, dataset_id: int, task: str, wanted: set[int], found: _Collector
) -> None:
    sets = _annotator_sets(session, dataset_id)
    if not sets:
        return
    owners = list(sets)

    def keep(item_id: int, label_set_id: int) -> tuple[int, str] | None:
        return sets[label_set_id] if item_id in wanted else None

    for item_id, label_set_id in session.execute(
        select(m.ItemStatus.item_id, m.ItemStatus.label_set_id).where(
            m.ItemStatus.label_set_id.in_(owners), m.ItemStatus.page == task, m.ItemStatus.status == "done"
        )
    ):
        if (who := keep(item_id, label_set_id)) is not None:
            found.join(item_id, *who)
    if task == "spans":
        for label_set_id, item_id, start, end, type_ in session.execute(
            select(m.Span.label_set_id, m.Span.item_id, m.Span.start, m.Span.end, m.Span.type).where(
                m.Span.label_set_id.in_(owners)
            )
        ):
            if (who := keep(item_id, label_set_id)) is not None:
                found.join(item_id, *who)
                found.spans[item_id][who[0]].append((start, end, type_))
    elif task == "sentences":
        for label_set_id, item_id, index, label, error_type in session.execute(
            select(
                m.SentenceLabel.label_set_id,
                m.SentenceLabel.item_id,
                m.Sentence.index,
                m.SentenceLabel.label,
                m.SentenceLabel.error_type,
            )
            .join(m.Sentence, m.Sentence.id == m.SentenceLabel.sentence_id)
            .where(m.SentenceLabel.label_set_id.in_(owners))
            .order_by(m.Sentence.index)
        ):
            if (who := keep(item_id, label_set_id)) is not None:
                found.join(item_id, *who)
                found.units[item_id][who[0]][index] = (label, error_type)
                found.unit_names[item_id][index] = f"sentence {index + 1}"
    elif task == "claims":
        for label_set_id, item_id, index, label, type_ in session.execute(
            select(
                m.ClaimLabel.label_set_id,
                m.ClaimLabel.item_id,
                m.Claim.index,
                m.ClaimLabel.label,
                m.ClaimLabel.type,
            )
            .join(m.Claim, m.Claim.id == m.ClaimLabel.claim_id)
            .where(m.ClaimLabel.label_set_id.in_(owners))
            .order_by(m.Claim.index)
        ):
            if (who := keep(item_id, label_set_id)) is not None:
                found.join(item_id, *who)
                found.units[item_id][who[0]][index] = (label, type_)
                found.unit_names[item_id][index] = f"claim {index + 1}"
    else:
        source = aliased(m.LabelSet)
        for label_set_id, item_id, triplet_id, index, source_name, verdict, part in session.execute(
            select(
                m.TripletJudgment.label_set_id,
                m.TripletJudgment.item_id,
                m.Triplet.id,
                m.Triplet.index,
                source.name,
                m.TripletJudgment.verdict,
                m.TripletJudgment.wrong_part,
            )
            .join(m.Triplet, m.Triplet.id == m.TripletJudgment.triplet_id)
            .outerjoin(source, source.id == m.Triplet.label_set_id)
            .where(m.TripletJudgment.label_set_id.in_(owners), m.TripletJudgment.verdict.is_not(None))
            .order_by(m.Triplet.label_set_id, m.Triplet.index)
        ):
            if verdict is not None and (who := keep(item_id, label_set_id)) is not None:
                found.join(item_id, *who)
                found.units[item_id][who[0]][triplet_id] = (verdict, part)
                of = f" of {source_name}" if source_name else " of the scene graph"
                found.unit_names[item_id][triplet_id] = f"triplet {index + 1}{of}"


def _collect_ratings(session: Session, dataset_id: int, wanted: set[int], found: _Collector) -> None:
    gold_raters = _gold_raters(session)
    for task_id, task_name, low, high, item_id, rater, name, start, end, score, judged in session.execute(
        select(
            m.RatingTask.id,
            m.RatingTask.name,
            m.RatingTask.scale_min,
            m.RatingTask.scale_max,
            m.Rating.item_id,
            m.Annotator.id,
            m.Annotator.name,
            m.Rating.segment_start,
            m.Rating.segment_end,
            m.Rating.score,
            m.Rating.nothing_flagged_correct,
        )
        .join(m.Rating, m.Rating.task_id == m.RatingTask.id)
        .join(m.Annotator, m.Annotator.id == m.Rating.annotator_id)
        .where(m.RatingTask.dataset_id == dataset_id)
        .order_by(m.RatingTask.id, m.Rating.segment_start, m.Rating.segment_end)
    ):
        if item_id not in wanted or rater in gold_raters:
            continue
        key: UnitKey = (task_id, start, end)
        found.join(item_id, rater, name)
        found.ratings[item_id][rater][key] = ((score, judged), None)
        where = "the whole response" if start < 0 else f"segment {start}–{end}"
        found.unit_names[item_id][key] = f"{task_name}: {where}"
        found.scales[item_id][key] = (float(low), float(high))


def _weights(session: Session, dataset_id: int) -> dict[int, tuple[float, bool]]:
    return {
        annotator_id: (float(weight), bool(trusted))
        for annotator_id, weight, trusted in session.execute(
            select(m.AnnotatorWeight.annotator_id, m.AnnotatorWeight.weight, m.AnnotatorWeight.trusted).where(
                m.AnnotatorWeight.dataset_id == dataset_id
            )
        )
    }


def _latest_promotions(
    session: Session, dataset_id: int, task: str, item_ids: Iterable[int] | None = None
) -> dict[int, PromotionView]:
    """Item id → its latest promotion on ``task``, with the digest its log entry recorded."""
    query = (
        select(m.Promotion, m.Annotator.name, m.EditLog.after)
        .outerjoin(m.Annotator, m.Annotator.id == m.Promotion.reviewer_id)
        .outerjoin(m.EditLog, (m.EditLog.entity == "promotions") & (m.EditLog.entity_id == m.Promotion.id))
        .where(m.Promotion.dataset_id == dataset_id, m.Promotion.task == task)
        .order_by(m.Promotion.id)
    )
    if item_ids is not None:
        query = query.where(m.Promotion.item_id.in_(list(item_ids)))
    out: dict[int, PromotionView] = {}
    for promotion, reviewer, after in session.execute(query):
        out[promotion.item_id] = PromotionView(
            promotion.id,
            promotion.method,
            reviewer,
            promotion.at,
            tuple(promotion.sources or ()),
            (after or {}).get("digest"),
        )
    return out


def item_votes(engine: Engine, dataset_id: int, item_id: int, task: str) -> ItemVotes:
    """Every annotator's labels of one item on one task."""
    with read_session(engine) as session:
        found = _load(session, dataset_id, task, [item_id])
    if not found:
        raise ValueError(f"Dataset {dataset_id} has no item with id {item_id}.")
    return found[0]


def unit_texts(engine: Engine, item_id: int, task: str) -> dict[UnitKey, str]:
    """What each unit of the item says: a sentence's or claim's text, a triplet as "subject · relation ·
    object", a rated segment's quote ("the whole response" for a response-level rating)."""
    _check_task(task)
    with read_session(engine) as session:
        item = session.get_one(m.Item, item_id)
        if task == "sentences":
            return {s.index: item.response[s.start : s.end] for s in item.sentences}
        if task == "claims":
            return {c.index: c.text for c in item.claims}
        if task == "triplets":
            return {t.id: f"{t.subject} · {t.relation} · {t.object}" for t in item.triplets}
        if task == "ratings":
            found: dict[UnitKey, str] = {}
            for task_id, start, end in session.execute(
                select(m.Rating.task_id, m.Rating.segment_start, m.Rating.segment_end)
                .where(m.Rating.item_id == item_id)
                .distinct()
            ):
                found[(task_id, start, end)] = "the whole response" if start < 0 else item.response[start:end]
            return found
        return {}


def latest_promotion(engine: Engine, dataset_id: int, item_id: int, task: str) -> PromotionView | None:
    with read_session(engine) as session:
        return _latest_promotions(session, dataset_id, task, [item_id]).get(item_id)


def gold_ratings(engine: Engine, dataset_id: int) -> dict[str, list[Any]]:
    """The dataset's adjudicated ratings as columns (``task_id``, ``item_id``, ``segment_start``,
    ``segment_end``, ``score``, ``nothing_flagged_correct``), for analyses that want gold scores."""
    names = ["task_id", "item_id", "segment_start", "segment_end", "score", "nothing_flagged_correct"]
    out: dict[str, list[Any]] = {name: [] for name in names}
    with read_session(engine) as session:
        gold = _gold_set(session, dataset_id)
        if gold is None or gold.annotator_id is None:
            return out
        rows = session.execute(
            select(
                m.Rating.task_id,
                m.Rating.item_id,
                m.Rating.segment_start,
                m.Rating.segment_end,
                m.Rating.score,
                m.Rating.nothing_flagged_correct,
            )
            .join(m.RatingTask, m.RatingTask.id == m.Rating.task_id)
            .where(m.RatingTask.dataset_id == dataset_id, m.Rating.annotator_id == gold.annotator_id)
            .order_by(m.Rating.task_id, m.Rating.item_id, m.Rating.segment_start)
        )
        for row in rows:
            for name, value in zip(names, row, strict=True):
                out[name].append(value)
    return out


def _score(measure: Measure, votes: ItemVotes, threshold: float) -> float:
    if votes.task == "spans":
        return measure.spans(votes.response, votes.spans, threshold)
    if votes.task == "ratings":
        return measure.ratings(votes.ratings, votes.scales)
    return measure.units(votes.units)


def _decide(
    rule: Rule, votes: ItemVotes, weights: Weights, threshold: float
) -> tuple[GoldLabels | None, str | None]:
    if votes.task == "spans":
        return rule.spans(votes.response, votes.spans, weights, threshold)
    if votes.task == "ratings":
        return rule.units(votes.task, votes.ratings, weights, votes.unit_names)
    return rule.units(votes.task, votes.units, weights, votes.unit_names)


def items_in_disagreement(
    engine: Engine,
    dataset_id: int,
    task: str,
    threshold: float = 0.5,
    *,
    measure: Measure,
    rule: Rule | None = None,
) -> list[DisagreementRow]:
    """Items with two or more annotators on ``task`` who disagree, most disagreement first (then in
    dataset order), each with every annotator's labels and its latest promotion.

    With a ``rule``, items that rule sends to review are listed too (with the reason) even where the
    annotators agree: AlignBench's rule reviews agreed hallucinations.
    """
    with read_session(engine) as session:
        everything = _load(session, dataset_id, task)
        weights = _weights(session, dataset_id) if rule is not None else {}
        promotions = _latest_promotions(session, dataset_id, task)
    rows = []
    for votes in everything:
        if len(votes.annotators) < 2:
            continue
        score = _score(measure, votes, threshold)
        review = _decide(rule, votes, weights, threshold)[1] if rule is not None else None
        if score <= 0 and review is None:
            continue
        promotion = promotions.get(votes.item_id)
        current = promotion is not None and promotion.digest == votes.digest
        rows.append(DisagreementRow(votes, score, review, promotion, current))
    return sorted(rows, key=lambda r: (-r.disagreement, r.votes.position))


# ------------------------------------------------------------------------------------------ writing


def _gold_for_write(session: Session, dataset_id: int, actor_id: int | None) -> m.LabelSet:
    """The dataset's gold label set, locked (promotions of one dataset take turns), created if missing
    (an import or another promotion making it now is waited for: :func:`~db.engine.hold_name`)."""
    gold = _gold_set(session, dataset_id, lock=True)
    if gold is not None:
        return gold
    hold_name(session, "label set", dataset_id, "gold", GOLD_NAME)
    gold = _gold_set(session, dataset_id, lock=True)
    if gold is not None:
        return gold
    gold = m.LabelSet(dataset_id=dataset_id, kind="gold", name=GOLD_NAME)
    session.add(gold)
    session.flush()
    session.add(
        m.EditLog(
            annotator_id=actor_id,
            action="create",
            entity="label_sets",
            entity_id=gold.id,
            label_set_id=gold.id,
            after={
                "dataset_id": dataset_id,
                "kind": "gold",
                "name": GOLD_NAME,
                "description": "created the gold label set for adjudicated labels",
            },
        )
    )
    return gold


def _gold_rater(session: Session, gold: m.LabelSet) -> int:
    """The account holding this gold label set's ratings, created (and linked) on first use."""
    if gold.annotator_id is not None:
        return gold.annotator_id
    holder = session.scalar(select(m.Annotator).where(m.Annotator.name == GOLD_RATER))
    if holder is None:
        holder = m.Annotator(name=GOLD_RATER, role="viewer", disabled=True)
        session.add(holder)
        session.flush()
    elif not holder.disabled or holder.password_hash is not None:
        raise ValueError(
            f"An account named {GOLD_RATER!r} exists (an imported rater?); rename it so adjudicated "
            "ratings can be stored."
        )
    gold.annotator_id = holder.id
    session.flush()
    return holder.id


@dataclass(frozen=True)
class _Unit:
    """A sentence, claim or triplet of an item, as the gold rows name it."""

    id: int
    index: int


class _Item(NamedTuple):
    """What a promotion writes and says of an item."""

    id: int
    external_id: str
    response: str
    dataset_id: int


@dataclass
class _ItemGold:
    """One item's gold rows of one task and the units they label, as a promotion reads them: the plan
    of what it replaces and what it writes come from this one reading (:func:`_read_gold`)."""

    item: _Item
    units: dict[int, _Unit] = field(default_factory=dict)  # sentences, claims: by index; triplets: by id
    rows: dict[Any, Any] = field(default_factory=dict)  # by sentence, claim or triplet id, rated segment
    spans: list[m.Span] = field(default_factory=list)  # in offset order
    tasks: Mapping[int, m.RatingTask] = field(default_factory=dict)  # the dataset's rating tasks

    def labels(self, task: str) -> GoldLabels:
        """The gold labels in the shape of an annotator's; a triplet judgment left undecided reads
        ``(None, None)``, which :func:`label_text` names."""
        if task == "spans":
            return [(r.start, r.end, r.type) for r in self.spans]
        if task == "ratings":
            rated: dict[UnitKey, RatingLabel] = {
                key: ((r.score, r.nothing_flagged_correct), None) for key, r in self.rows.items()
            }
            return rated
        if task == "triplets":
            judged: dict[UnitKey, UnitLabel] = {
                key: (r.verdict, r.wrong_part) for key, r in self.rows.items()
            }
            return judged
        index_of = {unit.id: unit.index for unit in self.units.values()}
        detail = "error_type" if task == "sentences" else "type"
        labelled: dict[UnitKey, UnitLabel] = {
            index_of[key]: (r.label, getattr(r, detail)) for key, r in self.rows.items()
        }
        return labelled


_GOLD_ROWS: dict[str, Any] = {
    "sentences": (m.SentenceLabel, m.SentenceLabel.sentence_id),
    "claims": (m.ClaimLabel, m.ClaimLabel.claim_id),
    "triplets": (m.TripletJudgment, m.TripletJudgment.triplet_id),
}
_UNITS: dict[str, Any] = {"sentences": m.Sentence, "claims": m.Claim, "triplets": m.Triplet}
# The table holding gold's rows of each task, as the edit log names it.
_GOLD_ENTITY = {
    "spans": "spans",
    "sentences": "sentence_labels",
    "claims": "claim_labels",
    "triplets": "triplet_judgments",
    "ratings": "ratings",
}


def _fingerprint(found: _ItemGold | None, promotion: PromotionView | None) -> str:
    """The item's gold rows of a task as ids and versions, with its latest promotion on the task: every
    write of a gold row bumps its version, a removed or new row changes the set, and a promotion that
    found gold already as it decided (changing no row) is still a reviewer's decision made since."""
    rows = sorted((r.id, r.version) for r in (*found.spans, *found.rows.values())) if found else []
    return hashlib.sha256(repr((rows, promotion.id if promotion else None)).encode()).hexdigest()


def _naive(at: datetime) -> datetime:
    """A time in UTC without its zone, as SQLite returns it, to compare with PostgreSQL's."""
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo is not None else at


def _latest_promotion(session: Session, item: int, dataset_id: int, task: str) -> PromotionView | None:
    return _latest_promotions(session, dataset_id, task, [item]).get(item)


def gold_version(engine: Engine, dataset_id: int, item_id: int, task: str) -> str:
    """What the item's gold labels of ``task`` are now, for :func:`promote_item`'s ``expected_gold``
    (opaque: equal while that gold is unchanged)."""
    _check_task(task)
    with read_session(engine) as session:
        gold = _gold_set(session, dataset_id)
        found = _read_gold(session, gold, task, [item_id]).get(item_id) if gold is not None else None
        return _fingerprint(found, _latest_promotion(session, item_id, dataset_id, task))


def _gold_changed(
    session: Session, gold: m.LabelSet, item: _Item, task: str, promotion: PromotionView | None
) -> GoldChanged:
    """The refusal of a promotion over changed gold, naming the latest change of it: a logged write
    of a gold row, or the latest promotion when that came later."""
    last = session.execute(
        select(m.EditLog.at, m.Annotator.name)
        .outerjoin(m.Annotator, m.Annotator.id == m.EditLog.annotator_id)
        .where(
            m.EditLog.label_set_id == gold.id,
            m.EditLog.item_id == item.id,
            m.EditLog.entity == _GOLD_ENTITY[task],
        )
        .order_by(m.EditLog.id.desc())
        .limit(1)
    ).first()
    when, who = (last.at, last.name) if last is not None else (None, None)
    if promotion is not None and (when is None or _naive(promotion.at) >= _naive(when)):
        when, who = promotion.at, promotion.reviewer
    by = "" if when is None else f" by {who or 'the command line'} on {when:%Y-%m-%d %H:%M}"
    return GoldChanged(
        f"The gold {task} of item {item.external_id} were changed{by} since this page showed them — "
        "reload the item to see them before promoting."
    )


def _read_gold(
    session: Session, gold: m.LabelSet, task: str, item_ids: Iterable[int], *, to_write: bool = False
) -> dict[int, _ItemGold]:
    """Item id → the item's gold rows of ``task`` with the units they label, read a chunk of items at a
    time (a rule over a large dataset read them one item at a time, several queries each).

    ``to_write``: the rows are locked until the transaction ends (``FOR UPDATE``; SQLite runs one
    writer at a time anyway), so the gold a promotion checked before writing is the gold it replaces:
    under PostgreSQL's READ COMMITTED an undo, a restore or an import committed between the check and
    the write put the file's label back under it, and the promotion overwrote it unconfirmed. Those
    writers wait for the promotion now, as do inserts of gold rows (their foreign key locks the gold
    label set, which :func:`_gold_for_write` holds). A gold rating holder is made first, so its rows are
    the ones read and written."""
    ids = list(item_ids)
    tasks: dict[int, m.RatingTask] = {}
    holder = gold.annotator_id
    if task == "ratings" and ids:  # a run that promotes no rating makes no holder
        holder = _gold_rater(session, gold) if to_write else gold.annotator_id
        tasks = {
            t.id: t
            for t in session.scalars(select(m.RatingTask).where(m.RatingTask.dataset_id == gold.dataset_id))
        }
    out: dict[int, _ItemGold] = {}
    for chunk in chunks(ids):
        for item_id, external_id, response, dataset_id in session.execute(
            select(m.Item.id, m.Item.external_id, m.Item.response, m.Item.dataset_id).where(
                m.Item.id.in_(chunk)
            )
        ):
            out[item_id] = _ItemGold(_Item(item_id, external_id, response, dataset_id), tasks=tasks)
        rows: Select[Any]
        if task == "spans":
            rows = (
                select(m.Span)
                .where(m.Span.label_set_id == gold.id, m.Span.item_id.in_(chunk))
                .order_by(m.Span.item_id, m.Span.start, m.Span.end, m.Span.id)
            )
        elif task == "ratings":
            if holder is None:
                continue  # nobody holds gold ratings yet
            rows = (
                select(m.Rating)
                .where(m.Rating.item_id.in_(chunk), m.Rating.annotator_id == holder)
                .order_by(m.Rating.item_id, m.Rating.task_id, m.Rating.segment_start, m.Rating.segment_end)
            )
        else:
            model, labelled = _GOLD_ROWS[task]
            rows = (
                select(model)
                .where(model.label_set_id == gold.id, model.item_id.in_(chunk))
                .order_by(model.item_id, labelled)
            )
            unit = _UNITS[task]
            for unit_id, item_id, index in session.execute(
                select(unit.id, unit.item_id, unit.index).where(unit.item_id.in_(chunk))
            ):
                out[item_id].units[unit_id if task == "triplets" else index] = _Unit(unit_id, index)
        if to_write:
            rows = rows.with_for_update().execution_options(populate_existing=True)
        for row in session.scalars(rows):
            found = out[row.item_id]
            if task == "spans":
                found.spans.append(row)
            elif task == "ratings":
                found.rows[(row.task_id, row.segment_start, row.segment_end)] = row
            else:
                found.rows[getattr(row, _GOLD_ROWS[task][1].key)] = row
    return out


@dataclass
class _Writer:
    """Writes one item's gold labels of one task, logging each changed row as labeling does, and notes
    each gold row it changes or removes (``replacing``). With ``dry`` it only notes them: what a
    promotion would replace is known before anything is written, and known by the very comparisons
    that decide what is written (a rule's preview, the page's list and the store's check all ask this).

    Accepting one annotator's unit labels (``method`` "accept") keeps the gold of the units they left
    unlabeled; any other method makes ``labels`` the whole of the item's gold of the task."""

    session: Session
    gold: m.LabelSet
    found: _ItemGold
    actor_id: int | None
    method: str
    dry: bool = False
    log_ids: list[int] = field(default_factory=list)
    replacing: list[GoldRow] = field(default_factory=list)

    @property
    def item(self) -> _Item:
        return self.found.item

    def _note(self, what: str) -> str:
        return adjudicated(self.method, what)

    def _unlisted(self, key: Any, listed: Container[Any]) -> bool:
        """Whether the gold row of unit ``key`` goes: its unit is not ``listed`` among the labels, and
        they are not one annotator's accepted as they are."""
        return key not in listed and self.method != "accept"

    def _replaces(self, row: Any, entity: str, says: str) -> None:
        written = row.created_at if entity == "spans" else row.updated_at  # a span keeps when it was made
        self.replacing.append(
            GoldRow(
                entity,
                row.id,
                self.item.id,
                self.item.external_id,
                _snapshot(row, entity),
                says,
                row.version,
                written,
            )
        )

    def _delete(self, row: m.Base, entity: str, what: str, says: str) -> None:
        self._replaces(row, entity, says)
        if self.dry:
            return
        done = _log(
            self.session,
            annotator_id=self.actor_id,
            action="delete",
            entity=entity,
            row=row,
            before=_snapshot(row, entity),
            after=None,
            description=self._note(f"removed {what}"),
            label_set_id=self.gold.id,
        )
        self.log_ids.append(done.log_id)
        self.session.delete(row)
        self.session.flush()

    def _set(
        self,
        entity: str,
        lookup: dict[str, Any],
        values: dict[str, Any],
        what: str,
        row: m.Base | None,
        says: str,
    ) -> None:
        """Write ``values`` to the gold row ``lookup`` finds (``row``, which says ``says``; None: new)."""
        if row is not None:
            self._replaces(row, entity, says)
        if self.dry:
            return
        done = _upsert(  # the row as planned, or none: else it refuses (StaleEdit)
            self.session,
            entity,
            lookup,
            values,
            annotator_id=self.actor_id,
            expected_version=row.version if row is not None else ABSENT,  # type: ignore[attr-defined]  # gold rows are versioned
            description=self._note(what),
            log_label_set_id=self.gold.id,
        )
        self.log_ids.append(done.log_id)

    def spans(self, labels: Sequence[SpanLabel]) -> None:
        response = self.item.response
        for start, end, _type in labels:
            if not 0 <= start < end <= len(response):
                raise ValueError(
                    f"A span must lie inside the response (0-{len(response)}); got {start}-{end}."
                )
        rows = self.found.spans
        wanted = Counter(labels)
        for row in rows:
            key = (row.start, row.end, row.type)
            if wanted[key] > 0:
                wanted[key] -= 1
            else:
                says = "span " + label_text("spans", key, response)
                self._delete(row, "spans", f"span {row.start}-{row.end}", says)
        if self.dry:
            return
        for (start, end, type_), count in sorted(wanted.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            for _ in range(count):
                row = m.Span(
                    label_set_id=self.gold.id, item_id=self.item.id, start=start, end=end, type=type_
                )
                self.session.add(row)
                self.session.flush()
                done = _log(
                    self.session,
                    annotator_id=self.actor_id,
                    action="create",
                    entity="spans",
                    row=row,
                    before=None,
                    after=_snapshot(row, "spans"),
                    description=self._note(f"span “{response[start:end][:40]}” ({type_ or 'untyped'})"),
                )
                self.log_ids.append(done.log_id)

    def sentences(self, labels: Mapping[UnitKey, UnitLabel]) -> None:
        sentences, rows = self.found.units, self.found.rows
        index_of = {s.id: s.index for s in sentences.values()}

        def says(sentence_id: int) -> str:
            row = rows[sentence_id]
            confirmed = " (confirmed correct despite a span in it)" if row.override else ""
            return (
                f"sentence {index_of[sentence_id] + 1}: "
                f"{label_text('sentences', (row.label, row.error_type))}{confirmed}"
            )

        for index, (label, error_type) in labels.items():
            sentence = sentences.get(index) if isinstance(index, int) else None
            if sentence is None:
                raise ValueError(f"The item has no sentence {index!r}.")
            if label not in m.SENTENCE_LABELS:
                raise ValueError(f"{label!r} is not one of {', '.join(m.SENTENCE_LABELS)}.")
            error_type = error_type if label == "incorrect" else None
            row = rows.get(sentence.id)
            if row is not None and (row.label, row.error_type, row.override) == (label, error_type, False):
                continue
            self._set(
                "sentence_labels",
                {"label_set_id": self.gold.id, "sentence_id": sentence.id},
                {"item_id": self.item.id, "label": label, "error_type": error_type, "override": False},
                f"sentence {sentence.index + 1} → {label}" + (f" ({error_type})" if error_type else ""),
                row,
                says(sentence.id) if row is not None else "",
            )
        listed = {sentences[i].id for i in labels if isinstance(i, int) and i in sentences}
        for sentence_id, row in rows.items():
            if self._unlisted(sentence_id, listed):
                self._delete(row, "sentence_labels", "a sentence label", says(sentence_id))

    def claims(self, labels: Mapping[UnitKey, UnitLabel]) -> None:
        claims, rows = self.found.units, self.found.rows
        index_of = {c.id: c.index for c in claims.values()}

        def says(claim_id: int) -> str:
            row = rows[claim_id]
            return f"claim {index_of[claim_id] + 1}: {label_text('claims', (row.label, row.type))}"

        for index, (label, type_) in labels.items():
            claim = claims.get(index) if isinstance(index, int) else None
            if claim is None:
                raise ValueError(f"The item has no claim {index!r}.")
            if label not in m.CLAIM_LABELS:
                raise ValueError(f"{label!r} is not one of {', '.join(m.CLAIM_LABELS)}.")
            row = rows.get(claim.id)
            if row is not None and (row.label, row.type) == (label, type_):
                continue
            self._set(
                "claim_labels",
                {"label_set_id": self.gold.id, "claim_id": claim.id},
                {"item_id": self.item.id, "label": label, "type": type_},
                f"claim {claim.index + 1} → {label}" + (f" ({type_})" if type_ else ""),
                row,
                says(claim.id) if row is not None else "",
            )
        listed = {claims[i].id for i in labels if isinstance(i, int) and i in claims}
        for claim_id, row in rows.items():
            if self._unlisted(claim_id, listed):
                self._delete(row, "claim_labels", "a claim label", says(claim_id))

    def triplets(self, labels: Mapping[UnitKey, UnitLabel]) -> None:
        triplets, rows = self.found.units, self.found.rows

        def says(triplet_id: int) -> str:
            row, triplet = rows[triplet_id], triplets.get(triplet_id)
            where = f"triplet {triplet.index + 1}" if triplet is not None else "a triplet"
            return f"{where}: {label_text('triplets', (row.verdict, row.wrong_part))}"

        for triplet_id, (verdict, part) in labels.items():
            triplet = triplets.get(triplet_id) if isinstance(triplet_id, int) else None
            if triplet is None:
                raise ValueError(f"The item has no triplet with id {triplet_id!r}.")
            if verdict not in m.TRIPLET_VERDICTS:
                raise ValueError(f"{verdict!r} is not yes or no.")
            part = part if verdict == "no" else None
            if part is not None and part not in m.TRIPLET_WRONG_PARTS:
                raise ValueError(f"{part!r} is not one of {', '.join(m.TRIPLET_WRONG_PARTS)}.")
            row = rows.get(triplet.id)
            if row is not None and (row.verdict, row.wrong_part) == (verdict, part):
                continue
            self._set(
                "triplet_judgments",
                {"label_set_id": self.gold.id, "triplet_id": triplet.id},
                {"item_id": self.item.id, "verdict": verdict, "wrong_part": part},
                f"triplet {triplet.index + 1} → {verdict}" + (f" ({part})" if part else ""),
                row,
                says(triplet.id) if row is not None else "",
            )
        for triplet_id, row in rows.items():
            if self._unlisted(triplet_id, labels):
                self._delete(row, "triplet_judgments", "a triplet judgment", says(triplet_id))

    def ratings(self, labels: Mapping[UnitKey, RatingLabel]) -> None:
        # Read to write, gold has its holder (_read_gold); a dry run makes none: without one, gold holds
        # no rating to replace.
        holder, tasks, rows = self.gold.annotator_id, self.found.tasks, self.found.rows

        def says(key: tuple[int, int, int]) -> str:
            row, task = rows[key], tasks.get(key[0])
            where = "the response" if key[1] < 0 else f"segment {key[1]}-{key[2]}"
            on = f" on {task.name}" if task is not None else ""
            return f"rating of {where}{on}: {label_text('ratings', ((row.score, row.nothing_flagged_correct), None))}"

        for key, ((score, judged), _detail) in labels.items():
            if not isinstance(key, tuple) or key[0] not in tasks:
                raise ValueError(f"{key!r} is not a rated segment of a rating task of this dataset.")
            task = tasks[key[0]]
            if score is not None and not task.scale_min <= score <= task.scale_max:
                raise ValueError(
                    f"A score on {task.name!r} lies from {task.scale_min} to {task.scale_max}; got {score}."
                )
            if score is None and judged is None:
                raise ValueError("Give a score, or say whether flagging nothing was right.")
            row = rows.get(key)
            if row is not None and (row.score, row.nothing_flagged_correct) == (score, judged):
                continue
            self._set(
                "ratings",
                {
                    "task_id": key[0],
                    "item_id": self.item.id,
                    "annotator_id": holder,
                    "segment_start": key[1],
                    "segment_end": key[2],
                },
                {"score": score, "nothing_flagged_correct": judged},
                f"rating of {'the response' if key[1] < 0 else f'segment {key[1]}-{key[2]}'} on "
                f"{task.name}: {score if score is not None else judged}",
                row,
                says(key) if row is not None else "",
            )
        for key, row in rows.items():
            if self._unlisted(key, labels):
                self._delete(row, "ratings", "a rating", says(key))


def _write_labels(writer: _Writer, task: str, labels: GoldLabels) -> None:
    if task == "spans":
        if isinstance(labels, Mapping):
            raise ValueError("Spans are given as a list of (start, end, type).")
        writer.spans([(int(s), int(e), t) for s, e, t in labels])
        return
    if not isinstance(labels, Mapping):
        raise ValueError(f"Labels of {task} are given per unit.")
    if task == "ratings":
        writer.ratings(labels)  # type: ignore[arg-type]  # checked value by value as they are written
    else:
        getattr(writer, task)(labels)


def _planned(
    session: Session, gold: m.LabelSet, found: _ItemGold, task: str, labels: GoldLabels, method: str
) -> list[GoldRow]:
    """The gold rows that promoting ``labels`` by ``method`` to the item's gold of ``task`` would
    change or remove, as the writer finds them (the labels checked as a promotion checks them); writes
    nothing."""
    writer = _Writer(session, gold, found, None, method, dry=True)
    _write_labels(writer, task, labels)
    return writer.replacing


def _refuse_unseen(imported: ImportedGold, replacing: str | None) -> None:
    """Refuse (:class:`ReplacesImportedGold`) unless the imported gold to replace is none, or exactly
    what the caller confirmed (``replacing``: its :attr:`ImportedGold.digest`)."""
    if imported.rows and imported.digest != replacing:
        raise ReplacesImportedGold(imported)


def imported_gold_replaced(
    engine: Engine, dataset_id: int, item_id: int, task: str, labels: GoldLabels, *, method: str
) -> ImportedGold:
    """The gold labels imported with the dataset that :func:`promote_item` with these arguments would
    change or remove, for the reviewer to see before promoting; reads only. Raises ValueError for labels
    a promotion would refuse."""
    _check_task(task)
    with read_session(engine) as session:
        gold = _gold_set(session, dataset_id)
        found = _read_gold(session, gold, task, [item_id]).get(item_id) if gold is not None else None
        if gold is None or found is None:
            return ImportedGold()
        return imported_among(session, gold.id, _planned(session, gold, found, task, labels, method))


def _promote(
    session: Session,
    gold: m.LabelSet,
    votes: ItemVotes,
    found: _ItemGold,
    labels: GoldLabels,
    *,
    method: str,
    sources: Sequence[int],
    actor_id: int | None,
) -> PromotionResult:
    item = found.item
    writer = _Writer(session, gold, found, actor_id, method)
    _write_labels(writer, votes.task, labels)
    promotion = m.Promotion(
        dataset_id=item.dataset_id,
        item_id=item.id,
        task=votes.task,
        reviewer_id=actor_id,
        method=method,
        sources=sorted(set(sources)),
    )
    session.add(promotion)
    session.flush()
    entry = m.EditLog(
        annotator_id=actor_id,
        action="create",
        entity="promotions",
        entity_id=promotion.id,
        item_id=item.id,
        label_set_id=gold.id,
        after={
            "task": votes.task,
            "method": method,
            "sources": promotion.sources,
            "digest": votes.digest,
            "changes": len(writer.log_ids),
            "description": f"promoted {votes.task} of item {item.external_id} to gold ({method})",
        },
    )
    session.add(entry)
    session.flush()
    return PromotionResult(promotion.id, len(writer.log_ids), (*writer.log_ids, entry.id))


@_retried
def promote_item(
    engine: Engine,
    dataset_id: int,
    item_id: int,
    task: str,
    labels: GoldLabels,
    *,
    method: str,
    sources: Sequence[int],
    actor: Actor,
    expected_digest: str | None = None,
    expected_gold: str | None = None,
    replacing: str | None = None,
) -> PromotionResult:
    """Make ``labels`` the item's gold labels of ``task``, as a reviewer decided them.

    ``method`` says how ("accept" one annotator's labels, "merge" several, "edit"); ``sources`` names
    the annotators whose labels were used. Accepting an annotator's sentence, claim, triplet or rating
    labels keeps the gold of the units that annotator left unlabeled (also a triplet judgment gold holds
    undecided): they gave no opinion on those, and an unlabeled unit must not silently erase a decision
    made earlier (merge or edit to remove it). Pass the :attr:`ItemVotes.digest` the page showed as
    ``expected_digest`` to refuse (:class:`StaleEdit`) when an annotator changed their labels since,
    and the :func:`gold_version` it showed as ``expected_gold`` to refuse (:class:`GoldChanged`, nothing
    written) when the item's gold of ``task`` changed since: another reviewer's promotion among them.

    Gold imported with the dataset is replaced only as confirmed: when the promotion would change or
    remove any such label (:func:`imported_gold_replaced`), ``replacing`` must be the
    :attr:`ImportedGold.digest` of exactly those labels, else it is refused with them
    (:class:`ReplacesImportedGold`) and nothing is written.
    Requires the "adjudicate" right; everything happens in one transaction.
    """
    _check_task(task)
    if method not in MANUAL_METHODS:
        raise ValueError(f"Unknown method {method!r}; choose one of {', '.join(MANUAL_METHODS)}.")
    with write_session(engine) as session:
        acting = require_in(session, actor, "adjudicate")
        found = _load(session, dataset_id, task, [item_id])
        if not found:
            raise ValueError(f"Dataset {dataset_id} has no item with id {item_id}.")
        votes = found[0]
        if expected_digest is not None and votes.digest != expected_digest:
            raise StaleEdit("An annotator changed their labels of this item meanwhile — reload the item.")
        gold = _gold_for_write(session, dataset_id, acting.id)
        gold_now = _read_gold(session, gold, task, [item_id], to_write=True)[item_id]
        promoted = _latest_promotion(session, item_id, dataset_id, task)
        if expected_gold is not None and _fingerprint(gold_now, promoted) != expected_gold:
            raise _gold_changed(session, gold, gold_now.item, task, promoted)
        _refuse_unseen(
            imported_among(session, gold.id, _planned(session, gold, gold_now, task, labels, method)),
            replacing,
        )
        return _promote(
            session, gold, votes, gold_now, labels, method=method, sources=sources, actor_id=acting.id
        )


@_retried
def promote_by_rule(
    engine: Engine,
    dataset_id: int,
    task: str,
    rule: Rule,
    *,
    threshold: float = 0.5,
    actor: Actor,
    dry_run: bool = False,
    replacing: str | None = None,
) -> RuleSummary:
    """Promote every item the rule finds agreed, in one transaction; say which items need review and why.

    Items with fewer than two annotators are left alone, and so are items whose latest promotion was
    made from the labels the annotators hold now (running a rule twice changes nothing the second
    time). ``dry_run`` computes the same summary and writes nothing. Gold imported with the dataset is
    replaced only as confirmed, by the same check as :func:`promote_item`'s: every agreed item's gold
    rows the rule would change or remove are those the writer would (a label's override flag and a
    triplet judgment left undecided count too); the summary's ``imported`` (a dry run's) names those
    imported with the dataset, and ``replacing`` must be its digest, else nothing is written
    (:class:`ReplacesImportedGold`). Requires "adjudicate".
    """
    _check_task(task)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"The IoU threshold lies in [0, 1]; got {threshold}.")
    opened = read_session(engine) if dry_run else write_session(engine)
    with opened as session:
        acting = require_in(session, actor, "adjudicate")
        gold = _gold_set(session, dataset_id) if dry_run else _gold_for_write(session, dataset_id, acting.id)
        everything = _load(session, dataset_id, task)
        weights = _weights(session, dataset_id)
        promotions = _latest_promotions(session, dataset_id, task)
        review: list[tuple[str, str]] = []
        decided: list[tuple[ItemVotes, GoldLabels]] = []
        unchanged = single = 0
        for votes in everything:
            if len(votes.annotators) < 2:
                single += 1 if votes.annotators else 0
                continue
            previous = promotions.get(votes.item_id)
            if previous is not None and previous.digest == votes.digest:
                unchanged += 1
                continue
            labels, reason = _decide(rule, votes, weights, threshold)
            if labels is None:
                review.append((votes.external_id, reason or "the rule found no agreement"))
                continue
            decided.append((votes, labels))
        # Without gold there is none to replace; with it, each agreed item's is read as it is written.
        gold_now = (
            _read_gold(session, gold, task, [v.item_id for v, _ in decided], to_write=not dry_run)
            if gold is not None
            else {}
        )
        planned = {
            votes.item_id: _planned(session, gold, gold_now[votes.item_id], task, labels, rule.name)
            for votes, labels in decided
            if gold is not None
        }
        replacing_rows = [row for rows in planned.values() for row in rows]
        imported = imported_among(session, gold.id, replacing_rows) if gold is not None else ImportedGold()
        if not dry_run:
            _refuse_unseen(imported, replacing)  # before anything is written
            assert gold is not None  # created for a real run
            for votes, labels in decided:
                _promote(
                    session,
                    gold,
                    votes,
                    gold_now[votes.item_id],
                    labels,
                    method=rule.name,
                    sources=list(votes.annotators),
                    actor_id=acting.id,
                )
    return RuleSummary(
        rule.name,
        task,
        threshold,
        dry_run,
        tuple(votes.external_id for votes, _ in decided),
        sum(1 for rows in planned.values() if rows),
        tuple(review),
        unchanged,
        single,
        imported,
    )


# ---------------------------------------------------------------------------------------- overrides


def label_text(task: str, label: Any, response: str = "") -> str:
    """A label as pages and the overrides list show it (a span needs the response to quote)."""
    if task == "spans":
        start, end, type_ = label
        return f"“{response[start:end]}” ({type_ or 'untyped'})"
    verdict, detail = label
    if task == "ratings":
        score, judged = verdict
        return f"{score:g}" if score is not None else f"nothing flagged: {'right' if judged else 'wrong'}"
    if verdict is None:  # a triplet judgment whose judge could not decide (gold imported so)
        return "not decided"
    return f"{verdict} ({detail})" if detail else str(verdict)


def _span_overrides(
    theirs: list[SpanLabel], gold: list[SpanLabel], response: str
) -> list[tuple[str, str, str]]:
    """(unit, theirs, gold) for each of their spans gold lacks and each gold span they lack; a span is
    paired with the spans of the other side that overlap it."""
    out = []
    for span in theirs:
        if span not in gold:
            over = [g for g in gold if g[0] < span[1] and span[0] < g[1]]
            said = "; ".join(label_text("spans", g, response) for g in over) or "no span here"
            out.append((f"span {span[0]}–{span[1]}", label_text("spans", span, response), said))
    for span in gold:
        if span not in theirs and not any(t[0] < span[1] and span[0] < t[1] for t in theirs):
            out.append((f"span {span[0]}–{span[1]}", "no span here", label_text("spans", span, response)))
    return out


def _still_open(session: Session, dataset_id: int, annotator_id: int) -> set[int]:
    """The items assigned to the annotator that they have not done on some task (skipped included)."""
    found: set[int] = set()
    for task in m.TASKS:
        found |= open_assigned_items(session, dataset_id, annotator_id, task)
    return found


def overrides_for(
    engine: Engine, dataset_id: int, annotator_id: int, *, open_items_hidden: bool = False
) -> list[Override]:
    """The units of promoted items where gold now differs from this annotator's label: what they said,
    what gold says, who promoted the item and when (the latest promotion). Units the annotator left
    unlabelled are not theirs to be overridden, except for spans gold added where they marked none.

    ``open_items_hidden`` (a blind annotator: :func:`db.repositories.visibility.gold_waits_for_finish`)
    leaves out the items assigned to them that they have not done (skipped ones included) on any of
    their tasks: an item promoted before they were done would otherwise show gold's answer to each unit
    they label, and every gold span; and gold of one task of an item (its spans) answers another (its
    sentences). Once shown, the item is theirs no more to edit (:mod:`db.repositories.gold_sightings`),
    so it must be shown only when all their work on it is done."""
    return overridden_labels(engine, dataset_id, annotator_id, open_items_hidden=open_items_hidden).found


@dataclass(frozen=True)
class OverriddenLabels:
    """What the Overridden labels page shows an annotator: :func:`overrides_for`'s units, and how many
    promoted items it left out as still open for them (``held_back``), which the page says rather than
    that gold agrees with them everywhere."""

    found: list[Override]
    held_back: int


def overridden_labels(
    engine: Engine, dataset_id: int, annotator_id: int, *, open_items_hidden: bool = False
) -> OverriddenLabels:
    """:func:`overrides_for` with the number of promoted items held back (none unless
    ``open_items_hidden``), from one read of the annotator's open items and of the promotions: read
    twice, they could disagree (an item finished between the reads was neither shown nor counted)."""
    out: list[Override] = []
    held_back: set[int] = set()
    with read_session(engine) as session:
        gold = _gold_set(session, dataset_id)
        still_open = _still_open(session, dataset_id, annotator_id) if open_items_hidden else set()
        for task in m.TASKS:
            promotions = _latest_promotions(session, dataset_id, task)
            held_back |= still_open & promotions.keys()
            for item_id in still_open:
                promotions.pop(item_id, None)
            if not promotions:
                continue
            gold_now = _read_gold(session, gold, task, promotions) if gold is not None else {}
            for votes in _load(session, dataset_id, task, list(promotions)):
                if annotator_id not in votes.annotators:
                    continue
                promotion = promotions[votes.item_id]
                held = gold_now.get(votes.item_id)
                current = held.labels(task) if held is not None else [] if task == "spans" else {}
                mine = votes.labels_of(annotator_id)
                if task == "spans":
                    found = _span_overrides(list(mine), list(current), votes.response)  # type: ignore[arg-type]  # spans are lists
                else:
                    assert isinstance(mine, Mapping) and isinstance(current, Mapping)
                    found = [
                        (
                            votes.unit_names.get(unit, str(unit)),
                            label_text(task, label),
                            label_text(task, current[unit]) if unit in current else "no label",
                        )
                        for unit, label in mine.items()
                        if current.get(unit) != label
                    ]
                out.extend(
                    Override(
                        votes.item_id,
                        votes.external_id,
                        task,
                        unit,
                        theirs,
                        said,
                        promotion.reviewer,
                        promotion.method,
                        promotion.at,
                    )
                    for unit, theirs, said in found
                )
    return OverriddenLabels(out, len(held_back))
