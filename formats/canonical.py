"""Spanlight's own JSONL: every field of a :class:`~formats.records.Bundle`, one JSON object per line.

The first line is the dataset (with ``format_version``); then one line per item, per label set, per
label set's annotations on one item, per rating task and per rating. Each line names what it is in
``"record"``. Nothing is lost, so it is the format to move a dataset between Spanlight stores and the
fallback whenever another format cannot express something (overlapping spans in inline tags, ratings).

Reading is strict: every field is checked against the record's type, unknown fields are reported (a typo
must not silently drop data), and a file of a newer ``format_version`` is refused. Every problem names its
line (``line 7``, counted from 1 like an editor does). A file that is not JSON Lines at all — a JSON array,
or objects pretty-printed over many lines — is said to be so once, rather than once per line.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import shutil
import tempfile
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any, TypeVar, Union

from formats.base import LABEL_KINDS, Format, ReadOptions, ReadResult, Sink
from formats.fields import RecordError, as_float, get_int, type_name
from formats.file_share import FileShare
from formats.json_documents import dump_jsonl, iter_jsonl, loads
from formats.problems import Problem
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
)
from formats.storable import (
    bytes_may_hold_unstorable,
    file_may_hold_unstorable,
    unstorable,
)
from formats.text import decode_text, file_windows, head_text, scan_text_file, utf8_problems

FORMAT_VERSION = 1
T = TypeVar("T")
KINDS = ("dataset", "item", "label_set", "annotations", "rating_task", "rating")


def _build(cls: type, value: Any, path: str) -> Any:
    """``value`` (parsed JSON) as an instance of dataclass ``cls``, every field type-checked.

    A value that is plainly of its record's shape (each field's JSON type the field's own, no field
    unknown or missing) is built by :func:`_fast`, which names no path: spelling out the path of every
    field of half a million sentence labels took about a third of building them. Anything else (or anything
    the fast way raises) is built again by :func:`_checked_build`, so a record is built, or refused with
    its message, exactly as that one alone would."""
    try:
        return _fast(cls)(value)
    except Exception:  # the checked build decides, naming the field
        return _checked_build(cls, value, path)


def _checked_build(cls: type, value: Any, path: str) -> Any:
    """:func:`_build`, each field checked in turn by its converter, a refusal naming its path."""
    if not isinstance(value, dict):
        raise RecordError(path or "-", f"expected an object, got {type_name(value)}")
    fields, required = _shape(cls)
    if not value.keys() <= fields.keys():
        unknown = sorted(set(value) - set(fields))
        raise RecordError(f"{path}{'.' if path else ''}{unknown[0]}", "unknown field")
    kwargs = {}
    for name, convert in fields.items():
        if name in value:
            kwargs[name] = convert(value[name], f"{path}.{name}" if path else name)
        elif name in required:
            raise RecordError(f"{path}.{name}" if path else name, "missing")
    return cls(**kwargs)


Convert = Callable[[Any, str], Any]


@functools.cache
def _shape(cls: type) -> tuple[dict[str, Convert], frozenset[str]]:
    """The converter of each field of record class ``cls`` and the fields without a default, worked
    out once: resolving a class's annotations is slow, and a large file builds hundreds of thousands
    of records."""
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    required = frozenset(
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    return {f.name: _converter(hints[f.name]) for f in fields}, required


def _convert(hint: Any, value: Any, path: str) -> Any:
    return _converter(hint)(value, path)


@functools.cache
def _converter(hint: Any) -> Convert:
    """A function checking a parsed JSON value against type ``hint`` (``path`` names it in an error)
    and giving it as that type, made once per type."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        optional = type(None) in options
        choices = [_converter(option) for option in options if option is not type(None)]

        def union(value: Any, path: str) -> Any:
            if value is None and optional:
                return None
            last: RecordError | None = None
            for choice in choices:
                try:
                    return choice(value, path)
                except RecordError as error:
                    last = error
            raise last or RecordError(path, "unexpected value")

        return union
    if hint is Any:
        return lambda value, path: value
    if origin is list:
        (inner,) = typing.get_args(hint)
        element = _converter(inner)

        def listed(value: Any, path: str) -> Any:
            if not isinstance(value, list):
                raise RecordError(path, f"expected a list, got {type_name(value)}")
            return [element(v, f"{path}[{k}]") for k, v in enumerate(value)]

        return listed
    if origin is dict:

        def mapping(value: Any, path: str) -> Any:
            if not isinstance(value, dict):
                raise RecordError(path, f"expected an object, got {type_name(value)}")
            return dict(value)

        return mapping
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return lambda value, path: _build(hint, value, path)
    if hint in _SCALARS:
        return _SCALARS[hint]
    raise TypeError(f"records hold no values of type {hint}")  # pragma: no cover - records only


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(path, f"expected true or false, got {type_name(value)}")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(path, f"expected a number, got {type_name(value)}")
    return as_float(value, path)


