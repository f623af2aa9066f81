"""Reading what label sets say about an item: spans, sentence labels, claims, triplets, outputs, and
the rating of the whole response."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.engine import read_session
from db.label_set_rows import dataset_label_sets, holding
from formats.records import RESPONSE_SCALE


@dataclass(frozen=True)
class SpanView:
    id: int
    start: int
    end: int
    type: str | None
    note: str | None = None
    version: int = 1


@dataclass(frozen=True)
class SentenceLabelView:
    sentence_index: int
    label: str
    error_type: str | None
    override: bool
    version: int


@dataclass(frozen=True)
class ClaimLabelView:
    claim_index: int
    label: str
    type: str | None
    reason: str | None
    version: int


@dataclass(frozen=True)
class TripletJudgmentView:
    triplet_id: int
    index: int
    subject: str
    relation: str
    object: str
    verdict: str | None
    wrong_part: str | None
    version: int | None = None  # of the judgment; None while there is none


@dataclass(frozen=True)
class RawOutputView:
    text: str
    analysis: str | None
    follows_format: bool
    parse_error: str | None
    cut: bool = False  # cut at the endpoint's token limit


@dataclass(frozen=True)
class ResponseScoreView:
    score: float
    scale_min: int
    scale_max: int
    hallucination: bool | None
    rationale: str | None
    version: int


@dataclass(frozen=True)
class ItemAnnotations:
    """Everything one label set says about one item."""

    label_set_id: int
    spans: tuple[SpanView, ...] = ()
    sentence_labels: dict[int, SentenceLabelView] = field(default_factory=dict)
    claim_labels: dict[int, ClaimLabelView] = field(default_factory=dict)
    triplets: tuple[TripletJudgmentView, ...] = ()
    raw_output: RawOutputView | None = None
    sentence_scores: dict[int, tuple[float, bool]] = field(default_factory=dict)
    response_score: ResponseScoreView | None = None
    # The label set finished the item's spans ("done" on the spans task; a gold import marks every item
    # it has a record for): a part without a span is then correct, not unlabelled.
    spans_complete: bool = False


def response_scale(session: Session, label_set_id: int | None) -> tuple[int, int] | None:
    """The scale the label set's response scores are on (one per label set), None while it has none."""
    stored = session.execute(
        select(m.ResponseScore.scale_min, m.ResponseScore.scale_max)
        .where(m.ResponseScore.label_set_id == label_set_id)
        .limit(1)
    ).first()
    return (stored[0], stored[1]) if stored is not None else None


def response_scale_of(engine: Engine, label_set_id: int) -> tuple[int, int]:
    """The scale a rater scores on in this label set: its stored one, else MMHal-Bench's 0-6."""
    with read_session(engine) as session:
        return response_scale(session, label_set_id) or RESPONSE_SCALE


