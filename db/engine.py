"""Engines and sessions for SQLite (embedded, WAL) and PostgreSQL (a team's shared store).

SQLite is tuned so several threads and processes can share one file: WAL journal, foreign keys on, a
busy timeout, and write transactions that take the write lock up front (``BEGIN IMMEDIATE``) so two
writers queue instead of failing half-way with "database is locked". Writers of a file store also take
turns through an advisory lock on a file beside it (``<store>-writer``, :func:`_sqlite_write_turn`;
never on the store itself: closing any descriptor of the store would drop SQLite's own locks) before
they begin: SQLite's own
busy handler sleeps up to 100 ms between tries, so under many writers a newcomer would keep
overtaking one that has waited long (waits of many seconds, then "database is locked"); a writer
waiting for the advisory lock tries again every half millisecond, which keeps waits short, and a wait
beyond :data:`WRITE_WAIT_S` (a long import holding the store) ends in a clear :class:`StoreBusy`.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not on Windows: writers there queue on SQLite's busy timeout alone
    fcntl = None  # type: ignore[assignment]  # the module is optional; checked before use

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from db import json_columns
from db.config import resolve_url
from db.models import StoreRevision

SQLITE_BUSY_TIMEOUT_MS = 15_000
WRITE_WAIT_S = 12.0
REVISION_SHARDS = 16
_POLL_S = 0.0005


class StoreBusy(Exception):
    """The store stayed busy with other writes for too long; nothing was saved, try again."""


def make_engine(url: str | None = None, **kwargs: Any) -> Engine:
    """Create an engine for ``url`` (see :func:`db.config.resolve_url`), creating SQLite's folder; JSON
    columns are read by :func:`db.json_columns.loads`."""
    resolved = resolve_url(url)
    kwargs.setdefault("json_deserializer", json_columns.loads)
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
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        _write_ahead_log(cursor)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = "IMMEDIATE" if connection.get_execution_options().get("write") else "DEFERRED"
        connection.exec_driver_sql(f"BEGIN {mode}")


def _write_ahead_log(cursor: Any) -> None:
    """Put the store's journal in WAL mode (a no-op once it is).

    Turning a new store's journal to WAL takes the file's lock for a moment, and SQLite reports a
    process that finds it taken as busy at once, without its busy timeout: app processes started
    together on a new store failed with "database is locked". Such a process tries again until the
    busy timeout has passed."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """A session for reading; objects stay usable after it closes."""
    with Session(engine, expire_on_commit=False) as session:
        yield session


@contextmanager
def write_session(engine: Engine, *, bookkeeping: bool = False) -> Iterator[Session]:
    """One atomic write: commits on success, rolls back everything on any error.

    Bumps the store revision inside the same transaction (:func:`bump_revision`), so every cache keyed
    on it sees the change exactly when the data does. A ``bookkeeping`` write (a login's last-seen
    time) changes nothing any page or report shows, so it leaves the revision, and every cache, alone.
    """
    turn = _sqlite_write_turn(engine.url.database) if is_sqlite(engine) else nullcontext()
    with turn, Session(engine, expire_on_commit=False) as session, session.begin():
        session.connection(execution_options={"write": True})
        yield session
        if not bookkeeping:
            bump_revision(session)


@contextmanager
def _sqlite_write_turn(database: str | None) -> Iterator[None]:
    """Hold the store's advisory write lock from before BEGIN until after COMMIT (see the module doc)."""
    if fcntl is None or not database or database == ":memory:" or not Path(database).exists():
        yield
        return
    descriptor = os.open(f"{database}-writer", os.O_RDWR | os.O_CREAT, 0o644)
    if not _take_turn(descriptor):
        os.close(descriptor)
        raise StoreBusy(
            "The store is busy with other writes (an import?) and did not save this; try again in a moment."
        )
    try:
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _take_turn(descriptor: int) -> bool:
    """Lock ``descriptor`` exclusively within :data:`WRITE_WAIT_S`; False if the wait ran out.

    Tries again every half millisecond: a waiter gets the lock within that of its release, whereas
    SQLite's busy handler may sleep 100 ms while the lock is free (and a blocking ``flock`` proved far
    slower under many waiting processes).
    """
    deadline = time.monotonic() + WRITE_WAIT_S
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL_S)


# The advisory-lock key space of names being made (:func:`hold_name`); the second key is the name's hash.
_NAME_LOCKS = 0x5A11_0001


def hold_name(session: Session, *name: str | int) -> None:
    """Wait until no other transaction holds ``name`` (a row's unique name, in parts), then hold it until
    this one ends (PostgreSQL).

    A row looked up by its unique name and made when missing (a dataset, a label set) was looked up by
    two transactions at once, found missing by both and inserted by both: the second insert waited for
    the first transaction, then failed on the unique constraint, a crash for whoever made it. Held
    first, the name makes the second wait before it looks, and then find the row the first made. Two
    names of different things may share a hash: they then only take turns. The name is taken within the
    store's schema, as advisory locks are the database's: stores in other schemas of one database (each
    test run's, say) do not wait for each other's names. On SQLite, writes take turns already (the
    store's write turn), so nothing is needed."""
    if session.get_bind().dialect.name != "postgresql":
        return
    session.execute(
        text("SELECT pg_advisory_xact_lock(:space, hashtext(current_schema() || ' ' || :name))"),
        {"space": _NAME_LOCKS, "name": json.dumps(name)},
    )


def upsert_insert(session: Session, table: Any) -> Any:
    """An INSERT into ``table`` that takes ``ON CONFLICT`` clauses, in the session's database's own
    dialect (PostgreSQL and SQLite spell them alike). The dialect is imported when first needed:
    PostgreSQL's pulls in asyncio, which a SQLite command has no use for."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


def bump_revision(session: Session) -> None:
    """Count one write on one of :data:`REVISION_SHARDS` counters, chosen at random.

    A single counter row would be locked by every write from its update until its commit (the commit's
    disk flush included), so concurrent writes on PostgreSQL would all queue on it; spread over several
    rows they rarely meet. The revision is the counters' sum (:func:`store_revision`), which still grows
    by exactly one with each commit.
    """
    table = StoreRevision.__table__
    statement = (
        upsert_insert(session, table)
        .values(id=random.randint(1, REVISION_SHARDS), revision=1)
        .on_conflict_do_update(index_elements=[table.c.id], set_={"revision": table.c.revision + 1})
    )
    session.execute(statement)


# Connections one call reads on at once: a few cores' worth, so several people opening dashboards
# together stay well inside the engine's connection pool.
MAX_READERS = 4


def shares_store(engine: Engine) -> bool:
    """Whether every connection of ``engine`` reaches the same store (not so for SQLite in memory, where
    each thread's connection has a database of its own), so reads may run on several at once."""
    return engine.dialect.name != "sqlite" or engine.url.database not in (None, "", ":memory:")


def store_revision(engine: Engine) -> int:
    """The current store revision: changes whenever any write commits."""
    with engine.connect() as connection:
        return revision_of(connection)


def revision_of(connection: Connection) -> int:
    """The store revision ``connection`` sees (in a transaction: as of its snapshot)."""
    value = connection.exec_driver_sql("SELECT COALESCE(SUM(revision), 0) FROM store_revision").scalar()
    return int(value or 0)
