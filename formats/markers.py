"""Inline tags around spans: finding overlaps (which inline tags cannot express), inserting
opening/closing markers into a text, and saying which marker is at fault when tags do not parse."""

from __future__ import annotations

import re
from collections.abc import Sequence

from metrics.tagged_text import WRAPPER_CLOSE, WRAPPER_OPEN, parse_tagged


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


def _quoted(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2 :]}")


def explain_broken_tags(tagged: str, tag: str, error: ValueError) -> str:
    """Why ``tagged`` does not parse as ``<tag>…</tag>`` pairs (``error`` is the parser's complaint),
    said so that the marker at fault can be found and fixed: a marker that lost a character, a closing
    tag written as an opening one (``<h>(B)<h>``), a genuine nesting, or a tag never closed. Positions are
    character offsets into ``tagged``."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    damaged = _damaged_marker(tagged, tag) if len(tag) > 2 else None
    if damaged:
        at, marker, what, lacks = damaged
        around = tagged[max(0, at - 15) : at + len(marker) + 15]
        return (
            f"{what} looks malformed: {marker!r} at character {at} lacks its {lacks!r} (in {_quoted(around)})"
        )
    wrapper = tagged.find(WRAPPER_OPEN)
    lo = wrapper + len(WRAPPER_OPEN) if wrapper != -1 else 0
    hi = tagged.find(WRAPPER_CLOSE, lo) if wrapper != -1 else -1
    hi = hi if hi != -1 else len(tagged)
    open_at: int | None = None
    for hit in re.finditer(f"{re.escape(opening)}|{re.escape(closing)}", tagged[lo:hi]):
        at = lo + hit.start()
        if hit.group() == opening and open_at is None:
            open_at = at
        elif hit.group() == opening:
            assert open_at is not None
            inside = tagged[open_at + len(opening) : at]
            if _parses(tagged[:at] + closing + tagged[at + len(opening) :], tag):
                return (
                    f"a closing tag looks malformed: {opening!r} at character {at}, after "
                    f"{_quoted(inside)}, has no '/' and reads as a second opening tag (write {closing!r})"
                )
            return (
                f"nested {opening} at character {at}: tags may not nest (the one opened at character "
                f"{open_at} is still open)"
            )
        elif open_at is None:
            if _parses(tagged[:at] + opening + tagged[at + len(closing) :], tag):
                return (
                    f"an opening tag looks malformed: {closing!r} at character {at} closes nothing "
                    f"(write {opening!r})"
                )
            return f"{closing} at character {at} closes nothing"
        else:
            open_at = None
    if open_at is not None:
        return f"{opening} at character {open_at} is never closed"
    return str(error)


def _parses(tagged: str, tag: str) -> bool:
    try:
        parse_tagged(tagged, tag)
    except ValueError:
        return False
    return True


def _damaged_marker(tagged: str, tag: str) -> tuple[int, str, str, str] | None:
    """The first marker of ``tag`` that lost a character: ``(position, marker, what it is, what it lacks)``."""
    name = re.escape(tag)
    patterns = (
        (rf"(?<!<)/{name}>", "a closing tag", "<"),
        (rf"(?<![</]){name}>", "a closing tag", "</"),
        (rf"</{name}(?![>\w])", "a closing tag", ">"),
        (rf"<{name}(?![>\w])", "an opening tag", ">"),
    )
    hits = [
        (hit.start(), hit.group(), what, lacks)
        for pattern, what, lacks in patterns
        for hit in [re.search(pattern, tagged)]
        if hit
    ]
    return min(hits) if hits else None
