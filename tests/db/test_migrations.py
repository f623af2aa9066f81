"""The Alembic migrations produce exactly the schema the models describe, on both databases."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, insert, inspect, select
from sqlalchemy.exc import IntegrityError

from db import models as m
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


def _downgrade(engine, revision: str) -> None:
    """Take the store back to ``revision`` with Alembic, in one transaction."""
    from alembic import command

    from db.migrate import alembic_config

    with engine.connect().execution_options(write=True) as connection, connection.begin():
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def test_a_store_behind_the_head_is_upgraded(engine) -> None:
    _downgrade(engine, "0003")
    assert current_revision(engine) == "0003"
    upgrade(engine)
    assert current_revision(engine) == HEAD


def test_a_store_with_no_schema_has_no_revision(tmp_path) -> None:
    from db.engine import make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == HEAD


def _sentence_label_check(engine) -> str:
    """The sentence-label CHECK as the database itself holds it."""
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            sql = connection.exec_driver_sql(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'sentence_labels'"
            ).scalar_one()
            return next(line for line in sql.splitlines() if "ck_sentence_label" in line)
        return connection.exec_driver_sql(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conname = 'ck_sentence_label' AND conrelid = 'sentence_labels'::regclass"
        ).scalar_one()


def _lists_values(check: str) -> bool:
    """Whether a CHECK tests a value against a list (PostgreSQL shows ``IN (…)`` as ``= ANY (ARRAY…)``)."""
    return " IN " in check.upper() or "ANY (" in check.upper()


def _table_shape(engine) -> tuple[list[str], ...]:
    """The sentence-label table's indexes, unique constraints and foreign keys, in a stable order."""
    inspector = inspect(engine)
    return tuple(
        sorted(repr(entry) for entry in found("sentence_labels"))
        for found in (inspector.get_indexes, inspector.get_unique_constraints, inspector.get_foreign_keys)
    )


def _gold_ids(engine) -> tuple[int, int, int]:
    """(item, sentence, label set) of a sentence of the small gold dataset, imported for the test, in a
    label set of its own with no labels yet (the gold set has one on every sentence)."""
    from db.access import OPERATOR
    from db.importer import import_bundle
    from tests.db.import_samples import gold_bundle

    import_bundle(engine, gold_bundle(), actor=OPERATOR)
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        dataset_id = connection.execute(select(m.Dataset.id)).scalar_one()
        item_id, sentence_id = connection.execute(select(m.Sentence.item_id, m.Sentence.id).limit(1)).one()
        connection.execute(insert(m.LabelSet).values(dataset_id=dataset_id, kind="human", name="check"))
        label_set_id = connection.execute(
            select(m.LabelSet.id).where(m.LabelSet.name == "check")
        ).scalar_one()
    return item_id, sentence_id, label_set_id


def _label_accepted(engine, ids: tuple[int, int, int], label: str) -> bool:
    """Whether the store takes a sentence label ``label`` (tried in a transaction that is rolled back)."""
    item_id, sentence_id, label_set_id = ids
    row = {"label_set_id": label_set_id, "sentence_id": sentence_id, "item_id": item_id, "label": label}
    with engine.connect().execution_options(write=True) as connection, connection.begin() as transaction:
        try:
            connection.execute(insert(m.SentenceLabel).values(**row))
        except IntegrityError:
            return False
        finally:
            transaction.rollback()
    return True


def test_the_sentence_label_check_is_written_without_in_and_admits_exactly_the_three_labels(engine) -> None:
    """Migration 0005: the same values admitted, as comparisons joined by OR (SQLite builds a table
    of an ``IN`` list's values on every row of a bulk insert)."""
    ids = _gold_ids(engine)
    check = _sentence_label_check(engine)
    assert not _lists_values(check) and "'unknown'" in check
    for label in ("correct", "incorrect", "unknown"):
        assert _label_accepted(engine, ids, label)
    for label in ("Correct", "wrong", "", "correct "):
        assert not _label_accepted(engine, ids, label)
    shape = _table_shape(engine)
    try:
        _downgrade(engine, "0004")
        assert _lists_values(_sentence_label_check(engine))
        assert _label_accepted(engine, ids, "unknown") and not _label_accepted(engine, ids, "wrong")
    finally:
        upgrade(engine)
    assert _table_shape(engine) == shape  # SQLite rebuilt the table twice: its keys and indexes are kept
    assert not _lists_values(_sentence_label_check(engine))
    assert _label_accepted(engine, ids, "incorrect") and not _label_accepted(engine, ids, "wrong")
    with engine.connect() as connection:  # the rebuilt table kept its rows
        assert connection.execute(select(func.count()).select_from(m.SentenceLabel)).scalar_one() == 16
