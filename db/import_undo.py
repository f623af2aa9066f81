"""Recent imports, and taking one back from the edit log.

Each import's log entry keeps the stored state of every unit it rewrote (what a label set said about an
item, a rater's ratings of an item) and a fingerprint of what it wrote. Undoing puts the old state back as
a new logged change, in one transaction, and is refused when those rows changed since the import (someone
edited them, or a later import replaced them): an undo never overwrites newer work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.engine import read_session, write_session
from db.import_changes import annotation_rows, digest, rating_rows, stored_annotations, stored_ratings
from db.importer import write_annotations
from formats.canonical import records_from_dicts
from formats.records import Annotations, LabelSetRecord, RatingRecord, RatingTaskRecord


class UndoRefused(Exception):
    """The import cannot be undone; the message says why."""


@dataclass
class ImportEntry:
    log_id: int
    at: datetime
    dataset: str | None
    source: str
    annotator: str | None
    rows: dict[str, int]
    changes: dict[str, Any]
    undone: bool
    undoable: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "log_id": self.log_id,
            "at": self.at.isoformat(),
            "dataset": self.dataset,
            "source": self.source,
            "annotator": self.annotator,
            "rows": self.rows,
            "changes": self.changes,
            "undone": self.undone,
            "undoable": self.undoable,
        }


@dataclass
class UndoResult:
    log_id: int
    undid: int
    dataset: str
    rows: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"log_id": self.log_id, "undid": self.undid, "dataset": self.dataset, "rows": self.rows}


def _undone(session: Session) -> set[int]:
    rows = session.scalars(
        select(m.EditLog.after).where(m.EditLog.action == "undo", m.EditLog.entity == "datasets")
    )
    return {int(after["undid"]) for after in rows if after and "undid" in after}


def _has_units(entry: m.EditLog) -> bool:
    before = entry.before or {}
    return bool(before.get("label_sets") or before.get("ratings"))


def recent_imports(engine: Engine, limit: int = 20) -> list[ImportEntry]:
    """The latest imports, newest first, with whether each can still be undone."""
    with read_session(engine) as session:
        undone = _undone(session)
        query = (
            select(m.EditLog, m.Dataset.name, m.Annotator.name)
            .outerjoin(m.Dataset, m.Dataset.id == m.EditLog.entity_id)
            .outerjoin(m.Annotator, m.Annotator.id == m.EditLog.annotator_id)
            .where(m.EditLog.action == "import", m.EditLog.entity == "datasets")
            .order_by(m.EditLog.id.desc())
            .limit(limit)
        )
        return [
            ImportEntry(
                log_id=entry.id,
                at=entry.at,
                dataset=dataset,
                source=str((entry.after or {}).get("source", "")),
                annotator=annotator,
                rows=dict((entry.after or {}).get("rows") or {}),
                changes=dict((entry.after or {}).get("changes") or {}),
                undone=entry.id in undone,
                undoable=entry.id not in undone and dataset is not None and _has_units(entry),
            )
            for entry, dataset, annotator in session.execute(query)
        ]


def undo_import(engine: Engine, log_id: int, annotator: str | None = None) -> UndoResult:
    """Put back what the import logged as ``log_id`` replaced, as a new logged change.

    Raises :class:`UndoRefused` when there is no such import, it was undone already, it changed no stored
    annotations, or the rows it wrote changed since (nothing is written then).
    """
    with write_session(engine) as session:
        entry = session.get(m.EditLog, log_id)
        if entry is None or entry.action != "import" or entry.entity != "datasets":
            raise UndoRefused(f"there is no import with log id {log_id}")
        if log_id in _undone(session):
            raise UndoRefused(f"import {log_id} was undone already")
        dataset = session.get(m.Dataset, entry.entity_id) if entry.entity_id is not None else None
        if dataset is None:
            raise UndoRefused(f"the dataset of import {log_id} no longer exists")
        if not _has_units(entry):
            raise UndoRefused(f"import {log_id} changed no annotations: there is nothing to undo")
        before = entry.before or {}
        digests = (entry.after or {}).get("digests") or {}
        label_sets, changed = _label_sets_back(session, dataset.id, before["label_sets"], digests)
        tasks, changed_tasks = _ratings_back(session, dataset.id, before["ratings"], digests)
        changed += changed_tasks
        if changed:
            raise UndoRefused(
                f"import {log_id} cannot be undone: {', '.join(changed)} changed since; "
                "undoing would overwrite that newer work"
            )
        rows = write_annotations(session, dataset, label_sets, tasks)
        description = f"undid import {log_id} ({(entry.after or {}).get('source', '')})"
        undo = m.EditLog(
            annotator_id=session.scalar(select(m.Annotator.id).where(m.Annotator.name == annotator))
            if annotator
            else None,
            action="undo",
            entity="datasets",
            entity_id=dataset.id,
            before=None,
            after={"undid": log_id, "description": description, "rows": rows},
        )
        session.add(undo)
        session.flush()
        return UndoResult(undo.id, log_id, dataset.name, rows)


def _label_sets_back(
    session: Session, dataset_id: int, logged: list[dict[str, Any]], digests: dict[str, str]
) -> tuple[list[LabelSetRecord], list[str]]:
    records, changed = [], []
    for unit in logged:
        owner = f"{unit['kind']}:{unit['name']}"
        items: list[str] = unit["items"]
        now = stored_annotations(session, dataset_id, unit["kind"], unit["name"], set(items)) or {}
        current = [annotation_rows(now[ext]) if ext in now else {} for ext in items]
        if digest(current) != digests.get(owner):
            changed.append(f"label set {owner}")
            continue
        old = {a.item: a for a in records_from_dicts(Annotations, unit["annotations"])}
        annotations = [old.get(ext, Annotations(item=ext)) for ext in items]
        records.append(LabelSetRecord(kind=unit["kind"], name=unit["name"], annotations=annotations))
    return records, changed


def _ratings_back(
    session: Session, dataset_id: int, logged: list[dict[str, Any]], digests: dict[str, str]
) -> tuple[list[tuple[RatingTaskRecord, list[tuple[str, str]]]], list[str]]:
    tasks, changed = [], []
    for unit in logged:
        owner = f"rating task {unit['task']}"
        pairs = [(rater, ext) for rater, ext in unit["pairs"]]
        now = stored_ratings(session, dataset_id, unit["task"], set(pairs))
        if digest([rating_rows(now.get(pair, [])) for pair in pairs]) != digests.get(owner):
            changed.append(owner)
            continue
        task = session.scalar(
            select(m.RatingTask).where(
                m.RatingTask.dataset_id == dataset_id, m.RatingTask.name == unit["task"]
            )
        )
        detector = session.get(m.LabelSet, task.detector_label_set_id) if task is not None else None
        if task is None or detector is None:
            changed.append(owner)
            continue
        record = RatingTaskRecord(
            name=task.name,
            detector=detector.name,
            granularity=task.granularity,
            scale_min=task.scale_min,
            scale_max=task.scale_max,
            ratings=records_from_dicts(RatingRecord, unit["ratings"]),
        )
        tasks.append((record, pairs))
    return tasks, changed
