"""Record ids: taking an id from a record, writing it back as the file had it, naming a record in a
report, and telling an exact repeat of a record from a clash of ids."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from formats.fields import RecordError, type_name
from formats.problems import record_label


def external_id(record: Mapping[str, Any], keys: Sequence[str], fallback: str) -> tuple[str, bool]:
    """The record's own id (text or integer) under one of ``keys``, else ``fallback``; and whether it had one."""
    for key in keys:
        value = record.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise RecordError(key, f"expected text or an integer id, got {type_name(value)}")
        text = str(value)
        if not text.strip():
            raise RecordError(key, "is empty")
        return text, True
    return fallback, False


def keys_with_id(keys: Iterable[str], key: str = "id") -> list[str]:
    """A record's fields in the order an export writes them: the item's id first when the file gave none.

    An item of a record without an id is named ``<file stem>-<index>``; written back without it, a
    re-import would name it after the new file's name and position — renumbering every item after a
    rejected record and breaking whatever refers to it. Readers keep this order in the item's layout and
    writers write it, so the id survives any number of round trips.
    """
    ordered = list(keys)
    return ordered if key in ordered else [key, *ordered]


def id_was_int(record: Mapping[str, Any], key: str = "id") -> bool:
    value = record.get(key)
    return isinstance(value, int) and not isinstance(value, bool)


def written_id(external: str, layout: Mapping[str, Any]) -> str | int:
    """The id as the source file had it: an integer again when it was one."""
    return int(external) if layout.get("int_id") else external


def record_of(index: int, record: Any) -> str:
    """How a record is named in a report: its index, and its id when it has a usable one."""
    rid = record.get("id") if isinstance(record, dict) else None
    return record_label(index, str(rid) if isinstance(rid, str | int) and not isinstance(rid, bool) else None)


class DuplicateIds:
    """Remembers each record id: an exact copy of an earlier record is dropped with a warning, a
    different record under a used id is an error (the released MHALO M-HalDetect file repeats records)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, str]] = {}

    def check(self, record_id: str, index: int, record: Any) -> tuple[str, str] | None:
        """None for a new id, else ``(severity, reason)``."""
        fingerprint = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
        if record_id not in self._seen:
            self._seen[record_id] = (index, fingerprint)
            return None
        first, earlier = self._seen[record_id]
        if fingerprint == earlier:
            return "warning", f"an exact copy of record #{first} (same id {record_id!r}); imported once"
        return "error", f"the id {record_id!r} is already used by record #{first}, with different content"
