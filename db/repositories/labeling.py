"""Annotators' actions: each one its own transaction, logged with before/after, undoable.

Every function here is one user action (add a span, label a sentence, judge a triplet ...). It commits
immediately (there is no Save button to forget), appends an :class:`~db.models.EditLog` entry with the
row before and after, and checks the row's version so a colleague's newer edit is never overwritten
silently (:class:`StaleEdit`): a page passes the version it showed, or :data:`ABSENT` for a label it
showed as not given yet. :func:`undo_last` reverts the annotator's latest action on one item and task
that is not undone yet, by appending an ``undo`` entry: the log itself is never rewritten. When that
latest action is a restore of an earlier state (:mod:`db.repositories.history`), nothing is offered: a
restore may change many rows at once and is taken back by restoring the state before it, from the
item's history; the actions before it are not offered either, as the restore changed their rows since.

Rights: every action checks, inside its own transaction and before it writes, that the acting
annotator (``annotator_id``) may write this label set on this item for this task
(:func:`db.access.check_label_write`): their own human label set only — gold and detector runs are
never written by hand — and in team mode, for an annotator, only items assigned to them. A refusal
raises :class:`~db.access.Forbidden` and writes nothing.

Concurrency: the row an action changes is locked (``SELECT … FOR UPDATE`` on PostgreSQL; SQLite
serializes writers anyway), so the version check and the log entry see the row as it is, and one row's
log entries follow its commits in order. The first label of a unit is inserted with
``INSERT … ON CONFLICT DO NOTHING``, so two writers racing to create it never collide. A conflict the
store still reports (a lock timeout, a deadlock, a row changed under an unlocked read) is retried a few
times and then becomes a clear :class:`StaleEdit` or :class:`StoreBusy`, never a raw database error.
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from db import models as m
from db.access import Forbidden, RatingHeldBack, check_label_write, require_in
from db.column_lengths import refuse_too_long
from db.engine import StoreBusy, read_session, upsert_insert, write_session
from db.repositories.annotations import response_scale
from db.repositories.datasets import settings_in
from db.repositories.queue import (
    assignment_task,
    held_back_reason,
    open_labeling_on,
    rating_campaign_queue,
)
from db.repositories.visibility import detectors_wait_for_labels
from db.value_check import refuse_unstorable_text
from formats.fields import type_name
from formats.problems import quoted
from formats.records import RESPONSE_SCALE
from formats.word_spans import snap_to_words

__all__ = ["ABSENT", "RESPONSE_SCORES", "Action", "Forbidden", "InconsistentLabel", "StaleEdit", "StoreBusy"]

# ``expected_version`` for a label the page showed as not given yet: saving refuses if one exists now.
ABSENT = 0
_ATTEMPTS = 4

# The annotation task (page queue) of scoring whole responses, and the team task it is assigned under.
RESPONSE_SCORES = "response_scores"
_RATINGS_TASK = "ratings"

# Annotation tables an annotator edits, and the columns that describe a row (for the log and undo).
_ENTITIES: dict[str, tuple[type[m.Base], tuple[str, ...]]] = {
    "spans": (m.Span, ("label_set_id", "item_id", "start", "end", "type", "note")),
    "sentence_labels": (
        m.SentenceLabel,
        ("label_set_id", "sentence_id", "item_id", "label", "error_type", "override"),
    ),
    "claim_labels": (m.ClaimLabel, ("label_set_id", "claim_id", "item_id", "label", "type", "reason")),
    "triplet_judgments": (
        m.TripletJudgment,
        ("label_set_id", "triplet_id", "item_id", "verdict", "wrong_part"),
    ),
    "item_statuses": (m.ItemStatus, ("label_set_id", "item_id", "page", "status", "note")),
    "response_scores": (
        m.ResponseScore,
        ("label_set_id", "item_id", "score", "scale_min", "scale_max", "hallucination", "rationale"),
    ),
    "ratings": (
        m.Rating,
        (
            "task_id",
            "item_id",
            "annotator_id",
            "segment_start",
            "segment_end",
            "score",
            "nothing_flagged_correct",
        ),
    ),
}


# The annotation task (the page's queue) each entity belongs to, for undo; item statuses and ratings
# carry their task in the row (``page``, ``task_id``).
_TASK_ENTITIES = {
    "spans": "spans",
    "sentence_labels": "sentences",
    "claim_labels": "claims",
    "triplet_judgments": "triplets",
    "response_scores": RESPONSE_SCORES,
}

P = ParamSpec("P")
T = TypeVar("T")


class StaleEdit(Exception):
    """The row changed (or vanished) since the annotator loaded it; reload before editing again."""


def _row_name(entity: str) -> str:
    """One row of a table, in words: "sentence label" of ``sentence_labels``, "item status" of
    ``item_statuses`` (not "item statuse")."""
    words = entity.replace("_", " ")
    return words[:-2] if words.endswith("uses") else words[:-1]


def _removed_by(session: Session, entity: str, keys: dict[str, Any], annotator_id: int | None) -> bool:
    """Whether the last logged change to the label set's rows of ``entity`` on the item (``keys``) is
    the annotator's own: a row their other tab took away (an import's removal logs no row)."""
    if annotator_id is None or keys.get("item_id") is None or keys.get("label_set_id") is None:
        return False
    last = session.execute(
        select(m.EditLog.id, m.EditLog.annotator_id)
        .where(
            m.EditLog.entity == entity,
            m.EditLog.label_set_id == keys["label_set_id"],
            m.EditLog.item_id == keys["item_id"],
        )
        .order_by(m.EditLog.id.desc())
        .limit(1)
    ).first()
    latest_import = session.scalar(
        select(func.max(m.EditLog.id)).where(
            m.EditLog.entity == "datasets", m.EditLog.action.in_(("import", "undo"))
        )
    )
    return last is not None and last[1] == annotator_id and last[0] > (latest_import or 0)


def _changed_meanwhile(what: str, by_you: bool = False) -> StaleEdit:
    who = "by you in another tab or window" if by_you else "by someone else"
    return StaleEdit(f"The {what} was changed {who} meanwhile — reload the item.")


def _changed_by(session: Session, entity: str, row: m.Base, annotator_id: int | None) -> bool:
    """Whether the row is as the annotator's own last logged change left it (a second tab of theirs):
    the refusal then says so, not "someone else". An import writes no per-row entries, and may give a
    replaced row's id to another row, so the row's content must match that change too."""
    row_id: int = row.id  # type: ignore[attr-defined]  # _ENTITIES models have id, version
    last = session.scalar(
        select(m.EditLog)
        .where(
            m.EditLog.entity == entity,
            m.EditLog.entity_id == row_id,
            m.EditLog.action.in_(("create", "update")),
        )
        .order_by(m.EditLog.id.desc())
        .limit(1)
    )
    return (
        annotator_id is not None
        and last is not None
        and last.annotator_id == annotator_id
        and _as_left(session, last, row)
    )


class InconsistentLabel(ValueError):
    """A sentence holding a hallucinated span cannot be labeled correct without an explicit override."""


@dataclass(frozen=True)
class Action:
    """What an action did, for the page's "saved" message and for undo."""

    log_id: int
    entity: str
    entity_id: int | None  # as the edit log holds it (nullable there)
    action: str
    description: str
    item: str | None = None  # the item's external id, where the page names it (undo)


