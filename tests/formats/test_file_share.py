"""How far through its input a reader has got: the position of the file it follows, or the offset in
the bytes of an upload it was last told."""

from __future__ import annotations

from pathlib import Path

from formats.file_share import FileShare


def test_the_share_follows_the_handle_and_is_whole_once_it_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"x" * 1000)
    share = FileShare(path.stat().st_size)
    assert share() == 0.0  # nothing followed yet
    with path.open("rb") as handle:
        assert share.follow(handle) is handle
        handle.read(250)
        assert share() == 0.25
        handle.read()
        assert share() == 1.0
    assert share() == 1.0  # closed: read to its end


def test_an_empty_file_is_read_whole_at_once(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    share = FileShare(path.stat().st_size)
    with path.open("rb") as handle:
        share.follow(handle)
        assert share() == 1.0


def test_bytes_in_memory_are_read_up_to_the_offset_last_passed() -> None:
    share = FileShare(400)
    assert share() == 0.0
    share.passed(100)
    assert share() == 0.25
    share.passed(401)  # past a last line without its newline
    assert share() == 1.0
