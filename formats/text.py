"""Untrusted file bytes as text: decoding with a report of where it breaks, and cheap looks at a
file's beginning and name for sniffing and naming datasets."""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePath

from formats.problems import Problem


def decode_text(data: bytes, source: str) -> tuple[str | None, list[Problem]]:
    """UTF-8 text of ``data`` (a byte-order mark is allowed), or None and a problem saying where it breaks."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None, [Problem(source, "-", "-", f"expected file bytes, got {type(data).__name__}")]
    try:
        return bytes(data).decode("utf-8-sig"), []
    except UnicodeDecodeError as error:
        return None, [_not_utf8(data, error.start, source)]


def utf8_problems(data: bytes, source: str, *, part: int = 1 << 22) -> list[Problem]:
    """:func:`decode_text`'s problem, if any, found part by part: a large file is checked without a
    decoded copy of it all."""
    view = memoryview(data)
    bad = _first_undecodable(view[start : start + part] for start in range(0, len(view), part))
    return [] if bad is None else [_not_utf8_byte(*bad, source)]


def scan_text_file(path: Path, source: str, *, part: int = 1 << 22) -> tuple[list[Problem], bool]:
    """:func:`utf8_problems` of a file read from disk a part at a time, so its bytes are never all held;
    and whether it holds a NUL byte (a character no store keeps in text)."""
    holds_nul = False

    def parts() -> Iterator[bytes]:
        nonlocal holds_nul
        with path.open("rb") as handle:
            while chunk := handle.read(part):
                holds_nul = holds_nul or b"\x00" in chunk
                yield chunk

    bad = _first_undecodable(parts())
    return ([] if bad is None else [_not_utf8_byte(*bad, source)]), holds_nul


def file_windows(path: Path, overlap: int, *, part: int = 1 << 22) -> Iterator[bytes]:
    """A file's bytes read from disk a part at a time, each part with the last ``overlap`` bytes of the
    one before in front: a search for marks up to ``overlap + 1`` bytes long in every window sees a mark
    that two parts split."""
    tail = b""
    with path.open("rb") as handle:
        while chunk := handle.read(part):
            window = tail + chunk
            yield window
            tail = window[-overlap:] if overlap else b""


def _first_undecodable(parts: Iterable[bytes | memoryview]) -> tuple[int, int] | None:
    """The offset and value of the first byte of ``parts`` (a file's bytes in order) that is not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    previous: bytes | memoryview | None = None
    for chunk in _with_end(iter(parts)):
        if previous is not None:
            try:
                decoder.decode(previous, final=chunk is None)
            except UnicodeDecodeError as error:
                pending = len(decoder.getstate()[0])  # bytes of an unfinished character carried over
                at = max(offset - pending + error.start, 0)
                return at, error.object[error.start]
            offset += len(previous)
        previous = chunk
    return None


def _with_end(parts: Iterator[bytes | memoryview]) -> Iterator[bytes | memoryview | None]:
    yield from parts
    yield None


def _not_utf8(data: bytes, at: int, source: str) -> Problem:
    return _not_utf8_byte(at, bytes(data[at : at + 1])[0], source)


def _not_utf8_byte(at: int, value: int, source: str) -> Problem:
    return Problem(
        source,
        "-",
        "-",
        f"not valid UTF-8 text: byte {at} (0x{value:02x}) cannot be decoded; save the file as UTF-8",
    )


def looks_like_json(data: bytes) -> str | None:
    """``"["``, ``"{"`` or None: the first non-blank character of the file, if it opens JSON."""
    head = bytes(data[:4096]).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1].decode() if head[:1] in (b"[", b"{") else None


def head_text(data: bytes, size: int = 65536) -> str:
    """The beginning of the file as text (for sniffing; undecodable bytes replaced), without the
    byte-order mark a spreadsheet's "CSV UTF-8" starts with, which would stick to the first column's name."""
    return bytes(data[:size]).decode("utf-8", "replace").removeprefix("\ufeff")


def file_stem(source: str) -> str:
    """``processed_test`` for ``…/processed_test.json``; the name datasets and ids are derived from."""
    stem = PurePath(source.replace("\\", "/")).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".parquet", ".zip"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem or "input"
