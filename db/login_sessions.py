"""When a team-mode login session is still good: one rule for the sign-in check of every page run
(:func:`db.repositories.accounts.session_user`) and for the check inside every write
(:func:`db.access.acting`).

The write needs it too because a page's callbacks run before the page checks the login: a tab left
open after its user logged out in another tab (or after the login expired) still holds the actor it
was drawn for, and a click there would otherwise write as that user.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from db import models as m

IDLE_LIMIT = timedelta(hours=2)
SESSION_LIMIT = timedelta(hours=12)


def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands timestamps back without their zone; they are stored as UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=m.utcnow().tzinfo)


def is_live(row: m.LoginSession, now: datetime) -> bool:
    """Not logged out, not past :data:`SESSION_LIMIT` since login, not idle for :data:`IDLE_LIMIT`.
    (Whether the account is still enabled is the caller's own check.)"""
    if row.ended:
        return False
    expires_at, last_seen = aware(row.expires_at), aware(row.last_seen)
    assert expires_at is not None and last_seen is not None
    return now < expires_at and now < last_seen + IDLE_LIMIT
