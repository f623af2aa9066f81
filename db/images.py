"""Finding an item's image on disk, safely; checking an import's images; unpacking an uploaded ZIP;
a small copy of an image for display.

Benchmarks reference images by relative names (``COCO_val2014_….jpg``, ``geoqa_plus/10129.png``); the
files live under a per-dataset image root. A reference must never escape that root (``../../etc``) nor
name one of the store's own files. Images are evidence, not data: a missing or unreadable image is a
warning and the item still imports.

Every image an import brings (in a ZIP, in an image folder) is opened with Pillow and its pixel count
capped *before* it is decoded (a small PNG can claim 100 000 × 100 000 pixels: a decompression bomb).
An uploaded ZIP is untrusted as a whole: every member name is checked (no absolute paths, no ``..``, no
links), members are inflated in chunks against a byte budget (a header may lie about the size), the
whole archive has a budget of unpacked bytes and of pixels, and nothing is written unless the whole
archive passes, or the user allowed skipping the bad members.
"""

from __future__ import annotations

import io
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

from db.import_folder import is_store_file
from formats.problems import Problem, shown_id

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff")
# 8 K × 8 K: far above any benchmark image, far below a bomb (Pillow's own warning starts at ~89 M).
MAX_IMAGE_PIXELS = 64_000_000
MAX_MEMBER_BYTES = 64 * 1024 * 1024
# Per archive: an upload is for a benchmark's images, not a photo library; larger sets go in a folder.
MAX_ARCHIVE_BYTES = 256 * 1024 * 1024
MAX_ARCHIVE_PIXELS = 256_000_000
CHUNK_BYTES = 1024 * 1024
# Pages show images at most this many pixels on the long side; the full decode is never kept.
DISPLAY_SIDE = 2048


def resolve_image(image_root: str | None, image_ref: str | None) -> Path | None:
    """The existing image file for ``image_ref`` under ``image_root``, or None.

    None when either is missing, when the reference points outside the root or at the store's own
    files, or when no file is there.
    """
    if not image_root or not image_ref:
        return None
    root = Path(image_root).expanduser().resolve()
    candidate = (root / image_ref).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file() or is_store_file(candidate):
        return None
    return candidate


@dataclass(frozen=True)
class ImageCheck:
    problem: str | None  # why the image is refused, None when it is safe and readable
    pixels: int = 0


def inspect_image(file: BinaryIO, *, max_pixels: int = MAX_IMAGE_PIXELS) -> ImageCheck:
    """Whether the image in ``file`` is safe and readable, judged from its header and a verify pass.

    Nothing is decoded; the reason never names a path (it is shown to people who need not see it).
    """
    try:
        with Image.open(file) as image:
            width, height = image.size
            if width * height > max_pixels:
                return ImageCheck(
                    f"the image claims {width}×{height} = {width * height:,} pixels, more than the limit of "
                    f"{max_pixels:,} (a decompression bomb or an oversized image)"
                )
            image.verify()
    except Image.DecompressionBombError as error:
        return ImageCheck(f"refused as a decompression bomb: {error}")
    except UnidentifiedImageError:
        return ImageCheck("not a readable image: the format is not recognised")
    except Exception as error:  # noqa: BLE001 - Pillow raises many types for corrupt files
        return ImageCheck(f"not a readable image: {error}")
    return ImageCheck(None, width * height)


def check_image_bytes(data: bytes, *, max_pixels: int = MAX_IMAGE_PIXELS) -> str | None:
    """Why ``data`` is not a safe, readable image, or None when it is."""
    return inspect_image(io.BytesIO(data), max_pixels=max_pixels).problem


def check_image_file(path: Path, *, max_pixels: int = MAX_IMAGE_PIXELS) -> ImageCheck:
    """:func:`inspect_image` of the file at ``path`` (a file that cannot be opened is a problem too)."""
    try:
        with path.open("rb") as file:
            return inspect_image(file, max_pixels=max_pixels)
    except OSError as error:
        return ImageCheck(f"cannot be opened: {error.strerror or 'error'}")


