"""Images: resolving references inside the image root, checking an import's images (one folder, batch
by batch, then one warning for the whole import), and unpacking an untrusted ZIP (path traversal,
links, decompression bombs, corrupt files)."""

from __future__ import annotations

import io
import json
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from PIL import Image

from db.access import OPERATOR
from db.images import (
    ImageRootCheck,
    check_image_bytes,
    display_copy,
    extract_image_zip,
    resolve_image,
    safe_member_path,
)
from db.transfer import import_file


def png(size: tuple[int, int] = (4, 4)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "red").save(buffer, format="PNG")
    return buffer.getvalue()


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A few hundred bytes of PNG that claim ten billion pixels."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def make_zip(members: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_resolve_image_stays_inside_the_root(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.png").write_bytes(png())
    (tmp_path.parent / "outside.png").write_bytes(png())
    assert resolve_image(str(tmp_path), "sub/a.png") == (tmp_path / "sub" / "a.png").resolve()
    assert resolve_image(str(tmp_path), "../outside.png") is None
    assert resolve_image(str(tmp_path), "/etc/passwd") is None
    assert resolve_image(str(tmp_path), "missing.png") is None
    assert resolve_image(None, "sub/a.png") is None


def test_missing_images_are_warnings(tmp_path):
    (tmp_path / "a.png").write_bytes(png())
    check = ImageRootCheck(str(tmp_path), "f.json")
    problems = check.batch({"x": "a.png", "y": "b.png", "z": None})
    assert [(p.record, p.field, p.severity) for p in problems] == [("id=y", "image", "warning")]
    assert (check.images, check.found) == (2, 1) and check.summary() is None


def test_a_missing_folder_is_one_warning_after_every_batch(tmp_path):
    """No warning per image while the folder does not exist: one for the whole import, counting the
    distinct images of every batch."""
    check = ImageRootCheck(str(tmp_path / "nope"), "f.json", "nope/", "named in the file")
    assert check.batch({"x": "a.png", "y": "b.png"}) == []
    assert check.batch({"z": "a.png", "w": "c.png"}) == []
    gone = check.summary()
    assert gone is not None and (gone.record, gone.field, gone.severity) == ("-", "image_root", "warning")
    assert gone.reason == (
        f"the image folder 'nope/' named in the file (looked for at {tmp_path / 'nope'}) does not exist, "
        "so none of the file's 3 image(s) was found"
    )
    no_images = ImageRootCheck(str(tmp_path / "nope"), "f.json")
    assert no_images.batch({"x": None}) == []
    summary = no_images.summary()
    looked = tmp_path / "nope"
    assert summary is not None
    assert (
        summary.reason
        == f"the image folder {str(looked)!r} chosen for the import (looked for at {looked}) does not exist"
    )


def test_a_folder_holding_none_of_the_images_says_so_once_besides_each_image(tmp_path):
    check = ImageRootCheck(str(tmp_path), "f.json")
    assert [p.record for p in check.batch({"x": "a.png"})] == ["id=x"]
    assert [p.record for p in check.batch({"y": "a.png", "z": "b.png"})] == ["id=y", "id=z"]
    summary = check.summary()
    assert summary is not None and summary.reason.endswith("holds none of the file's 2 image(s)")


def test_no_folder_checks_nothing():
    check = ImageRootCheck(None, "f.json")
    assert check.batch({"x": "a.png"}) == [] and check.summary() is None and check.images == 0


@pytest.mark.parametrize("name", ["../x.png", "/abs.png", "a/../../x.png", "C:/x.png", "a\\..\\x.png", ""])
def test_unsafe_member_names(name):
    assert safe_member_path(name) is None


def test_image_checks():
    assert check_image_bytes(png()) is None
    assert "pixels" in check_image_bytes(png((100, 100)), max_pixels=5000)
    reason = check_image_bytes(bomb_png())
    assert "decompression bomb" in reason
    assert "not a readable image" in check_image_bytes(b"GIF89a not really")


def test_zip_is_checked_completely_before_anything_is_written(tmp_path):
    archive = make_zip(
        {
            "ok/a.png": png(),
            "../escape.png": png(),
            "bomb.png": bomb_png(),
            "broken.jpg": b"\xff\xd8 no",
            "README.txt": b"hi",
        },
        links=("link.png",),
    )
    report = extract_image_zip(archive, tmp_path / "images", source="imgs.zip")
    reasons = {p.record: (p.severity, p.reason) for p in report.problems}
    assert reasons["../escape.png"][0] == "error" and "escape" in reasons["../escape.png"][1]
    assert "decompression bomb" in reasons["bomb.png"][1]
    assert "not a readable image" in reasons["broken.jpg"][1]
    assert "symbolic link" in reasons["link.png"][1]
    assert reasons["README.txt"][0] == "warning"
    assert report.extracted == [] and not (tmp_path / "images").exists()
    assert not (tmp_path / "escape.png").exists()

    allowed = extract_image_zip(archive, tmp_path / "images", source="imgs.zip", allow_skip=True)
    assert allowed.extracted == ["ok/a.png"]
    assert (tmp_path / "images" / "ok" / "a.png").read_bytes() == png()
    assert sorted(p.name for p in (tmp_path / "images").rglob("*") if p.is_file()) == ["a.png"]