def _retried(action: Callable[P, T]) -> Callable[P, T]:
    """Run a write action again when the store reports a passing conflict, then give a clear refusal."""

    @functools.wraps(action)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        for attempt in range(_ATTEMPTS):
            try:
                return action(*args, **kwargs)
            except (OperationalError, IntegrityError, StaleDataError) as error:
                failure: Exception = error
                time.sleep(random.uniform(0, 0.01 * (attempt + 1)))
        if isinstance(failure, IntegrityError | StaleDataError):
            raise _changed_meanwhile("label") from failure
        raise StoreBusy("The store is busy and did not save this; try again in a moment.") from failure

    return run


def _snapshot(row: m.Base, entity: str) -> dict[str, Any]:
    return {name: getattr(row, name) for name in _ENTITIES[entity][1]}


# A triplet's wrong part as the judging page names it (the triplet is shown subject · relation · object);
# stored as Tri-HE's object1 / relation / object2.
TRIPLET_PART_NAMES = {"object1": "Subject", "relation": "Relation", "object2": "Object"}
QUOTE_CHARS = 40  # how much of a span's text a receipt quotes


def _quoted(text: str, start: int, end: int) -> str:
    """``text[start:end]`` quoted for a receipt, cut at :data:`QUOTE_CHARS` characters."""
    part = text[start:end]
    return f"“{part[:QUOTE_CHARS]}{'…' if len(part) > QUOTE_CHARS else ''}”"


def _span_text(session: Session, row: m.Span) -> str:
    """The stored span's text, quoted: receipts name a span by what it marks, never by offsets."""
    return _quoted(session.get_one(m.Item, row.item_id).response, row.start, row.end)


def _log(
    session: Session,
    *,
    annotator_id: int | None,
    action: str,
    entity: str,
    row: m.Base,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    description: str,
    label_set_id: int | None = None,
) -> Action:
    entry = m.EditLog(
        annotator_id=annotator_id,
        action=action,
        entity=entity,
        entity_id=row.id,  # type: ignore[attr-defined]  # _ENTITIES models have id, version
        item_id=getattr(row, "item_id", None),
        label_set_id=label_set_id if label_set_id is not None else getattr(row, "label_set_id", None),
        before=before,
        # The row's version after the action: undo reverts only a row nobody has changed since.
        after={
            **(after or {}),
            **({"version": row.version} if after is not None else {}),  # type: ignore[attr-defined]  # _ENTITIES models have id, version
            "description": description,
        },
    )
    session.add(entry)
    session.flush()
    return Action(entry.id, entity, row.id, action, description)  # type: ignore[attr-defined]  # _ENTITIES models have id, version


def _check_version(
    session: Session, row: m.Base | None, expected: int | None, entity: str, annotator_id: int
) -> None:
    what = _row_name(entity)
    if row is None:
        raise StaleEdit(f"The {what} no longer exists; it was removed meanwhile — reload the item.")
    if expected is not None and row.version != expected:  # type: ignore[attr-defined]  # _ENTITIES models have id, version
        raise _changed_meanwhile(what, _changed_by(session, entity, row, annotator_id))


