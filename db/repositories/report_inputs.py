"""What the reports and the comparison read: a dataset's annotations in bulk, a few queries per kind.

Metrics run on plain arrays (see ``metrics``), so nothing here builds per-row objects. Two shapes:

- column reads (spans, claims, triplets, ratings, ...) return dictionaries of name → list, through the
  ORM's read session;
- the large reads (:func:`sentence_arrays`, :func:`sentence_columns`, :func:`span_columns`) and the
  small lookups after them return numpy arrays or plain values. AlignBench holds 89 K sentences; with
  five detectors a dashboard reads half a million score rows, and going through ORM rows (and
  SQLAlchemy's per-value type processing) costs about four times the database's own time, so these run
  compiled statements on the driver cursor. The largest have the database join each column into one
  text that numpy parses (:func:`_joined_columns`), instead of making a row per sentence or span.
  Text only travels where it must (labels arrive as small integer codes). The reads of one call see
  one state of the store: they share a transaction, or run at once on several connections and are
  kept only when all saw the same store revision (:func:`_consistent_reads`).
"""

from __future__ import annotations

import itertools
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Generic, TypeVar, TypeVarTuple

import numpy as np
from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Integer,
    Select,
    Text,
    case,
    cast,
    func,
    select,
)

from db import models as m
from db.engine import MAX_READERS, read_session, revision_of, shares_store
from db.label_set_rows import dataset_label_sets, holding, holds_rows
from db.repositories.label_sets import gold_raters
from formats.trihe import ANSWERING_MODEL

Columns = dict[str, list[Any]]
SpanTuple = tuple[int, int, str | None]
# :func:`sentence_parts`: "sentences" → columns; "labels", "scores", "error_types" → label set id → columns.
SentenceParts = dict[str, Any]
Row = TypeVarTuple("Row")  # the column types of a statement's rows
Combined = TypeVar("Combined")  # what a set of reads is combined into

# :func:`sentence_parts` folds a sentence's id, item and index into one integer below this.
_FOLDED_BELOW = 2**52
# Whole scores from 0 to ``_SCORE_MARKER - 1`` travel packed into their sentence's integer
# (:func:`_scores`); any other arrives as the marker.
_SCORE_MARKER = 255
# Integers packing several columns into one stay below this (else the columns travel apart).
_PACK_ROOM = 1 << 62

#: Sentence label codes of :func:`sentence_columns`.
SENTENCE_CODES = {"correct": 0, "incorrect": 1, "unknown": 2}


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


def _columns(engine: Engine, query: Select[*tuple[Any, ...]], names: Sequence[str]) -> Columns:
    out: Columns = {name: [] for name in names}
    with read_session(engine) as session:
        for row in session.execute(query):
            for name, value in zip(names, row, strict=True):
                out[name].append(value)
    return out


def _label_set_filter(query: Select[*Row], column: Any, label_set_ids: Sequence[int] | None) -> Select[*Row]:
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
    """label set id → item id → its spans ``(start, end, type)`` sorted by offsets (:func:`span_columns`
    as tuples, for a few items' worth of spans)."""
    columns = span_columns(engine, dataset_id, label_set_ids)
    order = np.lexsort((columns.ends, columns.starts, columns.item_ids, columns.label_set_ids))
    out: dict[int, dict[int, list[SpanTuple]]] = defaultdict(lambda: defaultdict(list))
    for ls_id, item_id, start, end, type_ in zip(
        columns.label_set_ids[order].tolist(),
        columns.item_ids[order].tolist(),
        columns.starts[order].tolist(),
        columns.ends[order].tolist(),
        columns.types[order].tolist(),
        strict=True,
    ):
        out[ls_id][item_id].append((start, end, type_))
    return {ls: dict(items) for ls, items in out.items()}


@dataclass(frozen=True)
class SpanColumns:
    """A dataset's spans as columns, one entry per span, in no particular order."""

    label_set_ids: np.ndarray  # int64
    item_ids: np.ndarray  # int64
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    types: np.ndarray  # object: the span's type, None when untyped

    @staticmethod
    def joined(parts: Sequence[SpanColumns]) -> SpanColumns:
        """The spans of several parts as one, in no particular order."""
        if len(parts) == 1:
            return parts[0]
        names = ("label_set_ids", "item_ids", "starts", "ends", "types")
        if not parts:
            return SpanColumns(*(np.zeros(0, dtype=object if n == "types" else np.int64) for n in names))
        return SpanColumns(*(np.concatenate([getattr(p, name) for p in parts]) for name in names))


