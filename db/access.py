"""Who may do what: the one table of rights that every write function and every page consults.

Spanlight runs in one of two modes, chosen by the ``SPANLIGHT_MODE`` setting:

* **local** (default): one person at their own machine, no login, every right — except that gold is
  written only by an import (with its replace confirmation) or by adjudication, never by labeling.
* **team**: accounts with roles. ``admin`` manages datasets, users, assignments and settings;
  ``reviewer`` adjudicates, promotes to gold and sees everyone's labels; ``annotator`` labels what is
  assigned to them and sees only their own labels; ``viewer`` reads dashboards and presenter mode.

The checks live here and are called by the repository functions that write (they take the acting user
and raise :class:`Forbidden`), so hiding a button is never the only protection. The acting user's role
is read from the store inside the writing transaction, so a role change or a disabled account takes
effect on the next action, not at the next login.

The command line acts as :data:`OPERATOR`: whoever runs it holds the store itself (the SQLite file or
the database credentials), so refusing them would protect nothing; it is how the first admin is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import ColumnElement, Engine, exists, select
from sqlalchemy.orm import Session

from db import models as m
from db.config import setting
from db.engine import read_session
from db.login_sessions import is_live
from formats.problems import quoted

LOCAL: Final = "local"
TEAM: Final = "team"
MODES = (LOCAL, TEAM)

# What each role may do in team mode. In local mode every permission is granted.
PERMISSIONS: dict[str, frozenset[str]] = {
    # write one's own human label set (spans, sentences, claims, triplets, statuses, ratings)
    "label": frozenset({"admin", "reviewer", "annotator"}),
    # write gold through adjudication and promotion
    "adjudicate": frozenset({"admin", "reviewer"}),
    # import, undo an import, delete a dataset, image folder, taxonomy, rating tasks, dataset settings
    "manage_data": frozenset({"admin"}),
    # accounts, roles, assignments, annotator weights
    "manage_team": frozenset({"admin"}),
    # read every annotator's labels (Item page's "Spans of", Agreement details, adjudication)
    "see_all_labels": frozenset({"admin", "reviewer"}),
    # read gold, detectors and the dashboards built on them (Metrics, Compare, Presenter …)
    "view_reports": frozenset({"admin", "reviewer", "viewer"}),
    # download the store's labels
    "export": frozenset({"admin", "reviewer"}),
    # assignment progress of everyone
    "see_progress": frozenset({"admin", "reviewer"}),
}


class Forbidden(PermissionError):
    """The acting user may not do this; the message says what and why, for the page to show."""


class GoldShown(Forbidden):
    """The annotator was shown gold of this item (after finishing it, where gold overrode them): their
    labels on it are kept as they were, so that agreement and their scores against gold still measure
    their own judgment rather than gold's."""


class RatingHeldBack(Forbidden):
    """A rating of an item the annotator has still to label on a blind dataset: the rating page shows
    them no detector's output there (it would answer part of that labeling), and the store refuses the
    rating too (:func:`db.repositories.labeling.set_rating`)."""


def gold_shown_reason(page: str, shown_at: datetime) -> str:
    """Why an item is read-only for the annotator gold was shown to: the line the store's refusal and
    the annotation pages both say."""
    return (
        f"Gold for this item was shown to you on {utc_minute(shown_at)} ({page} page); your labels on it "
        "are kept as they were."
    )


def utc_minute(at: datetime) -> str:
    """A stored time to the minute, in UTC, as the gold-shown records are told: SQLite gives it back
    without a zone, PostgreSQL in the connection's zone."""
    if at.tzinfo is not None:
        at = at.astimezone(UTC)
    return f"{at:%Y-%m-%d %H:%M} UTC"


def sighting_locks() -> ColumnElement[bool]:
    """The condition under which a record of gold shown (:class:`~db.models.GoldSighting`) still locks
    the item for its annotator: no admin lifted it. The one test of it: the store's refusal, the
    queue, every progress count and the annotation pages' read-only state all read it from here, so
    they cannot disagree about which items are locked."""
    return m.GoldSighting.lifted_at.is_(None)


def gold_sighting(session: Session, annotator_id: int, item_id: int) -> m.GoldSighting | None:
    """The record that gold of the item was shown to the annotator and still locks it, if there is one
    (at most one: see :class:`~db.models.GoldSighting`)."""
    return session.scalar(
        select(m.GoldSighting).where(
            m.GoldSighting.annotator_id == annotator_id, m.GoldSighting.item_id == item_id, sighting_locks()
        )
    )


class ConfigurationError(ValueError):
    """A setting holds a value Spanlight cannot use."""


def mode() -> str:
    """``local`` or ``team``, from ``SPANLIGHT_MODE`` (unset: local)."""
    value = (setting("MODE") or LOCAL).strip().lower()
    if value not in MODES:
        raise ConfigurationError(f"SPANLIGHT_MODE must be 'local' or 'team'; got {quoted(value)}.")
    return value


def team_mode() -> bool:
    return mode() == TEAM


