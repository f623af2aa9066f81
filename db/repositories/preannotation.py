"""Starting an annotation from a detector's output: its spans or sentence labels copied into the
annotator's own label set as an editable draft, and the record of it.

Why it is recorded: an annotator who starts from a detector is anchored by it, so their labels on those
items are not an independent judgment. The Agreement page shows how much of the detector's output
each annotator kept (:func:`anchoring_units`), which needs to know which items were pre-annotated and
from which detector. That is kept on the annotator's label set, in ``meta["preannotation"]``:
``{task: {item external id: {"detector", "detector_id", "at", "copied"}}}``. The label set's meta
survives re-imports and travels with an export, and the record stays when the annotator edits or undoes
the draft: they saw the detector's output either way.

The copy is one labeling action in one transaction: the rights of :func:`db.access.check_label_write`
(own human label set; in team mode an annotator only on items assigned to them), and in team mode only
on a dataset whose settings allow pre-annotation (it breaks blind annotation; an admin decides). Every
copied row is logged like a label added by hand (so the item's history lists it and Undo takes rows
back one by one), plus one ``preannotate`` entry that names the detector even when it found nothing.
Labels the annotator already has on the item are never overwritten unasked: :class:`AlreadyLabeled`
unless ``replace`` says they confirmed, and then each removed row is logged too.

Sentences: the detector's own sentence labels where it has any on the item, else labels derived from
its spans (a sentence holding one of its spans is incorrect, with the span's type; the others correct).
A sentence holding one of the annotator's own spans is never pre-labeled correct (the labeling rule of
:func:`~db.repositories.labeling.set_sentence_label`); it is left for them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, Forbidden, GoldShown, check_label_write, require_in, team_mode
from db.engine import read_session, write_session
from db.label_set_rows import holds_rows
from db.repositories.datasets import dataset_settings
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.labeling import Action, _log, _retried, _snapshot
from db.repositories.visibility import assigned_items, label_sight, sees_assigned_only

__all__ = [
    "TASKS",
    "AlreadyLabeled",
    "AnchoringUnit",
    "Preannotation",
    "anchoring_units",
    "detector_sources",
    "preannotate",
    "preannotate_dataset",
    "preannotation_allowed",
    "preannotation_of",
]

META_KEY = "preannotation"
TASKS = ("spans", "sentences")
_QUOTE = 40


class AlreadyLabeled(ValueError):
    """The annotator already has labels of this task on the item; nothing was copied over them."""


@dataclass(frozen=True)
class Preannotation:
    """That (and from which detector) an item of a task was started from a detector's output."""

    detector: str
    detector_id: int | None
    at: str
    copied: int


def _record(found: Any) -> Preannotation | None:
    if not isinstance(found, dict) or not isinstance(found.get("detector"), str):
        return None
    detector_id = found.get("detector_id")
    return Preannotation(
        found["detector"],
        detector_id if isinstance(detector_id, int) else None,
        str(found.get("at") or ""),
        int(found.get("copied") or 0),
    )


def _records(meta: dict[str, Any] | None, task: str) -> dict[str, Preannotation]:
    stored = (meta or {}).get(META_KEY)
    by_item = stored.get(task) if isinstance(stored, dict) else None
    if not isinstance(by_item, dict):
        return {}
    out = {}
    for external_id, found in by_item.items():
        record = _record(found)
        if record is not None:
            out[str(external_id)] = record
    return out


# --------------------------------------------------------------------------------------------- reads


def preannotation_allowed(engine: Engine, dataset_id: int) -> bool:
    """Whether anyone may start from a detector on the dataset: always in local mode; in team mode when
    an admin allowed it in the dataset's settings."""
    return not team_mode() or dataset_settings(engine, dataset_id).allow_preannotation


def _holds_task(session: Session, label_set_id: int, task: str) -> bool:
    """Whether a detector label set holds output a ``task`` draft can be made of (spans; sentence labels)."""
    owners = [m.Span.label_set_id] if task == "spans" else [m.Span.label_set_id, m.SentenceLabel.label_set_id]
    return any(holds_rows(session, owner, label_set_id) for owner in owners)


