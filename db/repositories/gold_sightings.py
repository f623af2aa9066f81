"""Gold shown to a blind annotator, item by item, and the lock it puts on their labels there.

On a blind dataset in team mode an annotator sees no gold while labeling; once they finish an item, the
Overridden labels page shows them gold where it overrode them. Had they then gone back and changed their
labels to gold's, agreement between annotators and their scores against gold would measure gold against
itself, and nothing would tell. So each item whose gold is shown to such an annotator is recorded here
(who, which item, when, on which page) before the page shows it, and from then on the store refuses
that annotator's edits to the item (:func:`db.access.check_label_write`); the annotation pages show it
read-only with the reason. The first sighting is the one kept: a later one, while it locks, changes
nothing.

An admin may lift a lock (:func:`lift_locks`: gold shown by mistake, or the annotator may label the item
anew). The record stays, with who lifted it and when, and no longer locks
(:func:`db.access.sighting_locks`). Gold of the item shown to them again after that locks again, as a new
record: their labels from then on would again follow gold, and the lifted record still tells of the
first showing, so the history reads as it happened (shown, lifted, shown again) instead of one record
whose lift was quietly undone. The Overridden labels page shows gold of every finished item where it
differs, so an annotator who opens it again before relabeling a lifted item is locked there again.

Only annotators who may not see gold are recorded (:func:`db.repositories.visibility.gold_waits_for_finish`
decides, as it does what the page shows): reviewers and admins see gold anyway and label on; local mode
has no blind annotators. The record outlives the assignment: an item unassigned and assigned again to
the same annotator is still one whose gold they saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.orm import aliased

from db import models as m
from db.access import Actor, acting, gold_shown_reason, require_in, sighting_locks, team_mode
from db.engine import read_session, upsert_insert, write_session

OVERRIDES_PAGE = "Overridden labels"


@dataclass(frozen=True)
class GoldSeen:
    """Gold of an item was shown to the annotator on ``page`` at ``shown_at``."""

    page: str
    shown_at: datetime

    @property
    def reason(self) -> str:
        """The one line the annotation pages and the store's refusal say."""
        return gold_shown_reason(self.page, self.shown_at)


def record_gold_shown(
    engine: Engine, actor: Actor, dataset_id: int, item_ids: Iterable[int], page: str = OVERRIDES_PAGE
) -> None:
    """Record that ``page`` is about to show the acting annotator gold of these items of the dataset
    (the ones already recorded and still locked keep their first time; a lifted one gets a new record,
    which locks again: see the module doc). Called before the page shows gold, so gold is
    never on screen unrecorded: a refusal (their login ended, the account was disabled) raises
    :class:`~db.access.Forbidden` and the page shows nothing. Writes nothing for anyone but a team-mode
    annotator, or when every item is recorded already (a page shown again changes no cache)."""
    wanted = set(item_ids)
    if not wanted or not team_mode() or actor.role != "annotator" or actor.id is None:
        return
    with read_session(engine) as session:
        acting(session, actor)  # refused before the read of what is recorded, as the write would be
        recorded = set(
            session.scalars(
                select(m.GoldSighting.item_id).where(
                    m.GoldSighting.annotator_id == actor.id,
                    m.GoldSighting.item_id.in_(wanted),
                    sighting_locks(),
                )
            )
        )
    if not wanted - recorded:
        return
    with write_session(engine) as session:
        stored = acting(session, actor)
        if stored.role != "annotator" or stored.id is None:
            return
        now = m.utcnow()
        session.execute(
            upsert_insert(session, m.GoldSighting)
            .values(
                [
                    {
                        "dataset_id": dataset_id,
                        "item_id": item_id,
                        "annotator_id": stored.id,
                        "page": page,
                        "shown_at": now,
                    }
                    for item_id in sorted(wanted - recorded)
                ]
            )
            .on_conflict_do_nothing(index_elements=["annotator_id", "item_id"], index_where=sighting_locks())
        )


def gold_seen(engine: Engine, annotator_id: int, item_id: int) -> GoldSeen | None:
    """Whether (and where and when) gold of the item was shown to the annotator in a way that still locks
    it: None if never, or if an admin lifted the lock since."""
    with read_session(engine) as session:
        row = session.execute(
            select(m.GoldSighting.page, m.GoldSighting.shown_at).where(
                m.GoldSighting.annotator_id == annotator_id,
                m.GoldSighting.item_id == item_id,
                sighting_locks(),
            )
        ).first()
    return GoldSeen(row.page, row.shown_at) if row is not None else None


