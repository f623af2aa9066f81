"""An item's history from the append-only edit log, and putting a label set back to an earlier state.

**History.** Every labeling action logs the row it changed with its state before and after (see
:mod:`db.repositories.labeling`), filed under the item (``edit_log.item_id`` is indexed), so an item's
history is one indexed read. Imports do not log row by row: one entry per import keeps, for every label
set and item it rewrote, what was stored before. The imports that wrote a label set's labels on the item
are listed too, so the history says where rows no labeling action created came from.

**State at a log entry.** The label set's rows on the item right after entry ``log_id`` follow from the
log alone, without replaying it from the start: a row (entity, id) that was changed after ``log_id`` was,
at ``log_id``, in the state its *first later entry* found it in — that entry's ``before`` (None: the row
did not exist). A row with no later entry has not changed since, so it is as it is now. Nothing earlier
than ``log_id`` is read, which is why this also holds for rows an import created: they are not logged
one by one, but as long as every change after ``log_id`` was logged, their state at ``log_id`` is their
state now or the ``before`` of their first logged change.

Every kind of entry on a row records the state it found (``before``): create (None), update and delete
(the row), undo (the state the undone action had left: the row, or nothing after a delete), restore
(the row, or None). Undo and restore entries are therefore read like any other change.

**The limit.** An import with replace rewrites a label set's rows on an item without logging each row
(the old rows are deleted, new ones with new ids inserted), and an undo of an import does the same. The
reasoning above breaks across such an entry: the deleted rows have no later row entries, so their
earlier states would be lost, and the inserted rows would seem to have existed all along. A state before
a later import (or undo of an import) that touched the label set on the item is therefore refused
(:class:`RestoreRefused`); states after it are fine. Rows removed without any entry at all (a triplet
judgment deleted with its triplet by a detector's re-import) have no state to put back either.

**Restore.** :func:`restore_state` applies the difference between now and that state as new changes, in
one transaction, each logged with action ``restore``, the row before and after, and a description
"restored to the state of <when>". It checks the acting user's rights in the same transaction (an own
human label set as for labeling, gold needs "adjudicate", detector runs are never written by hand), and
refuses (:class:`~db.repositories.labeling.StaleEdit`) when the label set's rows on the item changed
since the page showed the history. Restored rows that did not exist get new ids.

A restore is not undone by the annotation pages' Undo: ``undo_last`` offers nothing on a row scope whose
latest action is a restore (see :mod:`db.repositories.labeling`). It is taken back the same way it was
made — by restoring the state right before it, which the history lists.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, Select, or_, select
from sqlalchemy.orm import Session

from db import access
from db import models as m
from db.engine import read_session, write_session
from db.repositories.label_sets import LabelSetView
from db.repositories.labeling import (
    _ENTITIES,
    _TASK_ENTITIES,
    StaleEdit,
    _retried,
    _snapshot,
    refuse_held_rating,
    refuse_held_status,
)

__all__ = ["HistoryEntry", "RestoreRefused", "Restored", "item_history", "restore_state", "state_at"]

# The row-level actions of the log (imports and their undos are entries on the dataset).
_ROW_ACTIONS = ("create", "update", "delete", "undo", "restore")
_IMPORTS = ("import", "undo")
SPAN_QUOTE = 40  # characters of a span's text quoted in a description

RowKey = tuple[str, int]  # (entity, entity id)
State = dict[RowKey, dict[str, Any]]  # the rows that exist, with their described columns


class RestoreRefused(ValueError):
    """The earlier state cannot be put back; the message says why."""


@dataclass(frozen=True)
class HistoryEntry:
    """One change on the item: who, when, what (readable), and the row before and after."""

    log_id: int
    at: datetime
    who: str  # the annotator's name, "import" or "command line"
    action: str  # create, update, delete, undo, restore, import
    entity: str  # table name ("datasets" for an import)
    what: str
    label_set_id: int | None
    label_set: str | None  # how the label set is named on screen
    before: dict[str, Any] | None  # the row's described columns before (None: it did not exist)
    after: dict[str, Any] | None


@dataclass(frozen=True)
class Restored:
    """What a restore changed: one logged entry per row, newest last."""

    log_ids: tuple[int, ...]
    descriptions: tuple[str, ...]

    @property
    def changed(self) -> int:
        return len(self.log_ids)


def when(at: datetime) -> str:
    """A log time as the pages show it (stored in UTC; SQLite returns it without a zone)."""
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# ------------------------------------------------------------------------------------- row states


def _row_state(entity: str, logged: dict[str, Any] | None) -> dict[str, Any] | None:
    """The described columns of a logged snapshot, or None where the snapshot says "no row" (a create's
    before, a delete's after, which holds only its description)."""
    if not logged:
        return None
    columns = _ENTITIES[entity][1]
    if not all(c in logged for c in columns):
        return None
    return {c: logged[c] for c in columns}


def _states(entry: m.EditLog) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The row's state before and after a row-level entry."""
    before = _row_state(entry.entity, entry.before)
    if entry.action == "undo":
        return before, _row_state(entry.entity, (entry.after or {}).get("state"))
    return before, _row_state(entry.entity, entry.after)


# ------------------------------------------------------------------------------------- descriptions


@dataclass(frozen=True)
class _Context:
    """What a description names: the item's text, its units' numbers, the rating tasks."""

    response: str
    sentences: dict[int, int]  # sentence id → index
    claims: dict[int, int]
    triplets: dict[int, tuple[int, str]]  # triplet id → (index, "subject relation object")
    tasks: dict[int, str]  # rating task id → name

    def quote(self, start: int, end: int) -> str:
        text = self.response[start:end]
        return f"“{text[:SPAN_QUOTE]}{'…' if len(text) > SPAN_QUOTE else ''}”"


def _context(session: Session, item: m.Item) -> _Context:
    triplets = session.execute(
        select(m.Triplet.id, m.Triplet.index, m.Triplet.subject, m.Triplet.relation, m.Triplet.object).where(
            m.Triplet.item_id == item.id
        )
    )
    return _Context(
        item.response,
        _pairs(session, select(m.Sentence.id, m.Sentence.index).where(m.Sentence.item_id == item.id)),
        _pairs(session, select(m.Claim.id, m.Claim.index).where(m.Claim.item_id == item.id)),
        {t: (k, f"{s} {r} {o}") for t, k, s, r, o in triplets},
        _pairs(
            session,
            select(m.RatingTask.id, m.RatingTask.name).where(m.RatingTask.dataset_id == item.dataset_id),
        ),
    )


def _pairs(session: Session, statement: Select[int, Any]) -> dict[int, Any]:
    return {key: value for key, value in session.execute(statement)}


def _change(old: str, new: str) -> str:
    return f"{old} → {new}"


def _number(found: int | None) -> str:
    return "?" if found is None else str(found + 1)


def describe(
    entity: str, before: dict[str, Any] | None, after: dict[str, Any] | None, context: _Context
) -> str:
    """A change of one row in words: 'sentence 2: correct → incorrect', 'span “red car” added (Attribute)'."""
    row = after or before
    if row is None:
        return f"{entity.replace('_', ' ')}: no change"
    if entity == "spans":
        text, kind = context.quote(row["start"], row["end"]), row["type"] or "untyped"
        if before is None:
            return f"span {text} added ({kind})"
        if after is None:
            return f"span {text} removed ({kind})"
        parts = []
        if (before["start"], before["end"]) != (after["start"], after["end"]):
            parts.append(_change(context.quote(before["start"], before["end"]), text))
        if before["type"] != after["type"]:
            parts.append(_change(before["type"] or "untyped", kind))
        if before["note"] != after["note"]:
            parts.append(_change(f"note {before['note'] or '—'}", after["note"] or "—"))
        return f"span {text}: " + ("; ".join(parts) or "unchanged")
    if entity == "sentence_labels":
        return f"sentence {_number(context.sentences.get(row['sentence_id']))}: " + _change(
            _sentence_label(before), _sentence_label(after)
        )
    if entity == "claim_labels":
        return f"claim {_number(context.claims.get(row['claim_id']))}: " + _change(
            _claim_label(before), _claim_label(after)
        )
    if entity == "triplet_judgments":
        index, words = context.triplets.get(row["triplet_id"], (None, "?"))
        return f"triplet {_number(index)} ({words}): " + _change(_verdict(before), _verdict(after))
    if entity == "item_statuses":
        return f"status on {row['page']}: " + _change(_status(before), _status(after))
    if entity == "ratings":
        where = (
            "the response"
            if row["segment_start"] < 0
            else f"segment {context.quote(row['segment_start'], row['segment_end'])}"
        )
        task = context.tasks.get(row["task_id"], f"task {row['task_id']}")
        return f"{task}: rating of {where}: " + _change(_score(before), _score(after))
    return f"{entity.replace('_', ' ')} changed"


def _sentence_label(state: dict[str, Any] | None) -> str:
    if state is None:
        return "—"
    extra = f" ({state['error_type']})" if state["error_type"] else ""
    return str(state["label"]) + extra + (" (confirmed)" if state["override"] else "")


def _claim_label(state: dict[str, Any] | None) -> str:
    if state is None:
        return "—"
    return str(state["label"]) + (f" ({state['type']})" if state["type"] else "")


def _verdict(state: dict[str, Any] | None) -> str:
    if state is None:
        return "—"
    return (state["verdict"] or "undecided") + (f" ({state['wrong_part']})" if state["wrong_part"] else "")


def _status(state: dict[str, Any] | None) -> str:
    if state is None:
        return "—"
    return str(state["status"]) + (f": {state['note']}" if state["note"] else "")


def _score(state: dict[str, Any] | None) -> str:
    if state is None:
        return "—"
    if state["score"] is not None:
        return f"{state['score']:g}"
    return "nothing flagged, right" if state["nothing_flagged_correct"] else "nothing flagged, wrong"


# ------------------------------------------------------------------------------ whose rows, imports


@dataclass(frozen=True)
class _Owner:
    """A label set, and how the log and the import entries name it."""

    id: int
    kind: str
    name: str
    annotator_id: int | None
    annotator: str | None
    title: str


def _owners(session: Session, dataset_id: int) -> dict[int, _Owner]:
    rows = session.execute(
        select(m.LabelSet, m.Annotator.name)
        .outerjoin(m.Annotator, m.Annotator.id == m.LabelSet.annotator_id)
        .where(m.LabelSet.dataset_id == dataset_id)
    )
    out = {}
    for ls, who in rows:
        view = LabelSetView(
            ls.id, ls.dataset_id, ls.kind, ls.name, who, ls.detector_version, ls.prompt_strategy
        )
        out[ls.id] = _Owner(ls.id, ls.kind, ls.name, ls.annotator_id, who, view.title)
    return out


def _belongs(entry: m.EditLog, owner: _Owner) -> bool:
    """Whether a row-level entry changed a row of the label set (ratings: the annotator's own)."""
    if entry.entity == "ratings":
        if entry.label_set_id == owner.id:
            return True
        if owner.kind != "human" or owner.annotator_id is None:
            return False
        return any(
            (state or {}).get("annotator_id") == owner.annotator_id
            for state in (entry.before, entry.after, (entry.after or {}).get("state"))
        )
    return entry.label_set_id == owner.id


def _imports_touching(
    session: Session, item: m.Item, owners: dict[int, _Owner], after_id: int = 0
) -> list[tuple[m.EditLog, str | None, list[int]]]:
    """Imports (and undos of imports) after ``after_id`` that rewrote labels on the item, each with the
    importing annotator's name and the label sets it touched there. These entries are filed under no
    item; entries without one are few (imports, dataset and rating task edits) and ``item_id IS NULL``
    is served by the item index."""
    by_name = {(o.kind, o.name): o.id for o in owners.values()}
    by_rater = {o.annotator: o.id for o in owners.values() if o.kind == "human" and o.annotator}
    entries = session.execute(
        select(m.EditLog, m.Annotator.name)
        .outerjoin(m.Annotator, m.Annotator.id == m.EditLog.annotator_id)
        .where(
            m.EditLog.item_id.is_(None),
            m.EditLog.entity == "datasets",
            m.EditLog.entity_id == item.dataset_id,
            m.EditLog.action.in_(_IMPORTS),
            m.EditLog.id > after_id,
        )
        .order_by(m.EditLog.id)
    )
    out: list[tuple[m.EditLog, str | None, list[int]]] = []
    for entry, who in entries:
        before = entry.before or {}
        touched = [
            by_name[(unit["kind"], unit["name"])]
            for unit in before.get("label_sets", [])
            if item.external_id in unit.get("items", ()) and (unit["kind"], unit["name"]) in by_name
        ]
        for unit in before.get("ratings", []):
            for rater, ext in unit.get("pairs", []):
                found = by_rater.get(rater)
                if ext == item.external_id and found is not None and found not in touched:
                    touched.append(found)
        if touched:
            out.append((entry, who, touched))
    return out


# ------------------------------------------------------------------------------------------ history


def item_history(
    engine: Engine, item_id: int, *, label_set_ids: Iterable[int] | None = None
) -> list[HistoryEntry]:
    """Every change on the item, newest first: labeling actions, undos, restores, and the imports that
    wrote labels there. ``label_set_ids`` keeps only those label sets' changes (ratings count as the
    rater's own label set's); None keeps everything, ratings filed under no label set included."""
    wanted = None if label_set_ids is None else set(label_set_ids)
    with read_session(engine) as session:
        item = session.get(m.Item, item_id)
        if item is None:
            raise LookupError(f"There is no item with id {item_id}.")
        owners = _owners(session, item.dataset_id)
        context = _context(session, item)
        query = (
            select(m.EditLog, m.Annotator.name)
            .outerjoin(m.Annotator, m.Annotator.id == m.EditLog.annotator_id)
            .where(
                m.EditLog.item_id == item_id,
                m.EditLog.action.in_(_ROW_ACTIONS),
                m.EditLog.entity.in_(list(_ENTITIES)),
            )
        )
        out: list[HistoryEntry] = []
        for entry, who in session.execute(query):
            owner = _owner_of(entry, owners)
            if wanted is not None and (owner is None or owner.id not in wanted):
                continue
            before, after = _states(entry)
            what = describe(entry.entity, before, after, context)
            if entry.action == "restore":
                what += f" (restored to the state of {(entry.after or {}).get('restored_at', '?')})"
            elif (entry.after or {}).get("automatic"):
                what += " (automatic)"
            out.append(
                HistoryEntry(
                    entry.id,
                    entry.at,
                    who or "command line",
                    entry.action,
                    entry.entity,
                    what,
                    owner.id if owner else None,
                    owner.title if owner else None,
                    before,
                    after,
                )
            )
        for entry, importer, touched in _imports_touching(session, item, owners):
            origin = (entry.after or {}).get("source") or "a file"
            verb = "undid an import" if entry.action == "undo" else f"imported from {origin}"
            for ls_id in touched:
                if wanted is not None and ls_id not in wanted:
                    continue
                out.append(
                    HistoryEntry(
                        entry.id,
                        entry.at,
                        importer or "import",
                        "import",
                        entry.entity,
                        f"{verb}: rewrote this label set's labels on the item",
                        ls_id,
                        owners[ls_id].title,
                        None,
                        None,
                    )
                )
    return sorted(out, key=lambda e: (e.log_id, e.label_set_id or 0), reverse=True)


def _owner_of(entry: m.EditLog, owners: dict[int, _Owner]) -> _Owner | None:
    if entry.label_set_id is not None and entry.label_set_id in owners:
        return owners[entry.label_set_id]
    if entry.entity == "ratings":
        return next((o for o in owners.values() if _belongs(entry, o)), None)
    return None


# ------------------------------------------------------------------------------------ state at


def _current_rows(session: Session, owner: _Owner, item_id: int, *, lock: bool) -> dict[RowKey, Any]:
    """The label set's rows on the item now (ratings: its annotator's), locked for a restore."""
    out: dict[RowKey, Any] = {}
    for entity, (model, _columns) in _ENTITIES.items():
        query: Select[Any]
        if entity == "ratings":
            if owner.kind != "human" or owner.annotator_id is None:
                continue
            query = select(m.Rating).where(
                m.Rating.item_id == item_id, m.Rating.annotator_id == owner.annotator_id
            )
        else:
            query = select(model).where(
                model.label_set_id == owner.id,  # type: ignore[attr-defined]  # every non-rating entity has it
                model.item_id == item_id,  # type: ignore[attr-defined]
            )
        rows: Iterable[Any] = session.scalars(query.with_for_update() if lock else query)
        for row in rows:
            out[(entity, row.id)] = row
    return out


def _later_entries(session: Session, owner: _Owner, item_id: int, log_id: int) -> list[m.EditLog]:
    """The label set's row-level entries on the item after ``log_id``, oldest first."""
    entries = session.scalars(
        select(m.EditLog)
        .where(
            m.EditLog.item_id == item_id,
            m.EditLog.id > log_id,
            m.EditLog.action.in_(_ROW_ACTIONS),
            m.EditLog.entity.in_(list(_ENTITIES)),
            or_(m.EditLog.label_set_id == owner.id, m.EditLog.entity == "ratings"),
        )
        .order_by(m.EditLog.id)
    )
    return [e for e in entries if _belongs(e, owner)]


def _target(session: Session, owner: _Owner, item: m.Item, log_id: int, current: dict[RowKey, Any]) -> State:
    anchor = session.get(m.EditLog, log_id)
    if anchor is None:
        raise RestoreRefused(f"There is no log entry {log_id}.")
    imports = _imports_touching(session, item, {owner.id: owner}, after_id=log_id)
    if imports:
        entry, _who, _touched = imports[-1]
        source = (entry.after or {}).get("source") or "a file"
        raise RestoreRefused(
            f"{owner.title}'s labels on this item were rewritten by an import ({source}, {when(entry.at)}) "
            "after that change. The log does not keep the rows an import replaced one by one, so states "
            "before an import cannot be restored; choose a change after it."
        )
    state: State = {key: _snapshot(row, key[0]) for key, row in current.items()}
    seen: set[RowKey] = set()
    for entry in _later_entries(session, owner, item.id, log_id):
        key = (entry.entity, entry.entity_id or 0)
        if key in seen:
            continue
        seen.add(key)
        before, _after = _states(entry)
        if before is None:
            state.pop(key, None)
        else:
            state[key] = before
    return state


def _owner(session: Session, label_set_id: int) -> _Owner:
    label_set = session.get(m.LabelSet, label_set_id)
    if label_set is None:
        raise LookupError(f"There is no label set with id {label_set_id}.")
    return _owners(session, label_set.dataset_id)[label_set_id]


def state_at(engine: Engine, label_set_id: int, item_id: int, log_id: int) -> State:
    """The label set's rows on the item as they were right after log entry ``log_id``:
    ``{(entity, id): columns}`` of the rows that existed (see the module doc for why this is right, and
    its limit: :class:`RestoreRefused` across a later import that touched the label set on the item)."""
    with read_session(engine) as session:
        owner = _owner(session, label_set_id)
        item = session.get_one(m.Item, item_id)
        return _target(session, owner, item, log_id, _current_rows(session, owner, item_id, lock=False))


def latest_change(engine: Engine, label_set_id: int, item_id: int) -> int:
    """The newest log entry that changed the label set's rows on the item (0: none): what a page that
    shows the history passes back to :func:`restore_state`."""
    with read_session(engine) as session:
        owner = _owner(session, label_set_id)
        return _latest(session, owner, session.get_one(m.Item, item_id))


def _latest(session: Session, owner: _Owner, item: m.Item) -> int:
    rows = _later_entries(session, owner, item.id, 0)
    imports = _imports_touching(session, item, {owner.id: owner})
    return max([e.id for e in rows] + [e.id for e, _w, _t in imports], default=0)


# ------------------------------------------------------------------------------------------ restore


def _task(entity: str, state: dict[str, Any]) -> str:
    """The assignment task a row belongs to (item statuses: their page; "rating:<id>" is ratings)."""
    if entity == "item_statuses":
        page = str(state["page"])
        return "ratings" if page.startswith("rating") else page
    return _TASK_ENTITIES.get(entity, "ratings")


def _check_rights(
    session: Session, owner: _Owner, item_id: int, annotator_id: int | None, tasks: set[str]
) -> None:
    if owner.kind == "gold":
        access.require_in(session, annotator_id, "adjudicate")
        return
    if owner.kind != "human":
        raise access.Forbidden(f"{owner.title}'s labels come from its run; they are not restored by hand.")
    if not tasks:  # nothing differs, nothing is written: only the right to label is asked
        access.require_in(session, annotator_id, "label")
    for task in sorted(tasks):
        access.check_label_write(session, annotator_id, owner.id, item_id, task)


def _check_parent(session: Session, entity: str, state: dict[str, Any]) -> None:
    """A row to re-create must still have what it labels (a re-import may have replaced it)."""
    parents = {
        "sentence_labels": (m.Sentence, "sentence_id", "sentence"),
        "claim_labels": (m.Claim, "claim_id", "claim"),
        "triplet_judgments": (m.Triplet, "triplet_id", "triplet"),
        "ratings": (m.RatingTask, "task_id", "rating task"),
    }
    if entity in parents:
        model, column, what = parents[entity]
        if session.get(model, state[column]) is None:
            raise RestoreRefused(
                f"The {what} that label belonged to no longer exists; it cannot be restored."
            )


@_retried
def restore_state(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    log_id: int,
    *,
    annotator_id: int | None,
    expected_latest: int,
) -> Restored:
    """Put the label set's rows on the item back as they were right after log entry ``log_id``.

    Every row that differs is changed as a new entry (action ``restore``) in one transaction. Refuses
    with :class:`~db.access.Forbidden` without the right, :class:`StaleEdit` when the label set's rows on
    the item changed after ``expected_latest`` (the newest change the page showed, see
    :func:`latest_change`), and :class:`RestoreRefused` across a later import. Nothing is written then.
    """
    with write_session(engine) as session:
        owner = _owner(session, label_set_id)
        item = session.get_one(m.Item, item_id)
        current = _current_rows(session, owner, item_id, lock=True)
        if _latest(session, owner, item) != expected_latest:
            raise StaleEdit(f"{owner.title}'s labels on this item changed meanwhile — reload the item.")
        target = _target(session, owner, item, log_id, current)
        anchor = session.get_one(m.EditLog, log_id)
        stamp = when(anchor.at)
        now = {key: _snapshot(row, key[0]) for key, row in current.items()}
        removed = [key for key in now if key not in target]
        changed = [key for key in now if key in target and target[key] != now[key]]
        added = [key for key in target if key not in now]
        tasks = {_task(key[0], now.get(key) or target[key]) for key in [*removed, *changed, *added]}
        _check_rights(session, owner, item_id, annotator_id, tasks)
        for key in [*removed, *changed, *added]:
            if key[0] == "item_statuses":
                page = str((now.get(key) or target[key])["page"])
                refuse_held_status(session, annotator_id, item_id, page, "restored to an earlier status")
            elif key[0] == "ratings":
                refuse_held_rating(session, annotator_id, item_id, "restored to an earlier state")
        context = _context(session, item)
        log_ids: list[int] = []
        descriptions: list[str] = []

        def log(entity: str, row: Any, before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
            change = describe(entity, before, after, context)
            entry = m.EditLog(
                annotator_id=annotator_id,
                action="restore",
                entity=entity,
                entity_id=row.id,
                item_id=item_id,
                label_set_id=owner.id,
                before=before,
                after={
                    **(after or {}),
                    **({"version": row.version} if after is not None else {}),
                    "description": f"restored to the state of {stamp}: {change}",
                    "restored_to": log_id,
                    "restored_at": stamp,
                },
            )
            session.add(entry)
            session.flush()
            log_ids.append(entry.id)
            descriptions.append(change)

        # Removals first, so a re-created label never meets the unit's newer row on a unique key.
        for key in removed:
            row = current[key]
            log(key[0], row, now[key], None)
            session.delete(row)
        session.flush()
        for key in changed:
            row = current[key]
            for column, value in target[key].items():
                setattr(row, column, value)
            session.flush()
            log(key[0], row, now[key], _snapshot(row, key[0]))
        for key in added:
            _check_parent(session, key[0], target[key])
            model = _ENTITIES[key[0]][0]
            row = model(**target[key])
            session.add(row)
            session.flush()
            log(key[0], row, None, _snapshot(row, key[0]))
        return Restored(tuple(log_ids), tuple(descriptions))
