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

import dataclasses
import json
import types
import typing
from typing import Any, TypeVar, Union

from formats.base import LABEL_KINDS, Format, ReadOptions, ReadResult
from formats.fields import RecordError, get_int, type_name
from formats.json_documents import dump_jsonl, iter_jsonl
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
from formats.storable import unstorable
from formats.text import decode_text, head_text

FORMAT_VERSION = 1
T = TypeVar("T")
KINDS = ("dataset", "item", "label_set", "annotations", "rating_task", "rating")


def _build(cls: type, value: Any, path: str) -> Any:
    """``value`` (parsed JSON) as an instance of dataclass ``cls``, every field type-checked."""
    if not isinstance(value, dict):
        raise RecordError(path or "-", f"expected an object, got {type_name(value)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise RecordError(f"{path}{'.' if path else ''}{unknown[0]}", "unknown field")
    kwargs = {}
    for name, field in fields.items():
        where = f"{path}.{name}" if path else name
        if name not in value:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise RecordError(where, "missing")
            continue
        kwargs[name] = _convert(hints[name], value[name], where)
    return cls(**kwargs)


def _convert(hint: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        last: RecordError | None = None
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, path)
            except RecordError as error:
                last = error
        raise last or RecordError(path, "unexpected value")
    if hint is Any:
        return value
    if origin is list:
        if not isinstance(value, list):
            raise RecordError(path, f"expected a list, got {type_name(value)}")
        (inner,) = typing.get_args(hint)
        return [_convert(inner, v, f"{path}[{k}]") for k, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise RecordError(path, f"expected an object, got {type_name(value)}")
        return dict(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, path)
    if hint is bool:
        if not isinstance(value, bool):
            raise RecordError(path, f"expected true or false, got {type_name(value)}")
        return value
    if hint is int:
        return get_int(value, path)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RecordError(path, f"expected a number, got {type_name(value)}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise RecordError(path, f"expected text, got {type_name(value)}")
        return value
    raise RecordError(path, f"cannot read a value of type {hint}")  # pragma: no cover - records only


def records_from_dicts(cls: type[T], values: list[Any]) -> list[T]:
    """Plain dicts (as ``dataclasses.asdict`` made them) back as records of ``cls``, every field checked."""
    return [_build(cls, value, f"[{k}]") for k, value in enumerate(values)]


def _plain(record: Any) -> dict[str, Any]:
    return dataclasses.asdict(record)


class CanonicalFormat(Format):
    name = "canonical"
    holds = tuple(LABEL_KINDS)
    writes_every_label_set = True
    title = "Spanlight JSONL (canonical, lossless)"
    extensions = (".jsonl", ".spanlight.jsonl")
    description = "One JSON object per line: dataset, items, label sets, annotations, rating tasks, ratings."

    def sniff(self, data: bytes, filename: str = "") -> float:
        first = head_text(data, 4096).lstrip("\ufeff \t\r\n").split("\n", 1)[0]
        return 1.0 if '"format_version"' in first and '"record"' in first else 0.0

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows: list[dict[str, Any]] = [
            {"record": "dataset", "format_version": FORMAT_VERSION, **_plain(bundle.dataset)}
        ]
        rows += [{"record": "item", **_plain(item)} for item in bundle.items]
        for label_set in bundle.label_sets:
            head = _plain(dataclasses.replace(label_set, annotations=[]))
            head.pop("annotations")
            rows.append({"record": "label_set", **head})
            key = {"kind": label_set.kind, "name": label_set.name}
            rows += [{"record": "annotations", "label_set": key, **_plain(a)} for a in label_set.annotations]
        for task in bundle.rating_tasks:
            head = _plain(dataclasses.replace(task, ratings=[]))
            head.pop("ratings")
            rows.append({"record": "rating_task", **head})
            rows += [{"record": "rating", "task": task.name, **_plain(r)} for r in task.ratings]
        return dump_jsonl(rows)

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        text, problems = decode_text(data, source)
        if text is None:
            return ReadResult(None, problems)
        shape = _not_json_lines(text)
        if shape is not None:
            problems.append(Problem(source, shape[0], "-", shape[1]))
            return ReadResult(None, problems)
        bundle: Bundle | None = None
        label_sets: dict[tuple[str, str], LabelSetRecord] = {}
        tasks: dict[str, RatingTaskRecord] = {}
        for index, row in iter_jsonl(text, source, problems):
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
                continue
            kind = row.pop("record")
            bad = unstorable(row)
            if bad:
                problems.append(Problem(source, where, *bad))
                continue
            if bundle is None and kind != "dataset":
                problems.append(Problem(source, where, "record", "the first line must be the dataset"))
                return ReadResult(None, problems)
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
                        return ReadResult(None, problems)
                    dataset = _build(DatasetRecord, row, "")
                    if options.dataset:
                        dataset.name = options.dataset
                    bundle = Bundle(dataset=dataset)
                    continue
                assert bundle is not None  # only the dataset line may come first (checked above)
                if kind == "item":
                    bundle.items.append(_build(ItemRecord, row, ""))
                elif kind == "label_set":
                    label_set = _build(LabelSetRecord, row, "")
                    if label_set.annotations:
                        raise RecordError("annotations", 'belong on their own "annotations" lines')
                    if (label_set.kind, label_set.name) in label_sets:
                        raise RecordError("name", "the same label set appears twice")
                    label_sets[(label_set.kind, label_set.name)] = label_set
                    bundle.label_sets.append(label_set)
                elif kind == "annotations":
                    key = row.pop("label_set", None)
                    pair = (key.get("kind"), key.get("name")) if isinstance(key, dict) else None
                    if (
                        not (isinstance(pair, tuple) and all(isinstance(x, str) for x in pair))
                        or pair not in label_sets
                    ):
                        raise RecordError("label_set", f"{key!r} names no label set given on an earlier line")
                    label_sets[pair].annotations.append(_build(Annotations, row, ""))
                elif kind == "rating_task":
                    task = _build(RatingTaskRecord, row, "")
                    if task.ratings:
                        raise RecordError("ratings", 'belong on their own "rating" lines')
                    tasks[task.name] = task
                    bundle.rating_tasks.append(task)
                else:
                    name = row.pop("task", None)
                    if not isinstance(name, str) or name not in tasks:
                        raise RecordError("task", f"{name!r} names no rating task given on an earlier line")
                    tasks[name].ratings.append(_build(RatingRecord, row, ""))
            except RecordError as error:
                problems.append(Problem(source, where, error.field, error.reason))
        if bundle is None:
            problems.append(Problem(source, "-", "-", "the file holds no dataset line"))
        return ReadResult(bundle, problems)


def _not_json_lines(text: str) -> tuple[str, str] | None:
    """``(line, reason)`` when the file is not JSON Lines at all: its first non-blank line is no JSON object."""
    found = next(((k, line) for k, line in enumerate(text.splitlines()) if line.strip()), None)
    if found is None:
        return None
    index, line = found
    try:
        first = json.loads(line)
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
        whole = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return f"line {index + 1}", f"line {index + 1} {problem}; {expected}"
    n_lines = text.count("\n") + 1
    shape = "one JSON array" if isinstance(whole, list) else f"one JSON {type_name(whole)}"
    return f"line {index + 1}", f"the file is {shape} over {n_lines:,} lines; {expected}"


FORMAT = CanonicalFormat()
