"""The Alembic migrations produce exactly the schema the models describe, on both databases."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from db.migrate import HEAD, current_revision, head_revision, upgrade
from db.models import Base


def test_migrated_schema_matches_models(engine) -> None:
    assert current_revision(engine) == head_revision()
    upgrade(engine)  # idempotent
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []


def test_the_head_upgrade_checks_against_is_the_scripts_head(engine) -> None:
    assert head_revision() == HEAD
    with engine.connect() as connection:
        assert current_revision(engine) == MigrationContext.configure(connection).get_current_revision()


def test_a_store_behind_the_head_is_upgraded(engine) -> None:
    from alembic import command

    from db.migrate import alembic_config

    with engine.connect().execution_options(write=True) as connection, connection.begin():
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0003")
    assert current_revision(engine) == "0003"
    upgrade(engine)
    assert current_revision(engine) == HEAD


def test_a_store_with_no_schema_has_no_revision(tmp_path) -> None:
    from db.engine import make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == HEAD
