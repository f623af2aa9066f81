"""Engines and sessions for SQLite (embedded, WAL) and PostgreSQL (a team's shared store).

SQLite is tuned so several threads and processes can share one file: WAL journal, foreign keys on, a
busy timeout, and write transactions that take the write lock up front (``BEGIN IMMEDIATE``) so two
writers queue instead of failing half-way with "database is locked".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, update
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from db.config import resolve_url
from db.models import StoreRevision

SQLITE_BUSY_TIMEOUT_MS = 15_000


def make_engine(url: str | None = None, **kwargs: Any) -> Engine:
    """Create an engine for ``url`` (see :func:`db.config.resolve_url`), creating SQLite's folder."""
    resolved = resolve_url(url)
    parsed = make_url(resolved)
    if parsed.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        return create_engine(resolved, **kwargs)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(resolved, **kwargs)
    _tune_sqlite(engine)
    return engine


def _tune_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the sqlite3 module so BEGIN is ours to emit (see below).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = "IMMEDIATE" if connection.get_execution_options().get("write") else "DEFERRED"
        connection.exec_driver_sql(f"BEGIN {mode}")


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """A session for reading; objects stay usable after it closes."""
    with Session(engine, expire_on_commit=False) as session:
        yield session


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """One atomic write: commits on success, rolls back everything on any error.

    Bumps the store revision inside the same transaction, so every cache keyed on it sees the change
    exactly when the data does.
    """
    with Session(engine, expire_on_commit=False) as session, session.begin():
        session.connection(execution_options={"write": True})
        yield session
        bump_revision(session)


def bump_revision(session: Session) -> None:
    session.execute(
        update(StoreRevision).where(StoreRevision.id == 1).values(revision=StoreRevision.revision + 1)
    )


def store_revision(engine: Engine) -> int:
    """The current store revision: changes whenever any write commits."""
    with engine.connect() as connection:
        value = connection.exec_driver_sql("SELECT revision FROM store_revision WHERE id = 1").scalar()
    return int(value or 0)
