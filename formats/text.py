"""Untrusted file bytes as text: decoding with a report of where it breaks, and cheap looks at a
file's beginning and name for sniffing and naming datasets."""

from __future__ import annotations

import codecs
from pathlib import PurePath

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
    decoder = codecs.getincrementaldecoder("utf-8")()
    for start in range(0, len(view), part):
        try:
            decoder.decode(view[start : start + part], final=start + part >= len(view))
        except UnicodeDecodeError as error:
            pending = len(decoder.getstate()[0])  # bytes of an unfinished character carried over
            return [_not_utf8(data, max(start - pending + error.start, 0), source)]
    return []


def _not_utf8(data: bytes, at: int, source: str) -> Problem:
    return Problem(
        source,
        "-",
        "-",
        f"not valid UTF-8 text: byte {at} (0x{bytes(data[at : at + 1])[0]:02x}) cannot be decoded; save the "
        "file as UTF-8",
    )


def looks_like_json(data: bytes) -> str | None:
    """``"["``, ``"{"`` or None: the first non-blank character of the file, if it opens JSON."""
    head = bytes(data[:4096]).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1].decode() if head[:1] in (b"[", b"{") else None


def head_text(data: bytes, size: int = 65536) -> str:
    """The beginning of the file as text (for sniffing; undecodable bytes replaced)."""
    return bytes(data[:size]).decode("utf-8", "replace")


def file_stem(source: str) -> str:
    """``processed_test`` for ``…/processed_test.json``; the name datasets and ids are derived from."""
    stem = PurePath(source.replace("\\", "/")).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".parquet", ".zip"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem or "input"