def _guard(
    session: Session, annotator_id: int | None, label_set_id: int | None, item_id: int, task: str
) -> None:
    """Refuse (:class:`Forbidden`) unless the actor may write this label set on this item for this
    task; refuse (ValueError) a label set of another dataset than the item's."""
    check_label_write(session, annotator_id, label_set_id, item_id, task)
    if label_set_id is None:
        return
    label_set = session.get_one(m.LabelSet, label_set_id)
    item_dataset = session.scalar(select(m.Item.dataset_id).where(m.Item.id == item_id))
    if item_dataset is not None and item_dataset != label_set.dataset_id:
        raise ValueError(f"{quoted(label_set.name)}'s labels belong to another dataset than item {item_id}.")


def _locked(session: Session, model: type[m.Base], lookup: dict[str, Any]) -> Any:
    """The row with these key values, locked until the transaction ends (None if there is none)."""
    where = (getattr(model, k) == v for k, v in lookup.items())
    return session.scalar(select(model).where(*where).with_for_update())


def _insert_new(session: Session, model: type[m.Base], values: dict[str, Any], keys: list[str]) -> int | None:
    """Insert a row unless one with the same ``keys`` exists (or is being inserted); its id, or None."""
    statement = (
        upsert_insert(session, model)
        .values(**values)
        .on_conflict_do_nothing(index_elements=keys)
        .returning(model.id)  # type: ignore[attr-defined]  # _ENTITIES models have id, version
    )
    return session.execute(statement).scalar()


def _upsert(
    session: Session,
    entity: str,
    lookup: dict[str, Any],
    values: dict[str, Any],
    *,
    annotator_id: int | None,
    expected_version: int | None,
    description: str,
    log_label_set_id: int | None = None,
) -> Action:
    model = _ENTITIES[entity][0]
    what = _row_name(entity)
    row = _locked(session, model, lookup)
    if row is None:
        if expected_version not in (None, ABSENT):
            mine = _removed_by(session, entity, {**values, **lookup}, annotator_id)
            who = "by you in another tab or window" if mine else "by someone else"
            raise StaleEdit(f"The {what} was removed {who} meanwhile — reload the item.")
        new_id = _insert_new(session, model, {**lookup, **values}, list(lookup))
        if new_id is not None:
            row = session.get_one(model, new_id)
            return _log(
                session,
                annotator_id=annotator_id,
                action="create",
                entity=entity,
                row=row,
                before=None,
                after=_snapshot(row, entity),
                description=description,
                label_set_id=log_label_set_id,
            )
        row = _locked(session, model, lookup)  # someone created it a moment ago
        if row is None:
            raise _changed_meanwhile(what)
    if expected_version is not None and row.version != expected_version:
        raise _changed_meanwhile(what, _changed_by(session, entity, row, annotator_id))
    before = _snapshot(row, entity)
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    return _log(
        session,
        annotator_id=annotator_id,
        action="update",
        entity=entity,
        row=row,
        before=before,
        after=_snapshot(row, entity),
        description=description,
        label_set_id=log_label_set_id,
    )


# ----------------------------------------------------------------------------------------------- spans


def _check_type(type_: object) -> None:
    """Refuse a span type that is not text, or text no store can keep (it comes in a request)."""
    if type_ is not None and not isinstance(type_, str):
        raise ValueError(f"A span's type must be text; got {type_name(type_)}.")
    refuse_unstorable_text(type_, "type")
    refuse_too_long(type_, m.Span.type, "type")


@_retried
def add_span(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    start: int,
    end: int,
    type_: str | None,
    annotator_id: int,
) -> Action:
    """Mark ``response[start:end]`` of the item as hallucinated (offsets in code points).

    Unless the dataset's settings allow character precision, the span is stored snapped to the whole
    words it touches (:func:`formats.word_spans.snap_to_words`): the selector snaps already, and a
    request that did not cannot store half a word either. The page offers only the dataset's types, but
    a type comes in a request, so it is checked as typed text, and the offsets as whole numbers. The
    same words marked twice in one label set are refused (:class:`StaleEdit`): a second tab that had not
    seen the first mark would otherwise store it again.
    """
    if not all(type(offset) is int for offset in (start, end)):
        raise ValueError(
            f"A span's offsets must be whole numbers; got {type_name(start)} and {type_name(end)}."
        )
    _check_type(type_)
    with write_session(engine) as session:
        _guard(session, annotator_id, label_set_id, item_id, "spans")
        item = session.get_one(m.Item, item_id, with_for_update=True)  # one span add per item at a time
        if not 0 <= start < end <= len(item.response):
            raise ValueError(
                f"A span must lie inside the response (0-{len(item.response)}); got {start}-{end}."
            )
        if not settings_in(session, item.dataset_id).char_precision:
            words = snap_to_words(item.response, start, end)
            if words is None:
                raise ValueError(f"The span {start}-{end} holds no word, only white space.")
            start, end = words
        if session.scalar(
            select(m.Span.id).where(
                m.Span.label_set_id == label_set_id,
                m.Span.item_id == item_id,
                m.Span.start == start,
                m.Span.end == end,
            )
        ):
            # Another tab (or session) marked these words a moment ago; this page has not seen it.
            raise StaleEdit(
                f"{_quoted(item.response, start, end)} is marked already (in another tab or session) — "
                "reload the item."
            )
        row = m.Span(label_set_id=label_set_id, item_id=item_id, start=start, end=end, type=type_)
        session.add(row)
        session.flush()
        return _log(
            session,
            annotator_id=annotator_id,
            action="create",
            entity="spans",
            row=row,
            before=None,
            after=_snapshot(row, "spans"),
            description=f"added span {_quoted(item.response, start, end)} ({type_ or 'untyped'})",
        )


