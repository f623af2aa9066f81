"""A whole store copied into an empty one: how a team moves from the embedded SQLite file to PostgreSQL
when it outgrows one machine (or keeps a PostgreSQL store's copy in a file).

An export carries a dataset's items and label sets, but not what a team has built around them: accounts,
assignments, item statuses, gold shown to blind annotators, promotions, ratings and the edit log that
undo and history read. A copy carries every row of every table, with its id, so nothing that points at a
row (an edit log entry, an assignment) points elsewhere afterwards. JSON columns are copied as the text
the source keeps (a SQL NULL stays NULL, not the JSON ``null``).

- The target must be new: a database (or schema) with no tables, or a Spanlight store of this version
  holding no rows. Anything else is refused before anything is written to it, even its schema.
- Both stores are first brought to this version's schema, as every command does; a new target gets it
  then, and keeps it (empty) if the copy is refused afterwards.
- The source is read in one transaction, so the copy is of one moment even while the app goes on
  writing to it (SQLite's snapshot of its write-ahead log; PostgreSQL's repeatable read).
- The target's rows are written in one transaction, tables in the order of their foreign keys and rows
  in the order of their ids, in batches: a copy refused or failed midway writes no row.
- PostgreSQL keeps text columns to their length (``VARCHAR(n)``) and refuses a NUL character in text and
  ``NaN`` or ``Infinity`` in JSON, which SQLite keeps: such values are found first and reported by table,
  row id and column. A row the target refuses for another reason (a value of another type, which
  SQLite's loose typing let in) is found by writing its batch again row by row, and named by table, id
  and the database's kind of error. A refusal never shows a stored value: it came from a file or a
  person, and may say anything.
- Into PostgreSQL the rows go by ``COPY``, and each table that received rows is analysed once all are
  written, so the first pages on the new store are planned with its statistics (a new store's tables have none until autovacuum
  gets to them; the copy itself took as long without: 119 s against 117 s for 2.6 M rows).
- Times are written as UTC whatever the database's time zone: SQLite gives them back without a zone,
  PostgreSQL in its session's.
- Login sessions are not copied: everyone logs in again on the new store, and a session cookie of the
  old one opens nothing there. Image folders are not copied either: a dataset keeps the path of its
  folder, which the app serving the new store must reach (:attr:`StoreCopy.image_roots` names them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from sqlalchemy import (
    JSON,
    Connection,
    Engine,
    String,
    Table,
    Text,
    bindparam,
    cast,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.exc import DBAPIError

from db import models as m
from db.copy_rows import copy_rows
from db.engine import hold_name, write_session
from db.migrate import HEAD, current_revision, upgrade

# Not copied: a login belongs to the store it was made on.
NOT_COPIED = frozenset({"login_sessions", "store_revision"})
# Rows read and written at a time: memory stays bounded however large the store.
BATCH_ROWS = 5_000
# Where a copy goes, said in every refusal of a target.
_INTO_NEW = "a copy goes into a new store (a new SQLite file, or an empty PostgreSQL database or schema)"
# Problems listed in a refusal (the rest are counted).
PROBLEMS_SHOWN = 20


class CopyRefused(Exception):
    """The copy was not made (the target holds data, or rows the target cannot keep); nothing was written."""

    def __init__(self, reason: str, problems: list[str] | None = None, more: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.problems = problems or []
        self.more = more

    def __str__(self) -> str:
        lines = [self.reason, *self.problems]
        if self.more:
            lines.append(f"… and {self.more:,} more")
        return "\n".join(lines)


@dataclass
class StoreCopy:
    """What a copy wrote: rows per table (in the order written) and the image folders datasets name."""

    rows: dict[str, int] = field(default_factory=dict)
    image_roots: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def copied_tables() -> list[Table]:
    """The store's tables a copy writes, parents before the rows that point at them."""
    return [t for t in m.Base.metadata.sorted_tables if t.name not in NOT_COPIED]


