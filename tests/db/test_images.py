"""Images: resolving references inside the image root, checking an import's images, and unpacking an
untrusted ZIP (path traversal, links, decompression bombs, corrupt files)."""

from __future__ import annotations

import io
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from PIL import Image

from db.images import check_image_bytes, extract_image_zip, image_problems, resolve_image, safe_member_path


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
    problems = image_problems(str(tmp_path), {"x": "a.png", "y": "b.png", "z": None}, "f.json")
    assert [(p.record, p.severity) for p in problems] == [("id=y", "warning")]
    (gone,) = image_problems(str(tmp_path / "nope"), {"x": "a.png"}, "f.json")
    assert gone.severity == "warning" and "does not exist" in gone.reason


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