@_retried
def retype_span(
    engine: Engine, span_id: int, type_: str | None, annotator_id: int, expected_version: int | None = None
) -> Action:
    _check_type(type_)
    with write_session(engine) as session:
        row = session.get(m.Span, span_id, with_for_update=True)
        if row is not None:
            _guard(session, annotator_id, row.label_set_id, row.item_id, "spans")
        _check_version(session, row, expected_version, "spans", annotator_id)
        assert row is not None
        before = _snapshot(row, "spans")
        row.type = type_
        session.flush()
        return _log(
            session,
            annotator_id=annotator_id,
            action="update",
            entity="spans",
            row=row,
            before=before,
            after=_snapshot(row, "spans"),
            description=f"retyped span {_span_text(session, row)} ({before['type'] or 'untyped'} → {type_ or 'untyped'})",
        )


@_retried
def delete_span(
    engine: Engine, span_id: int, annotator_id: int, expected_version: int | None = None
) -> Action:
    with write_session(engine) as session:
        row = session.get(m.Span, span_id, with_for_update=True)
        if row is not None:
            _guard(session, annotator_id, row.label_set_id, row.item_id, "spans")
        _check_version(session, row, expected_version, "spans", annotator_id)
        assert row is not None
        before = _snapshot(row, "spans")
        action = _log(
            session,
            annotator_id=annotator_id,
            action="delete",
            entity="spans",
            row=row,
            before=before,
            after=None,
            description=f"deleted span {_span_text(session, row)} ({row.type or 'untyped'})",
        )
        session.delete(row)
        return action


# ------------------------------------------------------------------------------------- sentence labels


def spans_in_sentence(session: Session, label_set_ids: list[int], sentence: m.Sentence) -> list[m.Span]:
    """Spans of these label sets that overlap the sentence."""
    return list(
        session.scalars(
            select(m.Span).where(
                m.Span.item_id == sentence.item_id,
                m.Span.label_set_id.in_(label_set_ids),
                m.Span.start < sentence.end,
                m.Span.end > sentence.start,
            )
        )
    )


@_retried
def set_sentence_label(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    sentence_index: int,
    label: str,
    annotator_id: int,
    *,
    error_type: str | None = None,
    override: bool = False,
    expected_version: int | None = None,
) -> Action:
    """Label one sentence correct / incorrect / unknown.

    Raises :class:`InconsistentLabel` when ``label`` is "correct" but one of this label set's spans lies
    in the sentence, unless ``override`` says the annotator confirmed it.
    """
    if label not in m.SENTENCE_LABELS:
        raise ValueError(f"{quoted(str(label))} is not one of {', '.join(m.SENTENCE_LABELS)}.")
    refuse_unstorable_text(error_type, "error type")
    refuse_too_long(error_type, m.SentenceLabel.error_type, "error type")
    with write_session(engine) as session:
        _guard(session, annotator_id, label_set_id, item_id, "sentences")
        sentence = session.scalar(
            select(m.Sentence).where(m.Sentence.item_id == item_id, m.Sentence.index == sentence_index)
        )
        if sentence is None:
            raise ValueError(f"Item {item_id} has no sentence {sentence_index}.")
        if label == "correct" and not override:
            inside = spans_in_sentence(session, [label_set_id], sentence)
            if inside:
                item = session.get_one(m.Item, item_id)
                spans = ", ".join(f"“{item.response[s.start : s.end]}”" for s in inside[:3])
                raise InconsistentLabel(
                    f"Sentence {sentence_index + 1} contains hallucinated span(s) {spans}; "
                    "remove the span(s) or confirm that the sentence is correct anyway."
                )
        return _upsert(
            session,
            "sentence_labels",
            {"label_set_id": label_set_id, "sentence_id": sentence.id},
            {
                "item_id": item_id,
                "label": label,
                "error_type": error_type if label == "incorrect" else None,
                "override": override and label == "correct",
            },
            annotator_id=annotator_id,
            expected_version=expected_version,
            description=f"sentence {sentence_index + 1} → {label}"
            + (f" ({error_type})" if error_type else ""),
        )


# ------------------------------------------------------------------------------ claims and triplets


@_retried
def set_claim_label(
    engine: Engine,
    label_set_id: int,
    claim_id: int,
    label: str,
    annotator_id: int,
    *,
    type_: str | None = None,
    reason: str | None = None,
    expected_version: int | None = None,
) -> Action:
    if label not in m.CLAIM_LABELS:
        raise ValueError(f"{quoted(str(label))} is not one of {', '.join(m.CLAIM_LABELS)}.")
    refuse_unstorable_text(type_, "type")
    refuse_too_long(type_, m.ClaimLabel.type, "type")
    refuse_unstorable_text(reason, "reason")
    with write_session(engine) as session:
        claim = session.get_one(m.Claim, claim_id)
        _guard(session, annotator_id, label_set_id, claim.item_id, "claims")
        return _upsert(
            session,
            "claim_labels",
            {"label_set_id": label_set_id, "claim_id": claim_id},
            {"item_id": claim.item_id, "label": label, "type": type_, "reason": (reason or None)},
            annotator_id=annotator_id,
            expected_version=expected_version,
            description=f"claim {claim.index + 1} → {label}" + (f" ({type_})" if type_ else ""),
        )


