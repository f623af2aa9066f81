"""Untrusted file bytes as text: decoding with a report of where it breaks, and cheap looks at a
file's beginning and name for sniffing and naming datasets."""

from __future__ import annotations

from pathlib import PurePath

from formats.problems import Problem


def decode_text(data: bytes, source: str) -> tuple[str | None, list[Problem]]:
    """UTF-8 text of ``data`` (a byte-order mark is allowed), or None and a problem saying where it breaks."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None, [Problem(source, "-", "-", f"expected file bytes, got {type(data).__name__}")]
    try:
        return bytes(data).decode("utf-8-sig"), []
    except UnicodeDecodeError as error:
        return None, [
            Problem(
                source,
                "-",
                "-",
                f"not valid UTF-8 text: byte {error.start} (0x{bytes(data)[error.start]:02x}) cannot be "
                "decoded; save the file as UTF-8",
            )
        ]


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
