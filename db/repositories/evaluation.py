"""Bulk reads for comparison and dashboards: whole label sets as columns, one query per kind.

Metrics run on plain arrays (see ``metrics``), so these functions return column dictionaries (name →
list) that turn into numpy arrays or DataFrames without per-row objects. A dashboard at AlignBench scale
(89 K sentences × 5 detectors) reads in a few queries instead of one per item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Select, select

from db import models as m
from db.engine import read_session

Columns = dict[str, list[Any]]
SpanTuple = tuple[int, int, str | None]


@dataclass(frozen=True)
class ItemIndex:
    """The dataset's items in order, with what filters and metrics need to know about each."""

    ids: list[int]
    external_ids: list[str]
    subsets: list[str | None]
    source_models: list[str | None]
    task_types: list[str]
    responses: list[str]

    def position_of(self) -> dict[int, int]:
        return {item_id: k for k, item_id in enumerate(self.ids)}


def _columns(engine: Engine, query: Select[Any], names: Sequence[str]) -> Columns:
    out: Columns = {name: [] for name in names}
    with read_session(engine) as session:
        for row in session.execute(query):
            for name, value in zip(names, row, strict=True):
                out[name].append(value)
    return out


def _label_set_filter(query: Select[Any], column: Any, label_set_ids: Sequence[int] | None) -> Select[Any]:
    return query if label_set_ids is None else query.where(column.in_(list(label_set_ids)))


def item_index(engine: Engine, dataset_id: int) -> ItemIndex:
    cols = _columns(
        engine,
        select(
            m.Item.id,
            m.Item.external_id,
            m.Item.subset,
            m.Item.source_model,
            m.Item.task_type,
            m.Item.response,
        )
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Item.position),
        ["id", "external_id", "subset", "source_model", "task_type", "response"],
    )
    return ItemIndex(
        cols["id"],
        cols["external_id"],
        cols["subset"],
        cols["source_model"],
        cols["task_type"],
        cols["response"],
    )


