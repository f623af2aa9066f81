"""How the store's JSON columns are read back: orjson where it gives exactly what :func:`json.loads` gives.

Every label, item and label set carries a JSON ``metadata`` column, so reading a large dataset parses a
million small documents; :func:`json.loads` took about 2 µs each (half of a 1 M-sentence export's read),
orjson about 0.3 µs. orjson differs from the standard library in three ways, and each falls back to it:

- it refuses ``NaN``, ``Infinity`` and lone surrogates (which :func:`json.dumps` writes): it raises, and
  the text is read by :func:`json.loads`;
- it reads an integer beyond 64 bits as a float, silently: any text with a run of 19 or more digits
  (``2**63`` has 19) is read by :func:`json.loads` instead, whether the run is a number or inside a
  string.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# A run of 19 digits, looked for in the text's bytes with every digit made "0" (a byte translation and a
# substring search, a third of the time a regular expression took).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def loads(text: str | bytes) -> Any:
    """The value of the JSON ``text``, the same as :func:`json.loads` gives."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if _LONG_RUN in data.translate(_DIGITS_AS_ZERO):
        return json.loads(text)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # NaN, the infinities, a lone surrogate (not UTF-8 once encoded)
        return json.loads(text)
