"""The Alembic migrations produce exactly the schema the models describe, on both databases; a new store,
created from the models, is the same store the migrations build."""

from __future__ import annotations

import re
from contextlib import ExitStack
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import delete, func, insert, inspect, select, text
from sqlalchemy.exc import IntegrityError

from db import models as m
from db.engine import make_engine
from db.migrate import HEAD, current_revision, head_revision, upgrade, upgrade_by_migrations
from db.models import Base
from tests.pg_schemas import own_schema


def test_migrated_schema_matches_models(bare_url) -> None:
    engine = make_engine(bare_url)
    try:
        upgrade_by_migrations(engine)
        assert current_revision(engine) == head_revision()
        upgrade(engine)  # idempotent
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert differences == []
    finally:
        engine.dispose()


def _normal_sql(sql: Any) -> str:
    """A CHECK's or default's text with its spacing and outer brackets evened out."""
    text_ = re.sub(r"\s+", " ", str(sql)).strip()
    while text_.startswith("(") and text_.endswith(")") and _balanced(text_[1:-1]):
        text_ = text_[1:-1].strip()
    return text_


def _balanced(text_: str) -> bool:
    depth = 0
    for char in text_:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _index_text(index: Any) -> str:
    """An index as the database reports it, a partial index's condition as its text (reflected, it is
    a clause object whose repr names only its place in memory)."""
    options = {key: _normal_sql(value) for key, value in index.get("dialect_options", {}).items()}
    return repr({**index, "dialect_options": options})


def _schema(engine) -> dict[str, Any]:
    """Everything a store's schema says, as the database reports it, plus the rows it is made with."""
    inspector = inspect(engine)
    tables: dict[str, Any] = {}
    for name in sorted(inspector.get_table_names()):
        tables[name] = {
            # By name: a column a later migration added comes last in a migrated table, and no statement
            # relies on a column's position (every one names its columns).
            "columns": sorted(
                (
                    c["name"],
                    str(c["type"]),
                    c["nullable"],
                    _normal_sql(c["default"]) if c["default"] else None,
                )
                for c in inspector.get_columns(name)
            ),
            "primary key": inspector.get_pk_constraint(name),
            "foreign keys": sorted(map(repr, inspector.get_foreign_keys(name))),
            "indexes": sorted(map(_index_text, inspector.get_indexes(name))),
            "unique": sorted(map(repr, inspector.get_unique_constraints(name))),
            "checks": sorted(
                (c["name"], _normal_sql(c["sqltext"])) for c in inspector.get_check_constraints(name)
            ),
        }
    with engine.connect() as connection:
        rows = {  # every table's: a new store holds only what a migration seeds
            table: sorted(map(tuple, connection.execute(text(f'SELECT * FROM "{table}"'))))
            for table in tables
        }
        extra = {"views": sorted(inspector.get_view_names())}
        if connection.dialect.name == "postgresql":
            extra["sequences"] = sorted(inspector.get_sequence_names())
            extra["triggers"] = sorted(
                connection.execute(
                    text(
                        "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                        " WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace"
                    )
                ).all()
            )
    return {"tables": tables, "rows": {table: found for table, found in rows.items() if found}, **extra}


def test_a_new_store_is_created_from_the_models_exactly_as_the_migrations_build_it(
    bare_url, tmp_path
) -> None:
    """:func:`upgrade` of a database with no tables skips the migrations: the store it makes must be the
    one the migrations make, table by table, with the same seeded rows and the same revision."""
    with ExitStack() as stack:
        if bare_url.startswith("sqlite"):
            migrated_url = f"sqlite:///{tmp_path / 'migrated.db'}"
        else:  # a second bare schema beside the fixture's
            migrated_url = stack.enter_context(own_schema(bare_url.split("?")[0], "mig"))
        created, migrated = make_engine(bare_url), make_engine(migrated_url)
        stack.callback(created.dispose)
        stack.callback(migrated.dispose)
        upgrade(created)
        upgrade_by_migrations(migrated)
        assert current_revision(created) == current_revision(migrated) == HEAD
        with created.connect() as connection:
            assert MigrationContext.configure(connection).get_current_revision() == HEAD
        new, old = _schema(created), _schema(migrated)
        assert len(new["tables"]) == len(Base.metadata.tables) + 1  # and alembic_version
        assert set(new["rows"]) == {"store_revision", "alembic_version"}
        assert new == old


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