def spans_by_label_set(
    engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None
) -> dict[int, dict[int, list[SpanTuple]]]:
    """label set id → item id → its spans ``(start, end, type)`` sorted by offsets."""
    query = (
        select(m.Span.label_set_id, m.Span.item_id, m.Span.start, m.Span.end, m.Span.type)
        .join(m.LabelSet, m.LabelSet.id == m.Span.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
        .order_by(m.Span.label_set_id, m.Span.item_id, m.Span.start, m.Span.end)
    )
    out: dict[int, dict[int, list[SpanTuple]]] = defaultdict(lambda: defaultdict(list))
    with read_session(engine) as session:
        for ls_id, item_id, start, end, type_ in session.execute(
            _label_set_filter(query, m.Span.label_set_id, label_set_ids)
        ):
            out[ls_id][item_id].append((start, end, type_))
    return {ls: dict(items) for ls, items in out.items()}


def format_flags(
    engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None
) -> dict[int, dict[int, bool]]:
    """label set id → item id → whether that raw output followed the format (the IF flag)."""
    query = (
        select(m.RawOutput.label_set_id, m.RawOutput.item_id, m.RawOutput.follows_format)
        .join(m.LabelSet, m.LabelSet.id == m.RawOutput.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    out: dict[int, dict[int, bool]] = defaultdict(dict)
    with read_session(engine) as session:
        for ls_id, item_id, flag in session.execute(
            _label_set_filter(query, m.RawOutput.label_set_id, label_set_ids)
        ):
            out[ls_id][item_id] = bool(flag)
    return dict(out)


def sentence_rows(engine: Engine, dataset_id: int) -> Columns:
    """Every sentence of the dataset: item id, index within the item, offsets."""
    return _columns(
        engine,
        select(m.Sentence.id, m.Sentence.item_id, m.Sentence.index, m.Sentence.start, m.Sentence.end)
        .join(m.Item, m.Item.id == m.Sentence.item_id)
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Item.position, m.Sentence.index),
        ["sentence_id", "item_id", "index", "start", "end"],
    )


def sentence_labels(engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None) -> Columns:
    query = (
        select(
            m.SentenceLabel.label_set_id,
            m.SentenceLabel.sentence_id,
            m.SentenceLabel.item_id,
            m.SentenceLabel.label,
            m.SentenceLabel.error_type,
        )
        .join(m.LabelSet, m.LabelSet.id == m.SentenceLabel.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    return _columns(
        engine,
        _label_set_filter(query, m.SentenceLabel.label_set_id, label_set_ids),
        ["label_set_id", "sentence_id", "item_id", "label", "error_type"],
    )


def sentence_scores(engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None) -> Columns:
    """Detector scores: 0-100, higher = the detector believes the sentence is correct."""
    query = (
        select(
            m.SentenceScore.label_set_id,
            m.SentenceScore.sentence_id,
            m.SentenceScore.item_id,
            m.SentenceScore.score,
            m.SentenceScore.parsed,
        )
        .join(m.LabelSet, m.LabelSet.id == m.SentenceScore.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    return _columns(
        engine,
        _label_set_filter(query, m.SentenceScore.label_set_id, label_set_ids),
        ["label_set_id", "sentence_id", "item_id", "score", "parsed"],
    )


def claim_rows(engine: Engine, dataset_id: int) -> Columns:
    return _columns(
        engine,
        select(m.Claim.id, m.Claim.item_id, m.Claim.index, m.Claim.segment, m.Claim.source, m.Item.task_type)
        .join(m.Item, m.Item.id == m.Claim.item_id)
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Item.position, m.Claim.index),
        ["claim_id", "item_id", "index", "segment", "source", "task_type"],
    )


def claim_labels(engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None) -> Columns:
    query = (
        select(
            m.ClaimLabel.label_set_id,
            m.ClaimLabel.claim_id,
            m.ClaimLabel.item_id,
            m.ClaimLabel.label,
            m.ClaimLabel.type,
            m.ClaimLabel.reason,
        )
        .join(m.LabelSet, m.LabelSet.id == m.ClaimLabel.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    return _columns(
        engine,
        _label_set_filter(query, m.ClaimLabel.label_set_id, label_set_ids),
        ["label_set_id", "claim_id", "item_id", "label", "type", "reason"],
    )


def triplet_judgments(engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None) -> Columns:
    """Extracted triplets with their verdicts (NULL verdict = the judge could not decide)."""
    query = (
        select(
            m.Triplet.label_set_id,
            m.Triplet.item_id,
            m.Triplet.index,
            m.Triplet.subject,
            m.Triplet.relation,
            m.Triplet.object,
            m.TripletJudgment.verdict,
            m.TripletJudgment.wrong_part,
        )
        .join(m.LabelSet, m.LabelSet.id == m.Triplet.label_set_id)
        .outerjoin(
            m.TripletJudgment,
            (m.TripletJudgment.triplet_id == m.Triplet.id)
            & (m.TripletJudgment.label_set_id == m.Triplet.label_set_id),
        )
        .where(m.LabelSet.dataset_id == dataset_id)
        .order_by(m.Triplet.label_set_id, m.Triplet.item_id, m.Triplet.index)
    )
    return _columns(
        engine,
        _label_set_filter(query, m.Triplet.label_set_id, label_set_ids),
        ["label_set_id", "item_id", "index", "subject", "relation", "object", "verdict", "wrong_part"],
    )


def token_probabilities(
    engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None
) -> Columns:
    query = (
        select(
            m.TokenProbability.label_set_id,
            m.TokenProbability.item_id,
            m.TokenProbability.token_index,
            m.TokenProbability.start,
            m.TokenProbability.end,
            m.TokenProbability.probability,
            m.TokenProbability.type,
        )
        .join(m.LabelSet, m.LabelSet.id == m.TokenProbability.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
        .order_by(m.TokenProbability.label_set_id, m.TokenProbability.item_id, m.TokenProbability.token_index)
    )
    return _columns(
        engine,
        _label_set_filter(query, m.TokenProbability.label_set_id, label_set_ids),
        ["label_set_id", "item_id", "token_index", "start", "end", "probability", "type"],
    )


def ratings(engine: Engine, dataset_id: int) -> Columns:
    """Every human rating of detector outputs, with its task's scale and the rated detector."""
    return _columns(
        engine,
        select(
            m.RatingTask.id,
            m.RatingTask.name,
            m.RatingTask.detector_label_set_id,
            m.RatingTask.granularity,
            m.Rating.item_id,
            m.Annotator.name,
            m.Rating.segment_start,
            m.Rating.segment_end,
            m.Rating.score,
            m.Rating.nothing_flagged_correct,
        )
        .join(m.Rating, m.Rating.task_id == m.RatingTask.id)
        .join(m.Annotator, m.Annotator.id == m.Rating.annotator_id)
        .where(m.RatingTask.dataset_id == dataset_id)
        .order_by(m.RatingTask.id, m.Rating.item_id, m.Rating.segment_start),
        [
            "task_id",
            "task",
            "detector_label_set_id",
            "granularity",
            "item_id",
            "rater",
            "segment_start",
            "segment_end",
            "score",
            "nothing_flagged_correct",
        ],
    )
