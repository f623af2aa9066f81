"""Which label sets hold a row of a table: one probe a label set, its id written into the query.

Most of a dataset's rows are gold's: at a million sentences, all but a few sentence labels belong to
one label set. Asked with one query which of the dataset's label sets hold any (a correlated EXISTS),
PostgreSQL planned the probe for that typical label set, as a scan that stops at its first row, and so
scanned the whole table for each label set holding none: 45 ms a detector at a million sentence labels,
on every run of an annotation page and in each cold dashboard. A probe with the label set's id as a
constant is planned for that id: the table's statistics say it is rare, and the index leading with the
label set (every table holding label sets' rows has one) answers at once. (A bound value does the same
until the driver prepares the statement, when a generic plan may take the scan again.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Select, bindparam, select
from sqlalchemy.orm import Session

from db import models as m


def probe(owner: Any, label_set_id: int) -> Select[Any]:
    """The first row of the label set in the table whose label set column is ``owner``, its id inlined."""
    return select(owner).where(owner == bindparam("label_set", label_set_id, literal_execute=True)).limit(1)


def holds_rows(connection: Connection | Session, owner: Any, label_set_id: int) -> bool:
    """Whether a row of the table whose label set column is ``owner`` belongs to the label set."""
    return connection.execute(probe(owner, label_set_id)).first() is not None


def holding(connection: Connection | Session, owner: Any, label_set_ids: Iterable[int]) -> list[int]:
    """Those of ``label_set_ids`` holding a row of the table whose label set column is ``owner``."""
    return [label_set_id for label_set_id in label_set_ids if holds_rows(connection, owner, label_set_id)]


def dataset_label_sets(connection: Connection | Session, dataset_id: int) -> list[int]:
    """The ids of the dataset's label sets, in the order they were made: what the probes ask about."""
    query = select(m.LabelSet.id).where(m.LabelSet.dataset_id == dataset_id).order_by(m.LabelSet.id)
    return list(connection.execute(query).scalars())