def copy_store(
    source: Engine,
    target: Engine,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    batch_rows: int = BATCH_ROWS,
) -> StoreCopy:
    """Copy every row of ``source`` into ``target`` (see the module doc); both are first brought to the
    newest schema. ``progress(table, rows_written, rows_in_all)`` is called after each batch. Raises
    :class:`CopyRefused` when the target holds data or a row cannot be kept there."""
    if source.url == target.url:
        raise CopyRefused("the source and the target are the same store")
    _refuse_unless_new(target)
    upgrade(source)
    upgrade(target)
    tables = copied_tables()
    check = _Check(target.dialect.name == "postgresql")
    result = StoreCopy()
    with source.connect() as reading:
        if source.dialect.name == "postgresql":
            reading = reading.execution_options(isolation_level="REPEATABLE READ")
        with reading.begin():
            in_all = sum(_count(reading, t) for t in tables)
            with write_session(target) as session:
                hold_name(session, "store copy")  # a second copy into the same database waits, then refuses
                writing = session.connection()
                _refuse_unless_empty(writing, tables)
                done = 0
                for table in tables:
                    result.rows[table.name] = 0
                    for rows in _batches(reading, table, batch_rows):
                        check.rows(table, rows)
                        if not check.problems:
                            _write_batch(writing, table, rows)
                        result.rows[table.name] += len(rows)
                        done += len(rows)
                        if progress is not None:
                            progress(table.name, done, in_all)
                if check.problems:
                    raise CopyRefused(
                        f"{check.count:,} value(s) in the source cannot be kept by the target; nothing was "
                        "written. Shorten or clean them in the source, then copy again:",
                        check.problems,
                        check.count - len(check.problems),
                    )
                if target.dialect.name == "postgresql":
                    _continue_ids(writing, tables)
                    for table in tables:  # statistics for the pages on the new store (see the module doc)
                        if result.rows[table.name]:
                            writing.exec_driver_sql(f'ANALYZE "{table.name}"')
            result.image_roots = sorted(
                {r for (r,) in reading.execute(select(m.Dataset.image_root)) if r}, key=str
            )
    return result


def _count(connection: Connection, table: Table) -> int:
    return int(connection.scalar(select(func.count()).select_from(table)) or 0)


def _refuse_unless_empty(connection: Connection, tables: list[Table]) -> None:
    held = {t.name: n for t in tables if (n := _count(connection, t))}
    if held:
        listed = ", ".join(f"{n:,} {name}" for name, n in held.items())
        raise CopyRefused(f"the target store is not empty ({listed}): {_INTO_NEW}; nothing was written")


def _refuse_unless_new(target: Engine) -> None:
    """Refuse, before anything is written to it, a target that holds anything but an empty store of this
    version: tables of something else, a store of another schema version, or rows."""
    present = set(inspect(target).get_table_names())
    if not present:
        return
    others = present - set(m.Base.metadata.tables) - {"alembic_version"}
    if others:
        raise CopyRefused(
            f"the target holds {len(others)} table(s) that are not a Spanlight store's: {_INTO_NEW}; "
            "nothing was written"
        )
    if current_revision(target) != HEAD:
        raise CopyRefused(
            f"the target is a Spanlight store of another schema version: {_INTO_NEW}; nothing was written"
        )
    with target.connect() as connection:
        _refuse_unless_empty(connection, copied_tables())


def _read_columns(table: Table) -> list[Any]:
    """The table's columns as a copy reads them: JSON as the text the store keeps."""
    return [cast(c, Text).label(c.name) if isinstance(c.type, JSON) else c for c in table.columns]


def _batches(connection: Connection, table: Table, size: int) -> Iterator[list[tuple[Any, ...]]]:
    """The table's rows in order of id (values in the order of its columns), ``size`` at a time. A value
    the source cannot give back as its column's type (a malformed time) is refused by table and row."""
    statement = select(*_read_columns(table)).order_by(table.c.id)
    result = connection.execution_options(stream_results=True, yield_per=size).execute(statement)
    last = None
    try:
        for part in result.partitions(size):
            rows = [tuple(_utc(v) if isinstance(v, datetime) else v for v in row) for row in part]
            last = rows[-1][_id_at(table)]
            yield rows
    except (ValueError, TypeError, OverflowError, DBAPIError) as error:
        after = "its first row" if last is None else f"row {last}"
        raise CopyRefused(
            f"a row of table {table.name} after {after} cannot be read from the source "
            f"({type(error).__name__}); nothing was written"
        ) from error