def span_columns(engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None) -> SpanColumns:
    """Every span of the dataset's label sets as numpy columns, each read as one joined text
    (:func:`_joined_columns`): half a million spans (a dozen detectors) arrive in about half the time
    the driver needs to make their rows. Unsorted, as its callers sort them their own way.

    Joining the texts is the database's own work, which one connection does on one core: on a store
    whose connections share it, the label sets are split into one part per core (by id modulo the
    number of parts), read at once on their own connections and kept when all saw one state of the
    store (:func:`_consistent_reads`)."""

    def plan(connection: Connection) -> _Reads[SpanColumns]:
        n = max(1, min(os.cpu_count() or 1, MAX_READERS)) if shares_store(engine) else 1
        tops = _rows(
            connection, select(select(func.max(m.Item.id)).scalar_subquery(), func.max(m.LabelSet.id))
        )
        room = (int(tops[0][0] or 0) + 1, int(tops[0][1] or 0) + 1)
        return _Reads(
            [_span_part(dataset_id, label_set_ids, k, n, room) for k in range(n)], SpanColumns.joined
        )

    return _consistent_reads(engine, plan)


def _span_part(
    dataset_id: int, label_set_ids: Sequence[int] | None, k: int, n: int, room: tuple[int, int]
) -> Callable[[Connection], SpanColumns]:
    """The read of the spans of the label sets whose id is ``k`` modulo ``n``; ``room``: one more than
    the largest item id and label set id.

    A span's label set, item and whether it is untyped travel as one integer, and only the types that
    are there as text (most detectors type no span): at 10 K items x 12 detectors joining six columns of
    470 K spans cost the database about a third more than these four, and numpy as much again."""
    n_items, n_label_sets = room
    packs = n_label_sets * n_items * 2 < _PACK_ROOM
    untyped = case((m.Span.type.is_(None), 1), else_=0)
    head: list[Any] = (
        [(cast(m.Span.label_set_id, BigInteger) * n_items + m.Span.item_id) * 2 + untyped]
        if packs
        else [m.Span.label_set_id, m.Span.item_id]
    )
    query = (
        select(*head, m.Span.start, m.Span.end, m.Span.type)
        .join(m.LabelSet, m.LabelSet.id == m.Span.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    if n > 1:  # id modulo n, written with integer division: "%" would reach PostgreSQL doubled here
        query = query.where(m.LabelSet.id - m.LabelSet.id // n * n == k)
    query = _label_set_filter(query, m.Span.label_set_id, label_set_ids)

    def read(connection: Connection) -> SpanColumns:
        if packs:
            ints, present = _joined_columns(connection, query, present_texts=True)
            if present is not None:
                packed, starts, ends = ints
                keys, flags = np.divmod(packed, 2)
                label_sets, items = np.divmod(keys, n_items)
                types = np.full(packed.size, None, dtype=object)
                types[flags == 0] = present
                return SpanColumns(label_sets, items, starts, ends, types)
        # A type holds the separator: take the rows as they are.
        rows = _rows(connection, query)
        columns = [_ints(list(map(itemgetter(c), rows))) for c in range(len(head) + 2)]
        if packs:
            keys, _ = np.divmod(columns.pop(0), 2)
            columns[:0] = np.divmod(keys, n_items)
        types = np.empty(len(rows), dtype=object)
        types[:] = list(map(itemgetter(len(head) + 2), rows))
        label_sets, items, starts, ends = columns
        return SpanColumns(label_sets, items, starts, ends, types)

    return read


def _ints(column: list[int]) -> np.ndarray:
    return np.fromiter(column, dtype=np.int64, count=len(column))


def format_flags(
    engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None
) -> dict[int, dict[int, bool]]:
    """label set id → item id → whether that raw output followed the format (the IF flag).

    One raw output per item and detector is 120 K rows at 10 K items x 12 detectors: they travel as
    joined integer columns (:func:`_int_columns`), the flag packed with the item, and each label set's
    dictionary is made from arrays rather than row by row."""
    columns: list[Any] = [
        m.RawOutput.label_set_id,
        m.RawOutput.item_id * 2 + case((m.RawOutput.follows_format, 1), else_=0),
    ]
    query = (
        select(*columns)
        .join(m.LabelSet, m.LabelSet.id == m.RawOutput.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    with _snapshot(engine) as connection:
        label_set_of, keys = _int_columns(
            connection, _label_set_filter(query, m.RawOutput.label_set_id, label_set_ids)
        )
    item_ids, flags = np.divmod(keys, 2)
    out: dict[int, dict[int, bool]] = {}
    for label_set_id in np.unique(label_set_of).tolist():
        mine = label_set_of == label_set_id
        out[label_set_id] = dict(zip(item_ids[mine].tolist(), (flags[mine] == 1).tolist(), strict=True))
    return out


def run_coverage(engine: Engine, dataset_id: int) -> dict[int, np.ndarray | None]:
    """Detector label set id → the items the run is marked as given (``m.COVERAGE_PAGE`` "done"), item
    ids in no order, or None when it is marked on every item of the dataset. A run without marks is not
    listed (one with raw outputs has them say the same; see :meth:`DatasetSpans.ran_on`).

    The marks are counted per run first, in the database: a run given every item (most are) costs one
    count, not a row per item — 200 K items and five runs took longer to read than their spans."""
    marked = (
        select(m.ItemStatus.label_set_id, func.count())
        .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
        .where(
            m.LabelSet.dataset_id == dataset_id,
            m.LabelSet.kind == "detector",
            m.ItemStatus.page == m.COVERAGE_PAGE,
            m.ItemStatus.status == "done",
        )
        .group_by(m.ItemStatus.label_set_id)
    )
    found: dict[int, np.ndarray | None] = {}
    with _snapshot(engine) as connection:
        n_items = _rows(
            connection, select(func.count()).select_from(m.Item).where(m.Item.dataset_id == dataset_id)
        )[0][0]
        counts = dict(_rows(connection, marked))
        for label_set_id, n in counts.items():
            if n >= n_items:
                found[label_set_id] = None
                continue
            rows = _rows(
                connection,
                select(m.ItemStatus.item_id).where(
                    m.ItemStatus.label_set_id == label_set_id,
                    m.ItemStatus.page == m.COVERAGE_PAGE,
                    m.ItemStatus.status == "done",
                ),
            )
            found[label_set_id] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    return found


def other_answer_label_sets(engine: Engine, dataset_id: int) -> frozenset[int]:
    """The dataset's label sets holding answers of another kind than spans: sentence scores or labels,
    token probabilities, claim labels, response scores or extracted triplets (an index probe per label set and
    kind: :mod:`db.label_set_rows`). A run of those whose raw outputs are its answers' texts is no span
    detector."""
    owners = [
        table.label_set_id
        for table in (
            m.SentenceScore,
            m.SentenceLabel,
            m.TokenProbability,
            m.ClaimLabel,
            m.ResponseScore,
            m.Triplet,
        )
    ]
    with _snapshot(engine) as connection:
        ids = dataset_label_sets(connection, dataset_id)
        return frozenset(i for i in ids if any(holds_rows(connection, owner, i) for owner in owners))


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


def answering_models(engine: Engine, dataset_id: int) -> dict[int, str]:
    """Label set id -> the model whose answers the run judged, for runs read from a Tri-HE judgments
    file (:data:`formats.trihe.ANSWERING_MODEL` in the label set's meta)."""
    with read_session(engine) as session:
        rows = session.execute(
            select(m.LabelSet.id, m.LabelSet.meta).where(m.LabelSet.dataset_id == dataset_id)
        )
        found = {label_set_id: (meta or {}).get(ANSWERING_MODEL) for label_set_id, meta in rows}
    return {label_set_id: model for label_set_id, model in found.items() if isinstance(model, str) and model}


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
    """Every human rating of detector outputs, with its task's scale and the rated detector.

    Adjudicated ratings (by the account a gold label set names, see ``db.repositories.adjudication``)
    are gold, not a rater's: they are left out.
    """
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
        .where(m.RatingTask.dataset_id == dataset_id, m.Rating.annotator_id.not_in(gold_raters()))
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


def response_scores(engine: Engine, dataset_id: int) -> Columns:
    """Every rating of a whole response (MMHal-Bench), by label set, with its scale and flag."""
    return _columns(
        engine,
        select(
            m.ResponseScore.label_set_id,
            m.ResponseScore.item_id,
            m.ResponseScore.score,
            m.ResponseScore.scale_min,
            m.ResponseScore.scale_max,
            m.ResponseScore.hallucination,
        )
        .join(m.LabelSet, m.LabelSet.id == m.ResponseScore.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id)
        .order_by(m.ResponseScore.label_set_id, m.ResponseScore.item_id),
        ["label_set_id", "item_id", "score", "scale_min", "scale_max", "hallucination"],
    )


# ------------------------------------------------------------ numeric reads on the driver cursor


@contextmanager
def _snapshot(engine: Engine) -> Iterator[Connection]:
    options: dict[str, Any] = {}
    if engine.dialect.name == "postgresql":
        options["isolation_level"] = "REPEATABLE READ"
    with engine.connect().execution_options(**options) as connection, connection.begin():
        yield connection


def _rows(connection: Connection, statement: Any) -> list[tuple[Any, ...]]:
    """Rows of ``statement`` as plain driver tuples.

    Values are inlined (``literal_binds``): every bound value here is an integer id or a constant of this
    module, never user text.
    """
    compiled = statement.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True})
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]  # None only once invalidated; this one is open
    try:
        cursor.execute(str(compiled))
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows
    finally:
        cursor.close()


def _numeric(
    rows: list[tuple[Any, ...]], names: tuple[str, ...], dtypes: tuple[Any, ...]
) -> dict[str, np.ndarray]:
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.float64, count=len(rows) * len(names))
    table = flat.reshape(len(rows), len(names))
    return {
        name: table[:, k].astype(dtype) for k, (name, dtype) in enumerate(zip(names, dtypes, strict=True))
    }


def _int_columns(connection: Connection, statement: Select[Any]) -> list[np.ndarray]:
    """The integer columns of ``statement``'s rows as arrays, aligned row for row, in no set order.

    A million single-integer rows cost the driver a third of a second to hand over as tuples; the
    database joins each column into one comma-separated text in a fraction of that, and numpy parses it
    in a hundredth. Every column is joined in the same pass over the rows, so the k-th number of each
    text comes from the same row. Values must be integers and never NULL.
    """
    columns, _ = _joined_columns(connection, statement, with_text=False)
    return columns


# Separates the texts of a joined text column; a text holding it makes the caller read rows instead.
_TEXT_SEPARATOR = "\x1f"


def _joined_columns(
    connection: Connection, statement: Any, *, with_text: bool = True, present_texts: bool = False
) -> tuple[list[np.ndarray], list[str | None] | None]:
    """:func:`_int_columns` of every column of ``statement`` but the last, and (``with_text``) the last
    column's texts (NULL as None) in the same row order; None for the texts when one of them holds the
    separator, so they cannot be told apart. With ``present_texts``, only the texts that are not NULL,
    in row order (the caller knows which rows hold one): no column of NULL marks travels."""
    inner = statement.subquery()
    numbers = list(inner.c)[:-1] if with_text or present_texts else list(inner.c)
    last = list(inner.c)[-1]
    postgres = connection.dialect.name == "postgresql"

    def join(value: Any, separator: str = ",") -> Any:
        return (
            func.string_agg(cast(value, Text), separator) if postgres else func.group_concat(value, separator)
        )

    joined = [join(c) for c in numbers]
    if present_texts:  # the count and the join both leave NULL out
        found = _rows(
            connection,
            select(func.count(), func.count(last), *joined, join(last, _TEXT_SEPARATOR)).select_from(inner),
        )[0]
        n_rows = int(found[0])
        columns = [_parsed_ints(text, n_rows) for text in found[2:-1]]
        present = found[-1].split(_TEXT_SEPARATOR) if found[-1] is not None else []
        return columns, (present if len(present) == int(found[1]) else None)
    if with_text:
        joined += [join(cast(last.is_(None), Integer)), join(func.coalesce(last, ""), _TEXT_SEPARATOR)]
    found = _rows(connection, select(func.count(), *joined).select_from(inner))[0]
    n_rows = int(found[0])
    columns = [_parsed_ints(text, n_rows) for text in found[1 : 1 + len(numbers) + with_text]]
    if not with_text:
        return columns, None
    missing = columns.pop()
    texts: list[str | None] = found[-1].split(_TEXT_SEPARATOR) if n_rows else []
    if len(texts) != n_rows:
        return columns, None
    for k in np.flatnonzero(missing).tolist():
        texts[k] = None
    return columns, texts


def _flagged_texts(connection: Connection, statement: Any) -> tuple[np.ndarray, list[str] | None]:
    """The integers of ``statement``'s first column (as :func:`_int_columns`, in no set order), and the
    texts of its second column that are not NULL, in the order of their rows among those integers.

    The first column must carry, in its lowest bit, whether the row's text is NULL (1) or not (0): so
    the texts travel without a placeholder per NULL or a column of flags beside them. At a million
    sentence labels of which a tenth carry an error type, that is a third less of the read. The texts
    are None when one of them holds the separator, so they cannot be told apart.
    """
    inner = statement.subquery()
    key, text_column = list(inner.c)
    postgres = connection.dialect.name == "postgresql"

    def join(value: Any, separator: str) -> Any:
        return (
            func.string_agg(cast(value, Text), separator) if postgres else func.group_concat(value, separator)
        )

    found = _rows(
        connection,
        select(func.count(), join(key, ","), join(text_column, _TEXT_SEPARATOR)).select_from(inner),
    )[0]
    keys = _parsed_ints(found[1], int(found[0]))
    n_texts = int(keys.size - (keys & 1).sum())
    texts: list[str] = found[2].split(_TEXT_SEPARATOR) if n_texts else []
    return keys, texts if len(texts) == n_texts else None


def _parsed_ints(text: str | None, n_rows: int) -> np.ndarray:
    values = np.fromstring(text or "", dtype=np.int64, sep=",") if n_rows else np.zeros(0, dtype=np.int64)
    if values.size != n_rows:
        raise ValueError(f"expected {n_rows} integers in a joined column, parsed {values.size}")
    return values


def _sorted_by_first(columns: list[np.ndarray]) -> list[np.ndarray]:
    """``columns`` with their rows in order of the first column (already so in practice: one check)."""
    key = columns[0]
    if key.size < 2 or bool((key[1:] >= key[:-1]).all()):
        return columns
    order = np.argsort(key, kind="stable")
    return [column[order] for column in columns]


def sentence_table(engine: Engine, dataset_id: int) -> dict[str, np.ndarray]:
    """Every sentence in dataset order: ``sentence_id``, ``item_id``, ``index`` (in its item), offsets."""
    statement = (
        select(m.Sentence.id, m.Sentence.item_id, m.Sentence.index, m.Sentence.start, m.Sentence.end)
        .join(m.Item, m.Item.id == m.Sentence.item_id)
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Item.position, m.Sentence.index)
    )
    with _snapshot(engine) as connection:
        rows = _rows(connection, statement)
    names = ("sentence_id", "item_id", "index", "start", "end")
    return _numeric(rows, names, (np.int64,) * 5)


