"""Inline tags around spans: finding overlaps (which inline tags cannot express) and inserting
opening/closing markers into a text."""

from __future__ import annotations

from collections.abc import Sequence


def overlapping(spans: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The first two spans that overlap (in start order), or None."""
    ordered = sorted(spans)
    for previous, current in zip(ordered, ordered[1:], strict=False):
        if current[0] < previous[1]:
            return previous, current
    return None


def insert_markers(text: str, marks: Sequence[tuple[int, int, str, str]]) -> str:
    """``text`` with ``opening`` / ``closing`` strings around each ``(start, end, opening, closing)``.

    The spans must not overlap (check with :func:`overlapping` first).
    """
    pieces: list[str] = []
    at = 0
    for start, end, opening, closing in sorted(marks, key=lambda m: (m[0], m[1])):
        pieces += [text[at:start], opening, text[start:end], closing]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