def detector_sources(engine: Engine, actor: Actor, dataset_id: int, task: str) -> list[LabelSetView]:
    """The detector label sets the actor may start a ``task`` draft from: none where pre-annotation is
    not allowed or the actor may not see detectors (blind annotation); only detectors holding spans
    (or, for sentences, sentence labels)."""
    _check_task(task)
    if not preannotation_allowed(engine, dataset_id) or not label_sight(engine, actor, dataset_id).detectors:
        return []
    detectors = list_label_sets(engine, dataset_id, kind="detector")
    with read_session(engine) as session:
        return [ls for ls in detectors if _holds_task(session, ls.id, task)]


def preannotation_of(engine: Engine, label_set_id: int, item_id: int, task: str) -> Preannotation | None:
    """Whether the label set's ``task`` labels on the item were started from a detector, and which."""
    _check_task(task)
    with read_session(engine) as session:
        meta = session.scalar(select(m.LabelSet.meta).where(m.LabelSet.id == label_set_id))
        external_id = session.scalar(select(m.Item.external_id).where(m.Item.id == item_id))
    return _records(meta, task).get(external_id or "")


# -------------------------------------------------------------------------------------------- writes


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"Pre-annotation is for {' and '.join(TASKS)}; got {task!r}.")


def _source(session: Session, target: m.LabelSet, detector_id: int) -> m.LabelSet:
    """The detector label set to copy from, once the setting and the sight allow it (else Forbidden)."""
    dataset = session.get_one(m.Dataset, target.dataset_id)
    if team_mode() and not bool((dataset.settings or {}).get("allow_preannotation", False)):
        raise Forbidden(
            f"Starting from a detector is not allowed on dataset {dataset.name!r} (it breaks blind "
            "annotation); an admin can allow it in the dataset's settings."
        )
    detector = session.get(m.LabelSet, detector_id)
    if detector is None or detector.kind != "detector" or detector.dataset_id != target.dataset_id:
        raise ValueError(f"There is no detector with id {detector_id} on dataset {dataset.name!r}.")
    return detector