_TOGETHER = """
import sys, time
from db.engine import make_engine
from db.migrate import upgrade
engine = make_engine(sys.argv[1])
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # all start at one moment, imports done
upgrade(engine)
"""


def test_processes_starting_together_on_a_new_store_create_it_once(bare_url) -> None:
    """Several app processes started at once on one new database: one creates the schema, the others
    wait for its lock and find it there (none fails, the seeded row is there once)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    start = str(time.time() + 5)  # past every process's start-up, even on a busy machine
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _TOGETHER, bare_url, start], cwd=root, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outcomes = [(process.communicate(timeout=300)[1], process.returncode) for process in processes]
    assert [code for _, code in outcomes] == [0, 0, 0, 0], outcomes
    engine = make_engine(bare_url)
    try:
        assert current_revision(engine) == HEAD
        assert _schema(engine)["rows"] == {"store_revision": [(1, 0)], "alembic_version": [(HEAD,)]}
    finally:
        engine.dispose()


def test_runs_stored_before_runs_were_marked_are_marked_as_given_every_item(engine) -> None:
    """Migration 0006: a span run without marks or raw outputs was read as given every item; it gets the
    marks that say so, so a later partial import into it keeps its first import's items. A run with raw
    outputs, one that already has marks and a scorer (no span) are left as they are."""
    from analysis.dataset_spans import load_dataset_spans
    from db.access import OPERATOR
    from db.importer import import_bundle
    from formats.records import (
        Annotations,
        Bundle,
        DatasetRecord,
        ItemRecord,
        LabelSetRecord,
        RawOutputRecord,
        SentenceScoreRecord,
        SpanRecord,
    )

    def run(name: str, **given: Annotations) -> LabelSetRecord:
        return LabelSetRecord("detector", name, annotations=list(given.values()))

    red = [SpanRecord(2, 5)]
    items = [ItemRecord(ext, "A red cat.") for ext in "abc"]
    old, later = run("old", a=Annotations("a", spans=red)), run("marked", a=Annotations("a", spans=red))
    output = run("output", a=Annotations("a", spans=red, raw_output=RawOutputRecord("A [red] cat.", True)))
    scorer = run("scorer", a=Annotations("a", sentence_scores=[SentenceScoreRecord(0, 10.0)]))
    record = DatasetRecord("d", "canonical", label_kinds=["span", "sentence"])
    import_bundle(engine, Bundle(record, items, [old, later, output, scorer]), actor=OPERATOR)
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        ids = dict(connection.execute(select(m.LabelSet.name, m.LabelSet.id)).all())
        for name in ("old", "output"):  # as stored before runs were marked
            connection.execute(m.ItemStatus.__table__.delete().where(m.ItemStatus.label_set_id == ids[name]))
    _downgrade(engine, "0005")
    upgrade(engine)
    with engine.connect() as connection:
        marked = {
            name: connection.execute(
                select(func.count()).where(
                    m.ItemStatus.label_set_id == ids[name], m.ItemStatus.page == "spans"
                )
            ).scalar_one()
            for name in ("old", "marked", "output", "scorer")
        }
    assert marked == {"old": 3, "marked": 1, "output": 0, "scorer": 0}
    spans = load_dataset_spans(engine, 1)
    assert spans.ran_on(ids["old"]).all() and spans.ran_on(ids["marked"]).tolist() == [True, False, False]
    assert spans.ran_on(ids["output"]).tolist() == [True, False, False]


def test_raw_outputs_stored_before_the_cut_mark_read_as_not_cut_and_a_cut_one_keeps_it(engine) -> None:
    """Migration 0007: raw outputs say whether the endpoint cut the answer at its token limit. Outputs
    stored before it are not known to be cut; one written afterwards keeps its mark."""
    from db.access import OPERATOR
    from db.exporter import export_bundle
    from db.importer import import_bundle
    from formats.records import (
        Annotations,
        Bundle,
        DatasetRecord,
        ItemRecord,
        LabelSetRecord,
        RawOutputRecord,
    )

    items = [ItemRecord(ext, "A red cat.") for ext in "ab"]
    whole = Annotations("a", raw_output=RawOutputRecord("<Tagged_Text>A red cat.</Tagged_Text>", True))
    run = LabelSetRecord("detector", "run", annotations=[whole])
    import_bundle(engine, Bundle(DatasetRecord("d", "canonical"), items, [run]), actor=OPERATOR)
    _downgrade(engine, "0006")
    assert "cut" not in {c["name"] for c in inspect(engine).get_columns("raw_outputs")}
    upgrade(engine)
    cut = Annotations(
        "b", raw_output=RawOutputRecord("<Tagged_Text>A red", False, parse_error="no end", cut=True)
    )
    more = LabelSetRecord("detector", "run", annotations=[cut])
    import_bundle(engine, Bundle(DatasetRecord("d", "canonical"), [], [more]), actor=OPERATOR)
    (stored,) = export_bundle(engine, "d", ["detector:run"], actor=OPERATOR).label_sets
    marks = {a.item: a.raw_output.cut for a in stored.annotations if a.raw_output is not None}
    assert marks == {"a": False, "b": True}


def test_a_process_running_the_code_from_before_the_cut_mark_still_writes_raw_outputs(engine) -> None:
    """A team's app processes are not all upgraded at once: one still running the code from before
    migration 0007 writes a raw output without naming ``cut``. The store takes it, as not cut (without
    the column's default the write failed on its NOT NULL, and that process's live runs with it)."""
    from db.access import OPERATOR
    from db.importer import import_bundle
    from formats.records import Bundle, DatasetRecord, ItemRecord, LabelSetRecord

    items = [ItemRecord("a", "A red cat.")]
    import_bundle(
        engine,
        Bundle(DatasetRecord("d", "canonical"), items, [LabelSetRecord("detector", "run")]),
        actor=OPERATOR,
    )
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        item_id = connection.execute(select(m.Item.id)).scalar_one()
        label_set_id = connection.execute(select(m.LabelSet.id)).scalar_one()
        columns = "label_set_id, item_id, text, analysis, follows_format, parse_error, version"
        connection.execute(
            text(
                f"INSERT INTO raw_outputs ({columns}) VALUES (:ls, :item, 'A red cat.', NULL, :yes, NULL, 1)"
            ),
            {"ls": label_set_id, "item": item_id, "yes": True},
        )
        assert connection.execute(select(m.RawOutput.cut)).scalar_one() is False


def test_gold_sightings_are_added_to_a_store_with_labels_and_dropped_with_their_item(engine) -> None:
    """Migration 0008: the record of gold shown to a blind annotator, on a store that already holds
    items and accounts. Nothing is recorded for the past (what was shown then cannot be known); a record
    goes with its item, and the downgrade drops the table."""
    from db.access import OPERATOR
    from db.importer import import_bundle
    from db.repositories.annotators import get_or_create_annotator
    from formats.records import Bundle, DatasetRecord, ItemRecord

    import_bundle(
        engine, Bundle(DatasetRecord("d", "canonical"), [ItemRecord("a", "A red cat.")]), actor=OPERATOR
    )
    annotator = get_or_create_annotator(engine, "ann", "annotator")
    _downgrade(engine, "0007")
    assert "gold_sightings" not in inspect(engine).get_table_names()
    upgrade(engine)
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        assert connection.execute(select(func.count()).select_from(m.GoldSighting)).scalar_one() == 0
        item_id, dataset_id = connection.execute(select(m.Item.id, m.Item.dataset_id)).one()
        row = {"dataset_id": dataset_id, "item_id": item_id, "annotator_id": annotator.id, "page": "p"}
        connection.execute(insert(m.GoldSighting).values(shown_at=func.now(), **row))
    with engine.connect().execution_options(write=True) as connection:
        with pytest.raises(IntegrityError), connection.begin():  # one record per annotator and item
            connection.execute(insert(m.GoldSighting).values(shown_at=func.now(), **row))
        with connection.begin():
            connection.execute(delete(m.Item))
            assert connection.execute(select(func.count()).select_from(m.GoldSighting)).scalar_one() == 0
    _downgrade(engine, "0007")
    assert "gold_sightings" not in inspect(engine).get_table_names()
    upgrade(engine)  # the store is shared by the tests after this one: left at the head, as found
    assert current_revision(engine) == HEAD


def test_gold_sightings_take_a_lift_and_a_lifted_one_is_dropped_by_the_downgrade(engine) -> None:
    """Migration 0009: a record made before it keeps locking (no lift); after it, a lifted record and a
    new one of the same annotator and item stand side by side, while two that lock are still refused.
    The downgrade cannot say "lifted", so it drops the lifted records and the one-record constraint is
    back."""
    from db.access import OPERATOR
    from db.importer import import_bundle
    from db.repositories.annotators import get_or_create_annotator
    from formats.records import Bundle, DatasetRecord, ItemRecord

    import_bundle(
        engine, Bundle(DatasetRecord("d", "canonical"), [ItemRecord("a", "A red cat.")]), actor=OPERATOR
    )
    annotator = get_or_create_annotator(engine, "ann", "annotator")
    _downgrade(engine, "0008")
    assert {"lifted_at", "lifted_by_id"}.isdisjoint(
        c["name"] for c in inspect(engine).get_columns("gold_sightings")
    )
    with engine.connect().execution_options(write=True) as connection, connection.begin():
        item_id, dataset_id = connection.execute(select(m.Item.id, m.Item.dataset_id)).one()
        row = {"dataset_id": dataset_id, "item_id": item_id, "annotator_id": annotator.id, "page": "p"}
        connection.execute(
            text(
                "INSERT INTO gold_sightings (dataset_id, item_id, annotator_id, page, shown_at)"
                " VALUES (:dataset_id, :item_id, :annotator_id, :page, CURRENT_TIMESTAMP)"
            ),
            row,
        )
    upgrade(engine)
    assert current_revision(engine) == HEAD
    with engine.connect().execution_options(write=True) as connection:
        with connection.begin():
            assert connection.execute(
                select(m.GoldSighting.lifted_at, m.GoldSighting.lifted_by_id)
            ).all() == [(None, None)]
        with pytest.raises(IntegrityError), connection.begin():  # two records that lock: refused
            connection.execute(insert(m.GoldSighting).values(shown_at=func.now(), **row))
        with connection.begin():
            connection.execute(m.GoldSighting.__table__.update().values(lifted_at=func.now()))
            connection.execute(insert(m.GoldSighting).values(shown_at=func.now(), **row))
            connection.execute(
                insert(m.GoldSighting).values(shown_at=func.now(), lifted_at=func.now(), **row)
            )
            assert connection.execute(select(func.count()).select_from(m.GoldSighting)).scalar_one() == 3
    _downgrade(engine, "0008")
    with engine.connect().execution_options(write=True) as connection:
        with connection.begin():
            assert connection.execute(text("SELECT count(*) FROM gold_sightings")).scalar_one() == 1
        with pytest.raises(IntegrityError), connection.begin():  # one record per annotator and item again
            connection.execute(
                text(
                    "INSERT INTO gold_sightings (dataset_id, item_id, annotator_id, page, shown_at)"
                    " VALUES (:dataset_id, :item_id, :annotator_id, :page, CURRENT_TIMESTAMP)"
                ),
                row,
            )
    upgrade(engine)  # the store is shared by the tests after this one: left at the head, as found
    assert current_revision(engine) == HEAD
