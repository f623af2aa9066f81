"""Typed access to one record's fields: a wrong type or a missing field raises :class:`RecordError`
naming the field, which the record loops turn into a problem for that record alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from formats.storable import unstorable


class RecordError(ValueError):
    """One record (or one field of it) is unusable; carries the field name for the report."""

    # The file row at fault, when one record spans several rows (an AlignBench caption).
    row: int | None = None

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def storable_object(record: Any, expected: str = "an object") -> dict[str, Any]:
    """``record`` as a JSON object whose every string the store can hold, else a :class:`RecordError`."""
    if not isinstance(record, dict):
        raise RecordError("-", f"expected {expected}, got {type_name(record)}")
    bad = unstorable(record)
    if bad:
        raise RecordError(*bad)
    return record


def type_name(value: Any) -> str:
    return (
        "null"
        if value is None
        else {dict: "object", list: "list", str: "text", bool: "true/false"}.get(
            type(value), type(value).__name__
        )
    )


@overload
def get_str(
    record: Mapping[str, Any], key: str, *, required: Literal[True] = True, allow_empty: bool = True
) -> str: ...


@overload
def get_str(
    record: Mapping[str, Any], key: str, *, required: bool, allow_empty: bool = True
) -> str | None: ...


def get_str(
    record: Mapping[str, Any], key: str, *, required: bool = True, allow_empty: bool = True
) -> str | None:
    """``record[key]`` as text; missing/null -> None (or RecordError when required); other types -> error."""
    value = record.get(key)
    if value is None:
        if required:
            raise RecordError(key, "missing")
        return None
    if not isinstance(value, str):
        raise RecordError(key, f"expected text, got {type_name(value)}")
    if not allow_empty and not value.strip():
        raise RecordError(key, "is empty")
    return value


def get_first_str(
    record: Mapping[str, Any], keys: Sequence[str], *, required: bool = True
) -> tuple[str | None, str | None]:
    """The first of ``keys`` present (non-null) in ``record``: ``(key, text)``; ``(None, None)`` when none."""
    for key in keys:
        if record.get(key) is not None:
            return key, get_str(record, key)
    if required:
        null = [key for key in keys if key in record]
        if null:  # present but null: "missing" sent people looking for a field that is there
            raise RecordError(null[0], "is null; expected text")
        raise RecordError("/".join(keys), "missing (none of these fields is present)")
    return None, None


def get_int(value: Any, field: str) -> int:
    """A JSON integer (not a bool, not a float with a fraction)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(field, f"expected an integer, got {type_name(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise RecordError(field, f"expected an integer, got {value!r}")
    return int(value)


def as_float(value: int | float, field: str) -> float:
    """A JSON number as a float. JSON reads a whole number written in full (1 and 400 zeros) as an exact
    integer, which no float holds: that is the record's flaw, named, rather than an internal error."""
    try:
        return float(value)
    except OverflowError:
        raise RecordError(field, "is a number too large to hold (beyond about 1.8e308)") from None


def get_list(record: Mapping[str, Any], key: str, *, required: bool = True) -> list[Any]:
    value = record.get(key)
    if value is None:
        if required:
            raise RecordError(key, "missing")
        return []
    if not isinstance(value, list):
        raise RecordError(key, f"expected a list, got {type_name(value)}")
    return value
