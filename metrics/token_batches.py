"""Character spans to token spans over many texts at once, vectorised with numpy.

A dataset view maps every label set's spans (half a million at 10 K items x 12 detectors) onto the
responses' whitespace tokens (MHALO section 2.3). :func:`metrics.token_spans` does it for one text with
the interpreter; here the texts are laid end to end, a space between two, their whitespace is found
from their code points, the tokens ending and starting up to every character are counted, and every
span is placed by looking up its two ends in those counts.
The result equals :func:`metrics.token_spans` text by text (the property tests hold the two together).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# ``str.isspace()`` is true for no code point above U+3000 (IDEOGRAPHIC SPACE); the tests check the whole
# Unicode range, so a table of the code points up to it says which characters separate tokens.
_LAST_SPACE = 0x3000
_IS_SPACE = np.fromiter((chr(c).isspace() for c in range(_LAST_SPACE + 1)), dtype=bool, count=_LAST_SPACE + 1)
# Characters laid end to end per pass: four bytes each, so a pass holds at most 16 MB of code points.
BLOCK_CHARS = 1 << 22


def token_spans_many(
    texts: Sequence[str], text_of_span: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token spans ``[first, stop)`` of character spans ``[starts, ends)`` on ``texts[text_of_span]``.

    Spans must be valid (``0 <= start < end``; an end past the text is allowed). Returns ``(first, stop,
    kept)``, one entry per span: ``kept`` is false where the span overlaps no token (only whitespace, or
    past the end), and there ``first``/``stop`` mean nothing — :func:`metrics.token_spans` drops such
    a span. Memory stays bounded: texts are handled a block of about :data:`BLOCK_CHARS` characters at a
    time, in the order of the spans' texts.
    """
    text_of_span = np.asarray(text_of_span, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    first = np.zeros(starts.size, dtype=np.int64)
    stop = np.zeros(starts.size, dtype=np.int64)
    kept = np.zeros(starts.size, dtype=bool)
    if starts.size == 0:
        return first, stop, kept
    needed = np.unique(text_of_span)  # only texts that carry a span are tokenized
    lengths = np.fromiter((len(texts[t]) for t in needed.tolist()), dtype=np.int64, count=needed.size)
    block_of = np.cumsum(lengths + 1) // BLOCK_CHARS
    if block_of[-1] == block_of[0]:  # one block (10 K responses are a tenth of one): every span at once
        local = np.searchsorted(needed, text_of_span)
        return _one_block([texts[t] for t in needed.tolist()], local, starts, ends)
    order = np.argsort(text_of_span, kind="stable")  # each block's spans together
    by_text = text_of_span[order]
    for block in np.unique(block_of).tolist():
        chosen = needed[block_of == block]
        lo = np.searchsorted(by_text, chosen[0], side="left")
        hi = np.searchsorted(by_text, chosen[-1], side="right")
        spans = order[lo:hi]
        local = np.searchsorted(chosen, text_of_span[spans])
        f, s, k = _one_block([texts[t] for t in chosen.tolist()], local, starts[spans], ends[spans])
        first[spans], stop[spans], kept[spans] = f, s, k
    return first, stop, kept


def _one_block(
    texts: list[str], text_of_span: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    base = np.zeros(len(texts), dtype=np.int64)  # where each text begins in the joined text
    np.cumsum(lengths[:-1] + 1, out=base[1:])
    codes = np.frombuffer(" ".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    word = np.ones(codes.size + 2, dtype=np.int8)  # a token character; the two ends are whitespace
    word[0] = word[-1] = 0
    small = codes <= _LAST_SPACE
    word[1:-1][small] = ~_IS_SPACE[codes[small]]
    edges = np.diff(word)
    # Tokens begin where a run of word characters does and end where it stops. Counted up to every
    # position once, instead of found by a binary search per span (the spans outnumber the texts).
    # ends_to[p]: tokens ending at or before p; starts_before[p]: tokens starting before p (int32:
    # a block's counts fit, in the room of its code points).
    ends_to = np.cumsum(edges == -1, dtype=np.int32)
    starts_before = np.zeros(edges.size + 1, dtype=np.int32)
    np.cumsum(edges == 1, out=starts_before[1:])
    length = lengths[text_of_span]
    at = base[text_of_span]
    lo = at + np.minimum(starts, length)
    hi = at + np.minimum(ends, length)
    first = ends_to[lo].astype(np.int64)  # first token ending after the span starts
    last = starts_before[hi].astype(np.int64) - 1  # last token starting before it ends
    before = starts_before[at].astype(np.int64)  # tokens of the texts before this one
    return first - before, last + 1 - before, first <= last
