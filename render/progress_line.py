"""A long command's progress on one terminal line, rewritten in place as it goes.

Importing a million rows takes half a minute; a command that says nothing for that long looks hung.
The line is written only to a terminal: a file or a pipe gets nothing (a script reading the report
never sees it). Text in it can come from a file (its name, say), so its control characters are shown
as escapes (:func:`~render.terminal_text.visible_controls`); the carriage return and the erase that
rewrite the line are the only controls written.
"""

from __future__ import annotations

import os
import threading
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
    is cut to the width of the terminal it is written to, as a line that wraps is no longer rewritten in
    place. ``end`` leaves the last text given standing on its own line (written then if it was held
    back); ``clear`` erases it, for a report printed after it. A line shown after either is a new one,
    shown at once. ``say`` writes a message of its own between them, on its own line. A detector run
    shows its progress from its own thread: the writes take turns."""

    def __init__(
        self,
        stream: TextIO | VisibleControls,
        *,
        every: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        width: Callable[[], int] | None = None,
    ) -> None:
        self._stream = stream
        self._terminal = terminal_of(stream) if stream.isatty() else None
        self._every, self._clock = every, clock
        self._width = width or (lambda: _columns(self._terminal))
        self._shown_at: float | None = None
        self._showing = False
        self._held: str | None = None  # the newest text not shown yet
        self._turn = threading.Lock()

    def show(self, text: str, *, new_stage: bool = False) -> None:
        if self._terminal is None:
            return
        with self._turn:
            now = self._clock()
            if not new_stage and self._shown_at is not None and now - self._shown_at < self._every:
                self._held = text
                return
            self._shown_at = now
            self._draw(text)

    def say(self, message: str) -> None:
        """``message`` (the command's own words) on a line of its own, the progress line going on below;
        to a file or a pipe, the message alone."""
        if self._terminal is None:
            self._stream.write(message + "\n")
            return
        with self._turn:
            self._write(("\n" if self._showing else "") + message + "\n")
            self._showing, self._shown_at = False, None

    def clear(self) -> None:
        if self._terminal is None:
            return
        with self._turn:
            if self._showing:
                self._write(_ERASE_LINE)
            self._showing, self._shown_at, self._held = False, None, None

    def end(self) -> None:
        if self._terminal is None:
            return
        with self._turn:
            if self._held is not None:
                self._draw(self._held)
            if self._showing:
                self._write("\n")
            self._showing, self._shown_at = False, None

    def _draw(self, text: str) -> None:
        self._showing, self._held = True, None
        shown = visible_controls(text.replace("\n", " ").replace("\t", " "))
        self._write(_ERASE_LINE + _cut(shown, max(self._width() - 1, 1)))

    def _write(self, text: str) -> None:
        assert self._terminal is not None
        self._terminal.write(text)
        self._terminal.flush()


def _columns(terminal: TextIO | None) -> int:
    """How wide the terminal the line is written to is (not the one stdout may be: ``--json > file``)."""
    try:
        return os.get_terminal_size(terminal.fileno()).columns if terminal is not None else 80
    except (AttributeError, OSError, ValueError):  # no descriptor, or not a terminal after all
        return 80


def _cut(text: str, columns: int) -> str:
    """The start of ``text`` that fits in ``columns`` terminal columns (a wide character takes two)."""
    used = 0
    for k, character in enumerate(text):
        used += 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1
        if used > columns:
            return text[:k]
    return text
