"""A whole store copied into an empty one (``db.store_copy``, ``cli.py copy-store``), between real SQLite
files and real PostgreSQL schemas: every row of every table arrives with its id, the copy goes on working
as a store (new ids, undo of an earlier import, a re-import finding nothing to change), and a copy that
cannot be made writes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, inspect, select, text

from cli import main
from db import models as m
from db.access import OPERATOR
from db.engine import make_engine
from db.import_undo import recent_imports, undo_import
from db.importer import import_bundle
from db.migrate import current_revision, upgrade, upgrade_by_migrations
from db.repositories.accounts import add_user, start_session
from db.repositories.assignments import assign
from db.store_copy import CopyRefused, copied_tables, copy_store
from demo.build import build_demo_bundle
from tests.conftest import PG_URL
from tests.pg_schemas import own_schema

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_url(pg_schema_url: str) -> Iterator[str]:  # pg_schema_url: skips, or fails in CI, when PG is down
    with own_schema(PG_URL, "copy") as url:
        yield url


def contents(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every copied table's rows in order of id, times in UTC (SQLite gives them back without a zone)."""

    def value(v: Any) -> Any:
        if isinstance(v, datetime):
            return (v.replace(tzinfo=UTC) if v.tzinfo is None else v).astimezone(UTC)
        return v

    with engine.connect() as connection:
        return {
            t.name: [tuple(map(value, row)) for row in connection.execute(select(t).order_by(t.c.id))]
            for t in copied_tables()
        }


def raw(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every copied table's rows as the database gives them, untyped (JSON as its text)."""
    with engine.connect() as connection:
        return {
            t.name: [tuple(r) for r in connection.exec_driver_sql(f'SELECT * FROM "{t.name}" ORDER BY id')]
            for t in copied_tables()
        }


def team_store(url: str, images: Path) -> Engine:
    """A store with the demo dataset, accounts, a login, assignments and a second import to undo."""
    engine = make_engine(url)
    upgrade(engine)
    import_bundle(engine, build_demo_bundle(images, n_scenes=20), actor=OPERATOR, source="demo")
    ann = add_user(engine, "ann", "annotator", "correct horse battery", actor=OPERATOR)
    bob = add_user(engine, "bob", "annotator", "correct horse battery", actor=OPERATOR)
    start_session(engine, ann.id)
    with engine.connect() as connection:
        dataset_id = connection.execute(select(m.Dataset.id)).scalar_one()
    assign(engine, dataset_id, "spans", [ann.id, bob.id], 1, actor=OPERATOR)
    return engine


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Engine]:
    engine = team_store(f"sqlite:///{tmp_path / 'source.db'}", tmp_path / "images")
    yield engine
    engine.dispose()


def test_every_row_goes_to_postgresql_and_back_as_it_was(source: Engine, pg_url: str, tmp_path: Path) -> None:
    before = contents(source)
    assert before["assignments"] and before["annotators"] and before["edit_log"] and before["sentence_labels"]
    middle = make_engine(pg_url)
    copied = copy_store(source, middle)
    assert copied.rows == {name: len(rows) for name, rows in before.items()}
    assert contents(middle) == before
    back = make_engine(f"sqlite:///{tmp_path / 'back.db'}")
    copy_store(middle, back)
    assert contents(back) == before
    # Every row as SQLite keeps it: the JSON columns' text (an import compares a label's meta as the
    # store keeps it), and a SQL NULL where the JSON column holds none (not the JSON text "null").
    assert raw(source) == raw(back)
    with source.connect() as connection:  # (the import's entry)
        assert connection.scalar(text('SELECT COUNT(*) FROM edit_log WHERE "before" IS NULL'))
    for engine in (middle, back):
        with engine.connect() as connection:
            assert connection.scalar(select(m.LoginSession.id)) is None  # a login stays with its store
        engine.dispose()


