"""Whole imports, as the CLI and the Import page run them (exports: :mod:`db.export_files`).

An import reads the file with its format (named, or guessed from the bytes), checks the images, and hands
the bundle with every problem found so far to :func:`db.importer.import_bundles`, which validates against
the store and writes in one transaction. The outcome says what was written and lists every problem with
file, record, field and reason. Nothing here raises for bad input: a failed import is an outcome.

Importing needs the acting user's ``manage_data`` right (:mod:`db.access`); a refusal raises
:class:`~db.access.Forbidden` before anything is read or written (an import's own transaction checks
again, so a right taken away meanwhile still stops it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from db.access import Actor, require_now
from db.config import data_dir
from db.exporter import UnknownDataset
from db.images import ImageRootCheck, checked_image_root, extract_image_zip
from db.import_changes import ImportChanges, ReplaceRequired
from db.import_folder import ImportPathRefused, file_image_root, image_root_path
from db.importer import IMPORTED_SETTINGS, ImportResult, import_bundles
from db.names import EmptyName, annotator_stored, clean_name, dataset_stored, label_set_stored
from db.repositories.datasets import set_image_root
from db.repositories.exchange import dataset_image_root, known_items
from db.repositories.label_sets import label_set_meta
from db.value_check import unstorable_headers
from formats.base import FormatError, ReadOptions, ReadResult
from formats.gc_pause import without_gc_pauses
from formats.mapping import ImportMapping, read_table
from formats.problems import ImportRejected, Problem, whole_file_first
from formats.records import Bundle
from formats.registry import UnknownFormat, choose_format, read_file, read_file_from_disk
from formats.storable import unstorable
from formats.tables import TableSource
from formats.text import file_windows, sniff_head

Progress = Callable[[float, str], None]


def _no_progress(fraction: float, message: str) -> None:
    return None


@dataclass
class ImportOutcome:
    source: str
    format: str | None
    dataset: str | None
    ok: bool
    result: ImportResult | None = None
    problems: list[Problem] = field(default_factory=list)
    items_read: int = 0
    images_extracted: int = 0
    # Set when the import was refused because it would remove or change stored annotations.
    refused_changes: ImportChanges | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in whole_file_first(self.problems) if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in whole_file_first(self.problems) if p.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        result = self.result
        return {
            "source": self.source,
            "format": self.format,
            "dataset": self.dataset,
            "ok": self.ok,
            "items_read": self.items_read,
            "items_created": result.items_created if result else 0,
            "items_existing": result.items_existing if result else 0,
            "label_sets": result.label_sets if result else [],
            "rows": result.rows if result else {},
            "images_extracted": self.images_extracted,
            "rejected": [p.to_dict() for p in self.errors],
            "warnings": [p.to_dict() for p in self.warnings],
            "changes": (self.refused_changes or (result.changes if result else ImportChanges())).to_dict(),
        }

    def summary(self) -> str:
        if self.refused_changes is not None:
            return (
                f"{self.source}: nothing imported; it would remove or change stored annotations "
                "(choose to replace existing annotations to apply it):\n  "
                + "\n  ".join(self.refused_changes.report_lines())
            )
        if not self.ok:
            return f"{self.source}: nothing imported ({len(self.errors)} error(s))"
        assert self.result is not None
        rows = ", ".join(f"{n} {table}" for table, n in sorted(self.result.rows.items())) or "no new rows"
        skipped = f"; {len(self.errors)} record(s) skipped" if self.errors else ""
        items = (
            f"{self.result.items_created} new items, {self.result.items_existing} already stored; "
            if self.result.items_created or self.result.items_existing
            else ""  # a detector's outputs bring no items ("0 new items, 0 already stored" misled)
        )
        return f"{self.source}: {self.format} → dataset {self.dataset!r}: {items}{rows}{skipped}"


def dataset_image_folder(dataset: str) -> Path:
    """Where images uploaded for ``dataset`` (in a ZIP) are kept."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", dataset).strip("._") or "dataset"
    return data_dir() / "images" / slug