def _locked_target(session: Session, label_set_id: int) -> m.LabelSet:
    """The annotator's label set, locked: its meta is read, changed and written in this transaction."""
    return session.scalars(
        select(m.LabelSet)
        .where(m.LabelSet.id == label_set_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()


def _name(detector: m.LabelSet) -> str:
    return f"{detector.name} {detector.detector_version}" if detector.detector_version else detector.name


# A sentence as the drafts need it: (id, index, start, end); a span: (start, end, type).
SentenceRow = tuple[int, int, int, int]
SpanRow = tuple[int, int, str | None]


def _drafted(
    sentences: Sequence[SentenceRow],
    labeled: dict[int, tuple[str, str | None]],
    detector_spans: Sequence[SpanRow],
    own_spans: Sequence[SpanRow],
) -> list[tuple[int, int, str, str | None]]:
    """(sentence id, index, label, error type) of a sentence draft: the detector's sentence labels
    (``labeled``, by sentence id) where it has any, else labels derived from its spans; never "correct"
    on a sentence holding one of the annotator's own spans."""
    out = []
    for sentence_id, index, start, end in sentences:
        theirs = [s for s in detector_spans if s[0] < end and s[1] > start]
        if labeled:
            if sentence_id not in labeled:
                continue
            label, error_type = labeled[sentence_id]
        else:
            label = "incorrect" if theirs else "correct"
            error_type = next((s[2] for s in theirs if s[2]), None)
        if label == "correct" and any(s[0] < end and s[1] > start for s in own_spans):
            continue
        out.append((sentence_id, index, label, error_type if label == "incorrect" else None))
    return out


def _sentence_drafts(
    session: Session, detector: m.LabelSet, item: m.Item, own: int
) -> list[tuple[int, int, str, str | None]]:
    """:func:`_drafted` for the item, read in this session (``own``: the annotator's label set)."""
    sentences = session.execute(
        select(m.Sentence.id, m.Sentence.index, m.Sentence.start, m.Sentence.end)
        .where(m.Sentence.item_id == item.id)
        .order_by(m.Sentence.index)
    ).all()
    labeled = {
        sentence_id: (label, error_type)
        for sentence_id, label, error_type in session.execute(
            select(m.SentenceLabel.sentence_id, m.SentenceLabel.label, m.SentenceLabel.error_type).where(
                m.SentenceLabel.label_set_id == detector.id, m.SentenceLabel.item_id == item.id
            )
        )
    }
    rows = [(sentence_id, index, start, end) for sentence_id, index, start, end in sentences]
    theirs, mine = _spans_of(session, detector.id, item.id), _spans_of(session, own, item.id)
    return _drafted(rows, labeled, theirs, mine)


def _copy(
    session: Session,
    target: m.LabelSet,
    detector: m.LabelSet,
    item: m.Item,
    task: str,
    annotator_id: int | None,
    *,
    replace: bool,
) -> Action:
    """Copy the detector's ``task`` output on the item into ``target`` (rights already checked)."""
    model: type[m.Span] | type[m.SentenceLabel] = m.Span if task == "spans" else m.SentenceLabel
    entity = "spans" if task == "spans" else "sentence_labels"
    name = _name(detector)
    mine = session.scalars(
        select(model).where(model.label_set_id == target.id, model.item_id == item.id).with_for_update()
    ).all()
    if mine and not replace:
        what = "span(s)" if task == "spans" else "sentence label(s)"
        raise AlreadyLabeled(
            f"You already have {len(mine)} {what} on item {item.external_id!r}; starting from {name} "
            "would replace them. Confirm to replace them, or keep yours."
        )
    for row in mine:
        _log(
            session,
            annotator_id=annotator_id,
            action="delete",
            entity=entity,
            row=row,
            before=_snapshot(row, entity),
            after=None,
            description=f"replaced by {name}'s draft",
        )
        session.delete(row)
    session.flush()
    copied = 0
    origin = {"preannotated_from": name}
    if task == "spans":
        source = session.scalars(
            select(m.Span)
            .where(m.Span.label_set_id == detector.id, m.Span.item_id == item.id)
            .order_by(m.Span.start, m.Span.end)
        ).all()
        for span in source:
            row = m.Span(
                label_set_id=target.id, item_id=item.id, start=span.start, end=span.end, type=span.type
            )
            session.add(row)
            session.flush()
            text = item.response[span.start : span.end][:_QUOTE]
            _log(
                session,
                annotator_id=annotator_id,
                action="create",
                entity=entity,
                row=row,
                before=None,
                after={**_snapshot(row, entity), **origin},
                description=f"from {name}: added span “{text}” ({span.type or 'untyped'})",
            )
            copied += 1
    else:
        for sentence_id, index, label, error_type in _sentence_drafts(session, detector, item, target.id):
            label_row = m.SentenceLabel(
                label_set_id=target.id,
                sentence_id=sentence_id,
                item_id=item.id,
                label=label,
                error_type=error_type,
                override=False,
            )
            session.add(label_row)
            session.flush()
            _log(
                session,
                annotator_id=annotator_id,
                action="create",
                entity=entity,
                row=label_row,
                before=None,
                after={**_snapshot(label_row, entity), **origin},
                description=f"from {name}: sentence {index + 1} → {label}",
            )
            copied += 1
    at = datetime.now(UTC).isoformat(timespec="seconds")
    record = {"detector": detector.name, "detector_id": detector.id, "at": at, "copied": copied}
    stored = dict((target.meta or {}).get(META_KEY) or {})
    stored[task] = {**dict(stored.get(task) or {}), item.external_id: record}
    target.meta = {**(target.meta or {}), META_KEY: stored}  # a new dict, so the JSON column is seen changed
    unit = "span(s)" if task == "spans" else "sentence label(s)"
    description = f"started from {name}: {copied} {unit} copied" + (
        f", {len(mine)} of yours replaced" if mine else ""
    )
    entry = m.EditLog(
        annotator_id=annotator_id,
        action="preannotate",
        entity="label_sets",
        entity_id=target.id,
        item_id=item.id,
        label_set_id=target.id,
        before=None,
        after={"task": task, **record, "description": description},
    )
    session.add(entry)
    session.flush()
    return Action(entry.id, "label_sets", target.id, "preannotate", description, item.external_id)


@_retried
def preannotate(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    task: str,
    detector_id: int,
    annotator_id: int,
    *,
    replace: bool = False,
) -> Action:
    """Copy detector ``detector_id``'s ``task`` output on the item into the annotator's own label set as
    a draft, in one transaction, and record it. :class:`AlreadyLabeled` when the annotator already has
    such labels on the item (unless ``replace``); :class:`~db.access.Forbidden` without the right to
    label there, or in team mode when the dataset does not allow pre-annotation."""
    _check_task(task)
    with write_session(engine) as session:
        check_label_write(session, annotator_id, label_set_id, item_id, task)
        target = _locked_target(session, label_set_id)
        item = session.get_one(m.Item, item_id)
        if item.dataset_id != target.dataset_id:
            raise ValueError(f"{target.name!r}'s labels belong to another dataset than item {item_id}.")
        detector = _source(session, target, detector_id)
        return _copy(session, target, detector, item, task, annotator_id, replace=replace)


@_retried
def preannotate_dataset(
    engine: Engine, label_set_id: int, task: str, detector_id: int, annotator_id: int
) -> int:
    """Start every item the annotator may label, that the detector ran on, that they have no ``task``
    labels on yet and did not start from a detector before, from the detector (one transaction); the number of items started. Items they have
    labeled are left alone, and so are items whose gold was shown to them (:class:`~db.access.GoldShown`).
    Forbidden as :func:`preannotate`, and for an annotator with no item assigned."""
    _check_task(task)
    with write_session(engine) as session:
        actor = require_in(session, annotator_id, "label")
        target = _locked_target(session, label_set_id)
        detector = _source(session, target, detector_id)
        items = select(m.Item).where(m.Item.dataset_id == target.dataset_id)
        if sees_assigned_only(actor) and actor.id is not None:
            items = items.where(m.Item.id.in_(assigned_items(target.dataset_id, actor.id, task)))
        writable = session.scalars(items.order_by(m.Item.position)).all()
        if not writable:
            if sees_assigned_only(actor):
                raise Forbidden(f"No item of this dataset is assigned to you on the {task} task.")
            return 0
        # Whose label set; an item whose gold was shown to them says it is theirs (checked before), and is
        # left alone below.
        with suppress(GoldShown):
            check_label_write(session, annotator_id, label_set_id, writable[0].id, task)
        model: type[m.Span] | type[m.SentenceLabel] = m.Span if task == "spans" else m.SentenceLabel
        labeled = set(session.scalars(select(model.item_id).where(model.label_set_id == target.id)))
        ran = set(session.scalars(select(m.RawOutput.item_id).where(m.RawOutput.label_set_id == detector.id)))
        ran |= set(session.scalars(select(m.Span.item_id).where(m.Span.label_set_id == detector.id)))
        ran |= set(
            session.scalars(
                select(m.SentenceLabel.item_id).where(m.SentenceLabel.label_set_id == detector.id)
            )
        )
        labeled |= {i.id for i in writable if i.external_id in _records(target.meta, task)}  # started before
        started = 0
        for item in writable:
            if item.id in labeled or item.id not in ran:
                continue
            try:
                check_label_write(session, annotator_id, label_set_id, item.id, task)
            except GoldShown:
                continue  # its gold was shown to them: their labels there (none) are kept as they were
            _copy(session, target, detector, item, task, annotator_id, replace=False)
            started += 1
        return started


# ------------------------------------------------------------------------------------ for analysis


@dataclass(frozen=True)
class AnchoringUnit:
    """One pre-annotated item of one annotator: what the detector said and what the annotator has now.
    Spans are (start, end, type); sentence labels are sentence index → label."""

    annotator: str  # the annotator's label set's name, as the Agreement page names raters
    detector: str
    task: str
    item: str  # external id
    response: str
    detector_spans: tuple[tuple[int, int, str | None], ...] = ()
    annotator_spans: tuple[tuple[int, int, str | None], ...] = ()
    detector_labels: dict[int, str] | None = None
    annotator_labels: dict[int, str] | None = None


def _spans_of(session: Session, label_set_id: int, item_id: int) -> tuple[tuple[int, int, str | None], ...]:
    rows = session.execute(
        select(m.Span.start, m.Span.end, m.Span.type)
        .where(m.Span.label_set_id == label_set_id, m.Span.item_id == item_id)
        .order_by(m.Span.start, m.Span.end)
    )
    return tuple((start, end, kind) for start, end, kind in rows)


_CHUNK = 500  # ids per IN list


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    unique = sorted(set(ids))
    return [unique[k : k + _CHUNK] for k in range(0, len(unique), _CHUNK)]


def anchoring_units(
    engine: Engine, dataset_id: int, label_set_ids: Sequence[int] | None = None
) -> list[AnchoringUnit]:
    """Every pre-annotated (annotator, item, task) of the dataset — of ``label_set_ids`` only, if given —
    with the detector's output now and the annotator's labels now. The detector's sentence labels are
    derived from its spans where it has none, as the draft was. A detector deleted since is skipped.
    A few bulk reads, however many items were started."""
    with read_session(engine) as session:
        items = dict(
            session.execute(
                select(m.Item.external_id, m.Item.id).where(m.Item.dataset_id == dataset_id)
            ).all()
        )
        label_sets = session.scalars(
            select(m.LabelSet).where(
                m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind.in_(("human", "detector"))
            )
        ).all()
        detectors = {ls.id: ls for ls in label_sets if ls.kind == "detector"}
        by_name = {ls.name: ls for ls in detectors.values()}
        wanted: list[tuple[m.LabelSet, str, str, int, m.LabelSet]] = []  # human, task, item, id, detector
        for human in sorted((ls for ls in label_sets if ls.kind == "human"), key=lambda ls: ls.name.lower()):
            if label_set_ids is not None and human.id not in label_set_ids:
                continue
            for task in TASKS:
                for external_id, record in sorted(_records(human.meta, task).items()):
                    # By name first: a detector's name is unique on its dataset and survives an export
                    # into another store, where the recorded id may belong to another label set.
                    detector = by_name.get(record.detector) or detectors.get(record.detector_id or -1)
                    if detector is not None and external_id in items:
                        wanted.append((human, task, external_id, items[external_id], detector))
        item_ids = [w[3] for w in wanted]
        sets = {ls.id for w in wanted for ls in (w[0], w[4])}
        responses: dict[int, str] = {}
        spans: dict[tuple[int, int], list[SpanRow]] = defaultdict(list)
        labels: dict[tuple[int, int], dict[int, tuple[int, str, str | None]]] = defaultdict(dict)
        sentences: dict[int, list[SentenceRow]] = defaultdict(list)
        for chunk in _chunks(item_ids):
            responses.update(
                session.execute(select(m.Item.id, m.Item.response).where(m.Item.id.in_(chunk))).all()
            )
            for ls, item_id, start, end, kind in session.execute(
                select(m.Span.label_set_id, m.Span.item_id, m.Span.start, m.Span.end, m.Span.type)
                .where(m.Span.item_id.in_(chunk), m.Span.label_set_id.in_(sets))
                .order_by(m.Span.start, m.Span.end)
            ):
                spans[(ls, item_id)].append((start, end, kind))
            for ls, item_id, sentence_id, index, label, error_type in session.execute(
                select(
                    m.SentenceLabel.label_set_id,
                    m.SentenceLabel.item_id,
                    m.SentenceLabel.sentence_id,
                    m.Sentence.index,
                    m.SentenceLabel.label,
                    m.SentenceLabel.error_type,
                )
                .join(m.Sentence, m.Sentence.id == m.SentenceLabel.sentence_id)
                .where(m.SentenceLabel.item_id.in_(chunk), m.SentenceLabel.label_set_id.in_(sets))
            ):
                labels[(ls, item_id)][sentence_id] = (index, label, error_type)
            for sentence_id, item_id, index, start, end in session.execute(
                select(m.Sentence.id, m.Sentence.item_id, m.Sentence.index, m.Sentence.start, m.Sentence.end)
                .where(m.Sentence.item_id.in_(chunk))
                .order_by(m.Sentence.index)
            ):
                sentences[item_id].append((sentence_id, index, start, end))
    out = []
    for human, task, external_id, item_id, detector in wanted:
        unit = (human.name, _name(detector), task, external_id, responses[item_id])
        if task == "spans":
            out.append(
                AnchoringUnit(
                    *unit,
                    detector_spans=tuple(spans[(detector.id, item_id)]),
                    annotator_spans=tuple(spans[(human.id, item_id)]),
                )
            )
            continue
        drafted = _drafted(
            sentences[item_id],
            {sid: (label, kind) for sid, (_i, label, kind) in labels[(detector.id, item_id)].items()},
            spans[(detector.id, item_id)],
            (),
        )
        out.append(
            AnchoringUnit(
                *unit,
                detector_labels={index: label for _sid, index, label, _kind in drafted},
                annotator_labels={
                    index: label for index, label, _kind in labels[(human.id, item_id)].values()
                },
            )
        )
    return out