def test_a_copy_on_postgresql_goes_on_with_new_ids_undo_and_reimport(
    source: Engine, pg_url: str, tmp_path: Path
) -> None:
    target = make_engine(pg_url)
    copy_store(source, target)
    # New rows take ids after the copied ones (PostgreSQL's sequences were left at 1 by the copy).
    carol = add_user(target, "carol", "reviewer", "correct horse battery", actor=OPERATOR)
    assert carol.id > max(r[0] for r in contents(source)["annotators"])
    with target.connect() as connection:  # PostgreSQL knows the copied tables' sizes (ANALYZE ran)
        sizes: dict[str, float] = dict(
            connection.execute(
                text(
                    "SELECT relname, reltuples FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
                    "AND relname IN ('items', 'sentence_labels')"
                )
            ).all()
        )
    before = contents(source)
    assert sizes == {"items": len(before["items"]), "sentence_labels": len(before["sentence_labels"])}
    copied = contents(target)
    again = import_bundle(target, build_demo_bundle(tmp_path / "images", n_scenes=20), actor=OPERATOR)
    assert again.items_created == 0 and sum(again.changes.unchanged.values()) > 0
    assert {t: r for t, r in contents(target).items() if t != "edit_log"} == {
        t: r for t, r in copied.items() if t != "edit_log"
    }  # the same file again finds nothing to change
    # An import made before the copy is undone on the copy as on the source.
    (entry,) = recent_imports(source)
    undone = undo_import(target, entry.log_id, actor=OPERATOR)
    # (The undo's own log entry is one further on the copy, which logged the re-import.)
    assert replace(undone, log_id=0) == replace(undo_import(source, entry.log_id, actor=OPERATOR), log_id=0)
    after = contents(target)
    assert after["sentence_labels"] != copied["sentence_labels"]
    assert {t: r for t, r in after.items() if t not in ("edit_log", "annotators")} == {
        t: r for t, r in contents(source).items() if t not in ("edit_log", "annotators")
    }
    target.dispose()


def test_times_are_copied_as_utc_whatever_the_time_zone_of_postgresql(
    source: Engine, pg_url: str, tmp_path: Path
) -> None:
    tokyo = make_engine(pg_url.replace("options=", "options=-ctimezone%3DAsia/Tokyo%20"))
    copy_store(source, tokyo)
    with tokyo.connect() as connection:
        assert connection.scalar(text("SHOW timezone")) == "Asia/Tokyo"
    assert contents(tokyo) == contents(source)  # the same instants (a SQLite time is UTC, not Tokyo's)
    back = make_engine(f"sqlite:///{tmp_path / 'back.db'}")
    copy_store(tokyo, back)
    query = text("SELECT id, at FROM edit_log ORDER BY id")
    with source.connect() as a, back.connect() as b:
        assert a.execute(query).all() == b.execute(query).all()  # the same text: UTC, not Tokyo's hour
    tokyo.dispose()
    back.dispose()


def test_a_target_holding_data_is_refused_and_left_as_it_was(source: Engine, tmp_path: Path) -> None:
    target = team_store(f"sqlite:///{tmp_path / 'other.db'}", tmp_path / "images")
    before = contents(target)
    with pytest.raises(CopyRefused, match=r"not empty \(\d+ annotators, 1 datasets"):
        copy_store(source, target)
    assert contents(target) == before
    with pytest.raises(CopyRefused, match="same store"):
        copy_store(source, source)


def test_values_postgresql_would_refuse_are_named_and_nothing_is_written(source: Engine, pg_url: str) -> None:
    with source.begin() as connection:  # an older SQLite store kept what PostgreSQL does not
        connection.execute(text("UPDATE items SET external_id = :long WHERE id = 3"), {"long": "x" * 301})
        connection.execute(text("UPDATE label_sets SET name = :nul WHERE id = 2"), {"nul": "nul\x00name"})
    target = make_engine(pg_url)
    with pytest.raises(CopyRefused) as refused:
        copy_store(source, target)
    assert refused.value.problems == [
        "items row 3, column external_id: 301 characters, over the 300 the column keeps",
        "label_sets row 2, column name: holds a NUL character, which PostgreSQL does not keep in text",
    ]
    assert all(not rows for rows in contents(target).values())
    target.dispose()


