"""Text from files and people, written to a terminal as its characters.

An id, a name or a reason read from a file can hold ESC, BEL or a carriage return. Printed as they
are, they recolour the terminal, ring it, or overwrite the line they are on: a hostile file could make a
refusal read as a success. The command line writes everything through :class:`VisibleControls`, which
shows each such character as a ``\\u001b``-style escape. The same escape is valid inside the JSON
strings ``--json`` prints (``json`` escapes C0 characters itself, but not C1 ones).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TextIO

# C0 controls but tab and newline, DEL, and C1 controls (0x9b alone starts an escape sequence).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible_controls(text: str) -> str:
    """``text`` with every control character but tab and newline written as ``\\uXXXX``."""
    return _CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


class VisibleControls:
    """A text stream that writes to ``terminal`` with control characters made visible."""

    def __init__(self, terminal: TextIO) -> None:
        self.terminal = terminal  # for the few writes that control the terminal on purpose

    def write(self, text: str) -> int:
        return self.terminal.write(visible_controls(text))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.terminal.flush()

    def isatty(self) -> bool:
        return self.terminal.isatty()

    def __getattr__(self, name: str) -> object:  # encoding, fileno, … of the stream underneath
        if name == "buffer":  # bytes written there would pass unescaped
            raise AttributeError(name)
        return getattr(self.terminal, name)


def terminal_of(stream: TextIO | VisibleControls) -> TextIO:
    """The stream underneath, for a write that controls the terminal on purpose (a progress line
    rewritten in place with a carriage return)."""
    return stream.terminal if isinstance(stream, VisibleControls) else stream
