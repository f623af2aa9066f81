"""Untrusted file bytes as text: decoding with a report of where it breaks, and cheap looks at a
file's beginning and name for sniffing and naming datasets."""

from __future__ import annotations

import codecs
import re
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


# What sniffers see of a JSON file (:func:`sniff_view`): its first MB (the most any sniffer reads), with
# every run of more than SNIFF_RUN bytes that holds no double quote cut to its first and last SNIFF_KEEP.
SNIFF_SIZE = 1 << 20
SNIFF_RUN = 2048
SNIFF_KEEP = 1000
_CUT = "\u2026".encode()


def sniff_view(parts: Iterable[bytes | memoryview], size: int = SNIFF_SIZE) -> bytes:
    """The beginning of a JSON file (its bytes in ``parts``, in order) as sniffers look at it: every run of
    more than :data:`SNIFF_RUN` bytes without a double quote — the inside of a long string, or a long
    array of numbers — cut to its ends, until ``size`` bytes are gathered.

    Sniffers look for a record's keys, and keys follow values: a first record holding a 100,000-character
    prompt put its other keys past every sniffer's head, and a sound file went unrecognised. Cutting runs
    between quotes needs no parse, keeps every quote (so every key, and what sits next to a quote, stay
    as they were), and reads no further than the first ``size`` bytes once no run is long; a run is
    crossed at the speed of a byte search, so one string of 100 MB costs a pass over it, no more."""
    out = bytearray()
    run = _Run()
    for part in parts:
        chunk = bytes(part)
        first = chunk.find(b'"')
        if first < 0:  # inside a long run: a byte search, not a split
            run.add(chunk)
            continue
        last = chunk.rfind(b'"')
        run.add(chunk[:first])
        out += run.take()
        inner = chunk[first : last + 1]
        out += inner if _all_runs_short(inner) else b'"'.join(map(_cut, inner.split(b'"')))
        run.add(chunk[last + 1 :])
        if len(out) >= size:
            break
    out += run.take()
    return bytes(out[:size])


def _all_runs_short(chunk: bytes, stops: re.Pattern[bytes] | None = None) -> bool:
    """Whether no run without a quote (or without any of ``stops``) in ``chunk`` is longer than
    :data:`SNIFF_RUN`: true when every aligned window of half that holds one (a longer run would hold a
    whole window), which a few byte searches tell, where splitting a part of short strings to measure each
    took a hundred times longer."""
    window = SNIFF_RUN // 2
    starts = range(0, len(chunk) - window + 1, window)
    if stops is None:
        return all(chunk.find(b'"', at, at + window) >= 0 for at in starts)
    return all(stops.search(chunk, at, at + window) is not None for at in starts)


# Where a cell of a CSV file ends outside quotes; the line breaks and commas among them.
_CSV_STOP = re.compile(rb'[",\r\n]')
_CSV_SPLIT = re.compile(rb"([,\r\n])")


def csv_sniff_view(parts: Iterable[bytes | memoryview], size: int = SNIFF_SIZE) -> bytes:
    """The beginning of a CSV file as sniffers look at it: :func:`sniff_view`'s cut, of cells. A quoted
    cell longer than :data:`SNIFF_RUN` between its quotes, or an unquoted one (which holds no comma, quote
    or line break), is cut to its ends; rows of short cells stay as they are.

    The header is a CSV file's first line, but what tells some formats apart lies in its first rows
    (AlignBench localization outputs mark words with ``[red]``, scores do not): a first cell of 100,000
    characters hid them, and the file was taken for the other format. Unlike JSON, a run without a quote
    may be many rows of unquoted cells, so a run ends at a quote inside quotes, and at a comma or a line
    break too outside them."""
    out = bytearray()
    run = _Run()
    quoted = False
    for part in parts:
        chunk = bytes(part)
        first = chunk.find(b'"') if quoted else _first_stop(chunk)
        if first < 0:  # inside one cell
            run.add(chunk)
        elif _all_runs_short(chunk):  # short cells, quoted or not: only the runs at the part's ends go on
            end_quoted = quoted ^ bool(chunk.count(b'"') & 1)
            last = (
                chunk.rfind(b'"') if end_quoted else max(chunk.rfind(b) for b in (b'"', b",", b"\n", b"\r"))
            )
            run.add(chunk[:first])
            out += run.take()
            out += chunk[first : last + 1]
            run.add(chunk[last + 1 :])
            quoted = end_quoted
        else:
            pieces = chunk.split(b'"')
            for index, piece in enumerate(pieces):
                if quoted:
                    run.add(piece)
                else:
                    _csv_unquoted(piece, out, run)
                if index < len(pieces) - 1:
                    out += run.take()
                    out += b'"'
                    quoted = not quoted
        if len(out) >= size:
            break
    out += run.take()
    return bytes(out[:size])


