"""Rows sent to PostgreSQL with ``COPY … FROM STDIN`` (an import's bulk rows, a store's copy).

``COPY`` is several times faster than an ``INSERT`` per row, and it runs on the caller's own connection,
so the rows are part of its transaction: a write refused later leaves none of them behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Connection


def copy_rows(
    connection: Connection,
    table: Any,  # a Table, or a model's __table__ (typed as any FromClause)
    columns: Sequence[Any],  # the table's columns
    rows: Iterable[Sequence[Any]],
    processors: Sequence[tuple[int, Callable[[Any], Any]]] = (),
    fixed: tuple[Any, ...] = (),
) -> None:
    """Send ``rows`` (values of ``columns``, in order) into ``table``; the value at each processor's index
    goes through its processor first (a column type's bind processor: JSON as text), and ``fixed`` values
    (defaults computed once) follow each row's own."""
    preparer = connection.dialect.identifier_preparer
    sql = f"COPY {preparer.format_table(table)} ({', '.join(preparer.quote(c.name) for c in columns)}) FROM STDIN"
    driver = connection.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(sql) as copy:
        for row in rows:
            if processors:
                values = list(row)
                for k, process in processors:
                    values[k] = process(values[k])
                copy.write_row((*values, *fixed))
            else:
                copy.write_row((*row, *fixed))