@_retried
def set_triplet_judgment(
    engine: Engine,
    label_set_id: int,
    triplet_id: int,
    verdict: str,
    annotator_id: int,
    *,
    wrong_part: str | None = None,
    expected_version: int | None = None,
) -> Action:
    if verdict not in m.TRIPLET_VERDICTS:
        raise ValueError(f"{quoted(str(verdict))} is not yes or no.")
    if wrong_part is not None and wrong_part not in m.TRIPLET_WRONG_PARTS:
        raise ValueError(f"{quoted(str(wrong_part))} is not one of {', '.join(m.TRIPLET_WRONG_PARTS)}.")
    with write_session(engine) as session:
        triplet = session.get_one(m.Triplet, triplet_id)
        _guard(session, annotator_id, label_set_id, triplet.item_id, "triplets")
        return _upsert(
            session,
            "triplet_judgments",
            {"label_set_id": label_set_id, "triplet_id": triplet_id},
            {
                "item_id": triplet.item_id,
                "verdict": verdict,
                "wrong_part": wrong_part if verdict == "no" else None,
            },
            annotator_id=annotator_id,
            expected_version=expected_version,
            description=f"triplet {triplet.index + 1} → {verdict}"
            + (f" (wrong part: {TRIPLET_PART_NAMES[wrong_part]})" if wrong_part else ""),
        )


# ----------------------------------------------------------------------------------- item status


@_retried
def set_item_status(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    page: str,
    status: str,
    annotator_id: int,
    *,
    note: str | None = None,
    expected_version: int | None = None,
) -> Action:
    """Mark an item done, skipped or unsure (with a note) for one annotation task."""
    if status not in m.ITEM_STATUSES:
        raise ValueError(f"{quoted(str(status))} is not one of {', '.join(m.ITEM_STATUSES)}.")
    refuse_unstorable_text(note, "note")
    with write_session(engine) as session:
        _guard(session, annotator_id, label_set_id, item_id, assignment_task(page))
        refuse_held_status(session, annotator_id, item_id, page, f"marked {status}")
        return _upsert(
            session,
            "item_statuses",
            {"label_set_id": label_set_id, "item_id": item_id, "page": page},
            {"status": status, "note": (note or None)},
            annotator_id=annotator_id,
            expected_version=expected_version,
            description=f"item marked {status}" + (f": {note}" if note else ""),
        )


@_retried
def clear_item_status(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    page: str,
    annotator_id: int,
    *,
    expected_version: int | None = None,
) -> Action:
    """Take an item's skipped or unsure mark away for one task: the item is back in the annotator's
    queue (done again by the label that completes it, where the task marks that by itself, or by the
    annotator's "Item done"). A skipped
    item left the queue for good before: nothing led back to it. Logged, so Undo puts the mark back."""
    lookup = {"label_set_id": label_set_id, "item_id": item_id, "page": page}
    with write_session(engine) as session:
        _guard(session, annotator_id, label_set_id, item_id, assignment_task(page))
        row = _locked(session, m.ItemStatus, lookup)
        _check_version(session, row, expected_version, "item_statuses", annotator_id)
        assert row is not None
        if row.status not in ("skipped", "unsure"):
            raise ValueError(f"The item is {row.status}, not skipped or unsure: nothing to clear.")
        refuse_held_status(session, annotator_id, item_id, page, f"cleared of its {row.status} mark")
        action = _log(
            session,
            annotator_id=annotator_id,
            action="delete",
            entity="item_statuses",
            row=row,
            before=_snapshot(row, "item_statuses"),
            after=None,
            description=f"{row.status} mark cleared",
        )
        session.delete(row)
        return action


@_retried
def sync_done(
    engine: Engine, label_set_id: int, item_id: int, page: str, complete: bool, annotator_id: int
) -> None:
    """Keep the automatic "done" status in step with whether every unit of the item is labeled (an item
    skipped and then labeled whole is done too).

    These entries are marked automatic and are not offered to undo: undoing a label that completed an
    item reverts the label, and the status follows as the page draws the undo. Called after the
    annotator's own label actions only: a page merely opened on a labeled item must write nothing.
    """
    lookup = {"label_set_id": label_set_id, "item_id": item_id, "page": page}
    with write_session(engine) as session:
        _guard(session, annotator_id, label_set_id, item_id, assignment_task(page))
        row = _locked(session, m.ItemStatus, lookup)
        if complete and row is None:
            new_id = _insert_new(session, m.ItemStatus, {**lookup, "status": "done"}, list(lookup))
            if new_id is None:
                return  # another session marked it a moment ago
            row = session.get_one(m.ItemStatus, new_id)
            action, before, after = "create", None, _snapshot(row, "item_statuses")
            after["version"] = row.version
        elif not complete and row is not None and row.status == "done":
            action, before, after = "delete", _snapshot(row, "item_statuses"), None
            session.delete(row)
        elif complete and row is not None and row.status == "skipped":
            # Skipped, then labeled after all: done, not led back to as skipped (it stayed "skipped").
            action, before = "update", _snapshot(row, "item_statuses")
            row.status = "done"
            session.flush()
            after = {**_snapshot(row, "item_statuses"), "version": row.version}
        else:
            return
        session.add(
            m.EditLog(
                annotator_id=annotator_id,
                action=action,
                entity="item_statuses",
                entity_id=row.id,
                item_id=item_id,
                label_set_id=label_set_id,
                before=before,
                after={
                    **(after or {}),
                    "automatic": True,
                    "description": f"item {'done' if complete else 'reopened'}",
                },
            )
        )


