"""Fields of a record named by a dotted path (``meta.answer``, ``spans.0.start``), and the values a table
cell holds read as what a mapping expects of them.

A mapped import names its fields rather than knowing them, and the same field arrives differently from
each encoding: a Parquet struct is a dict, a JSON object is a dict, a CSV cell is text that may hold JSON
(``[{"start": 3, "end": 7}]``) or a Python list as pandas writes it (``['a', 'b']``), and every CSV number
is text. These helpers take any of them and raise :class:`~formats.fields.RecordError` naming the field
when a value is not what was asked for, so a bad record is reported like in every other format.
"""

from __future__ import annotations

import ast
import json
import math
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from formats.fields import RecordError, get_int, type_name
from formats.json_documents import loads


class _Missing:
    """The value of a path a record does not have (``None`` is a value: the field is there, empty)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def structured(value: Any) -> Any:
    """A text cell that holds a JSON (or Python-literal) list or object, parsed; anything else as it is."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if (text[:1], text[-1:]) not in (("[", "]"), ("{", "}")):
        return value
    try:
        return loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return value


def value_at(record: Any, path: str) -> Any:
    """The value at ``path`` in ``record``, or :data:`MISSING`.

    A key that itself contains dots wins over descending (``{"a.b": 1}`` at ``a.b`` is 1). Each step
    descends into an object by key or into a list by a 0-based index, parsing a text cell that holds
    JSON on the way (a CSV column of JSON objects can be mapped by ``column.key``).
    """
    if isinstance(record, dict) and path in record:
        return record[path]
    current = record
    for step in path.split("."):
        current = structured(current)
        if isinstance(current, dict):
            if step not in current:
                return MISSING
            current = current[step]
        elif isinstance(current, list) and step.isdigit() and int(step) < len(current):
            current = current[int(step)]
        else:
            return MISSING
    return current


def list_at(record: Any, path: str) -> list[Any]:
    """The list at ``path``; a missing or empty field is an empty list (a record with nothing marked)."""
    value = structured(value_at(record, path))
    if value is MISSING or value is None or value == "":
        return []
    if isinstance(value, tuple):
        return list(value)
    if not isinstance(value, list):
        raise RecordError(path, f"expected a list, got {type_name(value)}")
    return value


def text_of(value: Any, field: str, *, numbers: bool = False) -> str | None:
    """``value`` as text (None for a missing or null field); ``numbers`` also accepts a number (an id or
    a subset given as 3 is the text "3")."""
    if value is MISSING or value is None:
        return None
    if isinstance(value, str):
        return value
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    raise RecordError(field, f"expected text, got {type_name(value)}")


def int_of(value: Any, field: str) -> int:
    """An integer, also from a CSV cell such as ``"12"`` or ``"12.0"``."""
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise RecordError(field, f"expected an integer, got {value!r}") from None
        return get_int(number, field) if math.isfinite(number) else get_int(value, field)
    if value is None or value is MISSING:
        raise RecordError(field, "missing")
    return get_int(value, field)


def number_of(value: Any, field: str) -> float:
    """A finite number, also from a CSV cell such as ``"3.5"``."""
    if isinstance(value, bool):
        raise RecordError(field, "expected a number, got true/false")
    if value is None or value is MISSING:
        raise RecordError(field, "missing")
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise RecordError(field, f"expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise RecordError(field, f"expected a finite number, got {value!r}")
    return number


def value_key(value: Any) -> str:
    """How a raw value is looked up in a value mapping, whose keys are JSON text: ``0``, ``0.0`` and
    ``"0"`` are all ``"0"``; true/false are ``"true"``/``"false"``; null is ``"null"``."""
    if value is None or value is MISSING:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class _Dropped:
    def __repr__(self) -> str:
        return "DROPPED"


DROPPED: Any = _Dropped()


def plain(value: Any) -> Any:
    """``value`` as JSON the store can keep in an item's metadata, or :data:`DROPPED` for bytes (an
    embedded image is not metadata): NaN and infinities become null, dates ISO text, other objects text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes | bytearray | memoryview):
        return DROPPED
    if isinstance(value, dict):
        kept = {str(k): plain(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not DROPPED}
    if isinstance(value, list | tuple):
        return [v for v in (plain(v) for v in value) if v is not DROPPED]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else None
    return str(value)
