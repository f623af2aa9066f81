"""Team-mode accounts: users with roles and argon2id password hashes, logins that lock after repeated
failures, and login sessions that expire.

A login session is a random token held by the browser; the store keeps only its SHA-256, so neither a
copy of the store nor a page's HTML can be turned into a login. Sessions end after
:data:`~db.login_sessions.IDLE_LIMIT` without use or :data:`~db.login_sessions.SESSION_LIMIT` after
login, whichever comes first, and when the account is disabled or its role changes.

Changing accounts needs the ``manage_team`` permission of the acting user, whom every such function
takes (:mod:`db.access`); the command line acts as the operator, which is how the first admin is created.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, require_in, require_now
from db.engine import read_session, write_session
from db.login_sessions import SESSION_LIMIT, aware, is_live
from db.repositories.annotators import InvalidName, clean_name, validate_name
from formats.problems import quoted
from formats.storable import unstorable

MIN_PASSWORD_LENGTH = 8
MAX_FAILURES = 5
LOCKOUT = timedelta(minutes=15)
# ``last_seen`` is written at most this often, so reading pages does not turn into a stream of writes.
_TOUCH_EVERY = timedelta(minutes=1)

_hasher = PasswordHasher()
# Verifying against this when the name is unknown makes a wrong name cost as long as a wrong password.
_DUMMY_HASH = _hasher.hash(secrets.token_hex(16))


@dataclass(frozen=True)
class UserView:
    id: int
    name: str
    role: str
    disabled: bool
    has_password: bool
    locked_until: datetime | None
    email: str | None
    login: int | None = None  # the login session this view was read through (None: a listing)

    def as_actor(self) -> Actor:
        """The actor for writes, bound to this view's login session: once it ends, they are refused."""
        return Actor(self.id, self.name, self.role, login=self.login)


class AccountError(ValueError):
    """A refused account change (unknown user, weak password, unknown role …); the message says why."""


class LoginRefused(Exception):
    """A refused login; the message is safe to show (it never says whether the name exists)."""


def _view(row: m.Annotator) -> UserView:
    return UserView(
        row.id,
        row.name,
        row.role,
        row.disabled,
        row.password_hash is not None,
        row.locked_until,
        row.email,
    )


def _check_role(role: str) -> None:
    if role not in m.ROLES:
        raise AccountError(f"Unknown role {quoted(str(role))}; choose one of {', '.join(m.ROLES)}.")


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.")
    if password.strip() != password or not password.isprintable():
        raise AccountError("A password cannot start or end with spaces or hold control characters.")


def _find(session: Session, name: str) -> m.Annotator | None:
    if unstorable(name) is not None:  # no account has such a name; PostgreSQL refuses it mid-query
        return None
    return session.scalar(select(m.Annotator).where(m.Annotator.name == clean_name(name)))


def _end_sessions(session: Session, annotator_id: int) -> None:
    session.execute(
        update(m.LoginSession)
        .where(m.LoginSession.annotator_id == annotator_id, m.LoginSession.ended.is_(False))
        .values(ended=True)
    )


def add_user(
    engine: Engine,
    name: str,
    role: str,
    password: str,
    *,
    actor: Actor,
    email: str | None = None,
) -> UserView:
    """Create an account (or give a password and role to a name that so far only labeled in local mode).

    Refuses a name that already has a password: use :func:`set_password` or :func:`set_role`.
    """
    _check_role(role)
    _check_password(password)
    if email is not None and unstorable(email) is not None:
        raise AccountError("An e-mail address cannot hold control characters or broken Unicode.")
    try:
        cleaned = validate_name(engine, name)
    except InvalidName as refused:
        raise AccountError(str(refused)) from refused
    require_now(engine, actor, "manage_team")  # before the deliberately slow hash; checked again below
    hashed = _hasher.hash(password)
    with write_session(engine) as session:
        require_in(session, actor, "manage_team")
        row = _find(session, cleaned)
        if row is not None and row.password_hash is not None:
            raise AccountError(f"The user {quoted(cleaned)} exists already.")
        if email is not None and session.scalar(select(m.Annotator.id).where(m.Annotator.email == email)):
            raise AccountError(f"Another user holds the e-mail {quoted(email)}.")
        if row is None:
            row = m.Annotator(name=cleaned)
            session.add(row)
        row.role = role
        row.password_hash = hashed
        row.disabled = False
        row.email = email
        session.flush()
        return _view(row)


def list_users(engine: Engine) -> list[UserView]:
    with read_session(engine) as session:
        return [_view(row) for row in session.scalars(select(m.Annotator).order_by(m.Annotator.name))]


def get_user(engine: Engine, user_id: int) -> UserView | None:
    with read_session(engine) as session:
        row = session.get(m.Annotator, user_id)
        return None if row is None else _view(row)


def set_role(engine: Engine, name: str, role: str, *, actor: Actor) -> UserView:
    """Give the user another role; their open sessions end, so the new rights apply at once."""
    _check_role(role)
    with write_session(engine) as session:
        require_in(session, actor, "manage_team")
        row = _find(session, name)
        if row is None:
            raise AccountError(f"There is no user {quoted(clean_name(name))}.")
        if actor.id == row.id and role != "admin":
            raise AccountError("You cannot take the admin role from yourself; ask another admin.")
        row.role = role
        _end_sessions(session, row.id)
        session.flush()
        return _view(row)