def _write(
    engine: Engine,
    bundles: Iterable[Bundle],
    outcome: ImportOutcome,
    *,
    problems: list[Problem],
    actor: Actor,
    allow_skip: bool,
    annotator: str | None,
    replace_existing: bool,
) -> bool:
    """Hand the bundles (a whole file, or its batches as they are read) and ``problems``, every problem
    found so far (a batched reader still appends to it), to :func:`import_bundles`, the one writer of
    every kind of import; on rejection the outcome keeps just the rejection's problems (or the changes
    it would make to stored annotations) and False is returned."""
    try:
        outcome.result = import_bundles(
            engine,
            bundles,
            actor=actor,
            source=outcome.source,
            problems=problems,
            allow_skip=allow_skip,
            annotator=annotator,
            replace_existing=replace_existing,
        )
    except ImportRejected as rejected:
        outcome.problems = list(rejected.problems)
        return False
    except ReplaceRequired as refused:
        outcome.refused_changes = refused.changes
        outcome.problems = [*problems, refused.problem(outcome.source)]
        return False
    outcome.problems = list(problems)
    return True


@without_gc_pauses
def import_file(
    engine: Engine,
    data: bytes,
    *,
    actor: Actor,
    source: str,
    format_name: str | None = None,
    options: ReadOptions | None = None,
    allow_skip: bool = False,
    image_root: str | None = None,
    image_zip: bytes | None = None,
    annotator: str | None = None,
    progress: Progress = _no_progress,
    replace_existing: bool = False,
    confine_image_root: bool = False,
) -> ImportOutcome:
    """Import one benchmark file (and optionally its images) into the store, all or nothing."""
    require_now(engine, actor, "manage_data")  # before images are unpacked
    options = options or ReadOptions()
    try:
        annotator = _named(engine, options, annotator)
    except EmptyName as empty:
        return ImportOutcome(
            source, format_name, None, False, problems=[Problem(source, "-", "-", str(empty))]
        )
    read = _read_bytes(data, source, format_name, options, progress)
    if isinstance(read, ImportOutcome):
        return read
    return _import_read(
        engine,
        read[1],
        source,
        read[0],
        actor=actor,
        allow_skip=allow_skip,
        image_root=image_root,
        image_zip=image_zip,
        annotator=annotator,
        progress=progress,
        replace_existing=replace_existing,
        confine_image_root=confine_image_root,
    )


def _read_bytes(
    data: bytes, source: str, format_name: str | None, options: ReadOptions, progress: Progress
) -> tuple[str, ReadResult] | ImportOutcome:
    """The benchmark file's format name and what its reader gives (in batches where it can), or the
    outcome of an import refused for an unknown format."""
    try:
        fmt = choose_format(data, source, format_name, "benchmark")
    except UnknownFormat as error:
        return ImportOutcome(
            source, format_name, options.dataset, False, problems=[Problem(source, "-", "-", str(error))]
        )
    progress(0.05, f"Reading {source} as {fmt.title}…")
    return fmt.name, read_file(fmt, data, source, options, batches=True)


# The head a format reading from disk is given (a CSV file's header row is in it); the format is
# recognised from the file's sniff view (formats.text.sniff_head), as on the Import page.
SNIFF_BYTES = 1 << 16


@without_gc_pauses
def import_path(
    engine: Engine,
    path: Path,
    *,
    actor: Actor,
    source: str,
    format_name: str | None = None,
    options: ReadOptions | None = None,
    allow_skip: bool = False,
    image_root: str | None = None,
    image_zip: bytes | None = None,
    annotator: str | None = None,
    progress: Progress = _no_progress,
    replace_existing: bool = False,
    confine_image_root: bool = False,
    too_large: Callable[[int], str | None] | None = None,
) -> ImportOutcome:
    """:func:`import_file` of a file on disk. A format that can read a file as it goes (AlignBench CSV
    rows, canonical JSON Lines) reads it from disk a part at a time, so a file of a million rows is
    never all in memory; any other file is read into memory and imported by :func:`import_file` —
    unless ``too_large`` says why a file of its size may not be (the import size cap)."""
    require_now(engine, actor, "manage_data")  # before a large file is read
    options = options or ReadOptions()
    try:
        annotator = _named(engine, options, annotator)
    except EmptyName as empty:
        return ImportOutcome(
            source, format_name, None, False, problems=[Problem(source, "-", "-", str(empty))]
        )
    from_disk = _read_from_disk(path, source, format_name, options, progress)
    read: tuple[str, ReadResult] | ImportOutcome
    if from_disk is not None:
        read = from_disk
    elif why := too_large(path.stat().st_size) if too_large else None:
        problem = Problem(source, "-", "-", why)
        return ImportOutcome(source, format_name, options.dataset, False, problems=[problem])
    else:
        read = _read_bytes(path.read_bytes(), source, format_name, options, progress)
    if isinstance(read, ImportOutcome):
        return read
    return _import_read(
        engine,
        read[1],
        source,
        read[0],
        actor=actor,
        allow_skip=allow_skip,
        image_root=image_root,
        image_zip=image_zip,
        annotator=annotator,
        progress=progress,
        replace_existing=replace_existing,
        confine_image_root=confine_image_root,
        file_folder=path.parent,
    )