def _text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise RecordError(path, f"expected text, got {type_name(value)}")
    return value


_SCALARS: dict[Any, Convert] = {bool: _boolean, int: get_int, float: _number, str: _text}


class _Unlike(Exception):
    """A value :func:`_fast` does not take as it is: :func:`_checked_build` decides, naming it."""


Fast = Callable[[Any], Any]


@functools.cache
def _fast(hint: Any) -> Fast:
    """A function giving a parsed JSON value as type ``hint`` when its JSON type is exactly the one the
    checked converter (:func:`_converter`) gives back unchanged, and raising otherwise; made once per
    type. It takes a subset of what that converter takes (no integral float for an integer, say) and
    gives the same value for it."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        choices = [option for option in options if option is not type(None)]
        if len(choices) != 1:  # no record has one; the checked converter, its errors raised as they come
            checked = _converter(hint)
            return lambda value: checked(value, "")
        inner, optional = _fast(choices[0]), len(choices) < len(options)

        def union(value: Any) -> Any:
            return None if value is None and optional else inner(value)

        return union
    if hint is Any:
        return lambda value: value
    if origin is list:
        (inner_hint,) = typing.get_args(hint)
        element = _fast(inner_hint)

        def listed(value: Any) -> Any:
            if type(value) is not list:
                raise _Unlike
            return [element(v) for v in value]

        return listed
    if origin is dict:

        def mapping(value: Any) -> Any:
            if type(value) is not dict:
                raise _Unlike
            return dict(value)

        return mapping
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _fast_record(hint)
    return _FAST_SCALARS[hint]


def _fast_record(cls: type) -> Fast:
    hints = typing.get_type_hints(cls)
    fields = {f.name: _fast(hints[f.name]) for f in dataclasses.fields(cls)}
    required = _shape(cls)[1]

    def record(value: Any) -> Any:
        if type(value) is not dict or not required <= value.keys():
            raise _Unlike
        return cls(**{name: fields[name](v) for name, v in value.items()})  # an unknown name: KeyError

    return record


def _exactly(kind: type) -> Fast:
    def scalar(value: Any) -> Any:
        if type(value) is not kind:
            raise _Unlike
        return value

    return scalar


def _fast_number(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value  # type: ignore[no-any-return]
    if kind is int:
        return float(value)  # a whole number too large for a float raises: the checked way names it
    raise _Unlike


_FAST_SCALARS: dict[Any, Fast] = {
    bool: _exactly(bool),
    int: _exactly(int),
    float: _fast_number,
    str: _exactly(str),
}


def records_from_dicts(cls: type[T], values: list[Any]) -> list[T]:
    """Plain dicts (as ``dataclasses.asdict`` made them) back as records of ``cls``, every field checked."""
    return [_build(cls, value, f"[{k}]") for k, value in enumerate(values)]


def _plain(record: Any) -> dict[str, Any]:
    """``dataclasses.asdict(record)``, without its deep copy of every plain value (which was most of the
    time of exporting a large dataset): the same dict, sharing the record's strings and numbers."""
    return {name: _value(getattr(record, name)) for name in _field_names(type(record))}


