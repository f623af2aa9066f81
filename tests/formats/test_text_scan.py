"""A file's bytes are checked as UTF-8 a part at a time, in memory or read from disk, and the report
names the first byte that cannot be decoded wherever the parts happen to split a character."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.text import decode_text, scan_text_file, utf8_problems

CASES = [
    b"plain text",
    "h\u00e9llo w\u00f6rld \u2014 \U0001f600".encode() * 3,
    b"ab\xffcd",
    "\u00e9".encode()[:1],  # a character cut off at the end of the file
    b"x" * 10 + "\u00e9".encode() + b"\xfe",
    "\u20ac".encode()[:2] + b"z",  # a character cut off mid-file
]


@pytest.mark.parametrize("data", CASES)
@pytest.mark.parametrize("part", [1, 2, 3, 5, 1 << 22])
def test_every_part_size_reports_what_decoding_the_whole_reports(
    tmp_path: Path, data: bytes, part: int
) -> None:
    whole = decode_text(data, "f.csv")[1]
    assert utf8_problems(data, "f.csv", part=part) == whole
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    problems, holds_nul = scan_text_file(path, "f.csv", part=part)
    assert problems == whole
    assert not holds_nul


def test_the_report_names_the_byte_and_its_value(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n" + b"x" * 9 + b"\xc3(\n")
    (problem,) = scan_text_file(path, "f.csv", part=4)[0]
    assert problem.reason.startswith("not valid UTF-8 text: byte 13 (0xc3) cannot be decoded")


@pytest.mark.parametrize("part", [1, 3, 1 << 22])
def test_a_nul_byte_anywhere_is_noticed(tmp_path: Path, part: int) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n1,2\n3,\x004\n")
    assert scan_text_file(path, "f.csv", part=part) == ([], True)
