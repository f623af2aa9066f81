"""Local dataset folders as Hugging Face ships them: Parquet shards (``data/train-00000-of-00002.parquet``)
beside a ``dataset_info.json`` and a ``README.md`` card, and the benchmarks recognised by their columns.

A folder opens through the mapped import with its columns listed; when its columns are those of a
benchmark Spanlight already reads — AlignBench's sentence rows (FORMATS.md section 3) or M-HalDetect's
responses with offset segments (section 2) — it is read by that benchmark's own reader, no mapping
asked. The same recognition serves a single table file opened for mapping.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from formats.alignbench import FORMAT as ALIGNBENCH
from formats.alignbench import KEY_COLUMNS, Rows
from formats.base import ReadOptions, ReadResult
from formats.field_paths import structured
from formats.mhaldetect import FORMAT as MHALDETECT
from formats.problems import Problem
from formats.tables import Part, Records, TableSource, folder_source, head_records, limited, shards

# Records looked at to recognise a benchmark by its columns.
RECOGNISE_RECORDS = 20
RECOGNISED_TITLES = {"alignbench": ALIGNBENCH.title, "mhaldetect": MHALDETECT.title}


@dataclass(frozen=True)
class DatasetFolder:
    """A dataset folder: its shards (as a source), and what its card and info file say about it."""

    source: TableSource
    title: str | None = None
    description: str | None = None


def is_dataset_folder(path: Path) -> bool:
    return path.is_dir() and bool(shards(path))


def open_dataset_folder(path: Path) -> DatasetFolder:
    """The folder's shards and its card's title and description; ValueError when it has no shards."""
    if not path.is_dir():
        raise ValueError(f"{path.name} is not a folder")
    source = folder_source(path)
    if not source.parts:
        raise ValueError(f"{path.name} holds no .parquet files")
    info = _info(path / "dataset_info.json")
    title, summary = _card(path / "README.md")
    description = info.get("description") if isinstance(info.get("description"), str) else None
    return DatasetFolder(source, title, (description or summary or "").strip() or None)


def _info(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _card(path: Path) -> tuple[str | None, str | None]:
    """A card's ``pretty_name`` (or first heading) and its first paragraph of prose."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return None, None
    front = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    body = text[front.end() :] if front else text
    named = (
        re.search(r"^pretty_name:\s*['\"]?(.+?)['\"]?\s*$", front.group(1), re.MULTILINE) if front else None
    )
    heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
    paragraphs = [
        p.strip() for p in re.split(r"\n\s*\n", body) if p.strip() and not p.lstrip().startswith("#")
    ]
    title = named.group(1) if named else heading.group(1).strip() if heading else None
    return title, paragraphs[0][:500] if paragraphs else None


def _image_paths(part: Part, problems: list[Problem]) -> Records:
    """A part's records with a Hugging Face image column (``{bytes, path}``) given as its path, as the
    benchmark readers expect an image reference; an image held only as bytes is left out, with a warning."""
    for index, record in part.records(problems):
        image = record.get("image") if isinstance(record, dict) else None
        if isinstance(image, dict):
            path = image.get("path")
            record = {**record, "image": path if isinstance(path, str) and path.strip() else None}
            if record["image"] is None and image.get("bytes") is not None:
                problems.append(
                    Problem(
                        part.name,
                        f"#{index}",
                        "image",
                        "holds the image itself, not a path or URL; the item has no image reference",
                        "warning",
                    )
                )
        yield index, record


def recognise(records: list[Any]) -> str | None:
    """``alignbench`` or ``mhaldetect`` when the records have that benchmark's columns, else None."""
    columns = {key for record in records if isinstance(record, dict) for key in record}
    if {"caption", "annotation", *KEY_COLUMNS} <= columns:
        return "alignbench"
    if {"response", "annotations"} <= columns:
        for record in records:
            segments = structured(record.get("annotations")) if isinstance(record, dict) else None
            if isinstance(segments, list) and segments:
                first = segments[0]
                return (
                    "mhaldetect"
                    if isinstance(first, dict) and {"start", "end", "label"} <= set(first)
                    else None
                )
    return None


def recognised_format(source: TableSource, problems: list[Problem]) -> str | None:
    return recognise(head_records(source, RECOGNISE_RECORDS, problems))


def read_recognised(
    source: TableSource, format_name: str, options: ReadOptions, *, limit: int | None = None
) -> ReadResult:
    """Read ``source`` with the recognised benchmark's reader (AlignBench rows are gathered from every
    part first: a caption's sentences may lie in different shards)."""
    source = limited(source, limit)
    problems: list[Problem] = []
    if format_name == "alignbench":
        rows = [record for part in source.parts for _, record in part.records(problems)]
        return ALIGNBENCH.read_rows(Rows(rows, problems), source.name, options)
    if format_name == "mhaldetect":
        parts = tuple(Part(p.name, partial(_image_paths, p), p.split) for p in source.parts)
        return MHALDETECT.read_parts(TableSource(source.name, parts, source.folder), options, problems)
    raise ValueError(f"{format_name!r} is not a benchmark read from a dataset folder")