# ------------------------------------------------------------------------------------------ ratings


@_retried
def set_rating(
    engine: Engine,
    task_id: int,
    item_id: int,
    annotator_id: int,
    *,
    score: float | None,
    segment: tuple[int, int] | None = None,
    nothing_flagged_correct: bool | None = None,
    expected_version: int | None = None,
    label_set_id: int | None = None,
) -> Action:
    """One rater's score of one predicted segment (or of the whole response when ``segment`` is None).

    For an item where the detector flagged nothing, pass ``score=None`` and say whether "nothing
    flagged" is right with ``nothing_flagged_correct``. Ratings belong to no label set; pass the rater's
    own ``label_set_id`` to file the log entry under it, so the annotation pages' Undo finds it.
    """
    with write_session(engine) as session:
        _guard(session, annotator_id, label_set_id, item_id, "ratings")
        task = session.get_one(m.RatingTask, task_id)
        if session.scalar(select(m.Item.dataset_id).where(m.Item.id == item_id)) != task.dataset_id:
            raise ValueError(f"Item {item_id} is not in the rating task's dataset.")
        _refuse_held_back(session, annotator_id, task.dataset_id, item_id)
        if score is not None and not task.scale_min <= score <= task.scale_max:
            raise ValueError(
                f"A score on this task lies from {task.scale_min} to {task.scale_max}; got {score}."
            )
        if score is None and nothing_flagged_correct is None:
            raise ValueError("Give a score, or say whether flagging nothing was right.")
        start, end = segment if segment is not None else (-1, -1)
        what = (
            f"segment {_quoted(session.get_one(m.Item, item_id).response, start, end)}"
            if segment is not None
            else "response"
        )
        return _upsert(
            session,
            "ratings",
            {
                "task_id": task_id,
                "item_id": item_id,
                "annotator_id": annotator_id,
                "segment_start": start,
                "segment_end": end,
            },
            {"score": score, "nothing_flagged_correct": nothing_flagged_correct},
            annotator_id=annotator_id,
            expected_version=expected_version,
            description=f"rated {what}: "
            + (
                f"{score:g}"
                if score is not None
                else f"nothing flagged is {'right' if nothing_flagged_correct else 'wrong'}"
            ),
            log_label_set_id=label_set_id,
        )


def _held_back_on(session: Session, annotator_id: int | None, dataset_id: int, item_id: int) -> list[str]:
    """The labeling tasks that hold the item back from the annotator's rating queue
    (:func:`db.repositories.queue.holds`): those still open for a blind annotator in team mode; empty
    when nothing holds it back (another role, a dataset that shows detectors while labeling)."""
    if annotator_id is None:
        return []
    actor = session.get(m.Annotator, annotator_id)
    if (
        actor is None
        or actor.role != "annotator"
        or not detectors_wait_for_labels(settings_in(session, dataset_id))
    ):
        return []
    return open_labeling_on(session, dataset_id, annotator_id, item_id)


def _refuse_held_back(session: Session, annotator_id: int, dataset_id: int, item_id: int) -> None:
    """Refuse (:class:`~db.access.RatingHeldBack`) a rating of an item held back from the annotator's
    rating queue (:func:`_held_back_on`). The page shows no detector there and offers no way to rate; a
    rating sent anyway (an old tab, a crafted request) would be a judgment of a detector's output made
    before the annotator's own labeling of the item, which the blind dataset is there to keep apart."""
    waits_on = _held_back_on(session, annotator_id, dataset_id, item_id)
    if waits_on:
        raise RatingHeldBack(held_back_reason(waits_on))


def refuse_held_status(
    session: Session, annotator_id: int | None, item_id: int, page: str, what: str
) -> None:
    """Refuse (:class:`~db.access.RatingHeldBack`) a change of the item's status (``what``: "marked
    skipped") on a rating campaign's queue while the item is held back from the annotator's rating, by
    the rule that refuses a rating there (:func:`_held_back_on`). Done, skipped or unsure on that queue
    is rating work: "done" counted the item as rated, and "skipped" took it out of the queue, before
    the annotator had labeled it. Scoring whole responses holds nothing back (it shows no detector)."""
    if rating_campaign_queue(page):
        _refuse_held(session, annotator_id, item_id, "Item {} was not " + what)


def refuse_held_rating(session: Session, annotator_id: int | None, item_id: int, what: str) -> None:
    """Refuse (:class:`~db.access.RatingHeldBack`) a change of the annotator's rating of the item
    other than rating it anew (``what``: "undone"), while the item is held back from their rating: by
    Undo or a restore from the item's history a rating made before the item was held back (the labeling
    of it reopened, or the dataset made blind) came back, or changed, before their labeling was done."""
    _refuse_held(session, annotator_id, item_id, "The rating of item {} was not " + what)


