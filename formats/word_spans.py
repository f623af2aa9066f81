"""Spans of whole words: what a person marking text with the mouse means, as MHALO scores it.

Kept apart from :mod:`metrics` (which loads numpy and scipy) because the store calls it on every span
an annotator adds.
"""

from __future__ import annotations

import unicodedata


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The whole words the character span ``[start, end)`` touches: what a person marking text means.

    A boundary inside a token (a run of non-whitespace, as
    :func:`metrics.tagged_text.token_offsets` counts them) moves out to the token's edge, so a drag
    from mid-word never stores half a word; outer whitespace is dropped. When all the span left out of
    a token on one side is punctuation, it stays out (``left`` of ``left.`` stays ``left``): MHALO
    scores the same tokens either way. ``None`` when the span holds only whitespace. The span
    selector's ``offsets.js`` snaps a browser selection by the same rule, so it shows what is stored.

    >>> text = "A cat sits in the box."
    >>> start, end = snap_to_words(text, 8, 16)
    >>> text[start:end]
    'sits in the'
    """
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"span {start}-{end} is outside a text of length {len(text)}")
    s, e = start, end
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    if s >= e:
        return None
    while s > 0 and not text[s - 1].isspace():
        s -= 1
    while e < len(text) and not text[e].isspace():
        e += 1
    if all(_is_punctuation(ch) for ch in text[s:start]):
        s = max(s, start)
    if all(_is_punctuation(ch) for ch in text[end:e]):
        e = min(e, end)
    return s, e
