"""Exports prepared on the server for a browser to download, streamed from disk, never held in memory.

A download button hands the browser bytes the server keeps in memory (in the session, and again in the
media store): a 1 M-sentence dataset is some hundreds of MB per user who prepared it. Instead the Export
page writes the file with :func:`db.export_files.export_to`, a batch at a time, into a folder of its own under
``data/exports`` named by a random ticket, and the server's download route (``server.py``) streams it
from there.

The ticket is the key: whoever holds the link can fetch the file until it expires, so the page shows it
only to the user who prepared it (who holds the export right) and nothing lists the folders. The folder
also notes who prepared it, and a download is refused once that account is disabled or has lost the
export right (:func:`download_file`). A folder is found by its name alone, so a link keeps working after
a restart and from any app process sharing the data folder and the store. Expired folders are swept
whenever a file is prepared or asked for, and when the server starts.
"""

from __future__ import annotations

import re
import secrets
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from db.access import Actor, require_now
from db.config import data_dir
from db.export_files import export_to

# How long a prepared file can be downloaded, in seconds.
LIFETIME_S = 3600
# The path, below the server's base URL, of the route that streams a prepared file (``server.py``).
ROUTE = "/api/download"
# Where the route is served in this process (set by ``server.py``); None when nothing serves it (the
# pages run by ``streamlit run app.py``, or in a test), and the page then offers the bytes instead.
_served_at: list[str] = []
_TICKET = re.compile(r"[A-Za-z0-9_-]{32}")
# Characters a file name on disk must not hold (each becomes "_"); the download is named as on disk.
_UNSAFE_IN_NAME = re.compile(r"[/\\\x00-\x1f]")
# The file beside a prepared export naming the account that prepared it (empty: the operator).
_PREPARED_BY = ".prepared-by"
# Bytes of a file name's stem on disk, at most: a name is at most 255 bytes, and export_to writes
# ".<name>.<8 hex>.part" first.
_STEM_BYTES = 150


@dataclass(frozen=True)
class PreparedExport:
    ticket: str
    path: Path
    size: int  # bytes
    left_out: tuple[str, ...] = ()  # what the format does not keep of the chosen label sets, a line each


def serve_downloads_at(path: str) -> None:
    """Say that this process's server streams prepared files at ``path``/<ticket>."""
    _served_at[:] = [path]


def download_link(ticket: str) -> str | None:
    """The link that downloads the file prepared under ``ticket``, or None when nothing serves it."""
    return f"{_served_at[0]}/{ticket}" if _served_at else None


def exports_folder() -> Path:
    return data_dir() / "exports"


def prepare_export(
    engine: Engine,
    dataset: str,
    format_name: str,
    *,
    actor: Actor,
    label_sets: Sequence[str] | None,
    filename: str,
    items_done: Callable[[int], None] | None = None,
) -> PreparedExport:
    """Write the dataset (with the chosen label sets) as ``format_name`` into a new ticket's folder,
    named ``filename`` (made safe for the disk); ``items_done`` hears of the items written so far. Raises
    as :func:`~db.export_files.export_to` does, and then leaves no folder behind."""
    sweep_exports()
    ticket = secrets.token_urlsafe(24)  # 32 characters, 192 random bits
    name = _disk_name(filename)
    path = exports_folder() / ticket / name
    try:
        path.parent.mkdir(parents=True)
        (path.parent / _PREPARED_BY).write_text("" if actor.id is None else str(actor.id))
        left_out: list[str] = []
        size = export_to(
            engine,
            dataset,
            format_name,
            path,
            actor=actor,
            label_sets=label_sets,
            filename=name,
            items_done=items_done,
            left_out=left_out,
        )
    except BaseException:
        shutil.rmtree(path.parent, ignore_errors=True)
        raise
    return PreparedExport(ticket, path, size, tuple(left_out))


def _disk_name(filename: str) -> str:
    """``filename`` as a file in the ticket's folder: no separators or control characters, no leading
    dot, and a stem short enough for any file system (cut at a character, the extension kept)."""
    name = _UNSAFE_IN_NAME.sub("_", filename).lstrip(".") or "export"
    stem, dot, extension = name.rpartition(".")
    if not dot or len(extension) > 10:
        stem, extension = name, ""
    encoded = stem.encode("utf-8", "surrogatepass")
    if len(encoded) > _STEM_BYTES:
        stem = encoded[:_STEM_BYTES].decode("utf-8", "ignore")
    return f"{stem}.{extension}" if extension else stem


def prepared_file(ticket: str) -> Path | None:
    """The file prepared under ``ticket``, or None when there is none or it has expired."""
    if not _TICKET.fullmatch(ticket):
        return None
    folder = exports_folder() / ticket
    if not folder.is_dir() or _expired(folder):
        return None
    files = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
    return files[0] if len(files) == 1 else None


class ExportGone(LookupError):
    """No file is prepared under the ticket (never, or it expired)."""


def download_file(engine: Engine, ticket: str) -> Path:
    """The file prepared under ``ticket``, for its download: raises :class:`ExportGone` when there is
    none, and :class:`~db.access.Forbidden` when the account that prepared it is disabled or may no
    longer export (read from the store now)."""
    path = prepared_file(ticket)
    if path is None:
        raise ExportGone("This download has expired or does not exist. Prepare the file again.")
    try:
        noted = (path.parent / _PREPARED_BY).read_text().strip()
    except FileNotFoundError:
        raise ExportGone("This download has expired or does not exist. Prepare the file again.") from None
    require_now(engine, Actor(int(noted) if noted else None, "", ""), "export")
    return path


def discard_export(ticket: str) -> None:
    """Remove the file prepared under ``ticket`` (the page prepared another one instead)."""
    if _TICKET.fullmatch(ticket):
        shutil.rmtree(exports_folder() / ticket, ignore_errors=True)


def sweep_exports() -> int:
    """Remove every expired folder; how many were removed."""
    folder = exports_folder()
    if not folder.is_dir():
        return 0
    expired = [f for f in folder.iterdir() if f.is_dir() and _TICKET.fullmatch(f.name) and _expired(f)]
    for old in expired:
        shutil.rmtree(old, ignore_errors=True)
    return len(expired)


def _expired(folder: Path) -> bool:
    try:
        return time.time() - folder.stat().st_mtime > LIFETIME_S
    except FileNotFoundError:
        return True
