"""Bring a database to the newest schema with Alembic; safe to call at every start.

Several app processes may start at once against one PostgreSQL database, so the upgrade runs under a
transaction-scoped advisory lock there; on SQLite the write lock of ``BEGIN IMMEDIATE`` does the same.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_ADVISORY_LOCK_KEY = 0x4A11_5C0E


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Apply every pending migration in one transaction (no-op when already at head)."""
    if current_revision(engine) == head_revision():
        return
    config = alembic_config()
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_LOCK_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