def _first_stop(chunk: bytes) -> int:
    found = _CSV_STOP.search(chunk)
    return -1 if found is None else found.start()


def _csv_unquoted(piece: bytes, out: bytearray, run: _Run) -> None:
    """A part of a CSV file outside quotes added to ``out``: its first and last cells go on the runs
    they end and begin, every cell between is cut (:func:`_cut`) when it is long."""
    first = _first_stop(piece)
    if first < 0:
        run.add(piece)
        return
    last = max(piece.rfind(b","), piece.rfind(b"\n"), piece.rfind(b"\r"))
    run.add(piece[:first])
    out += run.take()
    inner = piece[first : last + 1]
    out += inner if _all_runs_short(inner, _CSV_STOP) else b"".join(map(_cut, _CSV_SPLIT.split(inner)))
    run.add(piece[last + 1 :])


def sniff_head(head: bytes, parts: Iterable[bytes | memoryview]) -> bytes:
    """What sniffers are given of a file whose first bytes are ``head`` and whose bytes ``parts`` yields:
    a JSON file's :func:`sniff_view`, a Parquet file's ``head`` as it is (its columns are read from its
    bytes), and any other's :func:`csv_sniff_view` (a CSV file's, or a text file no format takes)."""
    if looks_like_json(head):
        return sniff_view(parts)
    return head if bytes(head[:4]) == b"PAR1" else csv_sniff_view(parts)


def data_parts(data: bytes | memoryview, part: int = 1 << 16) -> Iterator[memoryview]:
    """``data`` a part at a time, without copies: what :func:`sniff_view` reads of bytes in memory."""
    view = memoryview(data)
    return (view[start : start + part] for start in range(0, len(view), part))


def _cut(piece: bytes) -> bytes:
    return piece if len(piece) <= SNIFF_RUN else piece[:SNIFF_KEEP] + _CUT + piece[-SNIFF_KEEP:]


class _Run:
    """The run of bytes without a quote that :func:`sniff_view` is inside, as it will be kept: whole while
    short, else its first and last :data:`SNIFF_KEEP` bytes, however many parts it spans."""

    def __init__(self) -> None:
        self.start = bytearray()
        self.end = b""
        self.length = 0

    def add(self, piece: bytes) -> None:
        self.length += len(piece)
        if len(self.start) <= SNIFF_RUN:
            self.start += piece[: SNIFF_RUN + 1 - len(self.start)]
        if piece:
            self.end = (self.end + piece[-SNIFF_KEEP:])[-SNIFF_KEEP:]

    def take(self) -> bytes:
        """The run as kept, and a new, empty one begun."""
        kept = (
            bytes(self.start)
            if self.length <= SNIFF_RUN
            else bytes(self.start[:SNIFF_KEEP]) + _CUT + self.end
        )
        self.start, self.end, self.length = bytearray(), b"", 0
        return kept


def file_stem(source: str) -> str:
    """``processed_test`` for ``…/processed_test.json``; the name datasets and ids are derived from."""
    stem = PurePath(source.replace("\\", "/")).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".parquet", ".zip"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem or "input"
