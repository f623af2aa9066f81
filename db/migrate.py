"""Bring a database to the newest schema with Alembic; safe to call at every start.

Several app processes may start at once against one PostgreSQL database, so the upgrade runs under a
transaction-scoped advisory lock there; on SQLite the write lock of ``BEGIN IMMEDIATE`` does the same.

Every command and page start calls :func:`upgrade`, and a store is almost always at the newest schema
already; that is told by one query against :data:`HEAD`, so Alembic (a tenth of a second to import and
read its scripts) is only loaded when there is something to apply.

A database with no tables at all (a first start, a first import) is not taken through every migration:
its schema is created from the models and marked as being at :data:`HEAD`, as Alembic's documentation
advises for a new database. Running the five migrations took 0.17–0.25 s of a first 100 K-row import;
creating the tables takes 0.02 s. A test builds one store each way, on both databases, and holds their
schemas (tables, columns, keys, indexes, checks) and seeded rows equal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, insert, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# The newest migration's revision (a test holds it equal to Alembic's head of the scripts).
HEAD = "0009"
_ADVISORY_LOCK_KEY = 0x4A11_5C0E


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str | None:
    """The newest revision of the migration scripts, as Alembic reads them."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the store is at (None for a store with no schema yet)."""
    with engine.connect() as connection:
        return _revision(connection)


def _revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    revisions = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return revisions[0] if len(revisions) == 1 else None


def upgrade(engine: Engine) -> None:
    """Bring the store to :data:`HEAD` in one transaction (no-op when already there): a database with no
    tables gets the newest schema at once, any other store every pending migration."""
    if current_revision(engine) == HEAD:
        return
    with _locked(engine) as connection:
        if _revision(connection) == HEAD:  # another process brought it there while this one waited
            return
        if inspect(connection).get_table_names():
            _run_migrations(connection, "head")
        else:
            _create_newest_schema(connection)


def upgrade_by_migrations(engine: Engine, revision: str = "head") -> None:
    """Take the store to ``revision`` through the migration scripts, even from no schema at all: how
    every store was made before :func:`upgrade` created new ones from the models (the tests compare
    the two)."""
    with _locked(engine) as connection:
        _run_migrations(connection, revision)


@contextmanager
def _locked(engine: Engine) -> Iterator[Connection]:
    """A write transaction that no other process migrating the same store runs beside."""
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_LOCK_KEY})
        yield connection


def _run_migrations(connection: Connection, revision: str) -> None:
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def _create_newest_schema(connection: Connection) -> None:
    """The models' tables, the rows the migrations seed, and Alembic's record that the store is at
    :data:`HEAD` (its ``alembic_version`` table, as Alembic itself creates it).

    A migration that seeds rows, or makes anything the models do not describe (a view, a trigger),
    must be mirrored here; the test comparing this store with the migrated one fails until it is."""
    from db.models import Base, StoreRevision

    Base.metadata.create_all(connection, checkfirst=False)  # the database has no tables
    connection.execute(insert(StoreRevision).values(id=1, revision=0))  # as 0001 seeds it
    connection.execute(
        text(
            "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL,"
            " CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
        )
    )
    connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"), {"head": HEAD})
