"""Moving spans between two texts that differ only in whitespace, and saying where two texts differ.

:func:`spans_on_copy` is the rule by which a benchmark file's tagged copy of a response (MHALO's gold
tags) counts as that response. A detector output is held to the stricter rule of MHALO's IF (the same
words, :func:`metrics.follows_format`); its spans are then placed by the same function.
"""

from __future__ import annotations

from collections.abc import Sequence


def nonspace_positions(text: str) -> list[int]:
    return [k for k, ch in enumerate(text) if not ch.isspace()]


def align_ignoring_whitespace(src: str, dst: str) -> list[int] | None:
    """Map each character index of ``src`` to an index in ``dst`` when both hold the same non-whitespace
    characters in the same order (whitespace may differ anywhere, also inside words); else None.

    Whitespace characters of ``src`` map to the position just after the previous non-whitespace
    character's image, so a span's ends can be moved onto ``dst`` exactly.
    """
    a, b = nonspace_positions(src), nonspace_positions(dst)
    if len(a) != len(b) or any(src[i] != dst[j] for i, j in zip(a, b, strict=True)):
        return None
    mapping = [0] * (len(src) + 1)
    k = 0
    for i in range(len(src) + 1):
        if k < len(a) and a[k] == i:
            mapping[i] = b[k]
            k += 1
        else:
            mapping[i] = b[k - 1] + 1 if k else 0
    return mapping


def map_span(mapping: list[int], src: str, start: int, end: int) -> tuple[int, int] | None:
    """Move the span ``[start, end)`` of ``src`` through a :func:`align_ignoring_whitespace` mapping.

    The span is trimmed to its first and last non-whitespace character; None when it holds none.
    """
    while start < end and src[start].isspace():
        start += 1
    while end > start and src[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    return mapping[start], mapping[end - 1] + 1


def first_difference(a: str, b: str, *, context: int = 25) -> str:
    """Where two texts first differ, shown as two short quoted excerpts."""
    k = 0
    limit = min(len(a), len(b))
    while k < limit and a[k] == b[k]:
        k += 1
    lo = max(0, k - 10)
    return f"at character {k}: {a[lo : k + context]!r} vs {b[lo : k + context]!r}"


def norm_ws(text: str) -> str:
    return " ".join(text.split())


def first_word_difference(copy: str, original: str) -> str:
    """Where the words of ``copy`` (split at whitespace) first differ from those of ``original``: the
    word's number and a few words of each from the one before it, quoted."""
    a, b = copy.split(), original.split()
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    lo = max(0, k - 1)
    return f"at word {k + 1}: {' '.join(a[lo : k + 2])!r} vs {' '.join(b[lo : k + 2])!r}"


class NotACopy(ValueError):
    """A text is not a copy of the stored one: it differs in more than whitespace (the message says where)."""


def spans_on_copy(
    text: str, spans: Sequence[tuple[int, int]], original: str
) -> tuple[list[tuple[int, int] | None], bool]:
    """``spans`` of ``text`` placed on ``original``, and whether the two differed (only) in whitespace.

    ``text`` is a copy of ``original`` (a tagged response with its tags removed) when both hold the same
    non-whitespace characters in the same order; whitespace may differ anywhere, also inside a word
    (``awindow`` for ``a window``: real MHALO files do this). Then each span is moved character by
    character; one that holds only whitespace comes back as None. Raises :class:`NotACopy` naming where
    the texts part when they differ otherwise.
    """
    if text == original:
        return list(spans), False
    mapping = align_ignoring_whitespace(text, original)
    if mapping is None:
        raise NotACopy(first_difference_ignoring_whitespace(text, original))
    return [map_span(mapping, text, start, end) for start, end in spans], True


def first_difference_ignoring_whitespace(copy: str, original: str, *, context: int = 25) -> str:
    """Where ``copy`` first differs from ``original`` in a non-whitespace character: the position in
    ``original`` and a short quoted excerpt of each."""
    a, b = nonspace_positions(copy), nonspace_positions(original)
    k = 0
    while k < min(len(a), len(b)) and copy[a[k]] == original[b[k]]:
        k += 1
    i = a[k] if k < len(a) else len(copy)
    j = b[k] if k < len(b) else len(original)
    return (
        f"at character {j}: {copy[max(0, i - 10) : i + context]!r} vs "
        f"{original[max(0, j - 10) : j + context]!r}"
    )