def set_disabled(engine: Engine, name: str, disabled: bool, *, actor: Actor) -> UserView:
    """Disable (or enable again) an account; a disabled account cannot log in and its sessions end."""
    with write_session(engine) as session:
        require_in(session, actor, "manage_team")
        row = _find(session, name)
        if row is None:
            raise AccountError(f"There is no user {quoted(clean_name(name))}.")
        if actor.id == row.id and disabled:
            raise AccountError("You cannot disable your own account.")
        row.disabled = disabled
        if disabled:
            _end_sessions(session, row.id)
        else:
            row.failed_logins = 0
            row.locked_until = None
        session.flush()
        return _view(row)


def _password_target(session: Session, name: str, actor: Actor) -> m.Annotator:
    """The user whose password the actor sets: their own, or anyone's with ``manage_team``."""
    row = _find(session, name)
    if row is None:
        raise AccountError(f"There is no user {quoted(clean_name(name))}.")
    if actor.id != row.id:
        require_in(session, actor, "manage_team")
    return row


def set_password(engine: Engine, name: str, password: str, *, actor: Actor) -> UserView:
    """Set a new password (an admin's reset, or the user's own change); open sessions end."""
    _check_password(password)
    with read_session(engine) as session:
        _password_target(session, name, actor)  # before the deliberately slow hash; checked again below
    hashed = _hasher.hash(password)
    with write_session(engine) as session:
        row = _password_target(session, name, actor)
        row.password_hash = hashed
        row.failed_logins = 0
        row.locked_until = None
        _end_sessions(session, row.id)
        session.flush()
        return _view(row)


def authenticate(engine: Engine, name: str, password: str) -> UserView:
    """The user whose name and password these are, or :class:`LoginRefused`.

    After :data:`MAX_FAILURES` wrong passwords in a row the account is locked for :data:`LOCKOUT`
    (even the right password is refused meanwhile); a success resets the count. A name or password
    holding a NUL or broken Unicode is refused at once, uncounted: no account has such a name, and no
    password can hold it.
    """
    wrong = LoginRefused("Wrong name or password.")
    if unstorable(name) is not None or unstorable(password) is not None:
        # Typed by anyone at the login page: no account has such a name or password (a NUL failed
        # PostgreSQL's query, and broken Unicode cannot even be hashed), so the answer is the same.
        raise wrong
    now = m.utcnow()
    with write_session(engine) as session:
        row = _find(session, name)
        if row is None or row.password_hash is None:
            with contextlib.suppress(VerificationError):
                _hasher.verify(_DUMMY_HASH, password)
            raise wrong
        locked_until = aware(row.locked_until)
        if locked_until is not None and locked_until > now:
            minutes = max(1, int((locked_until - now).total_seconds() // 60) + 1)
            raise LoginRefused(
                f"Too many failed logins: this account is locked for {minutes} more minute(s)."
            )
        try:
            _hasher.verify(row.password_hash, password)
        except (VerificationError, InvalidHashError):
            row.failed_logins += 1
            if row.failed_logins >= MAX_FAILURES:
                row.locked_until = now + LOCKOUT
                row.failed_logins = 0
            session.flush()
            failure = wrong  # raised after the commit, so the count of failures is kept
        else:
            if row.disabled:
                failure = LoginRefused("This account is disabled; ask an admin.")
            else:
                row.failed_logins = 0
                row.locked_until = None
                if _hasher.check_needs_rehash(row.password_hash):
                    row.password_hash = _hasher.hash(password)
                session.flush()
                return _view(row)
    raise failure


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(engine: Engine, user_id: int) -> str:
    """A new login session for the user; returns the token the browser keeps (never stored)."""
    token = secrets.token_urlsafe(32)
    now = m.utcnow()
    with write_session(engine) as session:
        session.add(
            m.LoginSession(
                token_hash=_token_hash(token),
                annotator_id=user_id,
                created_at=now,
                last_seen=now,
                expires_at=now + SESSION_LIMIT,
                ended=False,
            )
        )
    return token


def session_user(engine: Engine, token: str | None) -> UserView | None:
    """The user logged in with this token, or None when it is unknown, ended, expired or idle too long,
    or the account is disabled."""
    if not token:
        return None
    now = m.utcnow()
    with read_session(engine) as session:
        row = session.scalar(select(m.LoginSession).where(m.LoginSession.token_hash == _token_hash(token)))
        if row is None or not is_live(row, now):
            return None
        user = session.get(m.Annotator, row.annotator_id)
        if user is None or user.disabled:
            return None
        view = replace(_view(user), login=row.id)
        last_seen = aware(row.last_seen)
        assert last_seen is not None
        stale = last_seen + _TOUCH_EVERY <= now
        session_id = row.id
    if stale:
        with write_session(engine, bookkeeping=True) as session:
            session.execute(
                update(m.LoginSession).where(m.LoginSession.id == session_id).values(last_seen=now)
            )
    return view


def end_session(engine: Engine, token: str | None) -> None:
    """Log out: the token stops working."""
    if not token:
        return
    with write_session(engine) as session:
        session.execute(
            update(m.LoginSession).where(m.LoginSession.token_hash == _token_hash(token)).values(ended=True)
        )


def user_for_email(engine: Engine, email: str) -> UserView | None:
    """The enabled account an identity provider's verified e-mail maps onto (OIDC login), if any."""
    if unstorable(email) is not None:
        return None
    with read_session(engine) as session:
        row = session.scalar(select(m.Annotator).where(m.Annotator.email == email))
        return None if row is None or row.disabled else _view(row)
