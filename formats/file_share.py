"""How far through its input a reader that reads it as it goes has got, for an import's progress.

An import of a million rows read from disk takes half a minute. The canonical JSON Lines reader does
not know how many records the input holds until it reaches its end, but its position in the file (or in
the bytes of an upload) tells how much of it is behind it: the Import page's bar and the command line's
progress line follow it. (The AlignBench CSV reader counts its rows instead: its first pass reads the
whole file, and pyarrow reads blocks ahead of the rows it gives, so the file's position runs ahead of
the batches, to the end from the first batch on for a small file.)
"""

from __future__ import annotations

from typing import Protocol, TypeVar


class _Told(Protocol):
    def tell(self) -> int: ...


Handle = TypeVar("Handle", bound=_Told)


class FileShare:
    """The share (0 to 1) of an input of ``size`` bytes read so far: through the handle last given to
    :meth:`follow` (1 once it is closed: a reader closes its file at the end), or up to the offset last
    given to :meth:`passed` (bytes in memory); 0 before either."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._handle: _Told | None = None
        self._at = 0

    def follow(self, handle: Handle) -> Handle:
        self._handle = handle
        return handle

    def passed(self, offset: int) -> None:
        self._at = offset

    def __call__(self) -> float:
        at = self._at
        if self._handle is not None:
            try:
                at = self._handle.tell()
            except (OSError, ValueError):  # closed: read to its end
                return 1.0
        return min(at / self._size, 1.0) if self._size else 1.0
