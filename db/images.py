"""Finding an item's image on disk, safely; checking an import's images; unpacking an uploaded ZIP.

Benchmarks reference images by relative names (``COCO_val2014_….jpg``, ``geoqa_plus/10129.png``); the
files live under a per-dataset image root. A reference must never escape that root (``../../etc``).
Images are evidence, not data: a missing image is a warning and the item still imports.

An uploaded ZIP is untrusted. Every member name is checked before anything is written (no absolute
paths, no ``..``, no links), every image is opened with Pillow and its pixel count capped *before* it is
decoded (a small PNG can claim 100 000 × 100 000 pixels: a decompression bomb), and nothing is written
unless the whole archive passes, or the user allowed skipping the bad members.
"""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from PIL import Image

from formats.problems import Problem

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff")
# 8 K × 8 K: far above any benchmark image, far below a bomb (Pillow's own warning starts at ~89 M).
MAX_IMAGE_PIXELS = 64_000_000
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_BYTES = 4 * 1024 * 1024 * 1024


def resolve_image(image_root: str | None, image_ref: str | None) -> Path | None:
    """The existing image file for ``image_ref`` under ``image_root``, or None.

    None when either is missing, when the reference points outside the root, or when no file is there.
    """
    if not image_root or not image_ref:
        return None
    root = Path(image_root).expanduser().resolve()
    candidate = (root / image_ref).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


def missing_images(image_root: str | None, refs: Mapping[str, str | None], source: str) -> list[Problem]:
    """One warning per item whose image is not under ``image_root`` (none when no root is set)."""
    if not image_root:
        return []
    if not Path(image_root).expanduser().is_dir():
        return [
            Problem(source, "-", "image_root", f"the image folder {image_root} does not exist", "warning")
        ]
    return [
        Problem(source, f"id={ext}", "image", f"image {ref!r} not found under the image folder", "warning")
        for ext, ref in refs.items()
        if ref and resolve_image(image_root, ref) is None
    ]


def check_image_bytes(data: bytes, *, max_pixels: int = MAX_IMAGE_PIXELS) -> str | None:
    """Why ``data`` is not a safe, readable image, or None when it is."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > max_pixels:
                return (
                    f"the image claims {width}×{height} = {width * height:,} pixels, more than the limit of "
                    f"{max_pixels:,} (a decompression bomb or an oversized image)"
                )
            image.verify()
    except Image.DecompressionBombError as error:
        return f"refused as a decompression bomb: {error}"
    except Exception as error:  # noqa: BLE001 - Pillow raises many types for corrupt files
        return f"not a readable image: {error}"
    return None


def safe_member_path(name: str) -> PurePosixPath | None:
    """The relative path a ZIP member may be written to, or None when its name could escape the folder."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/"):
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or any(part in ("..", "") for part in path.parts) or ":" in path.parts[0]:
        return None
    return path


@dataclass
class ZipReport:
    extracted: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def extract_image_zip(
    data: bytes,
    target: Path,
    *,
    source: str = "images.zip",
    allow_skip: bool = False,
    max_pixels: int = MAX_IMAGE_PIXELS,
) -> ZipReport:
    """Check every member of the ZIP ``data``, then write the images under ``target``.

    Unsafe names, links, oversized members and unreadable or oversized images are errors; other files
    (a README) are skipped with a warning. With errors and ``allow_skip`` False nothing is written.
    """
    report = ZipReport()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        report.problems.append(Problem(source, "-", "-", f"not a readable ZIP archive: {error}"))
        return report
    accepted: list[tuple[PurePosixPath, bytes]] = []
    total = 0
    with archive:
        for info in archive.infolist():
            name = info.filename
            if info.is_dir():
                continue
            problem = _member_problem(info)
            path = safe_member_path(name)
            if path is None:
                problem = "the member name could escape the image folder (absolute path or '..'): refused"
            if problem is None and path is not None and path.suffix.lower() not in IMAGE_SUFFIXES:
                report.problems.append(Problem(source, name, "-", "not an image file; skipped", "warning"))
                continue
            if problem is None:
                total += info.file_size
                if total > MAX_ARCHIVE_BYTES:
                    problem = "the archive unpacks to more than 4 GB; split it"
            content = b""
            if problem is None:
                try:
                    content = archive.read(info)
                except Exception as error:  # noqa: BLE001 - corrupt members raise zlib/zip errors
                    problem = f"cannot be unpacked: {error}"
            if problem is None:
                problem = check_image_bytes(content, max_pixels=max_pixels)
            if problem is not None:
                report.problems.append(Problem(source, name, "-", problem))
                continue
            assert path is not None  # a name that could escape is a problem, reported above
            accepted.append((path, content))
    if report.errors and not allow_skip:
        return report
    root = target.resolve()
    for path, content in accepted:
        destination = (root / path).resolve()
        if not destination.is_relative_to(root):  # belt and braces: safe_member_path already refused it
            report.problems.append(Problem(source, str(path), "-", "escapes the image folder: refused"))
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = destination.with_name(destination.name + ".part")
        partial.write_bytes(content)
        partial.replace(destination)
        report.extracted.append(str(path))
    return report


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "a symbolic link: refused"
    if info.file_size > MAX_MEMBER_BYTES:
        return f"{info.file_size:,} bytes unpacked, more than the {MAX_MEMBER_BYTES:,}-byte limit per image"
    if info.flag_bits & 0x1:
        return "encrypted: refused"
    return None