def sentence_columns(engine: Engine, dataset_id: int) -> dict[str, dict[str, np.ndarray]]:
    """Sentence labels and detector scores of every label set of the dataset, as of one state of the
    store (:func:`_consistent_reads`).

    Returns ``{"labels": {label_set_id, sentence_id, code}, "scores": {label_set_id, sentence_id, score,
    parsed}, "error_types": {label_set_id, sentence_id, error_type}}`` where ``code`` follows
    :data:`SENTENCE_CODES` and ``error_types`` lists only labels that carry a type (object array).
    """
    return _flattened(_consistent_reads(engine, lambda connection: _label_reads(connection, dataset_id)))


def sentence_arrays(
    engine: Engine, dataset_id: int, *, offsets: bool = False
) -> dict[str, dict[str, np.ndarray]]:
    """:func:`sentence_columns` plus ``"sentences"``: every sentence of the dataset in sentence-id order,
    ``sentence_id``, ``item_id``, ``index`` (and ``start``, ``end`` with ``offsets``), all as of one
    state of the store."""
    parts = sentence_parts(engine, dataset_id, offsets=offsets)
    return {**_flattened(parts), "sentences": parts["sentences"]}


def sentence_parts(engine: Engine, dataset_id: int, *, offsets: bool = False) -> SentenceParts:
    """What :func:`sentence_arrays` reads, each label set's rows apart: ``{"sentences": table,
    "labels": {label_set_id: {sentence_id, code}}, "scores": {label_set_id: {sentence_id, score,
    parsed}}, "error_types": {label_set_id: {sentence_id, error_type}}}``, label sets in id order, one
    only where it holds rows of that kind.

    The reads arrive per label set, and the reports align each label set with the sentences on its
    own; at a million sentences and five detectors, joining the parts into one column and splitting it
    again costs half a second.

    A million sentences with five detectors is six million rows, so every column travels as joined
    text (:func:`_int_columns`) and each row carries as much as it can: a sentence's item and index
    are one integer, a label and its sentence another.
    """

    def plan(connection: Connection) -> _Reads[SentenceParts]:
        # The largest id and item id are each one step down an index (the scalar subqueries).
        width, top_id, top_item = _rows(
            connection,
            select(
                func.coalesce(func.max(m.Sentence.index), 0) + 1,
                select(func.max(m.Sentence.id)).scalar_subquery(),
                select(func.max(m.Sentence.item_id)).scalar_subquery(),
            ),
        )[0]
        width = int(width)
        packed = m.Sentence.item_id * width + m.Sentence.index
        # The sentence's id travels in the same integer too, above its item and index, while the three
        # stay far below 2^63 (a write between the plan and the read may add larger ids): one joined
        # column instead of two, a sixth less of the read at a million sentences.
        span = (int(top_item or 0) + 1) * width
        folded = (int(top_id or 0) + 1) * span < _FOLDED_BELOW
        key = cast(m.Sentence.id, BigInteger) * span + packed  # (PostgreSQL's ids are 32-bit integers)
        columns: list[Any] = [key] if folded else [m.Sentence.id, packed]
        if offsets:
            columns += [m.Sentence.start, m.Sentence.end]
        statement = select(*columns).where(
            m.Sentence.item_id.in_(select(m.Item.id).where(m.Item.dataset_id == dataset_id))
        )
        names = (*(("key",) if folded else ("sentence_id", "packed")), "start", "end")[: len(columns)]

        def sentences(connection: Connection) -> dict[str, np.ndarray]:
            table = dict(zip(names, _sorted_by_first(_int_columns(connection, statement)), strict=True))
            if folded:
                table["sentence_id"], table["packed"] = np.divmod(table.pop("key"), span)
            table["item_id"], table["index"] = np.divmod(table.pop("packed"), width)
            return table

        labels = _label_reads(connection, dataset_id)
        return _Reads(
            [sentences, *labels.reads], lambda done: {**labels.combine(done[1:]), "sentences": done[0]}
        )

    return _consistent_reads(engine, plan)


