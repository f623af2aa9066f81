"""The order ``np.lexsort`` gives, found by one stable sort of a single combined key where it fits.

A dataset view orders half a million spans by label set, item, start and end (then by text and start to
map them to tokens). ``np.lexsort`` sorts once per key; integer keys whose ranges multiply to less than
2**63 can instead be packed into one int64 (the primary key in the high digits) and sorted once with a
stable sort, which also runs fast on the mostly ordered input the store hands over: about 15 ms instead
of 100 ms for four keys of 470 K spans.
"""

from __future__ import annotations

import numpy as np

_INT_KINDS = "biu"
_ROOM = 1 << 63  # an int64 holds every combined value below this


def lex_order(keys: tuple[np.ndarray, ...] | list[np.ndarray]) -> np.ndarray:
    """Indices that sort the rows by ``keys``, the last key first, ties in input order: exactly
    ``np.lexsort(keys)`` for equal-length one-dimensional keys (the tests hold the two together)."""
    arrays = [np.asarray(key) for key in keys]
    if not arrays:
        raise ValueError("lex_order needs at least one key")
    n = arrays[0].size
    if any(a.ndim != 1 or a.size != n for a in arrays):
        raise ValueError("every key must be one-dimensional, all of the same length")
    if n == 0 or any(a.dtype.kind not in _INT_KINDS for a in arrays):
        return np.lexsort(arrays)
    lows = [int(a.min()) for a in arrays]
    widths = [int(a.max()) - low + 1 for a, low in zip(arrays, lows, strict=True)]
    room = 1
    for width in widths:
        room *= width
    if room >= _ROOM:
        return np.lexsort(arrays)
    combined = np.zeros(n, dtype=np.int64)
    for a, low, width in zip(reversed(arrays), reversed(lows), reversed(widths), strict=True):
        combined *= width  # the keys combined so far move up a digit of this key's width
        digits = a if a.dtype.kind == "u" else a.astype(np.int64, copy=False)  # unsigned stays exact
        combined += (digits - low).astype(np.int64, copy=False)
    return np.argsort(combined, kind="stable")