def _value(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is list:
        return [_value(v) for v in value]
    if kind is dict:
        return {k: _value(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value):
        return _plain(value)
    return copy.deepcopy(value)  # as asdict copies any other value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _dataset_row(bundle: Bundle) -> dict[str, Any]:
    return {"record": "dataset", "format_version": FORMAT_VERSION, **_plain(bundle.dataset)}


def _item_rows(bundle: Bundle) -> Iterator[dict[str, Any]]:
    return ({"record": "item", **_plain(item)} for item in bundle.items)


def _label_set_row(label_set: LabelSetRecord) -> dict[str, Any]:
    head = _plain(dataclasses.replace(label_set, annotations=[]))
    head.pop("annotations")
    return {"record": "label_set", **head}


def _annotations_rows(label_set: LabelSetRecord) -> Iterator[dict[str, Any]]:
    key = {"kind": label_set.kind, "name": label_set.name}
    for record in label_set.annotations:
        row = {"record": "annotations", "label_set": key, **_plain(record)}
        for later in ("triplet_judgments", "statuses"):
            if not row[later]:
                # Written only where there are some: a file without any reads in an earlier Spanlight too.
                del row[later]
        raw = row["raw_output"]
        if raw is not None and not raw["cut"]:
            del raw["cut"]  # likewise: only an answer cut at the token limit says so
        yield row


def _rating_rows(tasks: list[RatingTaskRecord]) -> Iterator[dict[str, Any]]:
    for task in tasks:
        head = _plain(dataclasses.replace(task, ratings=[]))
        head.pop("ratings")
        yield {"record": "rating_task", **head}
        yield from ({"record": "rating", "task": task.name, **_plain(r)} for r in task.ratings)


class CanonicalFormat(Format):
    name = "canonical"
    holds = tuple(LABEL_KINDS)
    writes_every_label_set = True
    lossless = True
    title = "Spanlight JSONL (canonical, lossless)"
    extensions = (".jsonl", ".spanlight.jsonl")
    description = "One JSON object per line: dataset, items, label sets, annotations, rating tasks, ratings."

    def sniff(self, data: bytes, filename: str = "") -> float:
        first = head_text(data, 4096).lstrip("\ufeff \t\r\n").split("\n", 1)[0]
        return 1.0 if '"format_version"' in first and '"record"' in first else 0.0

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows = [_dataset_row(bundle), *_item_rows(bundle)]
        for label_set in bundle.label_sets:
            rows += [_label_set_row(label_set), *_annotations_rows(label_set)]
        rows += _rating_rows(bundle.rating_tasks)
        return dump_jsonl(rows)

    def write_stream(self, batches: Iterable[Bundle], out: Sink, *, filename: str = "") -> None:
        """The same lines as :meth:`write` of the batches merged, holding one batch: the items are written
        as they come, and each label set's annotations lines wait in a temporary file of their own
        until every item is written (a label set's lines follow all items in the file)."""
        with ExitStack() as stack:
            spools: list[IO[bytes]] = []
            heads: list[dict[str, Any]] = []
            tasks: list[RatingTaskRecord] = []
            for k, batch in enumerate(batches):
                if k == 0:
                    out.write(dump_jsonl([_dataset_row(batch)]))
                    heads = [_label_set_row(label_set) for label_set in batch.label_sets]
                    spools = [stack.enter_context(tempfile.TemporaryFile()) for _ in heads]
                out.write(dump_jsonl(list(_item_rows(batch))))
                for spool, label_set in zip(spools, batch.label_sets, strict=True):
                    spool.write(dump_jsonl(list(_annotations_rows(label_set))))
                tasks += batch.rating_tasks
            for spool, head in zip(spools, heads, strict=True):
                out.write(dump_jsonl([head]))
                spool.seek(0)
                shutil.copyfileobj(spool, out)
            out.write(dump_jsonl(list(_rating_rows(tasks))))

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        text, problems = decode_text(data, source)
        if text is None:
            return ReadResult(None, problems)
        shape = _not_json_lines(text)
        if shape is not None:
            problems.append(Problem(source, shape[0], "-", shape[1]))
            return ReadResult(None, problems)
        lines = _Lines(
            source, options, problems, check_storable=bytes_may_hold_unstorable(bytes(data), json=True)
        )
        for index, row in iter_jsonl(text, source, problems):
            if not lines.take(index, row):
                return ReadResult(None, problems)
        return ReadResult(lines.whole(), problems)

    def read_batches(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        """The file in batches of about :data:`BATCH_RECORDS` lines, each decoded as it is read: items
        and annotations go with their batch; rating tasks and ratings (few) come with the last one.
        A file that is not plain JSON Lines (another line break than a newline, or not JSON Lines at
        all) is read whole, as :meth:`read` reports it; so is one giving an item's annotations of one
        label set on more than one line (:func:`_splits_annotations`)."""
        options = options or ReadOptions()
        problems = utf8_problems(data, source)
        if problems:
            return ReadResult(None, problems)
        if (
            any(mark in data for mark in _OTHER_LINE_BREAKS)
            or not _opens_with_an_object(data)
            or _splits_annotations(_data_lines(data))
        ):
            return self.read(data, source=source, options=options)
        share = FileShare(len(data))
        rows = _json_lines(_data_lines(data, share), source, problems)
        result = _batched(rows, source, options, problems, bytes_may_hold_unstorable(data, json=True))
        result.read_share = share
        return result

    def read_file_batches(
        self, path: Path, head: bytes, *, source: str, options: ReadOptions | None = None
    ) -> ReadResult | None:
        """:meth:`read_batches` of a file read from disk a line at a time, so its bytes are never all in
        memory; None for a file :meth:`read_batches` would read whole."""
        problems, _ = scan_text_file(path, source)
        if problems:
            return ReadResult(None, problems)
        with path.open("rb") as handle:
            opening = handle.read(1 << 20)
        if (
            _file_holds(path, _OTHER_LINE_BREAKS)
            or not _opens_with_an_object(opening)
            or _splits_annotations(_file_lines(path))
        ):
            return None
        share = FileShare(path.stat().st_size)
        rows = _json_lines(_file_lines(path, share), source, problems)
        suspicious = file_may_hold_unstorable(path, json=True)
        result = _batched(rows, source, options or ReadOptions(), problems, suspicious)
        result.read_share = share
        return result


def _batched(
    rows: Iterator[tuple[int, Any]],
    source: str,
    options: ReadOptions,
    problems: list[Problem],
    suspicious: bool,
) -> ReadResult:
    """The records of ``rows`` (line index, value) in bundles of about :data:`BATCH_RECORDS` lines;
    each record is checked for what a store cannot keep only when the input is ``suspicious``."""
    lines = _Lines(source, options, problems, check_storable=suspicious)
    for index, row in rows:
        if not lines.take(index, row):
            return ReadResult(None, problems)
        if lines.bundle is not None:
            break
    else:
        return ReadResult(lines.whole(), problems)

    def batches() -> Iterator[Bundle]:
        for index, row in rows:
            lines.take(index, row)
            if lines.held >= BATCH_RECORDS:
                yield lines.cut()
        yield lines.cut(last=True)

    more = batches()
    return ReadResult(next(more), problems, more)


# Lines per batch: a 97 MB file (120 K items) imports in 226 MB at 10,000, in 315 MB at 20,000, in the
# same time.
BATCH_RECORDS = 10_000
# Line breaks other than a newline that ``str.splitlines`` (so :meth:`CanonicalFormat.read`) counts; a
# file holding any is read whole, so its line numbers stay the same.
_OTHER_LINE_BREAKS = (
    b"\r",
    b"\x0b",
    b"\x0c",
    b"\x1c",
    b"\x1d",
    b"\x1e",
    b"\xc2\x85",
    b"\xe2\x80\xa8",
    b"\xe2\x80\xa9",
)


def _opens_with_an_object(data: bytes) -> bool:
    """Whether the first non-blank line is a JSON object (else :meth:`CanonicalFormat.read` says what
    the file is instead, once)."""
    for line in bytes(data[: 1 << 20]).lstrip(b"\xef\xbb\xbf").split(b"\n"):
        if line.strip():
            try:
                return isinstance(loads(line), dict)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                return False
    return False


def _splits_annotations(lines: Iterable[bytes]) -> bool:
    """Whether some item's annotations of one label set are given on more than one line.

    The importer merges such lines when they come in one batch; in batches apart, the first would be
    compared with the stored annotations (and written) without the rest, so such a file is read whole.
    Only the lines that can be annotations lines are parsed: one whose ``"record"`` is
    ``"annotations"`` holds that text or spells it with a ``\\u`` escape. Each (label set, item) is
    kept as its hash, so a million lines cost a few tens of MB; two keys with one hash only make a file
    read whole that need not be."""
    seen: set[int] = set()
    for line in lines:
        if b'"annotations"' not in line and b"\\u" not in line:
            continue
        try:
            row = loads(line)
        except (ValueError, RecursionError):
            continue  # the reading reports it
        if not isinstance(row, dict) or row.get("record") != "annotations":
            continue
        label_set, item = row.get("label_set"), row.get("item")
        if not isinstance(label_set, dict) or not isinstance(item, str):
            continue
        kind, name = label_set.get("kind"), label_set.get("name")
        if not isinstance(kind, str) or not isinstance(name, str):
            continue
        key = hash((kind, name, item))
        if key in seen:
            return True
        seen.add(key)
    return False


def _json_lines(lines: Iterable[bytes], source: str, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """``(line index, value)`` of each non-blank line of UTF-8 ``lines``, decoded one line at a time
    (:func:`~formats.json_documents.iter_jsonl` of each line, with its line number)."""
    for index, line in enumerate(lines):
        known = len(problems)
        rows = [row for _, row in iter_jsonl(line.decode("utf-8"), source, problems)]
        # iter_jsonl numbers its one line 1: give the file's number, before yielding, as the importer
        # appends its own problems of the batch to the same list while this waits for the next line.
        for k in range(known, len(problems)):
            problems[k] = dataclasses.replace(problems[k], record=f"line {index + 1}")
        for row in rows:
            yield index, row


def _data_lines(data: bytes, share: FileShare | None = None) -> Iterator[bytes]:
    """The lines of a file's bytes, without their newline (nor a byte-order mark); ``share`` is told
    where each line ends."""
    start = 3 if bytes(data[:3]) == b"\xef\xbb\xbf" else 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end == -1 else end
        if share is not None:
            share.passed(end + 1)
        yield bytes(data[start:end])
        start = end + 1


def _file_lines(path: Path, share: FileShare | None = None) -> Iterator[bytes]:
    """:func:`_data_lines` of a file read from disk a line at a time (``share`` follows it)."""
    with path.open("rb") as handle:
        if share is not None:
            share.follow(handle)
        for index, line in enumerate(handle):
            if index == 0:
                line = line.removeprefix(b"\xef\xbb\xbf")
            yield line[:-1] if line.endswith(b"\n") else line


def _file_holds(path: Path, marks: Iterable[bytes], part: int = 1 << 22) -> bool:
    """Whether the file holds any of ``marks`` (each shorter than ``part``), read a part at a time."""
    marks = tuple(marks)
    windows = file_windows(path, max(map(len, marks)) - 1, part=part)
    return any(mark in window for window in windows for mark in marks)


class _Lines:
    """The records of a canonical file taken line by line into a bundle (or into batches of one)."""

    def __init__(
        self, source: str, options: ReadOptions, problems: list[Problem], *, check_storable: bool = True
    ) -> None:
        self.source, self.options, self.problems = source, options, problems
        # False when the whole input was found to hold nothing a store cannot keep (no record is walked).
        self.check_storable = check_storable
        self.bundle: Bundle | None = None
        self.label_sets: dict[tuple[str, str], LabelSetRecord] = {}
        self.tasks: dict[str, RatingTaskRecord] = {}
        self.held = 0  # records in the bundle since the last cut

    def take(self, index: int, row: Any) -> bool:
        """Take one line's value; False when the file cannot be read on (a missing dataset line first,
        a newer format version)."""
        source, problems = self.source, self.problems
        where = f"line {index + 1}"
        if not isinstance(row, dict) or row.get("record") not in KINDS:
            problems.append(
                Problem(
                    source,
                    where,
                    "record",
                    f'expected an object whose "record" is one of {", ".join(KINDS)}',
                )
            )
            return True
        kind = row.pop("record")
        bad = unstorable(row) if self.check_storable else None
        if bad:
            problems.append(Problem(source, where, *bad))
            return True
        bundle = self.bundle
        if bundle is None and kind != "dataset":
            problems.append(Problem(source, where, "record", "the first line must be the dataset"))
            return False
        try:
            if kind == "dataset":
                if bundle is not None:
                    raise RecordError("record", "a second dataset line; one file holds one dataset")
                version = row.pop("format_version", None)
                if version != FORMAT_VERSION:
                    problems.append(
                        Problem(
                            source,
                            where,
                            "format_version",
                            f"{version!r} is not a version this Spanlight reads ({FORMAT_VERSION})",
                        )
                    )
                    return False
                dataset = _build(DatasetRecord, row, "")
                if self.options.dataset:
                    dataset.name = self.options.dataset
                self.bundle = Bundle(dataset=dataset)
                return True
            assert bundle is not None  # only the dataset line may come first (checked above)
            self.held += 1
            if kind == "item":
                bundle.items.append(_build(ItemRecord, row, ""))
            elif kind == "label_set":
                label_set = _build(LabelSetRecord, row, "")
                if label_set.annotations:
                    raise RecordError("annotations", 'belong on their own "annotations" lines')
                if (label_set.kind, label_set.name) in self.label_sets:
                    raise RecordError("name", "the same label set appears twice")
                self.label_sets[(label_set.kind, label_set.name)] = label_set
                bundle.label_sets.append(label_set)
            elif kind == "annotations":
                key = row.pop("label_set", None)
                pair = (key.get("kind"), key.get("name")) if isinstance(key, dict) else None
                if (
                    not (isinstance(pair, tuple) and all(isinstance(x, str) for x in pair))
                    or pair not in self.label_sets
                ):
                    raise RecordError("label_set", f"{key!r} names no label set given on an earlier line")
                self.label_sets[pair].annotations.append(_build(Annotations, row, ""))
            elif kind == "rating_task":
                task = _build(RatingTaskRecord, row, "")
                if task.ratings:
                    raise RecordError("ratings", 'belong on their own "rating" lines')
                self.tasks[task.name] = task
                bundle.rating_tasks.append(task)
            else:
                name = row.pop("task", None)
                if not isinstance(name, str) or name not in self.tasks:
                    raise RecordError("task", f"{name!r} names no rating task given on an earlier line")
                self.tasks[name].ratings.append(_build(RatingRecord, row, ""))
        except RecordError as error:
            problems.append(Problem(source, where, error.field, error.reason))
        return True

    def whole(self) -> Bundle | None:
        if self.bundle is None:
            self.problems.append(Problem(self.source, "-", "-", "the file holds no dataset line"))
        return self.bundle

    def cut(self, *, last: bool = False) -> Bundle:
        """The batch read since the last cut; the label sets go on (empty) into the next one, the rating
        tasks stay until the last."""
        batch = self.bundle
        assert batch is not None
        self.held = 0
        self.bundle = Bundle(dataset=batch.dataset, rating_tasks=batch.rating_tasks)
        carried = []
        for key, label_set in self.label_sets.items():
            empty = dataclasses.replace(label_set, annotations=[])
            self.label_sets[key] = empty
            carried.append(empty)
        self.bundle.label_sets = carried
        if not last:
            batch = dataclasses.replace(batch, rating_tasks=[])
        return batch


def _not_json_lines(text: str) -> tuple[str, str] | None:
    """``(line, reason)`` when the file is not JSON Lines at all: its first non-blank line is no JSON object."""
    found = next(((k, line) for k, line in enumerate(text.splitlines()) if line.strip()), None)
    if found is None:
        return None
    index, line = found
    try:
        first = loads(line)
    except (json.JSONDecodeError, RecursionError) as error:
        problem = (
            "starts a JSON value that does not end on that line"
            if line.strip()[:1] in ("{", "[")
            else f"is not a JSON object ({getattr(error, 'msg', 'nested too deeply')})"
        )
    else:
        if isinstance(first, dict):
            return None
        problem = f"holds {type_name(first)}, not a JSON object"
    expected = (
        "canonical files are JSON Lines: one JSON object per line, the first being the dataset line, as "
        "Spanlight's export writes them"
    )
    try:
        whole = loads(text)
    except (json.JSONDecodeError, RecursionError):
        return f"line {index + 1}", f"line {index + 1} {problem}; {expected}"
    n_lines = text.count("\n") + 1
    shape = "one JSON array" if isinstance(whole, list) else f"one JSON {type_name(whole)}"
    return f"line {index + 1}", f"the file is {shape} over {n_lines:,} lines; {expected}"


FORMAT = CanonicalFormat()
