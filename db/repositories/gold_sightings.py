"""Gold shown to a blind annotator, item by item, and the lock it puts on their labels there.

On a blind dataset in team mode an annotator sees no gold while labeling; once they finish an item, the
Overridden labels page shows them gold where it overrode them. Had they then gone back and changed their
labels to gold's, agreement between annotators and their scores against gold would measure gold against
itself, and nothing would tell. So each item whose gold is shown to such an annotator is recorded here
(who, which item, when, on which page) before the page shows it, and from then on the store refuses
that annotator's edits to the item (:func:`db.access.check_label_write`); the annotation pages show it
read-only with the reason. The first sighting is the one kept: a later one changes nothing.

Only annotators who may not see gold are recorded (:func:`db.repositories.visibility.gold_waits_for_finish`
decides, as it does what the page shows): reviewers and admins see gold anyway and label on; local mode
has no blind annotators. The record outlives the assignment: an item unassigned and assigned again to
the same annotator is still one whose gold they saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, select

from db import models as m
from db.access import Actor, acting, gold_shown_reason, team_mode
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
    (the ones already recorded keep their first time). Called before the page shows gold, so gold is
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
                    m.GoldSighting.annotator_id == actor.id, m.GoldSighting.item_id.in_(wanted)
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
            .on_conflict_do_nothing(index_elements=["annotator_id", "item_id"])
        )


def gold_seen(engine: Engine, annotator_id: int, item_id: int) -> GoldSeen | None:
    """Whether (and where and when) gold of the item was shown to the annotator: None if never."""
    with read_session(engine) as session:
        row = session.execute(
            select(m.GoldSighting.page, m.GoldSighting.shown_at).where(
                m.GoldSighting.annotator_id == annotator_id, m.GoldSighting.item_id == item_id
            )
        ).first()
    return GoldSeen(row.page, row.shown_at) if row is not None else None