def _read_from_disk(
    path: Path, source: str, format_name: str | None, options: ReadOptions, progress: Progress
) -> tuple[str, ReadResult] | None:
    """:func:`_read_bytes` of a file whose format reads it from disk as it goes; None for any other
    file (and one whose format is not recognised: reading it whole reports that).

    The format is recognised from the view the Import page sniffs (:func:`~formats.text.sniff_head`,
    read 64 KB at a time): from the first 64 KB alone, a file whose first record is longer was not
    recognised, and read whole into memory instead of from disk, where the page refused it as larger
    than the import limit. A file that the format then cannot read is told which format it looks like
    from the same view."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if head[:4] == b"PAR1":
        return None
    # A format named needs no sniffing: the view would read through a long first record for nothing.
    seen = head if format_name is not None else sniff_head(head, file_windows(path, 0, part=SNIFF_BYTES))
    try:
        fmt = choose_format(seen, source, format_name, "benchmark")
    except UnknownFormat:
        return None
    progress(0.05, f"Reading {source} as {fmt.title}…")
    read = read_file_from_disk(fmt, path, head, source, options, seen=seen)
    return None if read is None else (fmt.name, read)


@without_gc_pauses
def import_table(
    engine: Engine,
    source: TableSource,
    *,
    actor: Actor,
    mapping: ImportMapping | None = None,
    options: ReadOptions | None = None,
    allow_skip: bool = False,
    image_root: str | None = None,
    image_zip: bytes | None = None,
    annotator: str | None = None,
    progress: Progress = _no_progress,
    replace_existing: bool = False,
    confine_image_root: bool = False,
) -> ImportOutcome:
    """Import a table file or a dataset folder read by a field mapping (saved with the dataset), or with
    no mapping by the reader of the benchmark its columns are (AlignBench, M-HalDetect); all or nothing,
    like every import."""
    require_now(engine, actor, "manage_data")  # before the table is read
    options = options or ReadOptions()
    try:
        annotator = _named(engine, options, annotator)
    except EmptyName as empty:
        problem = Problem(source.name, "-", "-", str(empty))
        return ImportOutcome(source.name, None, None, False, problems=[problem])
    progress(0.05, f"Reading {source.name}…")
    format_name, read = read_table(source, mapping, options)
    return _import_read(
        engine,
        read,
        source.name,
        format_name,
        actor=actor,
        allow_skip=allow_skip,
        image_root=image_root,
        image_zip=image_zip,
        annotator=annotator,
        progress=progress,
        replace_existing=replace_existing,
        confine_image_root=confine_image_root,
    )


def _import_read(
    engine: Engine,
    read: ReadResult,
    source: str,
    format_name: str,
    *,
    actor: Actor,
    allow_skip: bool,
    image_root: str | None,
    image_zip: bytes | None,
    annotator: str | None,
    progress: Progress,
    replace_existing: bool,
    confine_image_root: bool = False,
    file_folder: Path | None = None,
) -> ImportOutcome:
    """What a benchmark reader returned, with its images checked, written by the one importer: the
    first bundle and the batches after it (none for a file read whole), each batch's images checked and
    the batch written as it is read, all in the importer's one transaction. The reader goes on appending
    its problems to ``read.problems`` as it reads. ``confine_image_root`` (an import from the web page):
    an image folder the file itself names is used only inside the import or data folder
    (:func:`~db.import_folder.confined_image_root`), and one chosen for it is refused elsewhere, by the
    rule of every image root a page sets (:func:`~db.import_folder.image_root_path`). A relative image
    folder the file names is looked for in ``file_folder``, the file's own folder, when it has one
    (:func:`~db.import_folder.file_image_root`); the report says once when the folder the images are
    looked for in does not exist or holds none of them (:class:`~db.images.ImageRootCheck`)."""
    outcome = ImportOutcome(source, format_name, None, False, problems=list(read.problems))
    bundle = read.bundle
    if bundle is None:
        return outcome
    if read.more is None and not bundle.items and not any(ls.annotations for ls in bundle.label_sets):
        if not outcome.errors:
            outcome.problems.append(Problem(source, "-", "-", "the file holds no records"))
        return outcome
    typed = unstorable_headers(bundle, source, IMPORTED_SETTINGS)  # names typed on the page, say
    chosen, named = image_root, "chosen for the import"  # as typed, for the report
    if image_root is not None and (bad := unstorable(image_root)) is not None:
        typed.append(Problem(source, "-", "image folder", bad[1]))
    elif image_root and confine_image_root:  # the page checked it too; no caller may skip the rule
        try:
            image_root = str(image_root_path(image_root))
        except ImportPathRefused as outside:
            typed.append(Problem(source, "-", "image folder", str(outside)))
    elif image_root:  # the command line's, against its working folder
        image_root = str(Path(image_root).expanduser().resolve())
    if typed:
        outcome.problems += typed
        return outcome
    # A file read whole is one batch: the same checks and the same write as a file read in batches.
    first, more, problems = bundle, read.more if read.more is not None else iter(()), read.problems
    outcome.dataset = first.dataset.name
    if image_zip is not None:
        progress(0.3, "Checking the images in the ZIP…")
        folder = dataset_image_folder(first.dataset.name)
        report = extract_image_zip(image_zip, folder, source=f"{source} images", allow_skip=allow_skip)
        problems += report.problems
        if report.errors and not allow_skip:
            outcome.problems = list(problems)
            return outcome
        outcome.images_extracted = len(report.extracted)
        if not image_root:
            image_root = chosen = str(folder)
            named = "the ZIP's images were unpacked into"
    file_root = first.dataset.image_root
    if file_root:
        first.dataset.image_root, refused = file_image_root(
            file_root, file_folder, confine=confine_image_root
        )
        if refused and image_root is None:  # a folder chosen (or unpacked) is used instead anyway
            problems.append(Problem(source, "-", "image_root", refused, "warning"))
    existing = dataset_image_root(engine, first.dataset.name)
    stored = existing[1] if existing else None
    root = checked_image_root(image_root, first.dataset.image_root, stored)
    if image_root:
        written = chosen
    elif first.dataset.image_root:
        written, named = file_root, "named in the file"
    else:
        written, named = stored, "stored for the dataset"
    root_check = ImageRootCheck(root, source, written, named)
    if image_root:
        first.dataset.image_root = image_root

    share, low = read.read_share, (0.35 if image_zip is not None else 0.1)

    def checked() -> Iterator[Bundle]:
        bundle: Bundle | None = first
        while bundle is not None:
            outcome.items_read += len(bundle.items)
            problems.extend(root_check.batch({i.external_id: i.image_ref for i in bundle.items}))
            if share is None:
                progress(0.5, f"Checking and writing items ({outcome.items_read:,} read)…")
            else:  # a file read in batches as it is written: the bar follows how much of it is read
                part = share()
                progress(
                    low + (0.95 - low) * part,
                    f"Checking and writing items ({outcome.items_read:,} read, {int(part * 100)}% of the file)…",
                )
            yield bundle
            try:
                bundle = next(more, None)
            except Exception as error:  # noqa: BLE001 - a reader bug must still end as a clear report
                problems.append(Problem(source, "-", "-", f"internal error while reading: {error!r}"))
                bundle = None
        if (missing := root_check.summary()) is not None:  # said once, after every batch was checked
            problems.append(missing)

    if not _write(
        engine,
        checked(),
        outcome,
        problems=problems,
        actor=actor,
        allow_skip=allow_skip,
        annotator=annotator,
        replace_existing=replace_existing,
    ):
        return outcome
    if image_root and existing is not None and existing[1] != image_root:
        set_image_root(engine, existing[0], image_root, actor=actor, confine=confine_image_root)
    outcome.ok = True
    progress(1.0, outcome.summary())
    return outcome


@without_gc_pauses
def import_predictions(
    engine: Engine,
    data: bytes,
    *,
    actor: Actor,
    source: str,
    dataset: str,
    detector: str,
    format_name: str | None = None,
    options: ReadOptions | None = None,
    allow_skip: bool = False,
    annotator: str | None = None,
    progress: Progress = _no_progress,
    replace_existing: bool = False,
) -> ImportOutcome:
    """Import one detector run over items already in ``dataset`` as the detector label set ``detector``."""
    require_now(engine, actor, "manage_data")  # before the file is read
    options = options or ReadOptions()
    fail = ImportOutcome(source, format_name, dataset, False)
    if not detector or not detector.strip():
        fail.problems.append(Problem(source, "-", "detector", "name the detector run"))
        return fail
    try:
        dataset = clean_name(dataset, "dataset", dataset_stored(engine))
        detector = clean_name(detector, "detector run", label_set_stored(engine, dataset))
        annotator = _annotator_name(engine, annotator)
    except EmptyName as empty:
        fail.problems.append(Problem(source, "-", "-", str(empty)))
        return fail
    fail.dataset = options.dataset = dataset
    options.detector = detector
    progress(0.05, "Loading the dataset's stored items…")
    options.known = known_items(engine, dataset)
    if not options.known:
        fail.problems.append(Problem(source, "-", "dataset", f"there is no dataset {dataset!r} with items"))
        return fail
    try:
        fmt = choose_format(data, source, format_name, "predictions")
    except UnknownFormat as error:
        # An empty list has no record to recognise a format by; what is wrong is that it holds nothing.
        no_outputs = format_name is None and _empty_json(data)
        reason = "the file holds no outputs for this dataset" if no_outputs else str(error)
        fail.problems.append(Problem(source, "-", "-", reason))
        return fail
    fail.format = fmt.name
    progress(0.2, f"Reading {source} as {fmt.title}…")
    read = read_file(fmt, data, source, options)
    outcome = ImportOutcome(source, fmt.name, dataset, False, problems=list(read.problems))
    if read.bundle is None:
        return outcome
    outcome.items_read = sum(len(ls.annotations) for ls in read.bundle.label_sets)
    if not outcome.items_read:
        if not outcome.errors:
            outcome.problems.append(Problem(source, "-", "-", "the file holds no outputs for this dataset"))
        return outcome
    other_run = _other_run(engine, dataset, read.bundle, source)
    if other_run:  # the whole file is another run: nothing of it is written, skipping or not
        outcome.problems += other_run
        return outcome
    progress(0.5, f"Checking and writing {outcome.items_read:,} outputs…")
    if not _write(
        engine,
        [read.bundle],
        outcome,
        problems=list(outcome.problems),
        actor=actor,
        allow_skip=allow_skip,
        annotator=annotator,
        replace_existing=replace_existing,
    ):
        return outcome
    outcome.ok = True
    progress(1.0, outcome.summary())
    return outcome


def _empty_json(data: bytes) -> bool:
    """Whether ``data`` is a JSON empty list or object (a run file with no outputs in it)."""
    try:
        return json.loads(data.decode("utf-8-sig")) in ([], {})
    except (UnicodeDecodeError, ValueError):
        return False


def _annotator_name(engine: Engine, annotator: str | None) -> str | None:
    """The annotator a file's labels are credited to, trimmed like every name (:mod:`db.names`)."""
    return None if annotator is None else clean_name(annotator, "annotator", annotator_stored(engine))


