"""Server paths for an import: confined to the import folder, never the store's files, never an SQLite
file, never above the size cap."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from db import import_folder
from db.import_folder import (
    ImportPathRefused,
    image_folder_path,
    import_dir,
    max_import_bytes,
    read_import_file,
    store_files,
)


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder holding the SQLite store (with WAL and shared memory) and the default import folder."""
    data = tmp_path / "data"
    (data / "imports").mkdir(parents=True)
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(data))
    monkeypatch.delenv("SPANLIGHT_IMPORT_DIR", raising=False)
    monkeypatch.delenv("SPANLIGHT_MAX_IMPORT_MB", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    for path in store_files():
        path.write_bytes(b"SQLite format 3\x00" + bytes(100))
    return data


def test_default_folder_and_switching_server_paths_off(folders: Path, monkeypatch) -> None:
    assert import_dir() == folders / "imports"
    (folders / "imports" / "a.json").write_text("[]")
    assert read_import_file("a.json") == (b"[]", "a.json")
    assert read_import_file(str(folders / "imports" / "a.json"))[0] == b"[]"
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", "off")
    assert import_dir() is None
    with pytest.raises(ImportPathRefused, match="switched off"):
        read_import_file(str(folders / "imports" / "a.json"))
    with pytest.raises(ImportPathRefused, match="switched off"):
        image_folder_path(str(folders / "imports"))


def test_paths_outside_the_folder_and_links_out_of_it_are_refused(folders: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("[]")
    (folders / "imports" / "link.json").symlink_to(outside)
    (folders / "imports" / "pictures").symlink_to(tmp_path, target_is_directory=True)
    for typed in (str(outside), "../../outside.json", "link.json"):
        with pytest.raises(ImportPathRefused, match="outside"):
            read_import_file(typed)
    with pytest.raises(ImportPathRefused, match="outside"):
        image_folder_path("pictures")
    with pytest.raises(ImportPathRefused, match="no file"):
        read_import_file("missing.json")


@pytest.mark.parametrize("typed", ["a\x00.json", "pictures\ud800"])
def test_a_path_holding_a_nul_or_broken_unicode_is_refused_by_name(folders: Path, typed: str) -> None:
    """Typed on the import page: resolving it raised "embedded null byte", an error on the page."""
    for call in (read_import_file, image_folder_path):
        with pytest.raises(ImportPathRefused, match="holds a NUL or broken Unicode"):
            call(typed)


def test_the_store_is_refused_without_opening_it(folders: Path, monkeypatch) -> None:
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", str(folders))
    (folders / "imports" / "store-link.db").symlink_to(folders / "spanlight.db")
    (folders / "imports" / "hard-wal").hardlink_to(folders / "spanlight.db-wal")
    opened: list[Path] = []
    real_open = Path.open

    def spy(self: Path, *args, **kwargs):
        opened.append(self.resolve())
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read_bytes on a server path"))
    for typed in (
        "spanlight.db",
        "spanlight.db-wal",
        "spanlight.db-shm",
        "imports/store-link.db",
        "imports/hard-wal",
    ):
        with pytest.raises(ImportPathRefused, match="own database"):
            read_import_file(typed)
    assert opened == []


def test_an_sqlite_file_under_another_name_is_refused(folders: Path) -> None:
    shutil.copy(folders / "spanlight.db", folders / "imports" / "bench.json")
    with pytest.raises(ImportPathRefused, match="SQLite database"):
        read_import_file("bench.json")


def test_the_size_cap(folders: Path, monkeypatch) -> None:
    assert max_import_bytes() == import_folder.DEFAULT_MAX_IMPORT_MB * 1024 * 1024
    monkeypatch.setenv("SPANLIGHT_MAX_IMPORT_MB", "1")
    (folders / "imports" / "big.jsonl").write_bytes(b"\n" * (1024 * 1024 + 1))
    with pytest.raises(ImportPathRefused, match="more than the import limit of 1 MB"):
        read_import_file("big.jsonl")
    (folders / "imports" / "fits.jsonl").write_bytes(b"\n" * (1024 * 1024))
    assert len(read_import_file("fits.jsonl")[0]) == 1024 * 1024


def test_the_command_line_obeys_only_a_cap_that_was_set(folders: Path, monkeypatch) -> None:
    above_default = import_folder.DEFAULT_MAX_IMPORT_MB * 1024 * 1024 + 1
    assert import_folder.size_problem(above_default) is not None  # uploads: the default cap
    assert import_folder.size_problem(above_default, set_only=True) is None  # the command line: none
    monkeypatch.setenv("SPANLIGHT_MAX_IMPORT_MB", "1")
    assert "more than the import limit of 1 MB" in str(
        import_folder.size_problem(2 * 1024 * 1024, set_only=True)
    )
