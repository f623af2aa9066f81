"""Recent imports, and taking one back from the edit log.

Each import's log entry keeps the stored state of every unit it rewrote (what a label set said about an
item, a rater's ratings of an item) and a fingerprint of what it wrote. Undoing puts the old state back as
a new logged change, in one transaction, and is refused when those rows changed since the import (someone
edited them, or a later import replaced them): an undo never overwrites newer work. The undo's entry keeps
what it replaced in the same way, so an undo can itself be undone and nothing is lost either way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, require_in
from db.engine import read_session, write_session
from db.import_changes import (
    annotation_rows,
    digest,
    logged_state,
    rating_rows,
    stored_ratings,
    units_now,
)
from db.importer import coverage_items, logged_coverage, logged_created, set_coverage, write_annotations
from db.label_set_drops import as_made, drop_empty
from db.label_set_keys import Key
from db.record_reach import Reach, reach_from_log
from db.triplet_verdicts import LostVerdict, lost_verdicts
from formats.base import LABEL_KINDS
from formats.canonical import records_from_dicts
from formats.export_check import label_counts
from formats.problems import ImportRejected
from formats.records import Annotations, LabelSetRecord, RatingRecord, RatingTaskRecord

# Entries that replaced annotations and keep what they replaced: imports, and undos of imports.
_UNDOABLE = ("import", "undo")


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
    marks: int = 0  # coverage marks the change added or took away (annotations say nothing of them)
    # An undo's: what it took away of the labels the import had written, by kind (LABEL_KINDS' names)
    removed: dict[str, int] = field(default_factory=dict)
    undid: int | None = None  # an undo's: the entry it undid
    marks_moved: dict[str, int] = field(default_factory=dict)  # an undo's marks "took away", "put back"
    dropped: list[str] = field(default_factory=list)  # an undo's: the emptied label sets it took away

    def summary(self) -> str:
        """What the change did, in words: an import's rows added, changed and removed; an undo's labels
        taken away and rows restored (an undo's line read only its coverage marks)."""
        if self.undid is not None:
            return UndoResult(
                self.log_id,
                self.undid,
                self.dataset or "",
                self.rows,
                self.marks_moved,
                self.removed,
                self.dropped,
            ).summary()
        totals = {"removed": 0, "changed": 0, "added": 0}
        for tables in self.changes.get("counts", {}).values():
            for counts in tables.values():
                for what in totals:
                    totals[what] += int(counts.get(what, 0))
        said = [f"{n} {what}" for what, n in totals.items() if n]
        if self.marks:  # items gold checked or a run was given, marked as such
            said.append(f"{self.marks} coverage marks")
        return ", ".join(said) or "no annotations changed"

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
            "coverage_marks": self.marks,
            **(
                {"undid": self.undid, "removed": self.removed, "label_sets_removed": self.dropped}
                if self.undid is not None
                else {}
            ),
        }


@dataclass
class UndoResult:
    log_id: int
    undid: int
    dataset: str
    rows: dict[str, int] = field(default_factory=dict)
    marks: dict[str, int] = field(default_factory=dict)  # coverage marks "took away" and "put back"
    # What the undo took away of the labels the import had written, by kind (:data:`LABEL_KINDS`' names).
    removed: dict[str, int] = field(default_factory=dict)
    # The label sets the import had made, taken away with it ("kind:name"): they held nothing else.
    dropped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "log_id": self.log_id,
            "undid": self.undid,
            "dataset": self.dataset,
            "rows": self.rows,
            "removed": self.removed,
            "coverage_marks": self.marks,
            "label_sets_removed": self.dropped,
        }

    def summary(self) -> str:
        """What the undo did, in words: the labels it took away, the rows it restored, and the coverage
        marks (gold's, a detector run's) it took away or put back. (An undo of a detector run's first import restores nothing and takes
        its whole run away: it read "restored no rows".)"""
        took = [f"{n:,} {LABEL_KINDS[kind]}" for kind, n in self.removed.items()]
        restored = [f"{n} {table}" for table, n in sorted(self.rows.items())]
        for what, listed in (("took away", took), ("put back", restored)):
            if self.marks.get(what):
                listed.append(f"{self.marks[what]:,} coverage marks")
        said = (
            f"took away {', '.join(took)}; " if took else ""
        ) + f"restored {', '.join(restored) or 'no rows'}"
        if self.dropped:
            said += f"; removed the label sets it had made, now empty: {', '.join(self.dropped)}"
        return said