@dataclass(frozen=True)
class Sighting:
    """One record of gold shown, as the Team page and the ``sightings`` command list it."""

    id: int
    annotator_id: int
    annotator: str
    item_id: int
    external_id: str
    page: str
    shown_at: datetime
    lifted_at: datetime | None
    lifted_by: str | None  # the admin's name; None if not lifted or lifted from the command line
    locks: bool  # it still locks the item: :func:`db.access.sighting_locks`, read by the query itself


def list_sightings(engine: Engine, dataset_id: int, *, annotator_id: int | None = None) -> list[Sighting]:
    """Every record of gold shown to an annotator on the dataset (``annotator_id``: only theirs), lifted
    or not, newest first. Few: one per item an annotator was shown gold of."""
    lifter = aliased(m.Annotator)
    query = (
        select(
            m.GoldSighting.id,
            m.GoldSighting.annotator_id,
            m.Annotator.name,
            m.GoldSighting.item_id,
            m.Item.external_id,
            m.GoldSighting.page,
            m.GoldSighting.shown_at,
            m.GoldSighting.lifted_at,
            lifter.name,
            sighting_locks(),
        )
        .join(m.Annotator, m.Annotator.id == m.GoldSighting.annotator_id)
        .join(m.Item, m.Item.id == m.GoldSighting.item_id)
        .outerjoin(lifter, lifter.id == m.GoldSighting.lifted_by_id)
        .where(m.GoldSighting.dataset_id == dataset_id)
        .order_by(m.GoldSighting.shown_at.desc(), m.GoldSighting.id.desc())
    )
    if annotator_id is not None:
        query = query.where(m.GoldSighting.annotator_id == annotator_id)
    with read_session(engine) as session:
        rows: list[tuple[Any, ...]] = [tuple(row) for row in session.execute(query)]
    return [Sighting(*row) for row in rows]


def lift_locks(
    engine: Engine,
    dataset_id: int,
    annotator_id: int,
    *,
    actor: Actor,
    item_ids: Iterable[int] | None = None,
) -> list[str]:
    """Lift the locks that gold shown to the annotator put on items of the dataset (``item_ids``: only
    those items), so they may change their labels there again. Admins only (``manage_team``, as the
    assignments are). Each record stays, marked with who lifted it and when; one edit-log entry names
    the items. Returns the external ids of the items unlocked, in dataset order (none: nothing was
    locked, and nothing is written)."""
    wanted = None if item_ids is None else set(item_ids)
    query = (
        select(m.GoldSighting.id, m.GoldSighting.item_id, m.Item.external_id)
        .join(m.Item, m.Item.id == m.GoldSighting.item_id)
        .where(
            m.GoldSighting.dataset_id == dataset_id,
            m.GoldSighting.annotator_id == annotator_id,
            sighting_locks(),
        )
        .order_by(m.Item.position, m.Item.id)
    )
    if wanted is not None:
        query = query.where(m.GoldSighting.item_id.in_(wanted))
    with read_session(engine) as session:  # refused, or nothing to lift: no write, no cache emptied
        require_in(session, actor, "manage_team")
        if not session.execute(query.limit(1)).first():
            return []
    with write_session(engine) as session:
        stored = require_in(session, actor, "manage_team")
        annotator = session.get(m.Annotator, annotator_id)
        if annotator is None:
            raise ValueError(f"There is no user with id {annotator_id}.")
        rows = session.execute(query).all()
        if not rows:  # lifted meanwhile by another admin
            return []
        session.execute(
            update(m.GoldSighting)
            .where(m.GoldSighting.id.in_([row.id for row in rows]))
            .values(lifted_at=m.utcnow(), lifted_by_id=stored.id)
        )
        items = [row.external_id for row in rows]
        session.add(
            m.EditLog(
                annotator_id=stored.id,
                action="update",
                entity=m.GoldSighting.__tablename__,
                entity_id=rows[0].id if len(rows) == 1 else None,
                item_id=rows[0].item_id if len(rows) == 1 else None,
                before={"locked": items},
                after={
                    "dataset_id": dataset_id,
                    "annotator_id": annotator_id,
                    "sightings": [row.id for row in rows],
                    "items": items,
                    "description": f"lifted the gold-shown lock of {annotator.name!r} on {len(rows)} item(s)",
                },
            )
        )
        return items
