"""Bring a database to the newest schema with Alembic; safe to call at every start.

Several app processes may start at once against one PostgreSQL database, so the upgrade runs under a
transaction-scoped advisory lock there; on SQLite the write lock of ``BEGIN IMMEDIATE`` does the same.

Every command and page start calls :func:`upgrade`, and a store is almost always at the newest schema
already; that is told by one query against :data:`HEAD`, so Alembic (a tenth of a second to import and
read its scripts) is only loaded when there is something to apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# The newest migration's revision (a test holds it equal to Alembic's head of the scripts).
HEAD = "0005"
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
        if not inspect(connection).has_table("alembic_version"):
            return None
        revisions = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return revisions[0] if len(revisions) == 1 else None


def upgrade(engine: Engine) -> None:
    """Apply every pending migration in one transaction (no-op when already at head)."""
    if current_revision(engine) == HEAD:
        return
    from alembic import command

    config = alembic_config()
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_LOCK_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