def _utc(value: datetime) -> datetime:
    """The store writes UTC: a time SQLite gave back without its zone is UTC; one PostgreSQL gave in its
    session's zone is turned to UTC, which SQLite (keeping no zone) then keeps as it should."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _write_batch(connection: Connection, table: Table, rows: list[tuple[Any, ...]]) -> None:
    """Write a batch within a savepoint. When the target refuses it, the batch is written again a row
    at a time to name the row it refuses (the copy then ends: nothing of it is committed)."""
    try:
        with connection.begin_nested():
            _send_rows(connection, table, rows)
        return
    except (DBAPIError, psycopg.Error):
        pass
    for row in rows:
        try:
            with connection.begin_nested():
                _send_rows(connection, table, [row])
        except (DBAPIError, psycopg.Error) as error:
            kind = type(error.orig if isinstance(error, DBAPIError) else error).__name__
            raise CopyRefused(
                f"the target refused row {row[_id_at(table)]} of table {table.name} ({kind}: a value the "
                "target's column does not take, or a row its keys do not allow); nothing was written"
            ) from error
    raise CopyRefused(f"the target refused a batch of table {table.name}; nothing was written")


def _send_rows(connection: Connection, table: Table, rows: list[tuple[Any, ...]]) -> None:
    """PostgreSQL's ``COPY``, else one ``executemany``; JSON columns are given their text as it is."""
    columns = list(table.columns)
    dialect = connection.dialect
    if dialect.name == "postgresql":
        processors = [
            (k, process)
            for k, c in enumerate(columns)
            if not isinstance(c.type, JSON)
            and (process := c.type.dialect_impl(dialect).bind_processor(dialect)) is not None
        ]
        copy_rows(connection, table, columns, rows, processors)
        return
    keys = [f"_{c.key}_text" if isinstance(c.type, JSON) else c.key for c in columns]
    as_text = {c.key: bindparam(f"_{c.key}_text", type_=Text()) for c in columns if isinstance(c.type, JSON)}
    connection.execute(table.insert().values(as_text), [dict(zip(keys, row, strict=True)) for row in rows])


def _id_at(table: Table) -> int:
    """Where a row of ``table`` holds its id."""
    return list(table.c.keys()).index("id")


def _continue_ids(connection: Connection, tables: list[Table]) -> None:
    """PostgreSQL's id sequences go on after the copied ids (rows inserted with their ids leave them at 1)."""
    for table in tables:
        connection.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                f'(SELECT COALESCE(MAX(id), 0) + 1 FROM "{table.name}"), false)'
            )
        )


class _Check:
    """Values PostgreSQL would refuse: text over its column's length, a NUL character, and ``NaN`` or
    ``Infinity`` in JSON (which Python's JSON writes and SQLite keeps)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.problems: list[str] = []
        self.count = 0

    def rows(self, table: Table, rows: list[tuple[Any, ...]]) -> None:
        if not self.strict:
            return
        texts = [
            (k, c.name, c.type.length if isinstance(c.type, String) else None, isinstance(c.type, JSON))
            for k, c in enumerate(table.columns)
            if isinstance(c.type, String | JSON)
        ]
        at = _id_at(table)
        for row in rows:
            for k, name, length, is_json in texts:
                value = row[k]
                if not isinstance(value, str):
                    continue
                where = f"{table.name} row {row[at]}, column {name}"
                if length is not None and len(value) > length:
                    self._found(f"{where}: {len(value):,} characters, over the {length:,} the column keeps")
                if "\x00" in value:
                    self._found(f"{where}: holds a NUL character, which PostgreSQL does not keep in text")
                if is_json and ("NaN" in value or "Infinity" in value) and _non_finite(value):
                    self._found(f"{where}: holds NaN or Infinity, which PostgreSQL does not keep in JSON")

    def _found(self, problem: str) -> None:
        self.count += 1
        if len(self.problems) < PROBLEMS_SHOWN:
            self.problems.append(problem)


def _non_finite(text: str) -> bool:
    """Whether the JSON ``text`` holds a ``NaN`` or an ``Infinity`` (not merely those words in a string)."""
    found = False

    def constant(_: str) -> float:
        nonlocal found
        found = True
        return 0.0

    try:
        json.loads(text, parse_constant=constant)
    except ValueError:
        return False  # not JSON at all: the target's own refusal names the row
    return found