def test_the_command_copies_and_says_what_and_where(
    source: Engine, sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source_url = str(source.url)
    target_url = sqlite_url  # a store of this version already, and empty: as new as a new file
    assert main(["copy-store", "--db", source_url, "--to", target_url, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["ok"] and said["rows"]["assignments"] == len(contents(source)["assignments"])
    assert said["image_roots"] == [str(tmp_path / "images")]
    assert main(["copy-store", "--db", source_url, "--to", target_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the target store is not empty") and "nothing was written" in err


def test_the_copy_is_of_one_moment_while_the_source_goes_on_writing(source: Engine, pg_url: str) -> None:
    before = contents(source)

    def run(sql: str) -> Callable[[], None]:
        def write() -> None:
            with source.begin() as connection:  # another process's write, committed during the copy
                connection.exec_driver_sql(sql)

        return write

    writes = iter(
        [
            lambda: add_user(source, "late", "annotator", "correct horse battery", actor=OPERATOR) and None,
            run("DELETE FROM assignments WHERE id = (SELECT MIN(id) FROM assignments)"),
            run("UPDATE items SET prompt = 'changed meanwhile'"),
        ]
    )

    def meanwhile(table: str, done: int, in_all: int) -> None:
        write = next(writes, None)
        if write is not None:
            write()

    target = make_engine(pg_url)
    copied = copy_store(source, target, progress=meanwhile, batch_rows=7)  # many batches per table
    assert next(writes, None) is None and contents(source) != before
    assert contents(target) == before and copied.total == sum(map(len, before.values()))
    target.dispose()


def test_a_target_that_is_not_new_is_refused_before_anything_is_written(
    source: Engine, tmp_path: Path
) -> None:
    foreign = make_engine(f"sqlite:///{tmp_path / 'foreign.db'}")
    with foreign.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(CopyRefused, match=r"holds 1 table\(s\) that are not a Spanlight store's"):
        copy_store(source, foreign)
    assert inspect(foreign).get_table_names() == ["customers"]
    older = make_engine(f"sqlite:///{tmp_path / 'older.db'}")
    upgrade_by_migrations(older, "0008")
    with pytest.raises(CopyRefused, match="another schema version"):
        copy_store(source, older)
    assert current_revision(older) == "0008"
    foreign.dispose()
    older.dispose()


def test_rows_postgresql_refuses_otherwise_are_named_without_their_values(
    source: Engine, pg_url: str
) -> None:
    with source.begin() as connection:  # SQLite's loose typing kept a word where a number belongs
        connection.exec_driver_sql("UPDATE items SET position = 'SECRET-TEXT' WHERE id = 5")
    target = make_engine(pg_url)
    with pytest.raises(CopyRefused) as refused:
        copy_store(source, target, batch_rows=3)
    said = str(refused.value)
    assert said.startswith("the target refused row 5 of table items (InvalidTextRepresentation")
    assert "SECRET" not in said and "nothing was written" in said
    assert all(not rows for rows in contents(target).values())
    target.dispose()


def test_nan_in_json_and_an_unreadable_time_are_named(source: Engine, pg_url: str, tmp_path: Path) -> None:
    with source.begin() as connection:
        connection.exec_driver_sql(
            'UPDATE sentence_labels SET metadata = \'{"agree": NaN, "note": "NaN here is text"}\' WHERE id = 4'
        )
        connection.exec_driver_sql(
            'UPDATE sentence_labels SET metadata = \'{"note": "Infinity"}\' WHERE id = 6'
        )
    target = make_engine(pg_url)
    with pytest.raises(CopyRefused) as refused:
        copy_store(source, target)
    assert refused.value.problems == [
        "sentence_labels row 4, column metadata: holds NaN or Infinity, which PostgreSQL does not keep in JSON"
    ]
    with (
        target.connect() as connection
    ):  # nor were the empty tables analysed (its counts stay, rolled back or not)
        assert (
            connection.scalar(
                text(
                    "SELECT reltuples FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = 'items'"
                )
            )
            == -1
        )
    with source.begin() as connection:
        connection.exec_driver_sql("UPDATE edit_log SET at = 'not a time' WHERE id = 1")
    into_sqlite = make_engine(f"sqlite:///{tmp_path / 'copy.db'}")
    with pytest.raises(CopyRefused, match=r"a row of table edit_log after its first row cannot be read"):
        copy_store(source, into_sqlite)
    assert all(not rows for rows in contents(into_sqlite).values())
    target.dispose()
    into_sqlite.dispose()