def _undone(session: Session) -> set[int]:
    rows = session.scalars(
        select(m.EditLog.after).where(m.EditLog.action == "undo", m.EditLog.entity == "datasets")
    )
    return {int(after["undid"]) for after in rows if after and "undid" in after}


def _making_undone(session: Session, dataset_id: int, keys: set[Key]) -> list[Key]:
    """Those of ``keys`` whose label set was made by a change since undone: the latest change of the
    dataset that logged making it (an import, or an undo of the undo that had taken it away) is undone.
    Its undo left the label set because a later import's rows were in it; once those go, nothing holds
    it there any more."""
    made_by: dict[Key, int] = {}
    entries = session.execute(
        select(m.EditLog.id, m.EditLog.after)
        .where(
            m.EditLog.action.in_(_UNDOABLE),
            m.EditLog.entity == "datasets",
            m.EditLog.entity_id == dataset_id,
        )
        .order_by(m.EditLog.id)
    )
    for log_id, after in entries:
        for made in (after or {}).get("created", []):
            made_by[(made["kind"], made["name"])] = log_id
    undone = _undone(session)
    return sorted(key for key in keys if made_by.get(key) in undone)


def _has_units(entry: m.EditLog) -> bool:
    """Whether the entry changed anything an undo puts back: annotations, ratings or coverage marks."""
    before = entry.before or {}
    return bool(before.get("label_sets") or before.get("ratings") or (entry.after or {}).get("coverage"))


def recent_imports(engine: Engine, limit: int = 20) -> list[ImportEntry]:
    """The latest imports and undos of imports, newest first, with whether each can still be undone."""
    with read_session(engine) as session:
        undone = _undone(session)
        query = (
            select(m.EditLog, m.Dataset.name, m.Annotator.name)
            .outerjoin(m.Dataset, m.Dataset.id == m.EditLog.entity_id)
            .outerjoin(m.Annotator, m.Annotator.id == m.EditLog.annotator_id)
            .where(m.EditLog.action.in_(_UNDOABLE), m.EditLog.entity == "datasets")
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
                marks=sum(
                    len(coverage_items(mark, entry.before or {}))
                    for marks in ((entry.after or {}).get("coverage") or {}).values()
                    for mark in marks
                ),
                removed=dict((entry.after or {}).get("removed") or {}),
                dropped=[f"{d['kind']}:{d['name']}" for d in (entry.after or {}).get("dropped", [])],
                undid=(entry.after or {}).get("undid") if entry.action == "undo" else None,
                marks_moved={
                    what: n
                    for what, logged in (("took away", "removed"), ("put back", "added"))
                    if (
                        n := sum(
                            len(coverage_items(mark, entry.before or {}))
                            for mark in ((entry.after or {}).get("coverage") or {}).get(logged, [])
                        )
                    )
                },
            )
            for entry, dataset, annotator in session.execute(query)
        ]