def _refuse_held(session: Session, annotator_id: int | None, item_id: int, refused: str) -> None:
    """Raise :class:`~db.access.RatingHeldBack` when the item is held back from the annotator's rating,
    saying ``refused`` (the item's quoted id in its ``{}``), why it is held, and until when."""
    item = session.get_one(m.Item, item_id)
    waits_on = _held_back_on(session, annotator_id, item.dataset_id, item_id)
    if waits_on:
        raise RatingHeldBack(
            f"{refused.format(quoted(item.external_id))}: it is held back from your rating until your "
            f"labeling of it is done. {held_back_reason(waits_on)}"
        )


# --------------------------------------------------------------------------------- response scores


@_retried
def set_response_score(
    engine: Engine,
    label_set_id: int,
    item_id: int,
    score: float,
    annotator_id: int,
    *,
    hallucination: bool | None = None,
    rationale: str | None = None,
    expected_version: int | None = None,
) -> Action:
    """Rate the item's whole response (MMHal-Bench: 0 to 6) and say whether it hallucinates (None: not
    said). The score must lie on the label set's scale (its stored scores', else MMHal-Bench's 0-6,
    as :func:`~db.repositories.annotations.response_scale_of` tells a page); a rater writes only
    their own label set, and in team mode only items assigned to them on the ratings task."""
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ValueError(f"A response score is a number; got {score!r}.")
    refuse_unstorable_text(rationale, "rationale")
    with write_session(engine) as session:
        check_label_write(session, annotator_id, label_set_id, item_id, _RATINGS_TASK)
        low, high = response_scale(session, label_set_id) or RESPONSE_SCALE
        if not low <= score <= high:
            raise ValueError(f"A response score lies from {low} to {high}; got {score:g}.")
        said = {True: ", hallucination", False: ", no hallucination", None: ""}[hallucination]
        return _upsert(
            session,
            "response_scores",
            {"label_set_id": label_set_id, "item_id": item_id},
            {
                "score": float(score),
                "scale_min": low,
                "scale_max": high,
                "hallucination": hallucination,
                "rationale": rationale or None,
            },
            annotator_id=annotator_id,
            expected_version=expected_version,
            description=f"response scored {score:g} on the {low}–{high} scale{said}",
        )


# -------------------------------------------------------------------------------------------- undo


def _undone_ids(session: Session, annotator_id: int) -> set[int]:
    rows = session.scalars(
        select(m.EditLog.after).where(m.EditLog.annotator_id == annotator_id, m.EditLog.action == "undo")
    )
    return {int(after["undid"]) for after in rows if after and "undid" in after}


def _task_of(entry: m.EditLog) -> str | None:
    """The annotation task (page queue) an action belongs to (a removal's ``after`` holds only its
    description: the row's own values are in ``before``)."""
    state = {**(entry.before or {}), **(entry.after or {})}
    if entry.entity == "item_statuses":
        return state.get("page")
    if entry.entity == "ratings":
        return f"rating:{state.get('task_id')}"
    return _TASK_ENTITIES.get(entry.entity)


def _last_entry(
    session: Session,
    annotator_id: int,
    label_set_ids: list[int] | None,
    item_id: int | None,
    task: str | None,
) -> m.EditLog | None:
    undone = _undone_ids(session, annotator_id)
    query = (
        select(m.EditLog)
        .where(
            m.EditLog.annotator_id == annotator_id,
            m.EditLog.action.in_(("create", "update", "delete", "restore")),
            m.EditLog.entity.in_(list(_ENTITIES)),
        )
        .order_by(m.EditLog.id.desc())
        .execution_options(yield_per=100)
    )
    if label_set_ids is not None:
        query = query.where(m.EditLog.label_set_id.in_(label_set_ids))
    if item_id is not None:
        query = query.where(m.EditLog.item_id == item_id)
    for entry in session.scalars(query):
        if entry.id in undone or (entry.after or {}).get("automatic"):
            continue
        if task is None or _task_of(entry) == task:
            # A restore (see ``history``) is a barrier: it is not undone row by row here, and the actions
            # before it are not offered, since it has changed their rows since.
            return None if entry.action == "restore" else entry
    return None


def _as_left(session: Session, entry: m.EditLog, row: Any) -> bool:
    """Whether the row is as ``entry`` left it, give or take later actions that were undone since."""
    later = session.scalars(
        select(m.EditLog)
        .where(
            m.EditLog.entity == entry.entity, m.EditLog.entity_id == entry.entity_id, m.EditLog.id > entry.id
        )
        .order_by(m.EditLog.id)
    ).all()
    undone = {int(e.after["undid"]) for e in later if e.action == "undo" and e.after and "undid" in e.after}
    if any(e.action != "undo" and e.id not in undone for e in later):
        return False
    last = later[-1] if later else entry
    if last.action == "undo":
        state = (last.after or {}).get("state")
    else:
        state = None if last.action == "delete" else (last.after or {})
    if state is None:
        return row is None
    if row is None or state.get("version") not in (None, row.version):
        return False
    # The id may hold another row by now: SQLite hands the highest id out again once an import has
    # deleted that row and written its own, so the row's content must match as well as its version.
    return all(getattr(row, name) == state[name] for name in _ENTITIES[entry.entity][1] if name in state)