def checked_image_root(chosen: str | None, file_root: str | None, stored: str | None) -> str | None:
    """The image folder an import checks its items' images in: the one chosen for it, else the one the
    file names, else the dataset's own (a file imported into a dataset that has images)."""
    return chosen or file_root or stored


@dataclass
class ImageRootCheck:
    """An import's images checked in one folder, batch by batch, then one warning for the whole import
    when that folder does not exist or holds none of them (:meth:`summary`).

    One warning per missing image never said which folder had been meant, nor where it was looked for:
    a relative folder named in a file ("images/") is looked for beside the file, or for an upload in the
    import folder, and a user whose images were elsewhere imported a dataset with every image missing
    without being told why. ``written`` is the folder as the file or the person gave it, ``named`` how it
    came to be used ("named in the file", "chosen for the import")."""

    root: str | None  # the folder the images are looked for in
    source: str
    written: str | None = None
    named: str = "chosen for the import"
    images: int = 0  # distinct image names checked
    found: int = 0  # of them, the files there
    _seen: dict[str, str | None] = field(default_factory=dict)
    _exists: bool | None = None

    @property
    def exists(self) -> bool:
        if self._exists is None:
            self._exists = bool(self.root) and Path(str(self.root)).expanduser().is_dir()
        return self._exists

    def batch(self, refs: Mapping[str, str | None]) -> list[Problem]:
        """One warning per item of ``refs`` (external id: image name) whose image is not under the
        folder, or is unsafe or unreadable; none while the folder does not exist (:meth:`summary` says
        so once). Each distinct image is checked once."""
        if not self.root:
            return []
        problems = []
        for ext, ref in refs.items():
            if not ref:
                continue
            if ref not in self._seen:
                self.images += 1
                path = resolve_image(self.root, ref) if self.exists else None
                self.found += path is not None
                self._seen[ref] = (
                    "not found under the image folder" if path is None else check_image_file(path).problem
                )
            if self.exists and self._seen[ref] is not None:
                problems.append(
                    Problem(
                        self.source,
                        f"id={shown_id(ext)}",
                        "image",
                        f"image {ref!r}: {self._seen[ref]}",
                        "warning",
                    )
                )
        return problems

    def summary(self) -> Problem | None:
        """The warning for the whole import when the folder does not exist, or holds none of the images
        checked, naming the folder as written and where it was looked for; else None."""
        if not self.root or (self.exists and (not self.images or self.found)):
            return None
        written = self.root if self.written is None else self.written
        where = f"the image folder {written!r} {self.named} (looked for at {self.root})"
        images = f"the file's {self.images:,} image(s)"
        if self.exists:
            reason = f"{where} holds none of {images}"
        elif self.images:
            reason = f"{where} does not exist, so none of {images} was found"
        else:
            reason = f"{where} does not exist"
        return Problem(self.source, "-", "image_root", reason, "warning")


