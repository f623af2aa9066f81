"""The Alembic migrations produce exactly the schema the models describe, on both databases."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from db.migrate import current_revision, head_revision, upgrade
from db.models import Base


def test_migrated_schema_matches_models(engine) -> None:
    assert current_revision(engine) == head_revision()
    upgrade(engine)  # idempotent
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []
