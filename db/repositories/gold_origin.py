"""Where a gold label came from: written by adjudication, or not. A reviewer's promotion may replace the
first freely; the second is most likely the benchmark's own gold, imported with the dataset, so a
promotion replaces it only once the reviewer has seen which labels of which items go and agreed
(:mod:`db.repositories.adjudication`).

The edit log tells them apart: a promotion logs every gold row it writes, with the row as written (its
version too) and a description :func:`adjudicated` makes; an import logs one entry for the whole file
and none per row. A gold row is adjudication's when the latest logged change to it is such a write, made
in the row's own life (not older than the row's last write: SQLite gives a deleted row's id to the next
row, so a dataset deleted and imported again, or gold an import replaced, would otherwise inherit the
entries of the rows that held those ids), and the row still says what was written then, at the version
written. Anything else counts as not adjudicated: a row no entry names, one an import wrote, one an undo
or a restore put back. The store cannot tell from the log whether such a row holds the file's label or
an adjudicated one that an undo, a restore or an import's undo put back, so the reviewer is asked, and
told just that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models as m

_ADJUDICATED = "adjudicated ("
_WRITES = ("create", "update")
CHUNK = 500  # item ids per IN list


def chunks(ids: Iterable[int]) -> list[list[int]]:
    """The ids, sorted and each once, :data:`CHUNK` at a time: reads of many items' gold and log, one IN
    list a query."""
    unique = sorted(set(ids))
    return [unique[k : k + CHUNK] for k in range(0, len(unique), CHUNK)]


def adjudicated(method: str, what: str) -> str:
    """The edit log's description of a gold row a promotion writes (``method``: accept, merge, a rule)."""
    return f"{_ADJUDICATED}{method}): {what}"


@dataclass(frozen=True)
class GoldRow:
    """A gold row a promotion would change or remove, as it is now."""

    entity: str  # its table
    id: int
    item_id: int
    external_id: str  # its item's
    snapshot: dict[str, Any]  # its logged fields now (``labeling._snapshot``)
    says: str  # what it says, for the reviewer ("sentence 2: incorrect (Object)")
    version: int
    written: datetime  # when the row was last written (its ``updated_at``; a span's ``created_at``)


@dataclass(frozen=True)
class ImportedGold:
    """The gold labels a promotion would replace (change or remove) that adjudication did not write,
    item by item: imported with the dataset, or put back by an undo, a restore or an import."""

    rows: tuple[GoldRow, ...] = ()

    # Worked out once: a page holding a rule's preview asks for them on every rerun, and a rule over a
    # large dataset may name tens of thousands of labels.
    @cached_property
    def digest(self) -> str:
        """A fingerprint of exactly these labels as they are now: a promotion confirmed for them
        replaces them, and is refused again if the imported gold it would replace is any other."""
        keys = sorted((row.entity, row.id, repr(sorted(row.snapshot.items()))) for row in self.rows)
        return hashlib.sha256(repr(keys).encode()).hexdigest()

    @cached_property
    def _by_item(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        found: dict[str, list[str]] = {}
        for row in self.rows:
            found.setdefault(row.external_id, []).append(row.says)
        return tuple((item, tuple(says)) for item, says in found.items())

    def per_item(self) -> list[tuple[str, list[str]]]:
        """(external id, what each of its replaced labels says), items in the order first met."""
        return [(item, list(says)) for item, says in self._by_item]

    def summary(self) -> str:
        """ "3 gold labels on 2 items (demo-001, demo-004) that no promotion wrote as they are now" (the
        first ten items). It claims no more than the log shows (see the module doc)."""
        items = [item for item, _ in self.per_item()]
        shown = ", ".join(items[:10]) + (f" and {len(items) - 10} more" if len(items) > 10 else "")
        return (
            f"{len(self.rows)} gold label{'s' if len(self.rows) != 1 else ''} on {len(items)} "
            f"item{'s' if len(items) != 1 else ''} ({shown}) that no promotion wrote as "
            f"{'they are' if len(self.rows) != 1 else 'it is'} now"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": len(self.rows),
            "items": [{"item": item, "labels": says} for item, says in self.per_item()],
        }


class ReplacesImportedGold(Exception):
    """A promotion would replace gold labels adjudication did not write (most likely imported with the
    dataset), and the caller did not confirm those (:attr:`ImportedGold.digest`): nothing was written.
    ``imported`` says which."""

    def __init__(self, imported: ImportedGold) -> None:
        super().__init__(
            f"Promoting would replace {imported.summary()} (imported with the dataset, or put back by an "
            "undo, a restore or an import); nothing was written."
        )
        self.imported = imported


_Entry = tuple[str, dict[str, Any] | None, datetime]  # a log entry's action, after and time


def imported_among(session: Session, gold_id: int, rows: Sequence[GoldRow]) -> ImportedGold:
    """Those of ``rows`` (rows of the gold label set ``gold_id``) that adjudication did not write."""
    latest: dict[tuple[str, int], _Entry] = {}
    entities = sorted({row.entity for row in rows})
    for chunk in chunks(row.item_id for row in rows):
        # By item (an indexed column), in log order: the last entry met for a row is its latest change.
        for entity, entity_id, action, after, at in session.execute(
            select(m.EditLog.entity, m.EditLog.entity_id, m.EditLog.action, m.EditLog.after, m.EditLog.at)
            .where(
                m.EditLog.item_id.in_(chunk),
                m.EditLog.label_set_id == gold_id,
                m.EditLog.entity.in_(entities),
            )
            .order_by(m.EditLog.id)
        ):
            latest[(entity, entity_id)] = (action, after, at)
    return ImportedGold(tuple(row for row in rows if not _written_by_adjudication(row, latest)))


def _written_by_adjudication(row: GoldRow, latest: dict[tuple[str, int], _Entry]) -> bool:
    found = latest.get((row.entity, row.id))
    if found is None:
        return False
    action, after, at = found
    if action not in _WRITES or after is None:
        return False
    if not str(after.get("description", "")).startswith(_ADJUDICATED):
        return False
    # Of this row's life: the write logged with the entry comes before the entry, a later one after it.
    if at < row.written or after.get("version") != row.version:
        return False
    return all(after.get(name) == value for name, value in row.snapshot.items())