def item_annotations(
    engine: Engine, item_id: int, label_set_ids: Sequence[int]
) -> dict[int, ItemAnnotations]:
    """What each of ``label_set_ids`` says about item ``item_id`` (one query per kind, not per set)."""
    ids = list(label_set_ids)
    found: dict[int, dict[str, Any]] = {
        i: {
            "spans": [],
            "sentence_labels": {},
            "claim_labels": {},
            "triplets": [],
            "raw_output": None,
            "sentence_scores": {},
            "response_score": None,
            "spans_complete": False,
        }
        for i in ids
    }
    if not ids:
        return {}
    with read_session(engine) as session:
        for span in session.scalars(
            select(m.Span)
            .where(m.Span.item_id == item_id, m.Span.label_set_id.in_(ids))
            .order_by(m.Span.start, m.Span.end, m.Span.id)
        ):
            found[span.label_set_id]["spans"].append(
                SpanView(span.id, span.start, span.end, span.type, span.note, span.version)
            )
        for label, index in session.execute(
            select(m.SentenceLabel, m.Sentence.index)
            .join(m.Sentence, m.Sentence.id == m.SentenceLabel.sentence_id)
            .where(m.SentenceLabel.item_id == item_id, m.SentenceLabel.label_set_id.in_(ids))
        ):
            found[label.label_set_id]["sentence_labels"][index] = SentenceLabelView(
                index, label.label, label.error_type, label.override, label.version
            )
        for claim_label, index in session.execute(
            select(m.ClaimLabel, m.Claim.index)
            .join(m.Claim, m.Claim.id == m.ClaimLabel.claim_id)
            .where(m.ClaimLabel.item_id == item_id, m.ClaimLabel.label_set_id.in_(ids))
        ):
            found[claim_label.label_set_id]["claim_labels"][index] = ClaimLabelView(
                index, claim_label.label, claim_label.type, claim_label.reason, claim_label.version
            )
        for triplet, judgment in session.execute(
            select(m.Triplet, m.TripletJudgment)
            .outerjoin(
                m.TripletJudgment,
                (m.TripletJudgment.triplet_id == m.Triplet.id)
                & (m.TripletJudgment.label_set_id == m.Triplet.label_set_id),
            )
            .where(m.Triplet.item_id == item_id, m.Triplet.label_set_id.in_(ids))
            .order_by(m.Triplet.index)
        ):
            # Never None here: the query keeps only the triplets of the asked label sets.
            assert triplet.label_set_id is not None
            found[triplet.label_set_id]["triplets"].append(
                TripletJudgmentView(
                    triplet.id,
                    triplet.index,
                    triplet.subject,
                    triplet.relation,
                    triplet.object,
                    judgment.verdict if judgment else None,
                    judgment.wrong_part if judgment else None,
                )
            )
        for raw in session.scalars(
            select(m.RawOutput).where(m.RawOutput.item_id == item_id, m.RawOutput.label_set_id.in_(ids))
        ):
            found[raw.label_set_id]["raw_output"] = RawOutputView(
                raw.text, raw.analysis, raw.follows_format, raw.parse_error, raw.cut
            )
        for score, index in session.execute(
            select(m.SentenceScore, m.Sentence.index)
            .join(m.Sentence, m.Sentence.id == m.SentenceScore.sentence_id)
            .where(m.SentenceScore.item_id == item_id, m.SentenceScore.label_set_id.in_(ids))
        ):
            found[score.label_set_id]["sentence_scores"][index] = (score.score, score.parsed)
        for rated in session.scalars(
            select(m.ResponseScore).where(
                m.ResponseScore.item_id == item_id, m.ResponseScore.label_set_id.in_(ids)
            )
        ):
            found[rated.label_set_id]["response_score"] = ResponseScoreView(
                rated.score,
                rated.scale_min,
                rated.scale_max,
                rated.hallucination,
                rated.rationale,
                rated.version,
            )
        for label_set_id in session.scalars(
            select(m.ItemStatus.label_set_id).where(
                m.ItemStatus.item_id == item_id,
                m.ItemStatus.label_set_id.in_(ids),
                m.ItemStatus.page == "spans",
                m.ItemStatus.status == "done",
            )
        ):
            found[label_set_id]["spans_complete"] = True
    return {
        i: ItemAnnotations(
            label_set_id=i,
            spans=tuple(v["spans"]),
            sentence_labels=v["sentence_labels"],
            claim_labels=v["claim_labels"],
            triplets=tuple(v["triplets"]),
            raw_output=v["raw_output"],
            sentence_scores=v["sentence_scores"],
            response_score=v["response_score"],
            spans_complete=v["spans_complete"],
        )
        for i, v in found.items()
    }


def judged_triplets(
    engine: Engine, item_id: int, source_label_set_id: int, judge_label_set_id: int
) -> tuple[TripletJudgmentView, ...]:
    """Triplets extracted by one label set, with the verdicts another label set (a human) gave them."""
    with read_session(engine) as session:
        rows = session.execute(
            select(m.Triplet, m.TripletJudgment)
            .outerjoin(
                m.TripletJudgment,
                (m.TripletJudgment.triplet_id == m.Triplet.id)
                & (m.TripletJudgment.label_set_id == judge_label_set_id),
            )
            .where(m.Triplet.item_id == item_id, m.Triplet.label_set_id == source_label_set_id)
            .order_by(m.Triplet.index)
        ).all()
    return tuple(
        TripletJudgmentView(
            t.id,
            t.index,
            t.subject,
            t.relation,
            t.object,
            j.verdict if j else None,
            j.wrong_part if j else None,
            j.version if j else None,
        )
        for t, j in rows
    )


def triplet_sources(engine: Engine, dataset_id: int) -> list[int]:
    """Label sets of the dataset that extracted triplets (whose triplets can be judged).

    Asked per label set of the dataset (a handful, each one index probe: :mod:`db.label_set_rows`), not by
    joining the dataset's items to their triplets, which visits every item: a hundred thousand of them at
    a million sentences.
    """
    with read_session(engine) as session:
        return holding(session, m.Triplet.label_set_id, dataset_label_sets(session, dataset_id))