def read_at_once(engine: Engine, *reads: Callable[[], Any]) -> list[Any]:
    """The results of independent ``reads`` of ``engine`` (each opening its own connection), run on
    threads at once: the database's work, and the driver's while it steps, leave the GIL free, so the
    slowest read sets the time. In order when the connections do not share one store. Each read sees
    the store as of its own start, as it would one after another."""
    if len(reads) < 2 or not shares_store(engine):
        return [read() for read in reads]
    with ThreadPoolExecutor(max_workers=min(len(reads), MAX_READERS)) as pool:
        return list(pool.map(lambda read: read(), reads))


@dataclass(frozen=True)
class _Reads(Generic[Combined]):
    """Reads that may each run on their own connection, and how their results combine."""

    reads: list[Callable[[Connection], Any]]
    combine: Callable[[list[Any]], Combined]


def _consistent_reads(engine: Engine, plan: Callable[[Connection], _Reads[Combined]]) -> Combined:
    """The combined results of the reads ``plan`` makes, all as of one state of the store.

    At a million sentences the reads are seconds of the database's own work, so they run at once on
    as many connections as there are cores. Each connection has its own snapshot; every write bumps
    the store revision in its own transaction (:func:`db.engine.write_session`), so when every read
    saw the revision the plan saw, no write landed in between and all saw one state. Otherwise they
    are read again, one after another, in the plan's own snapshot.
    """
    with _snapshot(engine) as connection:
        revision = revision_of(connection)
        planned = plan(connection)
        workers = min(len(planned.reads), os.cpu_count() or 1, MAX_READERS) if shares_store(engine) else 1
        if workers < 2:
            return planned.combine([read(connection) for read in planned.reads])

    def run(read: Callable[[Connection], Any]) -> tuple[int, Any]:
        with _snapshot(engine) as connection:
            return revision_of(connection), read(connection)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(run, planned.reads))
    if all(seen == revision for seen, _ in done):
        return planned.combine([value for _, value in done])
    with _snapshot(engine) as connection:
        planned = plan(connection)
        return planned.combine([read(connection) for read in planned.reads])


