"""A long command's progress on one terminal line, rewritten in place as it goes.

Importing a million rows takes half a minute; a command that says nothing for that long looks hung.
The line is written only to a terminal: a file or a pipe gets nothing (a script reading the report
never sees it). Text in it can come from a file (its name, say), so its control characters are shown
as escapes (:func:`~render.terminal_text.visible_controls`); the carriage return and the erase that
rewrite the line are the only controls written.
"""

from __future__ import annotations

import shutil
import time
import unicodedata
from collections.abc import Callable
from typing import TextIO

from render.terminal_text import VisibleControls, terminal_of, visible_controls

_ERASE_LINE = "\r\x1b[K"  # back to the start of the line, and erase it


class ProgressLine:
    """One rewritten line on ``stream`` when it is a terminal.

    ``show`` rewrites it at most every ``every`` seconds (a batch of a fast import can take a few
    milliseconds, and each rewrite is a write to the terminal), unless told a new stage began; the text
    is cut to the terminal's width, as a line that wraps is no longer rewritten in place. ``end`` leaves
    the last text standing on its own line; ``clear`` erases it, for a report printed after it. A line
    shown after either is a new one, shown at once."""

    def __init__(
        self,
        stream: TextIO | VisibleControls,
        *,
        every: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        width: Callable[[], int] = lambda: shutil.get_terminal_size().columns,
    ) -> None:
        self._terminal = terminal_of(stream) if stream.isatty() else None
        self._every, self._clock, self._width = every, clock, width
        self._shown_at: float | None = None
        self._showing = False

    def show(self, text: str, *, new_stage: bool = False) -> None:
        if self._terminal is None:
            return
        now = self._clock()
        if not new_stage and self._shown_at is not None and now - self._shown_at < self._every:
            return
        self._shown_at = now
        self._showing = True
        shown = visible_controls(text.replace("\n", " "))
        self._write(_ERASE_LINE + _cut(shown, max(self._width() - 1, 1)))

    def clear(self) -> None:
        if self._terminal is not None and self._showing:
            self._write(_ERASE_LINE)
        self._showing, self._shown_at = False, None

    def end(self) -> None:
        if self._terminal is not None and self._showing:
            self._write("\n")
        self._showing, self._shown_at = False, None

    def _write(self, text: str) -> None:
        assert self._terminal is not None
        self._terminal.write(text)
        self._terminal.flush()


def _cut(text: str, columns: int) -> str:
    """The start of ``text`` that fits in ``columns`` terminal columns (a wide character takes two)."""
    used = 0
    for k, character in enumerate(text):
        used += 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1
        if used > columns:
            return text[:k]
    return text
