"""Whole exports, as the CLI and the Export page run them: a dataset read from the store in batches and
written in a format, refused with a message for the user rather than written without its labels.

Exporting needs the acting user's ``export`` right (:mod:`db.access`). Kept apart from the imports
(:mod:`db.transfer`) so an export loads none of what reading and checking a file takes.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sqlalchemy import Engine

from db.access import Actor
from db.exporter import BATCH_ITEMS, export_batches, unwritten_verdicts
from formats.base import Format, FormatError, Sink
from formats.export_check import ExportTally, checked_batches, empty_file
from formats.gc_pause import without_gc_pauses
from formats.layouts import own_layouts
from formats.records import Bundle
from formats.registry import get_format


def export_file(
    engine: Engine,
    dataset: str,
    format_name: str,
    *,
    actor: Actor,
    label_sets: Sequence[str] | None = None,
    filename: str = "",
) -> bytes:
    """The dataset (with the chosen label sets) written in ``format_name``, as bytes (for a download):
    :func:`export_to` an in-memory stream."""
    out = io.BytesIO()
    export_to(engine, dataset, format_name, out, actor=actor, label_sets=label_sets, filename=filename)
    return out.getvalue()


@without_gc_pauses
def export_to(
    engine: Engine,
    dataset: str,
    format_name: str,
    out: Path | Sink,
    *,
    actor: Actor,
    label_sets: Sequence[str] | None = None,
    filename: str = "",
    batch_items: int = BATCH_ITEMS,
    items_done: Callable[[int], None] | None = None,
    left_out: list[str] | None = None,
) -> int:
    """Write the dataset (with the chosen label sets) in ``format_name`` to ``out``, read from the store
    in batches of ``batch_items`` items (:func:`~db.exporter.export_batches`); the bytes written.
    ``items_done`` is told how many items have been written after each batch (for a progress bar).
    ``left_out`` is given a line per label set, or kind of label, the format does not keep
    (:meth:`~formats.export_check.ExportTally.left_out`), and per label set whose verdicts on triplets
    it did not extract the file leaves out (:func:`~db.exporter.unwritten_verdicts`), for the user to
    read beside the file.

    ``out`` is a stream, or a file path: the file is written as a temporary file beside it, renamed at
    the end, so a refused or failed export leaves no file, not even half of one. ``filename`` (else the
    path's name, else the format's default) may choose the encoding (``.csv`` / ``.parquet``).

    Raises UnknownFormat, UnknownDataset or FormatError with a message for the user — also when the
    format cannot hold any of the labels it would write, or the file would be empty
    (:mod:`formats.export_check`): an export never loses every label or writes nothing silently,
    and :class:`~db.access.Forbidden` unless ``actor`` may export. The format and the store are
    checked before any file is made.
    """
    fmt = get_format(format_name)
    if not fmt.writable:
        raise FormatError(f"{fmt.title} can be read but not written")
    source = export_batches(
        engine,
        dataset,
        label_sets,
        actor=actor,
        batch_items=batch_items,
        lossless=fmt.lossless,
        statuses=fmt.lossless or fmt.holds_statuses,
    )
    # Closed however the writing ends: a writer that refuses a batch half way (FormatError) left the
    # reading transaction open until the garbage collector came by, holding PostgreSQL's locks.
    with contextlib.closing(source):
        batches = source if items_done is None else _told(source, items_done)
        written = _export_into(fmt, batches, out, filename, dataset, left_out)
    if left_out is not None:
        left_out += unwritten_verdicts(engine, dataset, label_sets, lossless=fmt.lossless)
    return written


def _export_into(
    fmt: Format,
    batches: Iterator[Bundle],
    out: Path | Sink,
    filename: str | None,
    dataset: str,
    left_out: list[str] | None,
) -> int:
    name = filename or (out.name if isinstance(out, Path) else "") or fmt.default_filename(dataset)
    if not isinstance(out, Path):
        return _write_checked(fmt, batches, out, name, dataset, left_out)
    made = _make_folders(out.parent)
    # Opened as any new file is (not as a private temporary file), so the export gets the usual
    # permissions once renamed.
    part = out.parent / f".{out.name}.{secrets.token_hex(4)}.part"
    try:
        with part.open("xb") as stream:
            written = _write_checked(fmt, batches, stream, name, dataset, left_out)
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        for folder in reversed(made):  # the folders made for it go too, deepest first
            with contextlib.suppress(OSError):  # not empty (someone wrote there meanwhile): kept
                folder.rmdir()
        raise
    return written


def _told(batches: Iterator[Bundle], items_done: Callable[[int], None]) -> Iterator[Bundle]:
    """``batches`` passed on, telling ``items_done`` the items so far each time the writer asks for more
    (it has written the batch before)."""
    done = 0
    for batch in batches:
        yield batch
        done += len(batch.items)
        items_done(done)


def _make_folders(folder: Path) -> list[Path]:
    """Make ``folder`` and any missing parent; the folders made, outermost first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    made = []
    for new in reversed(missing):
        new.mkdir(exist_ok=True)
        made.append(new)
    return made


class _Tally:
    """A sink passing bytes on to ``out``, counting them and noting whether any is not whitespace."""

    def __init__(self, out: Sink) -> None:
        self.out, self.size, self.content = out, 0, False

    def write(self, data: bytes, /) -> int:
        self.size += len(data)
        self.content = self.content or bool(bytes(data).strip())
        return self.out.write(data)


def _write_checked(
    fmt: Format,
    batches: Iterator[Bundle],
    out: Sink,
    filename: str,
    dataset: str,
    left_out: list[str] | None,
) -> int:
    tally = _Tally(out)
    counted = ExportTally(fmt)
    fmt.write_stream(checked_batches(fmt, own_layouts(fmt, batches), counted), tally, filename=filename)
    if not tally.content:
        raise empty_file(fmt, dataset, counted)
    if left_out is not None:
        left_out += counted.left_out()
    return tally.size


__all__ = ["FormatError", "export_file", "export_to"]