def _label_reads(connection: Connection, dataset_id: int) -> _Reads[SentenceParts]:
    """The reads of :func:`sentence_parts` but the sentences: which label sets hold labels and scores is
    read here.

    Fetching is paid per row, so each label set is read on its own as joined columns
    (:func:`_joined_columns`): a label as one integer packing its sentence and code, with its error type
    beside it, and a score as in :func:`_scores`.
    """
    code = case(
        *((m.SentenceLabel.label == label, value) for label, value in SENTENCE_CODES.items()),
        else_=len(SENTENCE_CODES),
    )
    n_codes = len(SENTENCE_CODES) + 1

    every = dataset_label_sets(connection, dataset_id)
    labelled = holding(connection, m.SentenceLabel.label_set_id, every)
    scored = holding(connection, m.SentenceScore.label_set_id, every)

    def labels_of(
        label_set_id: int,
    ) -> Callable[[Connection], tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
        def read(connection: Connection) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
            mine = m.SentenceLabel.label_set_id == label_set_id
            error_type = m.SentenceLabel.error_type
            untyped = cast(error_type.is_(None), Integer)
            keys, texts = _flagged_texts(
                connection,
                select(
                    (cast(m.SentenceLabel.sentence_id, BigInteger) * n_codes + code) * 2 + untyped, error_type
                ).where(mine),
            )
            labelled, typeless = np.divmod(keys, 2)
            sentence, codes = np.divmod(labelled, n_codes)
            if texts is None:  # an error type holds the separator: the typed labels as rows
                typed = _rows(
                    connection,
                    select(m.SentenceLabel.sentence_id, error_type).where(mine, error_type.is_not(None)),
                )
                typed_ids = np.array([row[0] for row in typed], dtype=np.int64)
                types = [row[1] for row in typed]
            else:
                typed_ids, types = sentence[typeless == 0], texts
            error_types = np.empty(len(types), dtype=object)
            error_types[:] = types
            labels = {
                "sentence_id": sentence,
                "code": np.where(codes == len(SENTENCE_CODES), -1, codes).astype(np.int8),
            }
            return labels, {"sentence_id": typed_ids, "error_type": error_types}

        return read

    def scores_of(label_set_id: int) -> Callable[[Connection], dict[str, np.ndarray]]:
        return lambda connection: _scores(connection, label_set_id)

    def combine(done: list[Any]) -> SentenceParts:
        def held(parts: dict[int, dict[str, np.ndarray]]) -> dict[int, dict[str, np.ndarray]]:
            return {k: parts[k] for k in sorted(parts) if parts[k]["sentence_id"].size}

        read_labels = dict(zip(labelled, done[: len(labelled)], strict=True))
        return {
            "labels": held({k: labels for k, (labels, _) in read_labels.items()}),
            "scores": held(dict(zip(scored, done[len(labelled) :], strict=True))),
            "error_types": held({k: typed for k, (_, typed) in read_labels.items()}),
        }

    reads: list[Callable[[Connection], Any]] = [
        *(labels_of(k) for k in labelled),
        *(scores_of(k) for k in scored),
    ]
    return _Reads(reads, combine)


def _scores(connection: Connection, label_set_id: int) -> dict[str, np.ndarray]:
    """One label set's sentence scores in sentence-id order: ``sentence_id``, ``score`` and ``parsed``.

    Detectors mostly answer whole numbers (0-100), which travel in joined text (:func:`_int_columns`)
    as one integer per sentence with its id and ``parsed`` flag: ``(2 id + unparsed) * 256 + score``.
    Any other score (fractional, which that text would round, or outside 0-254) arrives as the marker
    255 and is then read as a row, so a run of fractional scores costs a second pass and a run of
    whole ones does not. A score of -0.0 arrives as 0.0, equal to it in every comparison. One column
    rather than two: at a million sentences a column costs the database a fifth of the read.
    """
    score = m.SentenceScore.score
    # Only a score in 0-254 is cast (PostgreSQL refuses to cast past bigint); it is whole when the
    # cast gives it back.
    packed = case((score.between(0, _SCORE_MARKER - 1), score == cast(score, BigInteger)), else_=False)
    mine = m.SentenceScore.label_set_id == label_set_id
    flagged = m.SentenceScore.sentence_id * 2 + case((m.SentenceScore.parsed, 0), else_=1)
    value = case((packed, cast(score, BigInteger)), else_=_SCORE_MARKER)
    (key,) = _sorted_by_first(
        _int_columns(connection, select(flagged * (_SCORE_MARKER + 1) + value).where(mine))
    )
    flagged_ids, integral = np.divmod(key, _SCORE_MARKER + 1)
    sentence_id, unparsed = np.divmod(flagged_ids, 2)
    values = integral.astype(np.float64)
    if (integral == _SCORE_MARKER).any():
        others = _rows(connection, select(m.SentenceScore.sentence_id, score).where(mine, ~packed))
        ids = np.array([row[0] for row in others], dtype=np.int64)
        values[np.searchsorted(sentence_id, ids)] = [np.nan if row[1] is None else row[1] for row in others]
    return {"sentence_id": sentence_id, "score": values, "parsed": unparsed == 0}


# A block's columns (besides ``label_set_id``) with the dtype of each when no label set holds rows.
_BLOCK_COLUMNS: dict[str, tuple[tuple[str, Any], ...]] = {
    "labels": (("sentence_id", np.int64), ("code", np.int8)),
    "scores": (("sentence_id", np.int64), ("score", np.float64), ("parsed", bool)),
    "error_types": (("sentence_id", np.int64), ("error_type", object)),
}


def _flattened(parts: SentenceParts) -> dict[str, dict[str, np.ndarray]]:
    """Each block of :func:`sentence_parts` as one set of columns, label sets after one another and
    told apart by ``label_set_id``."""
    flat: dict[str, dict[str, np.ndarray]] = {}
    for block, columns in _BLOCK_COLUMNS.items():
        by_set: dict[int, dict[str, np.ndarray]] = parts[block]
        sizes = [p["sentence_id"].size for p in by_set.values()]
        flat[block] = {
            "label_set_id": np.repeat(np.fromiter(by_set, dtype=np.int64, count=len(by_set)), sizes),
            **{
                name: np.concatenate([p[name] for p in by_set.values()])
                if by_set
                else np.zeros(0, dtype=dtype)
                for name, dtype in columns
            },
        }
    return flat


def item_facets(engine: Engine, dataset_id: int) -> dict[str, list[Any]]:
    """The dataset's items in order with what the report filters and tables group by: ``id``,
    ``external_id``, ``subset``, ``source_model``, ``task_type``, ``image_ref``. No response text: at a
    million sentences the responses are most of what an item read would carry, and no table needs them.
    """
    statement = (
        select(
            m.Item.id,
            m.Item.external_id,
            m.Item.subset,
            m.Item.source_model,
            m.Item.task_type,
            m.Item.image_ref,
        )
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Item.position)
    )
    with _snapshot(engine) as connection:
        rows = _rows(connection, statement)
    names = ("id", "external_id", "subset", "source_model", "task_type", "image_ref")
    # Column by column: ``zip(*rows)`` passes every row as an argument, seven times slower at 143 K items.
    return {name: list(map(itemgetter(k), rows)) for k, name in enumerate(names)}


