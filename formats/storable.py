"""Whether text from a file can be stored at all: a NUL, an unpaired surrogate or a number JSON cannot
write (NaN, an infinity) is reported as the record's flaw rather than failing the whole write later."""

from __future__ import annotations

import json as _json
import math
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from formats.text import file_windows

# Characters the stores cannot hold: PostgreSQL text refuses NUL, and an unpaired surrogate (possible in
# JSON through "\ud800") is not encodable as UTF-8 at all.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


_JSON_ESCAPE_UNSTORABLE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def storable_text(text: str) -> str:
    """``text`` with each character no store can hold replaced by U+FFFD (one for one, so offsets into
    it stay). For a model's answer, which no one can correct at the source: refused, its item failed on
    every run, the cached answer being replayed each time."""
    return _UNSTORABLE.sub("\ufffd", text)


# JSON numbers Python reads as an infinity though neither "NaN" nor "Infinity" is written: an exponent of
# three digits or more (1e999), or a run of 200 digits or more (a mantissa that long overflows even with a
# two-digit exponent). Looked for in the text's bytes with every digit made "0", "E" made "e" and "+"
# dropped: a byte translation and two substring searches, a tenth of a regular expression's time.
_NUMBER_SHAPES = bytes.maketrans(b"123456789E", b"000000000e")
_LONGEST_MARK = 200  # the run of digits; every other mark is shorter


def bytes_may_hold_unstorable(data: bytes, *, json: bool = False) -> bool:
    """False when no value parsed from the UTF-8 ``data`` (CSV, or JSON when ``json``) can hold a NUL, an
    unpaired surrogate or a NaN or infinite number, so readers can skip checking every record of a
    large, clean file. (A CSV cell is text until a reader converts it, and the conversion refuses what
    is not finite. Every mark is ASCII, so the bytes are searched as they are, not decoded.)"""
    return (
        b"\x00" in data
        or b"NaN" in data  # what Python's json reads as NaN and the infinities
        or b"Infinity" in data
        or _JSON_ESCAPE_UNSTORABLE.search(data) is not None
        or (json and _may_overflow(data))
    )


def records_may_hold_unstorable(value: Any) -> bool:
    """False when nothing inside ``value`` (records, dicts, lists, text, numbers) is what
    :func:`unstorable` finds, so a bundle built in memory can skip walking every record.

    ``value`` is written as JSON once by the C encoder, which refuses a NaN or an infinity, keeps a lone
    surrogate (then refused by UTF-8) and writes a NUL as ``\\u0000``; anything it cannot write (a
    value of another type, a key that is not text) counts as suspect. The walk this spares took 40 %
    of importing a bundle of 26 K annotations."""
    try:
        text = _json.dumps(
            value, default=_as_walked, ensure_ascii=False, allow_nan=False, check_circular=False
        )
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return True
    return "\\u0000" in text


def _as_walked(value: Any) -> dict[Any, Any]:
    """What :func:`unstorable` walks of a value JSON cannot write as it is: a mapping's items, a
    record's fields (anything else is not JSON, and so suspect)."""
    if isinstance(value, Mapping):
        return dict(value.items())
    if is_dataclass(value) and not isinstance(value, type):
        return record_fields(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def record_fields(record: Any) -> dict[str, Any]:
    """A record's fields by name: its ``__dict__`` (a third of the time of asking ``fields()``), or,
    for a record with slots, each field."""
    held: dict[str, Any] | None = getattr(record, "__dict__", None)
    return held if held is not None else {f.name: getattr(record, f.name) for f in fields(record)}


def file_may_hold_unstorable(path: Path, *, json: bool = False, part: int = 1 << 22) -> bool:
    """:func:`bytes_may_hold_unstorable` of a file read from disk a part at a time (each part with the end
    of the one before, so a mark across two parts is seen).

    A canonical JSON Lines file of 120 K items spent a sixth of its import walking every record for
    such values; a clean file is told in one pass over its bytes instead."""
    windows = file_windows(path, _LONGEST_MARK - 1, part=part)
    return any(bytes_may_hold_unstorable(window, json=json) for window in windows)


def _may_overflow(data: bytes) -> bool:
    shapes = data.translate(_NUMBER_SHAPES, b"+")
    return b"e000" in shapes or b"0" * _LONGEST_MARK in shapes


def unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """``(field, reason)`` for the first string inside ``value`` the database cannot store, else None;
    likewise for a NaN or infinite number, which PostgreSQL's JSON refuses (and JSON has no way to write).
    ``value`` may hold records (dataclasses): their fields are named as a dict's keys would be."""
    stack: deque[tuple[str, Any]] = deque([(path, value)])
    while stack:
        where, current = stack.popleft()
        if isinstance(current, str):
            found = _UNSTORABLE.search(current)
            if found:
                what = (
                    "a NUL character" if found.group() == "\x00" else "an unpaired surrogate (broken Unicode)"
                )
                return where or "-", f"contains {what} at character {found.start()}, which cannot be stored"
        elif isinstance(current, float) and not math.isfinite(current):
            return where or "-", f"is {current!r}, a number JSON cannot hold (write null or a finite number)"
        elif isinstance(current, Mapping):
            for key, item in current.items():
                if isinstance(key, str) and _UNSTORABLE.search(key):
                    return where or "-", "a field name contains a character that cannot be stored"
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(current, list | tuple):
            stack.extend((f"{where}[{k}]", item) for k, item in enumerate(current))
        elif is_dataclass(current) and not isinstance(current, type):  # a record: walked as its fields
            stack.extend(
                (f"{where}.{key}" if where else key, item) for key, item in record_fields(current).items()
            )
    return None