def undo_import(engine: Engine, log_id: int, annotator: str | None = None, *, actor: Actor) -> UndoResult:
    """Put back what the import (or undo of an import) logged as ``log_id`` replaced, as a new logged
    change that keeps the rows it replaces in turn, so it can be undone as well.

    A label set the entry made goes too once the undo leaves it holding nothing
    (:mod:`db.label_set_drops`); an undo of that undo makes it again.

    Raises :class:`UndoRefused` when there is no such entry, it was undone already, it changed no stored
    annotations, or the rows it wrote changed since, and :class:`~db.access.Forbidden` unless ``actor``
    may manage data (nothing is written then).
    """
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        entry = session.get(m.EditLog, log_id)
        if entry is None or entry.action not in _UNDOABLE or entry.entity != "datasets":
            raise UndoRefused(f"there is no import with log id {log_id}")
        if log_id in _undone(session):
            raise UndoRefused(f"import {log_id} was undone already")
        dataset = session.get(m.Dataset, entry.entity_id) if entry.entity_id is not None else None
        if dataset is None:
            raise UndoRefused(f"the dataset of import {log_id} no longer exists")
        if not _has_units(entry):
            raise UndoRefused(f"import {log_id} changed no annotations: there is nothing to undo")
        before = entry.before or {}
        back = _Back(session, dataset.id, (entry.after or {}).get("digests") or {})
        for unit in before.get("label_sets", []):
            back.label_set(unit)
        for unit in before.get("ratings", []):
            back.ratings(unit)
        if back.changed:
            raise UndoRefused(
                f"import {log_id} cannot be undone: {', '.join(back.changed)} changed since; "
                "undoing would overwrite that newer work"
            )
        taken: Counter[str] = Counter()  # the labels written since, which the undo takes away
        for key, units in back.current.items():
            taken.update(label_counts(LabelSetRecord(key[0], key[1], annotations=units)))
        # An undo of an undo makes again, as they were, the label sets that undo took away.
        was = {(d["kind"], d["name"]): d for d in (entry.after or {}).get("dropped", [])}
        label_sets = [as_made(record, was.get((record.kind, record.name))) for record in back.label_sets]
        # …also one that held nothing to put back but coverage marks (gold of an all-clean file): made
        # here, its marks below find it.
        label_sets += [
            as_made(LabelSetRecord(kind, name), dropped)
            for (kind, name), dropped in was.items()
            if (kind, name) not in {(r.kind, r.name) for r in label_sets}
        ]
        made: set[Key] = set()
        try:
            rows = write_annotations(
                session, dataset, label_sets, back.tasks, back.reach, back.lost_back, created=made
            )
        except ImportRejected as refused:
            raise UndoRefused(
                f"import {log_id} cannot be undone: "
                + "; ".join(f"{p.record} {p.field}: {p.reason}" for p in refused.problems)
            ) from None
        # The coverage marks the entry added go, and those it took away come back.
        logged = (entry.after or {}).get("coverage", {})
        added = {
            (mark["kind"], mark["name"]): set_coverage(
                session, dataset.id, (mark["kind"], mark["name"]), coverage_items(mark, before), covered=True
            )
            for mark in logged.get("removed", [])
        }
        removed = {
            (mark["kind"], mark["name"]): set_coverage(
                session, dataset.id, (mark["kind"], mark["name"]), coverage_items(mark, before), covered=False
            )
            for mark in logged.get("added", [])
        }
        for key in {(kind, name) for _, (_, kind, name, *_) in back.lost_back} & back.items.keys():
            # A judge's unit also got back verdicts its entry did not hold (they went with another label
            # set's triplets in an earlier batch): fingerprinted as written, so the undo can be undone.
            _, back.digests[f"{key[0]}:{key[1]}"] = units_now(
                session, dataset.id, key, back.items[key], back.reach[key]
            )
        # The label sets the entry made go, once nothing is left in them; so do those it emptied whose
        # own making was undone before (a later import's rows kept them then).
        created = [(c["kind"], c["name"]) for c in (entry.after or {}).get("created", [])]
        unmade = _making_undone(session, dataset.id, {(r.kind, r.name) for r in back.label_sets})
        dropped = drop_empty(session, dataset.id, [*created, *unmade])
        source = (entry.after or {}).get("source", "")
        who = actor.id
        if who is None and annotator:
            who = session.scalar(select(m.Annotator.id).where(m.Annotator.name == annotator))
        undo = m.EditLog(
            annotator_id=who,
            action="undo",
            entity="datasets",
            entity_id=dataset.id,
            before=logged_state(
                back.items,
                back.current,
                back.pairs,
                back.current_ratings,
                back.reach,
                back.lost_now,
            ),
            after={
                "undid": log_id,
                "description": f"undid import {log_id} ({source})",
                "source": f"undo of {log_id} ({source})",
                "rows": rows,
                "removed": {kind: taken[kind] for kind in LABEL_KINDS if taken[kind]},
                "digests": back.digests,
                **logged_coverage(added=added, removed=removed),
                **logged_created(made),
                **({"dropped": dropped} if dropped else {}),
            },
        )
        session.add(undo)
        session.flush()
        marks = {
            "took away": sum(len(items) for items in removed.values()),
            "put back": sum(len(items) for items in added.values()),
        }
        return UndoResult(
            undo.id,
            log_id,
            dataset.name,
            rows,
            {what: n for what, n in marks.items() if n},
            {kind: taken[kind] for kind in LABEL_KINDS if taken[kind]},
            [f"{d['kind']}:{d['name']}" for d in dropped],
        )