def item_images(engine: Engine, dataset_id: int) -> dict[int, str | None]:
    """Item id → its image reference (Tri-HE averages per image; several questions may share one)."""
    statement = select(m.Item.id, m.Item.image_ref).where(m.Item.dataset_id == dataset_id)
    with _snapshot(engine) as connection:
        return {item_id: image for item_id, image in _rows(connection, statement)}


def done_items(engine: Engine, dataset_id: int) -> dict[str, dict[int, set[int]]]:
    """Task (the status's page: "spans", "sentences", "rating:<task id>" …) → label set id → items marked
    "done" for it there (an annotator who found nothing still rated). Kept per task: finishing an item's
    ratings says nothing about its spans."""
    statement = (
        select(m.ItemStatus.page, m.ItemStatus.label_set_id, m.ItemStatus.item_id)
        .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id, m.ItemStatus.status == "done")
    )
    out: dict[str, dict[int, set[int]]] = {}
    with _snapshot(engine) as connection:
        for page, label_set_id, item_id in _rows(connection, statement):
            out.setdefault(page, {}).setdefault(label_set_id, set()).add(item_id)
    return out


def rating_scales(engine: Engine, dataset_id: int) -> dict[int, tuple[int, int]]:
    """Rating task id → ``(scale_min, scale_max)``."""
    statement = select(m.RatingTask.id, m.RatingTask.scale_min, m.RatingTask.scale_max).where(
        m.RatingTask.dataset_id == dataset_id
    )
    with _snapshot(engine) as connection:
        return {task: (low, high) for task, low, high in _rows(connection, statement)}


