"""Whether text from a file can be stored at all: a NUL, an unpaired surrogate or a number JSON cannot
write (NaN, an infinity) is reported as the record's flaw rather than failing the whole write later."""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Mapping
from typing import Any

# Characters the stores cannot hold: PostgreSQL text refuses NUL, and an unpaired surrogate (possible in
# JSON through "\ud800") is not encodable as UTF-8 at all.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


_JSON_ESCAPE_UNSTORABLE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def may_hold_unstorable(text: str) -> bool:
    """False when no value parsed from ``text`` (JSON or CSV) can hold a NUL, an unpaired surrogate or
    a NaN or infinite number, so readers can skip checking every record of a large, clean file."""
    return (
        "\x00" in text
        or "NaN" in text  # what Python's json reads as NaN and the infinities
        or "Infinity" in text
        or _JSON_ESCAPE_UNSTORABLE.search(text) is not None
    )


def unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """``(field, reason)`` for the first string inside ``value`` the database cannot store, else None;
    likewise for a NaN or infinite number, which PostgreSQL's JSON refuses (and JSON has no way to write)."""
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
    return None
