"""Numeric column reads for the measure dashboards, fast enough for AlignBench scale.

AlignBench holds 89 K sentences; with five detectors a dashboard reads half a million score rows. Going
through ORM rows (and SQLAlchemy's per-value type processing) costs about four times the database's own
time, so these reads run compiled statements on the driver cursor and turn the rows into numpy arrays
in one pass. Text only travels where it must (labels arrive as small integer codes, error types only
for the sentences that have one). All reads of one call share a transaction, so they see one state of
the store.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine, case, func, select

from db import models as m

#: Sentence label codes of :func:`sentence_label_codes`.
SENTENCE_CODES = {"correct": 0, "incorrect": 1, "unknown": 2}


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
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(str(compiled))
        return cursor.fetchall()
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
    """Sentence labels and detector scores of every label set of the dataset, in one snapshot.

    Returns ``{"labels": {label_set_id, sentence_id, code}, "scores": {label_set_id, sentence_id, score,
    parsed}, "error_types": {label_set_id, sentence_id, error_type}}`` where ``code`` follows
    :data:`SENTENCE_CODES` and ``error_types`` lists only labels that carry a type (object array).
    Fetching is paid per value, so scores are read one label set at a time, as a single column (in
    sentence-id order) when the run scored every sentence; the ``parsed`` flag is almost always true,
    so only the exceptions are read.
    """
    code = case(
        *((m.SentenceLabel.label == label, value) for label, value in SENTENCE_CODES.items()), else_=-1
    )
    label_sets = select(m.LabelSet.id).where(m.LabelSet.dataset_id == dataset_id)
    labels = select(m.SentenceLabel.label_set_id, m.SentenceLabel.sentence_id, code).where(
        m.SentenceLabel.label_set_id.in_(label_sets)
    )
    types = select(
        m.SentenceLabel.label_set_id, m.SentenceLabel.sentence_id, m.SentenceLabel.error_type
    ).where(m.SentenceLabel.label_set_id.in_(label_sets), m.SentenceLabel.error_type.is_not(None))
    unparsed = select(m.SentenceScore.label_set_id, m.SentenceScore.sentence_id).where(
        m.SentenceScore.label_set_id.in_(label_sets), m.SentenceScore.parsed.is_(False)
    )
    all_sentences = (
        select(m.Sentence.id)
        .join(m.Item, m.Item.id == m.Sentence.item_id)
        .where(m.Item.dataset_id == dataset_id)
        .order_by(m.Sentence.id)
    )
    per_set = (
        select(m.SentenceScore.label_set_id, func.count())
        .where(m.SentenceScore.label_set_id.in_(label_sets))
        .group_by(m.SentenceScore.label_set_id)
    )
    with _snapshot(engine) as connection:
        label_rows = _rows(connection, labels)
        type_rows = _rows(connection, types)
        sentence_ids = _numeric(_rows(connection, all_sentences), ("id",), (np.int64,))["id"]
        score_parts = []
        for label_set_id, count in _rows(connection, per_set):
            if count == sentence_ids.size:
                # The run scored every sentence: its scores in sentence-id order are one column.
                rows = _rows(
                    connection,
                    select(m.SentenceScore.score)
                    .where(m.SentenceScore.label_set_id == label_set_id)
                    .order_by(m.SentenceScore.sentence_id),
                )
                part = {"sentence_id": sentence_ids, **_numeric(rows, ("score",), (np.float64,))}
            else:
                rows = _rows(
                    connection,
                    select(m.SentenceScore.sentence_id, m.SentenceScore.score).where(
                        m.SentenceScore.label_set_id == label_set_id
                    ),
                )
                part = _numeric(rows, ("sentence_id", "score"), (np.int64, np.float64))
            part["label_set_id"] = np.full(part["score"].size, label_set_id, dtype=np.int64)
            score_parts.append(part)
        unparsed_rows = _rows(connection, unparsed)
    scores = {
        name: np.concatenate([p[name] for p in score_parts]) if score_parts else np.zeros(0, dtype=dtype)
        for name, dtype in (("label_set_id", np.int64), ("sentence_id", np.int64), ("score", np.float64))
    }
    parsed = np.ones(scores["score"].size, dtype=bool)
    if unparsed_rows:
        key = scores["label_set_id"] * (1 << 32) + scores["sentence_id"]
        bad = np.array([ls * (1 << 32) + sid for ls, sid in unparsed_rows], dtype=np.int64)
        parsed[np.isin(key, bad)] = False
    scores["parsed"] = parsed
    error_types = np.empty(len(type_rows), dtype=object)
    error_types[:] = [row[2] for row in type_rows]
    return {
        "labels": _numeric(
            label_rows, ("label_set_id", "sentence_id", "code"), (np.int64, np.int64, np.int8)
        ),
        "scores": scores,
        "error_types": {
            "label_set_id": np.array([row[0] for row in type_rows], dtype=np.int64),
            "sentence_id": np.array([row[1] for row in type_rows], dtype=np.int64),
            "error_type": error_types,
        },
    }


def item_images(engine: Engine, dataset_id: int) -> dict[int, str | None]:
    """Item id → its image reference (Tri-HE averages per image; several questions may share one)."""
    statement = select(m.Item.id, m.Item.image_ref).where(m.Item.dataset_id == dataset_id)
    with _snapshot(engine) as connection:
        return {item_id: image for item_id, image in _rows(connection, statement)}


def done_items(engine: Engine, dataset_id: int) -> dict[int, set[int]]:
    """Label set id → items some page marked "done" for it (an annotator who found nothing still rated)."""
    statement = (
        select(m.ItemStatus.label_set_id, m.ItemStatus.item_id)
        .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
        .where(m.LabelSet.dataset_id == dataset_id, m.ItemStatus.status == "done")
    )
    out: dict[int, set[int]] = {}
    with _snapshot(engine) as connection:
        for label_set_id, item_id in _rows(connection, statement):
            out.setdefault(label_set_id, set()).add(item_id)
    return out


def rating_scales(engine: Engine, dataset_id: int) -> dict[int, tuple[int, int]]:
    """Rating task id → ``(scale_min, scale_max)``."""
    statement = select(m.RatingTask.id, m.RatingTask.scale_min, m.RatingTask.scale_max).where(
        m.RatingTask.dataset_id == dataset_id
    )
    with _snapshot(engine) as connection:
        return {task: (low, high) for task, low, high in _rows(connection, statement)}


def annotation_counts(engine: Engine, dataset_id: int) -> dict[str, dict[str, int]]:
    """How many rows of each annotation kind the dataset holds, per label-set kind (gold/human/detector).

    Cheap (counts only), so a dashboard can decide which sections to offer before reading any data.
    Kinds: ``spans``, ``raw_outputs``, ``sentence_labels``, ``sentence_scores``, ``claim_labels``,
    ``triplet_judgments``, ``token_probabilities``, ``ratings``.
    """
    tables = {
        "spans": m.Span,
        "raw_outputs": m.RawOutput,
        "sentence_labels": m.SentenceLabel,
        "sentence_scores": m.SentenceScore,
        "claim_labels": m.ClaimLabel,
        "triplet_judgments": m.TripletJudgment,
        "token_probabilities": m.TokenProbability,
    }
    out: dict[str, dict[str, int]] = {}
    with _snapshot(engine) as connection:
        for name, model in tables.items():
            statement = (
                select(m.LabelSet.kind, func.count())
                .select_from(model)
                .join(m.LabelSet, m.LabelSet.id == model.label_set_id)
                .where(m.LabelSet.dataset_id == dataset_id)
                .group_by(m.LabelSet.kind)
            )
            out[name] = {kind: int(n) for kind, n in _rows(connection, statement)}
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
    return rows[0][0]


def gold_types(engine: Engine, dataset_id: int) -> list[str]:
    """Hallucination types the dataset's gold labels use (spans, sentence errors, claims), by name."""
    gold = select(m.LabelSet.id).where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "gold")
    found: set[str] = set()
    with _snapshot(engine) as connection:
        for column, owner in (
            (m.Span.type, m.Span.label_set_id),
            (m.SentenceLabel.error_type, m.SentenceLabel.label_set_id),
            (m.ClaimLabel.type, m.ClaimLabel.label_set_id),
        ):
            statement = select(column).where(owner.in_(gold), column.is_not(None)).distinct()
            found.update(row[0] for row in _rows(connection, statement))
    return sorted(found)