@dataclass(frozen=True)
class Actor:
    """The user an action is done for. ``id`` is None only for :data:`OPERATOR`.

    ``login`` is the team-mode login session a page acts through (None for the command line and in
    local mode): every write checks it is still live, so a click in a tab whose login has ended is
    refused even when it comes from a callback that runs before the page's own login check."""

    id: int | None
    name: str
    role: str
    login: int | None = None

    @property
    def is_operator(self) -> bool:
        return self.id is None


OPERATOR: Final = Actor(None, "command line", "admin")


def may(actor: Actor, permission: str) -> bool:
    """Whether the actor holds the permission (always, in local mode and for the operator)."""
    if permission not in PERMISSIONS:
        raise KeyError(f"Unknown permission {permission!r}.")
    return actor.is_operator or not team_mode() or actor.role in PERMISSIONS[permission]


_WHAT = {
    "label": "label items",
    "adjudicate": "adjudicate or promote labels to gold",
    "manage_data": "import, delete or change datasets",
    "manage_team": "manage users and assignments",
    "see_all_labels": "see other people's labels",
    "view_reports": "open the dashboards",
    "export": "export labels",
    "see_progress": "see everyone's progress",
}


def require(actor: Actor, permission: str) -> None:
    """Raise :class:`Forbidden` unless the actor holds the permission."""
    if not may(actor, permission):
        raise Forbidden(f"The {actor.role} role cannot {_WHAT[permission]}; ask an admin.")


def acting(session: Session, who: Actor | int | None) -> Actor:
    """The actor as stored now (role, disabled) — read in the writing transaction so a change of role
    takes effect on the next action. ``who`` is an :class:`Actor` (whose login session, if it has one,
    must still be live) or, from the labeling functions, an annotator id; None is the operator."""
    annotator_id = who.id if isinstance(who, Actor) else who
    if annotator_id is None:
        return OPERATOR
    row = session.get(m.Annotator, annotator_id)
    if row is None:
        raise Forbidden(f"There is no user with id {annotator_id}.")
    if row.disabled:
        raise Forbidden(f"The account {quoted(row.name)} is disabled.")
    login = who.login if isinstance(who, Actor) else None
    if login is not None:
        held = session.get(m.LoginSession, login)
        if held is None or held.annotator_id != row.id or not is_live(held, m.utcnow()):
            raise Forbidden("You are no longer logged in here (logged out or timed out); log in again.")
    return Actor(row.id, row.name, row.role, login=login)


def require_in(session: Session, who: Actor | int | None, permission: str) -> Actor:
    """:func:`acting` then :func:`require`: the one-line check of a write function."""
    actor = acting(session, who)
    require(actor, permission)
    return actor


def is_assigned(session: Session, annotator_id: int, item_id: int, task: str) -> bool:
    """Whether the item is assigned to the annotator on the task (of the item's dataset)."""
    return bool(
        session.scalar(
            select(
                exists().where(
                    m.Assignment.annotator_id == annotator_id,
                    m.Assignment.item_id == item_id,
                    m.Assignment.task == task,
                )
            )
        )
    )


def check_label_write(
    session: Session, annotator_id: int | None, label_set_id: int | None, item_id: int, task: str
) -> Actor:
    """The check of every labeling action: the actor may label, the label set is their own human one
    (gold and detector runs are written only by import and adjudication), and in team mode an
    annotator labels only items assigned to them on this task, and not an item whose gold was shown
    to them (:class:`GoldShown`: on any task of it, as gold of one task tells about the others), unless
    an admin lifted that lock. Returns the actor."""
    actor = require_in(session, annotator_id, "label")
    if label_set_id is not None:
        label_set = session.get(m.LabelSet, label_set_id)
        if label_set is None:
            raise Forbidden(f"There is no label set with id {label_set_id}.")
        if label_set.kind != "human":
            raise Forbidden(
                f"Labels of {label_set.kind} {quoted(label_set.name)} are not written by hand: "
                + (
                    "gold comes from an import or from adjudication."
                    if label_set.kind == "gold"
                    else "a detector's labels come from its run."
                )
            )
        if actor.id is not None and label_set.annotator_id != actor.id:
            raise Forbidden(f"{quoted(label_set.name)}'s labels are theirs; you can only change your own.")
    assigned_only = team_mode() and actor.role == "annotator" and actor.id is not None
    if assigned_only and actor.id is not None and not is_assigned(session, actor.id, item_id, task):
        raise Forbidden(f"This item is not assigned to you on the {task} task.")
    if assigned_only and actor.id is not None:
        seen = gold_sighting(session, actor.id, item_id)
        if seen is not None:
            raise GoldShown(gold_shown_reason(seen.page, seen.shown_at))
    return actor


def require_now(engine: Engine, actor: Actor, permission: str) -> Actor:
    """:func:`require_in` in a read of its own: for a function that would otherwise read a file, unpack
    images or hand out data before its writing transaction (which checks again) or without one."""
    with read_session(engine) as session:
        return require_in(session, actor, permission)
