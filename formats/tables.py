"""Records of any table-like file, one at a time: CSV, a JSON array, JSON lines, Parquet, and a folder of
Parquet shards as Hugging Face datasets ship them.

A mapped import reads files whose shape no reader knows, so it wants their records as plain dicts
whatever the encoding, and a list of the columns with a few sample values for the user to map. Parquet
is decoded batch by batch, so a preview of a large shard reads only its first rows; the text encodings
reuse the AlignBench row loader (which already reports where CSV or JSON breaks). A folder is its
``*.parquet`` files in name order (hidden folders such as a download cache left out); each shard is a
part with its own name, so every problem names the file it is in.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from formats.alignbench import encoding_of, load_rows
from formats.field_paths import MISSING, structured, value_at
from formats.fields import type_name
from formats.problems import Problem

# Rows decoded at a time from a Parquet file.
BATCH_ROWS = 1024
# Names Hugging Face gives a split in shard names (``train-00000-of-00002.parquet``) or folders.
KNOWN_SPLITS = ("train", "validation", "valid", "val", "dev", "test")

Records = Iterator[tuple[int, Any]]


@dataclass(frozen=True)
class Part:
    """One file of a source: its name in reports, its split (from a shard's name) and its records."""

    name: str
    records: Callable[[list[Problem]], Records]
    split: str | None = None


@dataclass(frozen=True)
class TableSource:
    """A file or a dataset folder: the name datasets and reports use, and its parts in order."""

    name: str
    parts: tuple[Part, ...]
    folder: Path | None = None


def _no_nan(row: dict[str, Any]) -> dict[str, Any]:
    for key, value in row.items():
        if isinstance(value, float) and math.isnan(value):
            row[key] = None
    return row


def parquet_records(opened: Callable[[], Any], name: str, problems: list[Problem]) -> Records:
    """The rows of a Parquet file as dicts, batch by batch; a damaged file ends as one problem."""
    import pyarrow.parquet as pq

    index = 0
    try:
        parquet = pq.ParquetFile(opened())
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
            for row in batch.to_pylist():
                yield index, _no_nan(row)
                index += 1
    except Exception as error:  # noqa: BLE001 - pyarrow raises several types for damaged files
        where = "-" if index == 0 else f"#{index}"
        problems.append(Problem(name, where, "-", f"not a readable Parquet file: {error}"))


def _text_records(data: bytes, name: str, problems: list[Problem]) -> Records:
    loaded = load_rows(data, name)
    problems.extend(loaded.problems)
    for index, row in enumerate(loaded.rows or []):
        if row is not None:  # a JSON line that did not parse, already reported
            yield index, row


def file_source(data: bytes, name: str) -> TableSource:
    """One file's bytes (CSV, JSON array, JSON lines or Parquet, told apart by their content)."""
    if encoding_of(data, name) == "parquet":
        part = Part(name, lambda problems: parquet_records(lambda: io.BytesIO(data), name, problems))
    else:
        part = Part(name, lambda problems: _text_records(data, name, problems))
    return TableSource(name, (part,))


def parquet_columns(data: bytes) -> list[str]:
    """The column names of a Parquet file's schema (none when it cannot be read)."""
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(io.BytesIO(data)).names)
    except Exception:  # noqa: BLE001 - a damaged file simply has no columns to recognise
        return []


def shards(folder: Path) -> list[Path]:
    """The Parquet files of a dataset folder, in name order, outside hidden folders."""
    return sorted(
        path
        for path in folder.rglob("*.parquet")
        if path.is_file() and not any(p.startswith(".") for p in path.relative_to(folder).parts)
    )


def split_of(relative: Path) -> str | None:
    """The split a shard belongs to, from its name (``train-00000-of-00002``) or a folder (``test/``)."""
    names = [relative.stem.split("-")[0], *reversed(relative.parent.parts)]
    return next((n for n in names if n.lower() in KNOWN_SPLITS), None)


def folder_source(folder: Path) -> TableSource:
    """A dataset folder's Parquet shards, each a part named ``folder/relative path``."""
    parts = []
    for path in shards(folder):
        relative = path.relative_to(folder)
        name = f"{folder.name}/{relative.as_posix()}"
        parts.append(Part(name, partial(_shard_records, path, name), split_of(relative)))
    return TableSource(folder.name, tuple(parts), folder)


def _shard_records(path: Path, name: str, problems: list[Problem]) -> Records:
    return parquet_records(lambda: path, name, problems)


def head_records(source: TableSource, limit: int, problems: list[Problem]) -> list[Any]:
    """The first ``limit`` records of a source (across its parts)."""
    found: list[Any] = []
    for part in source.parts:
        if len(found) >= limit:
            break
        found += [record for _, record in islice(part.records(problems), limit - len(found))]
    return found


def limited(source: TableSource, limit: int | None) -> TableSource:
    """``source`` cut to its first ``limit`` records across its parts (all of them when None)."""
    if limit is None:
        return source
    left = [limit]

    def cut(inner: Part) -> Part:
        def records(problems: list[Problem]) -> Records:
            for pair in islice(inner.records(problems), max(left[0], 0)):
                left[0] -= 1
                yield pair

        return Part(inner.name, records, inner.split)

    return TableSource(source.name, tuple(cut(p) for p in source.parts), source.folder)


# --------------------------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class Column:
    """A field the records have (a dotted path into nested objects), its types and a few sample values."""

    path: str
    types: tuple[str, ...]
    samples: tuple[str, ...]


def sample_text(value: Any, width: int = 80) -> str:
    """A short, plain rendering of a value for the column list (bytes by their size only)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value):,} bytes>"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=_short)
    return text if len(text) <= width else text[: width - 1] + "…"


def _short(value: Any) -> str:
    return f"<{len(value):,} bytes>" if isinstance(value, bytes | bytearray | memoryview) else str(value)


def columns_of(records: list[Any], *, depth: int = 3, samples: int = 3) -> list[Column]:
    """Every field path of the records, in order of first appearance, with types and sample values.

    Objects are entered (``image.path``) up to ``depth`` levels; lists are not (a list of spans is one
    field to map), and both the object and its parts are listed.
    """
    types: dict[str, dict[str, None]] = {}
    seen: dict[str, list[str]] = {}

    def visit(value: Any, path: str, level: int) -> None:
        types.setdefault(path, {})[type_name(value)] = None
        shown = seen.setdefault(path, [])
        if value is not None and len(shown) < samples:
            text = sample_text(value)
            if text not in shown:
                shown.append(text)
        if isinstance(value, dict) and level < depth:
            for key, inner in value.items():
                visit(inner, f"{path}.{key}", level + 1)

    for record in records:
        if isinstance(record, dict):
            for key, value in record.items():
                visit(value, str(key), 1)
    return [
        Column(path, tuple(t for t in kinds if t != "null") or ("null",), tuple(seen[path]))
        for path, kinds in types.items()
    ]


def labels_seen(records: list[Any], path: str, *, key: str | None = None, limit: int = 50) -> list[Any]:
    """The distinct values under ``path`` (inside each list element's ``key`` when given), for a value
    mapping editor: what a label column holds in the first records."""
    found: dict[str, Any] = {}
    for record in records:
        value = structured(value_at(record, path))
        values = value if isinstance(value, list) else [value]
        for element in values:
            element = structured(element)
            if key is not None:
                element = value_at(element, key) if isinstance(element, dict) else MISSING
            if element is MISSING or isinstance(element, dict | list):
                continue
            found.setdefault(json.dumps(element, default=str), element)
            if len(found) >= limit:
                return list(found.values())
    return list(found.values())