def _describe(entry: m.EditLog) -> str:
    return (entry.after or {}).get("description") or f"{entry.action} {entry.entity}"


def undoable(
    engine: Engine,
    annotator_id: int,
    label_set_ids: list[int] | None = None,
    *,
    item_id: int | None = None,
    task: str | None = None,
) -> Action | None:
    """The action :func:`undo_last` would revert (its ``log_id`` is what a page passes back), or None."""
    with read_session(engine) as session:
        entry = _last_entry(session, annotator_id, label_set_ids, item_id, task)
        if entry is None:
            return None
        return Action(entry.id, entry.entity, entry.entity_id or 0, entry.action, _describe(entry))


def last_undoable(
    engine: Engine,
    annotator_id: int,
    label_set_ids: list[int] | None = None,
    *,
    item_id: int | None = None,
    task: str | None = None,
) -> str | None:
    """What :func:`undo_last` would revert, described for the undo button, or None."""
    found = undoable(engine, annotator_id, label_set_ids, item_id=item_id, task=task)
    return None if found is None else found.description


def _guard_undo(session: Session, annotator_id: int, entry: m.EditLog) -> None:
    """Undo writes like the action it reverts: the same check, on the entry's label set, item and task
    (a rating's undo also needs the rating to be the actor's own; an adjudication's undo, the right to
    adjudicate)."""
    state = entry.before or entry.after or {}
    if entry.entity == "ratings" and state.get("annotator_id") != annotator_id:
        raise Forbidden("That rating is someone else's; you can only undo your own.")
    if entry.item_id is None:  # every labeling action names its item; an entry without one is not ours
        raise Forbidden("That change is not a labeling action and cannot be undone here.")
    label_set = session.get(m.LabelSet, entry.label_set_id) if entry.label_set_id is not None else None
    if label_set is not None and label_set.kind == "gold":
        # Gold is written by adjudication; its undo is the adjudicator's, with the same right.
        require_in(session, annotator_id, "adjudicate")
        return
    task = _task_of(entry) or ""
    _guard(session, annotator_id, entry.label_set_id, entry.item_id, assignment_task(task))
    if entry.entity == "item_statuses":
        refuse_held_status(session, annotator_id, entry.item_id, task, "given its status back by Undo")
    elif entry.entity == "ratings":
        refuse_held_rating(session, annotator_id, entry.item_id, "undone")


@_retried
def undo_last(
    engine: Engine,
    annotator_id: int,
    label_set_ids: list[int] | None = None,
    *,
    item_id: int | None = None,
    task: str | None = None,
    expected_log_id: int | None = None,
) -> Action | None:
    """Revert the annotator's latest action (optionally on one item, for one task, within some label
    sets); None if nothing is left.

    Refuses (:class:`StaleEdit`) when ``expected_log_id`` — the action the page offered to undo — is no
    longer the latest (another session of the annotator acted since), or when the row no longer is as
    that action left it (someone else changed it since): undo never reverts an edit it did not show.
    An undo is a labeling action too: :class:`~db.access.Forbidden` unless the annotator may still
    write the entry's label set on its item (a rating: their own).
    """
    with write_session(engine) as session:
        require_in(session, annotator_id, "label")
        entry = _last_entry(session, annotator_id, label_set_ids, item_id, task)
        # The latest of the annotator's own actions is not the one shown: their other tab acted since.
        if entry is None:
            if expected_log_id is not None:
                raise _changed_meanwhile("item", by_you=True)
            return None
        if expected_log_id is not None and entry.id != expected_log_id:
            raise _changed_meanwhile("item", by_you=True)
        _guard_undo(session, annotator_id, entry)
        model, columns = _ENTITIES[entry.entity]
        row = session.get(model, entry.entity_id, with_for_update=True)
        if not _as_left(session, entry, row):
            mine = row is not None and _changed_by(session, entry.entity, row, annotator_id)
            raise _changed_meanwhile(_row_name(entry.entity), mine)
        state: dict[str, Any] | None
        if entry.action == "create":
            session.delete(row)
            state = None
        elif entry.action == "delete":
            assert entry.before is not None
            row = model(id=entry.entity_id, **{k: entry.before[k] for k in columns})
            session.add(row)
        else:
            assert entry.before is not None
            for key in columns:
                setattr(row, key, entry.before[key])
        session.flush()
        if row is not None and entry.action != "create":
            state = {**_snapshot(row, entry.entity), "version": getattr(row, "version", None)}
        item = session.get(m.Item, entry.item_id) if entry.item_id is not None else None
        description = f"undid: {_describe(entry)}"
        undo = m.EditLog(
            annotator_id=annotator_id,
            action="undo",
            entity=entry.entity,
            entity_id=entry.entity_id,
            item_id=entry.item_id,
            label_set_id=entry.label_set_id,
            before=entry.after,
            # The row as the undo left it (None: removed), so the log's last word on a row is its state.
            after={"undid": entry.id, "state": state, "description": description},
        )
        session.add(undo)
        session.flush()
        return Action(
            undo.id,
            entry.entity,
            entry.entity_id or 0,
            "undo",
            description,
            item.external_id if item is not None else None,
        )
