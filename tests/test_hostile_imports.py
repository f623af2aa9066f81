"""Hostile files through the CLI in a subprocess: each is refused (or warned about) with the store left
as it was and the importing process's peak memory below 500 MB."""

from __future__ import annotations

import io
import json
import sqlite3
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.peak_rss import PEAK_RSS_LIMIT_KB, run_measured

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024 * 1024 * 1024


def run_cli(*argv: str, env: dict[str, str]) -> tuple[int, str, str, int]:
    """Exit code, standard output, standard error and peak RSS in KiB of ``python cli.py …``."""
    return run_measured(ROOT / "cli.py", *argv, env=env, cwd=ROOT)


def snapshot(url: str) -> dict[str, list[Any]]:
    """Every row of every table of the SQLite store at ``url``."""
    with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: sorted(map(repr, connection.execute(f'SELECT * FROM "{t}"'))) for t in tables}


def bench(tmp_path: Path, image: str = "a.png") -> Path:
    path = tmp_path / "bench.json"
    path.write_text(
        json.dumps([{"id": "a", "image": image, "test_solution": "x", "hallucinated_solution": "x"}])
    )
    return path


def lying_zip(path: Path, *, inflated: int = GIB, claimed: int = 1024) -> None:
    """A ZIP whose one member claims ``claimed`` bytes and inflates to ``inflated`` zero bytes."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1024 * 1024)
    body = b"".join(squeeze.compress(chunk) for _ in range(inflated // len(chunk))) + squeeze.flush()
    name = b"a.png"
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 0, 0, len(body), claimed, len(name), 0)
    central = struct.pack(
        "<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, 0, len(body), claimed, len(name), 0, 0, 0, 0, 0, 0
    )
    offset = len(local) + len(name) + len(body)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name), offset, 0)
    path.write_bytes(local + name + body + central + name + end)


@pytest.fixture
def store(sqlite_url: str, tmp_path: Path) -> tuple[str, dict[str, str]]:
    return sqlite_url, {"SPANLIGHT_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": sqlite_url}


def assert_refused(url: str, before: dict[str, list[Any]], tmp_path: Path, peak_kb: int) -> None:
    assert snapshot(url) == before
    images = tmp_path / "data" / "images"
    assert not images.exists() or not any(p.is_file() for p in images.rglob("*"))
    assert peak_kb <= PEAK_RSS_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MB"


@pytest.mark.slow
def test_zip_member_that_lies_about_its_size_is_refused_in_small_memory(store, tmp_path: Path) -> None:
    url, env = store
    archive = tmp_path / "images.zip"
    lying_zip(archive)
    assert archive.stat().st_size < 1100 * 1024  # about 1 MB of archive for 1 GiB of zeros
    before = snapshot(url)
    code, out, err, peak = run_cli(
        "import", "--json", "--images", str(archive), str(bench(tmp_path)), env=env
    )
    assert code == 1, out + err
    (rejected,) = json.loads(out)["files"][0]["rejected"]
    assert rejected["record"] == "a.png" and "cannot be unpacked" in rejected["reason"]
    assert_refused(url, before, tmp_path, peak)


@pytest.mark.slow
def test_zip_of_large_solid_images_is_refused_by_the_archive_budget(store, tmp_path: Path) -> None:
    url, env = store
    buffer = io.BytesIO()
    Image.new("RGB", (4480, 4480), "white").save(buffer, format="BMP")
    bmp = buffer.getvalue()
    assert len(bmp) > 60_000_000
    archive = tmp_path / "images.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for k in range(10):
            zipped.writestr(f"solid-{k}.bmp", bmp)
    del bmp, buffer
    assert archive.stat().st_size < 1024 * 1024
    before = snapshot(url)
    code, out, err, peak = run_cli(
        "import", "--json", "--images", str(archive), str(bench(tmp_path)), env=env
    )
    assert code == 1, out + err
    rejected = json.loads(out)["files"][0]["rejected"]
    assert rejected and all("the archive" in r["reason"] for r in rejected)
    assert_refused(url, before, tmp_path, peak)


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A few hundred bytes of PNG that claim ten billion pixels."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def test_image_folder_bomb_is_a_warning_naming_file_and_problem(store, tmp_path: Path) -> None:
    url, env = store
    folder = tmp_path / "pictures"
    folder.mkdir()
    (folder / "bomb.png").write_bytes(bomb_png())
    code, out, err, peak = run_cli(
        "import", "--json", "--images", str(folder), str(bench(tmp_path, "bomb.png")), env=env
    )
    assert code == 0, out + err
    (warning,) = json.loads(out)["files"][0]["warnings"]
    assert "'bomb.png'" in warning["reason"] and "decompression bomb" in warning["reason"]
    assert peak <= PEAK_RSS_LIMIT_KB


def test_a_file_above_the_import_size_cap_is_refused(store, tmp_path: Path) -> None:
    url, env = store
    path = tmp_path / "big.jsonl"
    with path.open("w") as out:
        out.write(json.dumps({"record": "dataset", "format_version": 1, "name": "big", "source_format": "x"}))
        out.write("\n" + "\n" * (3 * 1024 * 1024))
    before = snapshot(url)
    code, out, err, peak = run_cli("import", "--json", str(path), env={**env, "SPANLIGHT_MAX_IMPORT_MB": "2"})
    assert code == 2 and "more than the import limit of 2 MB" in err
    assert_refused(url, before, tmp_path, peak)