def test_not_a_zip(tmp_path: Path):
    report = extract_image_zip(b"PK nonsense", tmp_path)
    assert report.errors and "not a readable ZIP" in report.errors[0].reason


def test_archive_budgets_count_what_is_really_unpacked(tmp_path: Path) -> None:
    archive = make_zip({f"{k}.png": png((100, 100)) for k in range(3)})
    by_pixels = extract_image_zip(archive, tmp_path / "a", max_archive_pixels=25_000)
    assert [p.record for p in by_pixels.errors] == ["2.png"]
    assert "pixels" in by_pixels.errors[0].reason and not (tmp_path / "a").exists()
    size = len(png((100, 100)))
    by_bytes = extract_image_zip(archive, tmp_path / "b", max_archive_bytes=2 * size, allow_skip=True)
    assert [p.record for p in by_bytes.errors] == ["2.png"] and "unpacks to more than" in by_bytes.errors[
        0
    ].reason
    assert by_bytes.extracted == ["0.png", "1.png"]


def test_store_files_are_never_image_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    (tmp_path / "store.db").write_bytes(b"SQLite format 3\x00")
    (tmp_path / "store.db-wal").write_bytes(b"")
    assert resolve_image(str(tmp_path), "store.db") is None
    assert resolve_image(str(tmp_path), "store.db-wal") is None
    (gone,) = ImageRootCheck(str(tmp_path), "f.json").batch({"x": "store.db"})
    assert gone.reason == "image 'store.db': not found under the image folder"


def _hostile_folder(folder: Path) -> None:
    (folder / "bomb.png").write_bytes(bomb_png())
    (folder / "junk.png").write_bytes(b"not an image")
    (folder / "ok.png").write_bytes(png())


def test_folder_images_are_checked_like_zip_members(tmp_path: Path) -> None:
    _hostile_folder(tmp_path)
    check = ImageRootCheck(str(tmp_path), "f")
    problems = check.batch({"a": "bomb.png", "b": "junk.png", "c": "ok.png"})
    problems += check.batch({"d": "bomb.png"})  # checked once, still a warning for each item
    assert [(p.record, p.severity) for p in problems] == [
        ("id=a", "warning"),
        ("id=b", "warning"),
        ("id=d", "warning"),
    ]
    assert (check.images, check.found) == (3, 3) and check.summary() is None
    assert "'bomb.png'" in problems[0].reason and "decompression bomb" in problems[0].reason
    assert "'junk.png'" in problems[1].reason and "not a readable image" in problems[1].reason
    assert problems[2].reason == problems[0].reason
    assert all(str(tmp_path) not in p.reason for p in problems)


def test_an_import_warns_of_each_bad_image_and_keeps_its_item(engine, tmp_path: Path) -> None:
    """The import's own path: items whose image is missing, a bomb or junk still import, each with a
    warning that names its item and the image, never the folder's path."""
    folder = tmp_path / "pictures"
    folder.mkdir()
    _hostile_folder(folder)
    lines = [{"record": "dataset", "format_version": 1, "name": "imgs", "source_format": "canonical"}] + [
        {"record": "item", "external_id": ext, "response": "A cat.", "image_ref": ref}
        for ext, ref in [
            ("a", "bomb.png"),
            ("b", "junk.png"),
            ("c", "ok.png"),
            ("d", "gone.png"),
            ("e", None),
        ]
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    outcome = import_file(engine, data, actor=OPERATOR, source="imgs.jsonl", image_root=str(folder))
    assert outcome.ok and outcome.items_read == 5
    assert [(p.file, p.record, p.field) for p in outcome.warnings] == [
        ("imgs.jsonl", f"id={ext}", "image") for ext in "abd"
    ]
    reasons = [p.reason for p in outcome.warnings]
    assert "decompression bomb" in reasons[0] and "not a readable image" in reasons[1]
    assert reasons[2] == "image 'gone.png': not found under the image folder"
    assert all(str(tmp_path) not in reason for reason in reasons)


def test_display_copy_is_small(tmp_path: Path) -> None:
    Image.new("RGB", (5000, 1000), "red").save(tmp_path / "wide.png")
    Image.new("RGB", (3000, 3000), "blue").save(tmp_path / "big.jpg", quality=80)
    Image.new("P", (10, 10)).save(tmp_path / "small.gif")
    wide = display_copy(tmp_path / "wide.png")
    assert 1024 < wide.width <= 2048 and abs(wide.height - wide.width / 5) <= 1
    assert max(display_copy(tmp_path / "big.jpg").size) <= 2048
    assert display_copy(tmp_path / "small.gif").mode == "RGB"
    (tmp_path / "bomb.png").write_bytes(bomb_png())
    with pytest.raises(ValueError, match="decompression bomb"):
        display_copy(tmp_path / "bomb.png")
