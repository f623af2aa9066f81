"""Alembic environment: runs on the connection handed over by :func:`db.migrate.upgrade`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from db.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:  # invoked from the alembic command line
        from db.engine import make_engine

        engine = make_engine(config.get_main_option("sqlalchemy.url") or None)
        with engine.connect() as connection:
            _run(connection)
        return
    _run(connection)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("Offline migrations are not supported; run against a database.")
run_migrations_online()