def _named(engine: Engine, options: ReadOptions, annotator: str | None) -> str | None:
    """Trim the dataset name a benchmark import was given (and its annotator, returned) as every path
    trims names; raises EmptyName for a blank one."""
    if options.dataset:  # empty: not given (the file's own name is used)
        options.dataset = clean_name(options.dataset, "dataset", dataset_stored(engine))
    return _annotator_name(engine, annotator)


def _other_run(engine: Engine, dataset: str, bundle: Bundle, source: str) -> list[Problem]:
    """A run's own description (e.g. a Tri-HE run's answering model) that differs from what the stored
    label set of that name says: the file is another run, whose outputs would be read as this one's."""
    problems = []
    for label_set in bundle.label_sets:
        stored = label_set_meta(engine, dataset, label_set.kind, label_set.name) or {}
        for key, value in label_set.meta.items():
            if key in stored and stored[key] != value:
                problems.append(
                    Problem(
                        source,
                        "-",
                        key,
                        f"{label_set.kind}:{label_set.name} holds a run of {stored[key]!r} and this file's is "
                        f"{value!r}: import it under another detector name",
                    )
                )
    return problems


__all__ = [
    "FormatError",
    "ImportOutcome",
    "UnknownDataset",
    "UnknownFormat",
    "dataset_image_folder",
    "import_file",
    "import_path",
    "import_predictions",
    "import_table",
]