def annotation_counts(
    engine: Engine, dataset_id: int, kinds: Sequence[str] | None = None
) -> dict[str, dict[str, int]]:
    """How many rows of each annotation kind the dataset holds, per label-set kind (gold/human/detector).

    Cheap (counts only), so a dashboard can decide which sections to offer before reading any data.
    Kinds: ``spans``, ``raw_outputs``, ``sentence_labels``, ``sentence_scores``, ``claim_labels``,
    ``triplet_judgments``, ``token_probabilities``, ``response_scores``, ``ratings``; only ``kinds`` when
    given (counting a million sentences' labels and scores takes a third of a second).
    """
    owners = {
        "spans": m.Span.label_set_id,
        "raw_outputs": m.RawOutput.label_set_id,
        "sentence_labels": m.SentenceLabel.label_set_id,
        "sentence_scores": m.SentenceScore.label_set_id,
        "claim_labels": m.ClaimLabel.label_set_id,
        "triplet_judgments": m.TripletJudgment.label_set_id,
        "token_probabilities": m.TokenProbability.label_set_id,
        "response_scores": m.ResponseScore.label_set_id,
    }
    out: dict[str, dict[str, int]] = {}
    with _snapshot(engine) as connection:
        for name, owner in owners.items():
            if kinds is not None and name not in kinds:
                continue
            statement = (
                select(m.LabelSet.kind, func.count())
                .select_from(owner.class_)
                .join(m.LabelSet, m.LabelSet.id == owner)
                .where(m.LabelSet.dataset_id == dataset_id)
                .group_by(m.LabelSet.kind)
            )
            out[name] = {kind: int(n) for kind, n in _rows(connection, statement)}
        if kinds is None or "ratings" in kinds:
            ratings = (
                select(func.count())
                .select_from(m.Rating)
                .join(m.RatingTask, m.RatingTask.id == m.Rating.task_id)
                .where(m.RatingTask.dataset_id == dataset_id)
            )
            out["ratings"] = {"human": int(_rows(connection, ratings)[0][0])}
    return out