def display_copy(path: Path, *, side: int = DISPLAY_SIDE) -> Image.Image:
    """The image at ``path`` shrunk to at most ``side`` pixels on its long side, for a page to show.

    A JPEG is decoded at a reduced scale (``draft``); other formats are decoded once and shrunk by an
    integer factor (``reduce``: no second full-size buffer), and the full decode is dropped at once. Raises
    ValueError (with a reason that names no path) for an unsafe or unreadable image.
    """
    with path.open("rb") as file:
        check = inspect_image(file)
    if check.problem is not None:
        raise ValueError(check.problem)
    try:
        with Image.open(path) as image:
            image.draft("RGB", (side, side))
            shown: Image.Image = image
            if image.mode not in ("RGB", "RGBA", "L"):
                keeps_alpha = "A" in image.getbands() or "transparency" in image.info
                shown = image.convert("RGBA" if keeps_alpha else "RGB")
            factor = -(-max(shown.size) // side)
            return shown.reduce(factor) if factor > 1 else shown.copy()
    except (OSError, Image.DecompressionBombError) as error:
        raise ValueError(f"not a readable image: {type(error).__name__}") from None


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
    max_archive_bytes: int = MAX_ARCHIVE_BYTES,
    max_archive_pixels: int = MAX_ARCHIVE_PIXELS,
) -> ZipReport:
    """Check every member of the ZIP ``data``, then write the images under ``target``.

    Unsafe names, links, oversized members and unreadable or oversized images are errors, and so is
    every member past the archive's budget of unpacked bytes or pixels; other files (a README) are
    skipped with a warning. Members are unpacked in chunks into a temporary staging folder, so
    memory stays small whatever the headers claim. With errors and ``allow_skip`` False nothing is
    written.
    """
    report = ZipReport()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        report.problems.append(Problem(source, "-", "-", f"not a readable ZIP archive: {error}"))
        return report
    root = target.resolve()
    with archive, tempfile.TemporaryDirectory(prefix="spanlight-unpacking-") as staging_dir:
        staging = Path(staging_dir)
        budget = _Budget(max_archive_bytes, max_archive_pixels)
        accepted: list[tuple[PurePosixPath, Path]] = []
        for index, info in enumerate(archive.infolist()):
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
            staged = staging / f"{index}"
            if problem is None:
                problem = budget.exhausted() or _unpack(archive, info, staged, budget)
            if problem is None:
                problem = budget.take_image(staged, max_pixels)
            if problem is not None:
                report.problems.append(Problem(source, name, "-", problem))
                staged.unlink(missing_ok=True)
                continue
            assert path is not None  # a name that could escape is a problem, reported above
            accepted.append((path, staged))
        if report.errors and not allow_skip:
            return report
        for path, staged in accepted:
            destination = (root / path).resolve()
            if not destination.is_relative_to(root):  # belt and braces: safe_member_path already refused it
                report.problems.append(Problem(source, str(path), "-", "escapes the image folder: refused"))
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(staged, destination)
            report.extracted.append(str(path))
    return report


class _Budget:
    """What an archive may still unpack: bytes and pixels, counted from what is really inflated."""

    def __init__(self, max_bytes: int, max_pixels: int) -> None:
        self.max_bytes, self.max_pixels = max_bytes, max_pixels
        self.bytes = self.pixels = 0

    def exhausted(self) -> str | None:
        if self.bytes > self.max_bytes:
            return (
                f"the archive unpacks to more than {self.max_bytes:,} bytes; split it or use an image folder"
            )
        if self.pixels > self.max_pixels:
            return f"the archive's images hold more than {self.max_pixels:,} pixels; split it or use an image folder"
        return None

    def take_image(self, staged: Path, max_pixels: int) -> str | None:
        check = check_image_file(staged, max_pixels=max_pixels)
        if check.problem is not None:
            return check.problem
        self.pixels += check.pixels
        return self.exhausted()


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, staged: Path, budget: _Budget) -> str | None:
    """Inflate one member into ``staged`` chunk by chunk; why it was stopped, or None."""
    written = 0
    try:
        with archive.open(info) as member, staged.open("wb") as out:
            while chunk := member.read(CHUNK_BYTES):
                written += len(chunk)
                budget.bytes += len(chunk)
                if written > MAX_MEMBER_BYTES:
                    return f"inflates to more than the {MAX_MEMBER_BYTES:,}-byte limit per image: refused"
                problem = budget.exhausted()
                if problem is not None:
                    return problem
                out.write(chunk)
    except Exception as error:  # noqa: BLE001 - corrupt members raise zlib/zip errors
        return f"cannot be unpacked: {error}"
    return None


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "a symbolic link: refused"
    if info.file_size > MAX_MEMBER_BYTES:
        return f"{info.file_size:,} bytes unpacked, more than the {MAX_MEMBER_BYTES:,}-byte limit per image"
    if info.flag_bits & 0x1:
        return "encrypted: refused"
    return None