class _Back:
    """The logged units of one entry: checked against the store, the rows to put back, and what the
    store holds now (which the undo's own log entry keeps)."""

    def __init__(self, session: Session, dataset_id: int, digests: dict[str, str]) -> None:
        self.session, self.dataset_id, self.logged_digests = session, dataset_id, digests
        self.changed: list[str] = []
        self.label_sets: list[LabelSetRecord] = []
        self.tasks: list[tuple[RatingTaskRecord, list[tuple[str, str]]]] = []
        self.items: dict[tuple[str, str], list[str]] = {}
        self.current: dict[tuple[str, str], list[Annotations]] = {}
        # Per label set, the items whose verdicts on other label sets' triplets or statuses the entry
        # replaced, and how far (:mod:`db.record_reach`).
        self.reach: dict[Key, dict[str, Reach]] = {}
        # Verdicts others gave on a label set's triplets that the entry removed with them (put back), and
        # those the undo removes in turn (which its own entry keeps), by the judged label set.
        self.lost_back: list[tuple[Key, LostVerdict]] = []
        self.lost_now: dict[Key, list[LostVerdict]] = {}
        self.pairs: dict[str, list[tuple[str, str]]] = {}
        self.current_ratings: dict[str, list[RatingRecord]] = {}
        self.digests: dict[str, str] = {}

    def label_set(self, unit: dict[str, Any]) -> None:
        key, owner = (unit["kind"], unit["name"]), f"{unit['kind']}:{unit['name']}"
        items: list[str] = unit["items"]
        reach = reach_from_log(unit)
        now, fingerprint = units_now(self.session, self.dataset_id, key, items, reach)
        if fingerprint != self.logged_digests.get(owner):
            self.changed.append(f"label set {owner}")
            return
        old = {a.item: a for a in records_from_dicts(Annotations, unit["annotations"])}
        annotations = [old.get(ext, Annotations(item=ext)) for ext in items]
        self.label_sets.append(LabelSetRecord(kind=key[0], name=key[1], annotations=annotations))
        self.items[key], self.current[key] = items, [now[ext] for ext in items if ext in now]
        self.reach[key] = reach
        self.lost_back += [
            (key, (ext, kind, name, index, verdict, wrong))
            for ext, kind, name, index, verdict, wrong in unit.get("verdicts_lost", [])
        ]
        written = {ext: a.triplets for ext, a in zip(items, annotations, strict=True)}
        self.lost_now[key] = lost_verdicts(self.session, self.dataset_id, key, written)
        self.digests[owner] = digest([annotation_rows(a) for a in annotations])

    def ratings(self, unit: dict[str, Any]) -> None:
        name, owner = unit["task"], f"rating task {unit['task']}"
        pairs = [(rater, ext) for rater, ext in unit["pairs"]]
        now = stored_ratings(self.session, self.dataset_id, name, set(pairs))
        task = self.session.scalar(
            select(m.RatingTask).where(m.RatingTask.dataset_id == self.dataset_id, m.RatingTask.name == name)
        )
        detector = self.session.get(m.LabelSet, task.detector_label_set_id) if task is not None else None
        current = [rating_rows(now.get(pair, [])) for pair in pairs]
        if task is None or detector is None or digest(current) != self.logged_digests.get(owner):
            self.changed.append(owner)
            return
        old = records_from_dicts(RatingRecord, unit["ratings"])
        record = RatingTaskRecord(
            name=task.name,
            detector=detector.name,
            granularity=task.granularity,
            scale_min=task.scale_min,
            scale_max=task.scale_max,
            ratings=old,
        )
        self.tasks.append((record, pairs))
        self.pairs[name] = pairs
        self.current_ratings[name] = [r for pair in pairs for r in now.get(pair, [])]
        by_pair: dict[tuple[str, str], list[RatingRecord]] = {}
        for rating in old:
            by_pair.setdefault((rating.rater, rating.item), []).append(rating)
        self.digests[owner] = digest([rating_rows(by_pair.get(pair, [])) for pair in pairs])