def dataset_name(engine: Engine, dataset_id: int) -> str:
    statement = select(m.Dataset.name).where(m.Dataset.id == dataset_id)
    with _snapshot(engine) as connection:
        rows = _rows(connection, statement)
    if not rows:
        raise LookupError(f"no dataset with id {dataset_id}")
    name: str = rows[0][0]
    return name


def dataset_label_kinds(engine: Engine, dataset_id: int) -> tuple[str, ...]:
    """The kinds of labels the dataset was imported with (``span``, ``sentence``, …): what its gold says.

    A span gold without a single span still says something (every response is clean); this tells it
    apart from a gold of other labels that never marked spans."""
    statement = select(m.Dataset.label_kinds).where(m.Dataset.id == dataset_id)
    with _snapshot(engine) as connection:
        # Through SQLAlchemy, not the driver's cursor (:func:`_rows`): the column is JSON, decoded here.
        kinds = connection.execute(statement).scalar_one_or_none()
    if kinds is None:
        raise LookupError(f"no dataset with id {dataset_id}")
    return tuple(kinds)


def gold_types(engine: Engine, dataset_id: int) -> list[str]:
    """Hallucination types the dataset's gold labels use (spans, sentence errors, claims), by name."""
    return sorted({t for types in gold_types_by_kind(engine, dataset_id).values() for t in types})


def gold_types_by_kind(engine: Engine, dataset_id: int) -> dict[str, list[str]]:
    """:func:`gold_types` of each kind of gold label: "spans", "sentences" and "claims" (a paper's view
    scores one kind, and a type of another kind filters out all of its hallucinations)."""
    gold = select(m.LabelSet.id).where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "gold")
    found: dict[str, list[str]] = {}
    with _snapshot(engine) as connection:
        for kind, column, owner in (
            ("spans", m.Span.type, m.Span.label_set_id),
            ("sentences", m.SentenceLabel.error_type, m.SentenceLabel.label_set_id),
            ("claims", m.ClaimLabel.type, m.ClaimLabel.label_set_id),
        ):
            statement = select(column).where(owner.in_(gold), column.is_not(None)).distinct()
            found[kind] = sorted(row[0] for row in _rows(connection, statement))
    return found
