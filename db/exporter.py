"""Read a dataset back out of the store as a :class:`~formats.records.Bundle`, the shape every writer consumes.

The exporter is the importer's mirror: items in dataset order with their sentences (only when they were
imported rather than split by Spanlight), claims and reference triplets, then the chosen label sets with
everything they say, then the rating tasks of the exported detectors. It reads in batches of items, so a
writer that writes a batch at a time holds one batch however large the dataset; one query per table and
batch, not per item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

from sqlalchemy import Engine, Row, Select, exists, false, func, select, tuple_
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, require_in
from db.engine import is_sqlite, read_session
from formats.records import (
    Annotations,
    Bundle,
    ClaimLabelRecord,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    ItemStatusRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    RawOutputRecord,
    ResponseScoreRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SentenceScoreRecord,
    SpanRecord,
    TokenProbabilityRecord,
    TripletJudgmentRecord,
    TripletRecord,
    merge_batches,
)


class UnknownDataset(LookupError):
    pass


class UnknownLabelSet(UnknownDataset):
    """An export names a label set the dataset does not have (a typo would otherwise leave its labels
    out of the file without a word: a benchmark file without gold reads as "no hallucination")."""


# Items per batch of :func:`export_batches`: a batch with its labels takes a few MB until it is written.
BATCH_ITEMS = 2_000
# Rows fetched from the driver at a time when a batch's rows are read (:func:`_columns`).
_FETCHED = 1_000


def _wanted(label_set: m.LabelSet, names: Sequence[str] | None) -> bool:
    if names is None:
        return True
    return label_set.name in names or f"{label_set.kind}:{label_set.name}" in names


def export_bundle(
    engine: Engine,
    dataset_name: str,
    label_set_names: Sequence[str] | None = None,
    *,
    actor: Actor,
    batch_items: int = BATCH_ITEMS,
) -> Bundle:
    """The dataset ``dataset_name`` with the label sets named in ``label_set_names`` (all when None),
    whole: every batch of :func:`export_batches` merged."""
    return merge_batches(
        export_batches(engine, dataset_name, label_set_names, actor=actor, batch_items=batch_items)
    )


def export_batches(
    engine: Engine,
    dataset_name: str,
    label_set_names: Sequence[str] | None = None,
    *,
    actor: Actor,
    batch_items: int = BATCH_ITEMS,
    lossless: bool = True,
    statuses: bool | None = None,
) -> Generator[Bundle, None, None]:
    """The dataset in batches of ``batch_items`` items in dataset order, so a writer holds one batch at a
    time. Each batch has the dataset, its items and every chosen label set (the same ones, in the same
    order, in every batch) with its annotations of those items only; the rating tasks of the exported
    detectors (few) come whole with the last batch. An empty dataset is one batch without items.

    A label set is named by its name or by ``kind:name`` (``gold:gold``, ``detector:eager``).
    ``lossless``: with each label set's verdicts on the triplets of the other chosen label sets, and its
    items' statuses (for a format that holds them, :attr:`~formats.base.Format.lossless`); ``statuses``
    (None: as ``lossless``): with the statuses alone (:attr:`~formats.base.Format.holds_statuses`).
    Raises :class:`UnknownDataset` when there is no such dataset, and :class:`~db.access.Forbidden`
    unless ``actor`` holds the ``export`` right (an export hands out everyone's labels) — both when
    this is called, before any batch is taken. All batches are read in one transaction, so they are
    one state of the store.
    """
    with_statuses = lossless if statuses is None else statuses
    batches = _read_batches(
        engine, dataset_name, label_set_names, actor, batch_items, lossless, with_statuses
    )
    first = next(batches)  # the right and the dataset are checked now, not when a writer starts
    return _then(first, batches)


def unwritten_verdicts(
    engine: Engine, dataset_name: str, label_set_names: Sequence[str] | None, *, lossless: bool
) -> list[str]:
    """What a file of the chosen label sets (as :func:`export_batches` chooses them) leaves out of their
    verdicts on triplets they did not extract, a line per label set and kind of verdict, for the export's
    report beside :meth:`~formats.export_check.ExportTally.left_out`, which counts only what the records
    hold (these are never in a record of a format without them: there they would read as "nothing found").

    A verdict on an item's reference triplet (the scene graph) goes in no file: the Tri-HE file's
    judgements are a judge's verdicts on a model's extracted triplets, the scene graph being what they are
    judged against, and a canonical record names a judged triplet by the label set that extracted it. A
    verdict on another label set's triplet goes in a ``lossless`` file only, and only with that label set.
    """
    with read_session(engine) as session:
        chosen = {
            ls.id: f"{ls.kind}:{ls.name}"
            for ls in session.scalars(
                select(m.LabelSet)
                .join(m.Dataset, m.Dataset.id == m.LabelSet.dataset_id)
                .where(m.Dataset.name == dataset_name)
                .order_by(m.LabelSet.id)
            )
            if _wanted(ls, label_set_names)
        }
        counts = session.execute(
            select(m.TripletJudgment.label_set_id, m.Triplet.label_set_id, func.count())
            .join(m.Triplet, m.Triplet.id == m.TripletJudgment.triplet_id)
            .where(
                m.TripletJudgment.label_set_id.in_(sorted(chosen)),
                m.Triplet.label_set_id.is_(None) | (m.Triplet.label_set_id != m.TripletJudgment.label_set_id),
            )
            .group_by(m.TripletJudgment.label_set_id, m.Triplet.label_set_id)
        ).all()
    reference: dict[int, int] = defaultdict(int)
    others: dict[int, int] = defaultdict(int)
    for judge, judged, n in counts:
        if judged is None:
            reference[judge] += n
        elif not lossless or judged not in chosen:
            others[judge] += n
    why = "export those label sets too" if lossless else "only canonical holds them"
    notes = []
    for ls_id, name in chosen.items():
        if reference[ls_id]:
            notes.append(
                f"{name}: not in the file: its verdicts on the items' reference triplets (the scene graph), "
                f"{reference[ls_id]:,} in all; no format has a place for them"
            )
        if others[ls_id]:
            of = "label sets not exported" if lossless else "other label sets"
            notes.append(
                f"{name}: not in the file: its verdicts on triplets of {of}, {others[ls_id]:,} in all ({why})"
            )
    return notes


def _then(first: Bundle, rest: Generator[Bundle, None, None]) -> Generator[Bundle, None, None]:
    """``first``, then ``rest``; closing this closes ``rest`` and so its read transaction."""
    try:
        yield first
        yield from rest
    finally:
        rest.close()


def _read_batches(
    engine: Engine,
    dataset_name: str,
    label_set_names: Sequence[str] | None,
    actor: Actor,
    batch_items: int,
    lossless: bool,
    statuses: bool,
) -> Generator[Bundle, None, None]:
    with read_session(engine) as session:
        if not is_sqlite(engine):  # SQLite's read transaction is one snapshot already
            session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        require_in(session, actor, "export")
        dataset = session.scalar(select(m.Dataset).where(m.Dataset.name == dataset_name))
        if dataset is None:
            raise UnknownDataset(f"no dataset named {dataset_name!r}")
        record = DatasetRecord(
            name=dataset.name,
            source_format=dataset.source_format,
            taxonomy=list(dataset.taxonomy or []),
            label_kinds=list(dataset.label_kinds or []),
            description=dataset.description or "",
            is_synthetic=dataset.is_synthetic,
            image_root=dataset.image_root,
        )
        annotators = {i: n for i, n in session.execute(select(m.Annotator.id, m.Annotator.name))}
        chosen = [
            ls
            for ls in session.scalars(
                select(m.LabelSet).where(m.LabelSet.dataset_id == dataset.id).order_by(m.LabelSet.id)
            )
            if _wanted(ls, label_set_names)
        ]
        _check_named(session, dataset, label_set_names)
        # What each label set says, asked once: the batches are one snapshot, so it cannot change.
        says = {ls.id: _tables_holding(session, ls.id) for ls in chosen}
        judged = {ls.id for ls in chosen} if lossless else set()
        # The rating campaigns the export holds (those of its detector runs): a status on another's queue
        # would name a campaign the file does not have.
        detectors = [ls.id for ls in chosen if ls.kind == "detector"]
        campaigns = {
            task_id: name
            for task_id, name in session.execute(
                select(m.RatingTask.id, m.RatingTask.name).where(
                    m.RatingTask.dataset_id == dataset.id, m.RatingTask.detector_label_set_id.in_(detectors)
                )
            )
        }
        columns = (m.Item.id, m.Item.position, *(getattr(m.Item, name).label(name) for name in ITEM_FIELDS))
        in_order = (
            select(*columns).where(m.Item.dataset_id == dataset.id).order_by(m.Item.position, m.Item.id)
        )
        last: tuple[int, int] | None = None
        while True:
            after = in_order if last is None else in_order.where(tuple_(m.Item.position, m.Item.id) > last)
            rows = list(_columns(session, after.limit(batch_items)))
            ids = _ids_between(dataset.id, rows)
            batch = Bundle(dataset=record, items=_item_records(session, rows, ids))
            ext_of = {row.id: row.external_id for row in rows}
            order = {item_id: k for k, item_id in enumerate(ext_of)}
            for label_set in chosen:
                batch.label_sets.append(
                    label_set_record(
                        session,
                        label_set,
                        annotators,
                        ext_of,
                        order,
                        ids,
                        says=says[label_set.id],
                        judged=judged,
                        statuses=statuses,
                        campaigns=campaigns,
                    )
                )
            if len(rows) < batch_items:
                batch.rating_tasks = _rating_tasks(session, dataset.id, chosen, annotators)
                yield batch
                return
            yield batch
            last = (rows[-1].position, rows[-1].id)


# The item columns an ItemRecord is made of.
ITEM_FIELDS = (
    *("external_id", "response", "prompt", "subset", "split"),
    *("source_model", "task_type", "reference", "image_ref", "meta"),
)


def _ids_between(dataset_id: int, rows: Sequence[Row[Any]]) -> Select[Any]:
    """The ids of the batch ``rows`` (in dataset order) as a query of a range of positions: a few
    bound values, however many items (a list of ids was bound value by value in every query)."""
    if not rows:
        return select(m.Item.id).where(false())
    first, last = (rows[0].position, rows[0].id), (rows[-1].position, rows[-1].id)
    return select(m.Item.id).where(
        m.Item.dataset_id == dataset_id,
        m.Item.position.between(first[0], last[0]),  # the index's range; the pairs settle equal positions
        tuple_(m.Item.position, m.Item.id).between(first, last),
    )


def _item_records(session: Session, rows: Sequence[Row[Any]], ids: Select[Any]) -> list[ItemRecord]:
    """The items ``rows`` (of ids ``ids``) with their sentences (only when imported rather than split by
    Spanlight), claims and reference triplets, in the order given."""
    records: dict[int, ItemRecord] = {}
    for row in rows:
        records[row.id] = ItemRecord(
            external_id=row.external_id,
            response=row.response,
            prompt=row.prompt or "",
            subset=row.subset,
            split=row.split,
            source_model=row.source_model,
            task_type=row.task_type,
            reference=row.reference,
            image_ref=row.image_ref,
            meta=dict(row.meta or {}),
        )
    sentences: dict[int, list[SentenceRecord]] = defaultdict(list)
    imported: set[int] = set()
    for item_id, start, end, source in _columns(
        session,
        select(m.Sentence.item_id, m.Sentence.start, m.Sentence.end, m.Sentence.source)
        .where(m.Sentence.item_id.in_(ids))
        .order_by(m.Sentence.item_id, m.Sentence.index),
    ):
        sentences[item_id].append(SentenceRecord(start, end))
        if source == "imported":
            imported.add(item_id)
    for item_id in imported:
        records[item_id].sentences = sentences[item_id]
    for claim in session.scalars(
        select(m.Claim).where(m.Claim.item_id.in_(ids)).order_by(m.Claim.item_id, m.Claim.index)
    ):
        records[claim.item_id].claims.append(
            ClaimRecord(claim.text, claim.start, claim.end, claim.segment, claim.segment_text, claim.source)
        )
    for triplet in session.scalars(
        select(m.Triplet)
        .where(m.Triplet.item_id.in_(ids), m.Triplet.label_set_id.is_(None))
        .order_by(m.Triplet.item_id, m.Triplet.index)
    ):
        records[triplet.item_id].reference_triplets.append(
            TripletRecord(triplet.subject, triplet.relation, triplet.object)
        )
    return list(records.values())


def _rating_tasks(
    session: Session, dataset_id: int, chosen: Sequence[m.LabelSet], annotators: dict[int, str]
) -> list[RatingTaskRecord]:
    """The rating tasks of the chosen detector runs, with every rating."""
    detector_names = {ls.id: ls.name for ls in chosen if ls.kind == "detector"}
    return [
        _rating_task(session, task, detector_names, annotators)
        for task in session.scalars(
            select(m.RatingTask).where(m.RatingTask.dataset_id == dataset_id).order_by(m.RatingTask.id)
        )
        if task.detector_label_set_id in detector_names
    ]


def _columns(session: Session, statement: Any) -> Iterator[Any]:
    """The rows of a select of columns, run on the session's connection (its transaction): the ORM's
    row loading, which column rows do not need, took a third of a large export's time. Fetched many at
    a time: fetched one by one, the driver's calls took a tenth of it."""
    result = session.connection().execute(statement)
    return chain.from_iterable(result.partitions(_FETCHED))


# The tables of what a label set says. Most label sets say one or two kinds of things, so a table is read
# only when the label set has a row in it: an outer join of every sentence with a table holding none of
# the label set's rows cost a large export as much as reading its labels.
_SAYS = (
    *(m.Span, m.SentenceLabel, m.ClaimLabel, m.Triplet, m.TripletJudgment),
    *(m.RawOutput, m.SentenceScore, m.TokenProbability, m.ResponseScore, m.ItemStatus),
)


def _check_named(session: Session, dataset: m.Dataset, names: Sequence[str] | None) -> None:
    """Raises :class:`UnknownLabelSet` when a name in ``names`` is none of ``dataset``'s label sets."""
    if names is None:
        return
    have = session.execute(
        select(m.LabelSet.kind, m.LabelSet.name)
        .where(m.LabelSet.dataset_id == dataset.id)
        .order_by(m.LabelSet.id)
    ).all()
    known = {name for _, name in have} | {f"{kind}:{name}" for kind, name in have}
    missing = [name for name in names if name not in known]
    if missing:
        listed = ", ".join(f"{kind}:{name}" for kind, name in have) or "none"
        raise UnknownLabelSet(
            f"dataset {dataset.name!r} has no label set named {missing[0]!r}"
            + (f" (nor {', '.join(map(repr, missing[1:]))})" if len(missing) > 1 else "")
            + f"; its label sets: {listed}"
        )


def _tables_holding(session: Session, label_set_id: int) -> set[type[m.Base]]:
    """The tables of :data:`_SAYS` with a row of the label set, in one query (each an index probe)."""
    held = session.execute(select(*(exists().where(t.label_set_id == label_set_id) for t in _SAYS))).one()
    return {table for table, holds in zip(_SAYS, held, strict=True) if holds}


def label_set_record(
    session: Session,
    label_set: m.LabelSet,
    annotators: dict[int, str],
    ext_of: dict[int, str],
    order: dict[int, int],
    items: Select[Any] | None = None,
    *,
    says: set[type[m.Base]] | None = None,
    judged: Collection[int] | None = None,
    statuses: bool = True,
    campaigns: Mapping[int, str] | None = None,
) -> LabelSetRecord:
    """Everything ``label_set`` says, per item in ``order`` (also how an import sees what it would replace);
    about the items whose ids ``items`` selects (one batch of an export), else about all its dataset's.
    ``says``: the tables holding its rows (:func:`_tables_holding`), when the caller asked already.
    ``judged``: the label sets whose triplets its verdicts are read on (None: every label set's).
    ``statuses``: with where it stands on each item per task (a rating campaign's queue named by the
    campaign's name, which another store knows it by); ``campaigns``: the campaigns whose queues' statuses
    are read, name by id (None: every campaign of the dataset; a campaign since deleted has none).

    The labels of sentences and claims are read from the items' sentences and claims, each looked up in
    the label set's unique index: filtered on the label set first, SQLite walked every label of the
    label set for each batch, so an export in batches took time growing with the square of its size."""
    ls_id = label_set.id
    found: dict[int, Annotations] = {}
    if items is None:
        items = select(m.Item.id).where(m.Item.dataset_id == label_set.dataset_id)

    def ann(item_id: int) -> Annotations:
        if item_id not in found:
            found[item_id] = Annotations(item=ext_of[item_id])
        return found[item_id]

    if says is None:
        says = _tables_holding(session, ls_id)
    # Columns, not ORM objects: loading entities made re-reading a large label set several times slower.
    if m.Span in says:
        for item_id, start, end, type_, note in _columns(
            session,
            select(m.Span.item_id, m.Span.start, m.Span.end, m.Span.type, m.Span.note)
            .where(m.Span.label_set_id == ls_id, m.Span.item_id.in_(items))
            .order_by(m.Span.item_id, m.Span.start, m.Span.end, m.Span.id),
        ):
            ann(item_id).spans.append(SpanRecord(start, end, type_, note))
    if m.SentenceLabel in says:
        for item_id, index, label_id, label, error_type, override, meta in _columns(
            session,
            select(
                m.Sentence.item_id,
                m.Sentence.index,
                m.SentenceLabel.id,
                m.SentenceLabel.label,
                m.SentenceLabel.error_type,
                m.SentenceLabel.override,
                m.SentenceLabel.meta,
            )
            .outerjoin(
                m.SentenceLabel,
                (m.SentenceLabel.sentence_id == m.Sentence.id) & (m.SentenceLabel.label_set_id == ls_id),
            )
            .where(m.Sentence.item_id.in_(items))
            .order_by(m.Sentence.item_id, m.Sentence.index),
        ):
            if label_id is None:
                continue  # a sentence without a label in this label set
            ann(item_id).sentence_labels.append(
                SentenceLabelRecord(index, label, error_type, override, meta or {})
            )
    if m.ClaimLabel in says:
        for item_id, index, label_id, label, type_, reason in _columns(
            session,
            select(
                m.Claim.item_id,
                m.Claim.index,
                m.ClaimLabel.id,
                m.ClaimLabel.label,
                m.ClaimLabel.type,
                m.ClaimLabel.reason,
            )
            .outerjoin(
                m.ClaimLabel, (m.ClaimLabel.claim_id == m.Claim.id) & (m.ClaimLabel.label_set_id == ls_id)
            )
            .where(m.Claim.item_id.in_(items))
            .order_by(m.Claim.item_id, m.Claim.index),
        ):
            if label_id is None:
                continue
            ann(item_id).claim_labels.append(ClaimLabelRecord(index, label, type_, reason))
    if m.Triplet in says:
        for item_id, subject, relation, object_, verdict, wrong_part in _columns(
            session,
            select(
                m.Triplet.item_id,
                m.Triplet.subject,
                m.Triplet.relation,
                m.Triplet.object,
                m.TripletJudgment.verdict,
                m.TripletJudgment.wrong_part,
            )
            .outerjoin(
                m.TripletJudgment,
                (m.TripletJudgment.triplet_id == m.Triplet.id) & (m.TripletJudgment.label_set_id == ls_id),
            )
            .where(m.Triplet.label_set_id == ls_id, m.Triplet.item_id.in_(items))
            .order_by(m.Triplet.item_id, m.Triplet.index),
        ):
            ann(item_id).triplets.append(TripletRecord(subject, relation, object_, verdict, wrong_part))
    if m.TripletJudgment in says and (judged is None or judged):  # on triplets others extracted
        for item_id, kind, name, index, verdict, wrong_part in _columns(
            session,
            select(
                m.TripletJudgment.item_id,
                m.LabelSet.kind,
                m.LabelSet.name,
                m.Triplet.index,
                m.TripletJudgment.verdict,
                m.TripletJudgment.wrong_part,
            )
            .join(m.Triplet, m.Triplet.id == m.TripletJudgment.triplet_id)
            .join(m.LabelSet, m.LabelSet.id == m.Triplet.label_set_id)
            .where(
                m.TripletJudgment.label_set_id == ls_id,
                m.Triplet.label_set_id != ls_id,
                m.TripletJudgment.item_id.in_(items),
                *(() if judged is None else (m.Triplet.label_set_id.in_(sorted(judged)),)),
            )
            .order_by(m.TripletJudgment.item_id, m.LabelSet.id, m.Triplet.index),
        ):
            ann(item_id).triplet_judgments.append(
                TripletJudgmentRecord(kind, name, index, verdict, wrong_part)
            )
    if m.RawOutput in says:
        for item_id, text, follows_format, analysis, parse_error, cut in _columns(
            session,
            select(
                m.RawOutput.item_id,
                m.RawOutput.text,
                m.RawOutput.follows_format,
                m.RawOutput.analysis,
                m.RawOutput.parse_error,
                m.RawOutput.cut,
            ).where(m.RawOutput.label_set_id == ls_id, m.RawOutput.item_id.in_(items)),
        ):
            ann(item_id).raw_output = RawOutputRecord(text, follows_format, analysis, parse_error, bool(cut))
    if m.SentenceScore in says:
        for item_id, index, score_id, score, parsed in _columns(
            session,
            select(
                m.Sentence.item_id,
                m.Sentence.index,
                m.SentenceScore.id,
                m.SentenceScore.score,
                m.SentenceScore.parsed,
            )
            .outerjoin(
                m.SentenceScore,
                (m.SentenceScore.sentence_id == m.Sentence.id) & (m.SentenceScore.label_set_id == ls_id),
            )
            .where(m.Sentence.item_id.in_(items))
            .order_by(m.Sentence.item_id, m.Sentence.index),
        ):
            if score_id is None:
                continue
            ann(item_id).sentence_scores.append(SentenceScoreRecord(index, score, parsed))
    if m.TokenProbability in says:
        for item_id, token_index, start, end, probability, type_ in _columns(
            session,
            select(
                m.TokenProbability.item_id,
                m.TokenProbability.token_index,
                m.TokenProbability.start,
                m.TokenProbability.end,
                m.TokenProbability.probability,
                m.TokenProbability.type,
            )
            .where(m.TokenProbability.label_set_id == ls_id, m.TokenProbability.item_id.in_(items))
            .order_by(m.TokenProbability.item_id, m.TokenProbability.id),
        ):
            ann(item_id).token_probabilities.append(
                TokenProbabilityRecord(token_index, start, end, probability, type_)
            )
    if m.ResponseScore in says:
        for item_id, score, hallucination, rationale, low, high in _columns(
            session,
            select(
                m.ResponseScore.item_id,
                m.ResponseScore.score,
                m.ResponseScore.hallucination,
                m.ResponseScore.rationale,
                m.ResponseScore.scale_min,
                m.ResponseScore.scale_max,
            ).where(m.ResponseScore.label_set_id == ls_id, m.ResponseScore.item_id.in_(items)),
        ):
            ann(item_id).response_score = ResponseScoreRecord(score, hallucination, rationale, low, high)
    if m.ItemStatus in says and statuses:
        if campaigns is None:
            query = select(m.RatingTask.id, m.RatingTask.name).where(
                m.RatingTask.dataset_id == label_set.dataset_id
            )
            campaigns = {task_id: name for task_id, name in session.execute(query)}
        for item_id, page, status, note in _columns(
            session,
            select(m.ItemStatus.item_id, m.ItemStatus.page, m.ItemStatus.status, m.ItemStatus.note)
            .where(m.ItemStatus.label_set_id == ls_id, m.ItemStatus.item_id.in_(items))
            .order_by(m.ItemStatus.item_id, m.ItemStatus.page),
        ):
            task = status_task(page, campaigns)
            if task is not None:
                ann(item_id).statuses.append(ItemStatusRecord(task, status, note))
    return LabelSetRecord(
        kind=label_set.kind,
        name=label_set.name,
        annotator=annotators.get(label_set.annotator_id) if label_set.annotator_id else None,
        detector_version=label_set.detector_version,
        prompt_strategy=label_set.prompt_strategy,
        meta=dict(label_set.meta or {}),
        annotations=[found[item_id] for item_id in sorted(found, key=order.__getitem__)],
    )


def status_task(page: str, campaigns: Mapping[int, str]) -> str | None:
    """The task a stored status's ``page`` names, as a file names it: a rating campaign's queue
    (``rating:<task id>``) by the campaign's name (``campaigns``: name by id), None when it is gone."""
    if not page.startswith(RATING_QUEUE):
        return page
    number = page[len(RATING_QUEUE) :]
    name = campaigns.get(int(number)) if number.isdigit() else None
    return None if name is None else RATING_QUEUE + name


# The page of a rating campaign's statuses begins so; then its id in the store, its name in a file.
RATING_QUEUE = "rating:"


def _rating_task(
    session: Session, task: m.RatingTask, detectors: dict[int, str], annotators: dict[int, str]
) -> RatingTaskRecord:
    ratings = [
        RatingRecord(
            item=item,
            rater=annotators.get(r.annotator_id, str(r.annotator_id)),
            score=r.score,
            segment_start=r.segment_start,
            segment_end=r.segment_end,
            nothing_flagged_correct=r.nothing_flagged_correct,
        )
        for r, item in session.execute(
            select(m.Rating, m.Item.external_id)
            .join(m.Item, m.Item.id == m.Rating.item_id)
            .where(m.Rating.task_id == task.id)
            .order_by(m.Rating.id)
        )
    ]
    return RatingTaskRecord(
        name=task.name,
        detector=detectors[task.detector_label_set_id],
        granularity=task.granularity,
        scale_min=task.scale_min,
        scale_max=task.scale_max,
        rubric=dict(task.rubric or {}),
        ratings=ratings,
    )
