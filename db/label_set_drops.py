"""Taking away a label set an import made, once an undo of that import has left it holding nothing.

Undoing a detector run's first import took every row of the run away but left the run itself: a
detector with nothing in every picker, on the Compare page and in the Metrics notes. A label set the
import made goes with the undo when no row of the store belongs to it any more (the edit log, which
keeps what was, may still name its id). Its attributes (the annotator, version, prompt strategy and
meta a live run or a Tri-HE judgment file gave it) are kept in the undo's log entry, so undoing the
undo makes it again as it was (under a new id).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models as m
from db.label_set_keys import Key
from db.label_set_rows import holds_rows
from formats.records import LabelSetRecord

# Every table whose rows belong to a label set.
_HOLDERS: tuple[Any, ...] = (
    m.Span,
    m.SentenceLabel,
    m.ClaimLabel,
    m.Triplet,
    m.TripletJudgment,
    m.SentenceScore,
    m.TokenProbability,
    m.ResponseScore,
    m.RawOutput,
    m.ItemStatus,
)


def holds_nothing(session: Session, label_set_id: int) -> bool:
    """Whether no row of any table belongs to the label set and no rating campaign rates it."""
    if any(holds_rows(session, model.label_set_id, label_set_id) for model in _HOLDERS):
        return False
    campaign = select(m.RatingTask.id).where(m.RatingTask.detector_label_set_id == label_set_id).limit(1)
    return session.scalar(campaign) is None


def drop_empty(session: Session, dataset_id: int, keys: Iterable[Key]) -> list[dict[str, Any]]:
    """Delete those of these label sets that hold nothing; each one deleted, as its log entry keeps it."""
    dropped = []
    for kind, name in sorted(set(keys)):
        # Locked before it is looked into (PostgreSQL): a row another session is adding to it meanwhile
        # then either shows, and the label set stays, or waits for the delete and fails on its key. Not
        # locked, the delete's cascade took that row with it once it was committed.
        label_set = session.scalar(
            select(m.LabelSet)
            .where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == kind, m.LabelSet.name == name)
            .with_for_update()
        )
        if label_set is None or not holds_nothing(session, label_set.id):
            continue
        annotator = session.get(m.Annotator, label_set.annotator_id) if label_set.annotator_id else None
        dropped.append(
            {
                "kind": kind,
                "name": name,
                "annotator": annotator.name if annotator is not None else None,
                "detector_version": label_set.detector_version,
                "prompt_strategy": label_set.prompt_strategy,
                "meta": dict(label_set.meta or {}),
            }
        )
        session.delete(label_set)
    session.flush()
    return dropped


def as_made(record: LabelSetRecord, dropped: dict[str, Any] | None) -> LabelSetRecord:
    """``record`` with the attributes its label set had when an undo took it away (unchanged when it
    was not), so that writing it makes the label set again as it was."""
    if dropped is None:
        return record
    record.annotator = dropped.get("annotator")
    record.detector_version = dropped.get("detector_version")
    record.prompt_strategy = dropped.get("prompt_strategy")
    record.meta = dict(dropped.get("meta") or {})
    return record
