"""A whole store copied into an empty one: how a team moves from the embedded SQLite file to PostgreSQL
when it outgrows one machine (or keeps a PostgreSQL store's copy in a file).

An export carries a dataset's items and label sets, but not what a team has built around them: accounts,
assignments, item statuses, gold shown to blind annotators, promotions, ratings and the edit log that
undo and history read. A copy carries every row of every table, with its id, so nothing that points at a
row (an edit log entry, an assignment) points elsewhere afterwards.

- The source is read in one transaction, so the copy is of one moment even while the app goes on
  writing to it (SQLite's snapshot of its write-ahead log; PostgreSQL's repeatable read).
- The target is written in one transaction, tables in the order of their foreign keys and rows in the
  order of their ids, in batches: a copy refused or failed midway leaves the target as it was. The
  target must hold no data (a new file, or a new database or schema): a copy does not merge.
- PostgreSQL keeps text columns to their length (``VARCHAR(n)``) and refuses a NUL character, which
  SQLite does not: rows an older store kept so would fail mid-copy with the database's own words, so
  they are found first and reported by table, row id and column, and nothing is written.
- Times are written as UTC whatever the database's time zone: SQLite gives them back without a zone,
  PostgreSQL in its session's.
- Login sessions are not copied: everyone logs in again on the new store, and a session cookie of the
  old one opens nothing there. Image folders are not copied either: a dataset keeps the path of its
  folder, which the app serving the new store must reach (:attr:`StoreCopy.image_roots` names them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, String, Table, func, select, text
from sqlalchemy.exc import DBAPIError

from db import models as m
from db.copy_rows import copy_rows
from db.engine import hold_name, write_session
from db.migrate import upgrade

# Not copied: a login belongs to the store it was made on.
NOT_COPIED = frozenset({"login_sessions", "store_revision"})
# Rows read and written at a time: memory stays bounded however large the store.
BATCH_ROWS = 5_000
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
                            _insert(writing, table, rows)
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
        raise CopyRefused(
            f"the target store is not empty ({listed}): a copy goes into a new store (a new SQLite file, "
            "or an empty PostgreSQL database or schema); nothing was written"
        )


def _batches(connection: Connection, table: Table, size: int) -> Iterator[list[tuple[Any, ...]]]:
    """The table's rows in order of id (values in the order of its columns), ``size`` at a time."""
    statement = select(table).order_by(table.c.id)
    result = connection.execution_options(stream_results=True, yield_per=size).execute(statement)
    for part in result.partitions(size):
        yield [tuple(_utc(v) if isinstance(v, datetime) else v for v in row) for row in part]


def _utc(value: datetime) -> datetime:
    """The store writes UTC: a time SQLite gave back without its zone is UTC; one PostgreSQL gave in its
    session's zone is turned to UTC, which SQLite (keeping no zone) then keeps as it should."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _insert(connection: Connection, table: Table, rows: list[tuple[Any, ...]]) -> None:
    """Write a batch: PostgreSQL's ``COPY``, else one ``executemany``."""
    columns = list(table.columns)
    try:
        if connection.dialect.name == "postgresql":
            dialect = connection.dialect
            processors = [
                (k, process)
                for k, c in enumerate(columns)
                if (process := c.type.dialect_impl(dialect).bind_processor(dialect)) is not None
            ]
            copy_rows(connection, table, columns, rows, processors)
        else:
            keys = [c.key for c in columns]
            connection.execute(table.insert(), [dict(zip(keys, row, strict=True)) for row in rows])
    except DBAPIError as error:
        first_line = str(error.orig).strip().splitlines()[0] if error.orig is not None else str(error)
        raise CopyRefused(
            f"the target refused rows {rows[0][_id_at(table)]}–{rows[-1][_id_at(table)]} of table {table.name}: {first_line}; "
            "nothing was written"
        ) from error


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
    """Values the target would refuse (PostgreSQL: text over its column's length, a NUL character)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.problems: list[str] = []
        self.count = 0

    def rows(self, table: Table, rows: list[tuple[Any, ...]]) -> None:
        if not self.strict:
            return
        texts = [
            (k, c.name, c.type.length) for k, c in enumerate(table.columns) if isinstance(c.type, String)
        ]
        at = _id_at(table)
        for row in rows:
            for k, name, length in texts:
                value = row[k]
                if not isinstance(value, str):
                    continue
                if length is not None and len(value) > length:
                    self._found(
                        f"{table.name} row {row[at]}, column {name}: {len(value):,} characters, over the "
                        f"{length:,} the column keeps"
                    )
                if "\x00" in value:
                    self._found(
                        f"{table.name} row {row[at]}, column {name}: holds a NUL character, which "
                        "PostgreSQL does not keep in text"
                    )

    def _found(self, problem: str) -> None:
        self.count += 1
        if len(self.problems) < PROBLEMS_SHOWN:
            self.problems.append(problem)
