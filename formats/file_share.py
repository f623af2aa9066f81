"""How far through its file a reader that reads from disk as it goes has got, for an import's progress.

An import of a million rows read from disk takes half a minute. The canonical JSON Lines reader does
not know how many records the file holds until it reaches its end, but the position of the file it is
reading tells how much of it is behind it: the Import page's bar and the command line's progress line
follow it. (The AlignBench CSV reader counts its rows instead: its first pass reads the whole file, and
pyarrow reads ahead, so the file's position would say it is at the end from the first batch on.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TypeVar


class _Told(Protocol):
    def tell(self) -> int: ...


Handle = TypeVar("Handle", bound=_Told)


class FileShare:
    """The share (0 to 1) of ``path`` read so far through the handle last given to :meth:`follow`; 0
    before one is, and 1 once it is closed (a reader closes its file at the end)."""

    def __init__(self, path: Path) -> None:
        self._size = path.stat().st_size
        self._handle: _Told | None = None

    def follow(self, handle: Handle) -> Handle:
        self._handle = handle
        return handle

    def __call__(self) -> float:
        if self._handle is None:
            return 0.0
        try:
            at = self._handle.tell()
        except (OSError, ValueError):  # closed: read to its end
            return 1.0
        return min(at / self._size, 1.0) if self._size else 1.0
