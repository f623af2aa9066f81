"""Human ratings of one detector's outputs, as CSV or JSONL: one row per rater and rated segment.

Columns (JSONL: the same keys, one object per line):

============================ ===========================================================================
``item_id``                  the item's external id (required)
``detector``                 the rated detector run; when given, must be the task's detector
``task``                     optional; when given, must be the task's name
``segment_index``            0-based index of the segment among the detector's predicted segments on the
                             item, in text order (distinct offsets)
``segment_start``/``_end``   the segment's code-point offsets in the response; with ``segment_index``
                             both must name the same segment. Neither: the whole response
``rater``                    who rated (required)
``score``                    a whole or decimal number on the task's scale
``nothing_flagged_correct``  for an item where the detector flagged nothing: ``true`` when that is right
============================ ===========================================================================

A rating belongs to one rating task, so the reader is given the task (:class:`RatingTarget`): its scale,
granularity and the detector's segments on every item. Like every reader it never raises on bad input:
each flaw becomes a :class:`~formats.problems.Problem` naming file, line, field and reason, the row is left
out, and :func:`db.importer.import_bundle` decides whether the import goes ahead (all or nothing).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from formats.base import Format, ReadOptions, ReadResult
from formats.fields import RecordError, as_float, get_int, get_str, type_name
from formats.ids import external_id
from formats.json_documents import dump_jsonl, iter_jsonl, loads
from formats.problems import Problem, shown_id
from formats.records import Bundle, DatasetRecord, RatingRecord, RatingTaskRecord
from formats.storable import unstorable
from formats.text import decode_text, head_text, looks_like_json

COLUMNS = (
    "item_id",
    "detector",
    "task",
    "segment_index",
    "segment_start",
    "segment_end",
    "rater",
    "score",
    "nothing_flagged_correct",
)
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


@dataclass(frozen=True)
class RatingTarget:
    """The rating task a file is read into (or written from)."""

    dataset: str
    task: str
    detector: str
    granularity: str  # "segment" or "response"
    scale_min: int
    scale_max: int
    rubric: Mapping[str, str] = field(default_factory=dict)
    # external id -> the detector's predicted segments on the item, distinct, in text order
    segments: Mapping[str, Sequence[tuple[int, int]]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------- reading


def _encoding(data: bytes, filename: str) -> str:
    lower = filename.lower()
    if lower.endswith(".jsonl") or lower.endswith(".json"):
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    return "jsonl" if looks_like_json(data) == "{" else "csv"


def _rows(data: bytes, source: str) -> tuple[list[tuple[str, dict[str, Any]]] | None, list[Problem]]:
    """``(where, row)`` pairs of the file; None when it cannot be read at all."""
    text, problems = decode_text(data, source)
    if text is None:
        return None, problems
    if _encoding(data, source) == "jsonl":
        rows = []
        for index, value in iter_jsonl(text, source, problems):
            if isinstance(value, dict):
                rows.append((f"line {index + 1}", value))
            else:
                problems.append(
                    Problem(source, f"line {index + 1}", "-", f"expected an object, got {type_name(value)}")
                )
        return rows, problems
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        unknown = [name for name in header if name not in COLUMNS]
        if unknown or "item_id" not in header:
            reason = (
                f"unknown column {unknown[0]!r}" if unknown else "the header has no item_id column"
            ) + f"; the columns are {', '.join(COLUMNS)}"
            return None, [*problems, Problem(source, "line 1", unknown[0] if unknown else "item_id", reason)]
        rows = []
        for row in reader:
            if None in row:
                problems.append(Problem(source, f"line {reader.line_num}", "-", "more cells than columns"))
                continue
            rows.append(
                (
                    f"line {reader.line_num}",
                    {k: (v if v is not None and v.strip() else None) for k, v in row.items()},
                )
            )
    except csv.Error as error:
        return None, [*problems, Problem(source, "-", "-", f"not readable CSV: {error}")]
    return rows, problems


def _opt_int(row: Mapping[str, Any], key: str) -> int | None:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise RecordError(key, f"expected a whole number, got {value!r}") from None
    return get_int(value, key)


def _opt_score(row: Mapping[str, Any]) -> float | None:
    value = row.get("score")
    if value is None:
        return None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise RecordError("score", f"expected a number, got {value!r}") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError("score", f"expected a number, got {type_name(value)}")
    else:
        number = as_float(value, "score")
    if not math.isfinite(number):
        raise RecordError("score", f"expected a finite number, got {value!r}")
    return number


def _opt_bool(row: Mapping[str, Any], key: str) -> bool | None:
    value = row.get(key)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise RecordError(key, f"expected true or false, got {value!r}")


def _segment(row: Mapping[str, Any], segments: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """The rated segment's offsets, or None for the whole response."""
    index = _opt_int(row, "segment_index")
    start, end = _opt_int(row, "segment_start"), _opt_int(row, "segment_end")
    if (start is None) != (end is None):
        raise RecordError("segment_start" if start is None else "segment_end", "give both offsets or neither")
    offsets = None if start is None or end is None or (start, end) == (-1, -1) else (start, end)
    predicted = ", ".join(f"{s}-{e}" for s, e in segments) or "none"
    if index is not None:
        if not 0 <= index < len(segments):
            raise RecordError(
                "segment_index",
                f"segment {index} does not exist: the detector predicted {len(segments)} segment(s) here",
            )
        segment = (segments[index][0], segments[index][1])
        if offsets is not None and offsets != segment:
            raise RecordError(
                "segment_start",
                f"offsets {offsets[0]}-{offsets[1]} are not segment {index} "
                f"({segments[index][0]}-{segments[index][1]})",
            )
        return segment
    if offsets is not None and offsets not in {tuple(s) for s in segments}:
        raise RecordError(
            "segment_start",
            f"{offsets[0]}-{offsets[1]} is not a segment the detector predicted on this item "
            f"(its segments: {predicted})",
        )
    return offsets


def _rating(row: Mapping[str, Any], target: RatingTarget) -> RatingRecord:
    for key in row:
        if key not in COLUMNS:
            raise RecordError(str(key), f"unknown field; the fields are {', '.join(COLUMNS)}")
    item, _ = external_id(row, ("item_id",), "")
    if not item:
        raise RecordError("item_id", "missing")
    if item not in target.segments:
        raise RecordError("item_id", f"no item with id {item!r} in dataset {target.dataset!r}")
    for key, expected in (("detector", target.detector), ("task", target.task)):
        given = get_str(row, key, required=False)
        if given is not None and given.strip() and given.strip() != expected:
            raise RecordError(key, f"{given!r} is not this task's {key} {expected!r}")
    rater = " ".join((get_str(row, "rater", allow_empty=False) or "").split())
    if len(rater) > 200:
        raise RecordError("rater", "longer than 200 characters")
    bad = unstorable(rater, "rater")
    if bad:
        raise RecordError(*bad)
    segments = target.segments[item]
    segment = _segment(row, segments)
    score = _opt_score(row)
    judged = _opt_bool(row, "nothing_flagged_correct")
    if target.granularity == "response":
        if segment is not None:
            raise RecordError("segment_start", "this task rates whole responses: leave the segment empty")
        if score is None:
            raise RecordError("score", "missing")
    elif segment is None:
        if segments:
            raise RecordError(
                "segment_index",
                "this task rates each predicted segment: give segment_index or segment_start/segment_end",
            )
        if judged is None:
            raise RecordError(
                "nothing_flagged_correct", "the detector flagged nothing here: say whether that is right"
            )
        if score is not None:
            raise RecordError("score", "the detector flagged nothing here, so there is no segment to score")
    else:
        if score is None:
            raise RecordError("score", "missing")
        if judged is not None:
            raise RecordError("nothing_flagged_correct", "only for items where the detector flagged nothing")
    if score is not None and not target.scale_min <= score <= target.scale_max:
        raise RecordError("score", f"{score:g} is outside the scale {target.scale_min}–{target.scale_max}")
    start, end = segment if segment is not None else (-1, -1)
    return RatingRecord(item, rater, score, start, end, judged)


def read_ratings(data: bytes, *, source: str, target: RatingTarget) -> ReadResult:
    """The file's sound ratings as a bundle holding one rating task, and every problem found."""
    rows, problems = _rows(data, source)
    if rows is None:
        return ReadResult(None, problems)
    ratings: list[RatingRecord] = []
    first_line: dict[tuple[str, str, int, int], str] = {}
    for where, row in rows:
        item = row.get("item_id")
        label = (
            f"{where} (id={shown_id(item)})"
            if isinstance(item, str | int) and not isinstance(item, bool)
            else where
        )
        try:
            rating = _rating(row, target)
        except RecordError as error:
            problems.append(Problem(source, label, error.field, error.reason))
            continue
        key = (rating.item, rating.rater, rating.segment_start, rating.segment_end)
        if key in first_line:
            problems.append(
                Problem(source, label, "rater", f"{rating.rater!r} rates this already on {first_line[key]}")
            )
            continue
        first_line[key] = where
        ratings.append(rating)
    task = RatingTaskRecord(
        name=target.task,
        detector=target.detector,
        granularity=target.granularity,
        scale_min=target.scale_min,
        scale_max=target.scale_max,
        rubric=dict(target.rubric),
        ratings=ratings,
    )
    return ReadResult(Bundle(DatasetRecord(target.dataset, "ratings"), rating_tasks=[task]), problems)


# --------------------------------------------------------------------------------------------- writing


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def write_ratings(rows: Sequence[Mapping[str, Any]], *, target: RatingTarget, filename: str) -> bytes:
    """Rows with ``external_id``, ``rater``, ``segment_start``/``segment_end``, ``score`` and
    ``nothing_flagged_correct`` as CSV (``filename`` ends with ``.csv``) or JSONL, every column of
    :data:`COLUMNS` filled (the segment by index and by offsets), so the file reads back unchanged."""
    out_rows = []
    for row in rows:
        item = str(row["external_id"])
        start, end = int(row["segment_start"]), int(row["segment_end"])
        segments = [tuple(s) for s in target.segments.get(item, ())]
        whole = start < 0
        out_rows.append(
            {
                "item_id": item,
                "detector": target.detector,
                "task": target.task,
                "segment_index": None
                if whole or (start, end) not in segments
                else segments.index((start, end)),
                "segment_start": None if whole else start,
                "segment_end": None if whole else end,
                "rater": row["rater"],
                "score": _plain(row["score"]),
                "nothing_flagged_correct": row["nothing_flagged_correct"],
            }
        )
    if not filename.lower().endswith(".csv"):
        return dump_jsonl(out_rows)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in out_rows:
        writer.writerow(
            {k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v) for k, v in row.items()}
        )
    return buffer.getvalue().encode("utf-8")


class RatingsFormat(Format):
    """The ratings file of one rating task, behind the shared format interface.

    Unlike a benchmark or predictions format it needs the task, so one is made per task
    (``RatingsFormat(target)``); it is not in the registry of dataset formats.
    """

    name: ClassVar[str] = "ratings"
    title: ClassVar[str] = "Ratings (CSV / JSONL)"
    kind = "predictions"
    extensions: ClassVar[tuple[str, ...]] = (".csv", ".jsonl")
    description: ClassVar[str] = (
        "One row per rater and rated segment: item_id, detector, segment_index or segment_start/"
        "segment_end, rater, score (or nothing_flagged_correct)."
    )

    def __init__(self, target: RatingTarget) -> None:
        self.target = target

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data, 4096)
        if _encoding(data, filename) == "jsonl":
            first = next((line for line in head.splitlines() if line.strip()), "")
            try:
                keys = set(loads(first))
            except (ValueError, TypeError):
                return 0.0
        else:
            keys = set(next(csv.reader(io.StringIO(head)), []))
        return 0.9 if {"item_id", "rater"} <= keys and keys <= set(COLUMNS) else 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        return read_ratings(data, source=source, target=self.target)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows = [
            {
                "external_id": r.item,
                "rater": r.rater,
                "segment_start": r.segment_start,
                "segment_end": r.segment_end,
                "score": r.score,
                "nothing_flagged_correct": r.nothing_flagged_correct,
            }
            for task in bundle.rating_tasks
            if task.name == self.target.task
            for r in task.ratings
        ]
        return write_ratings(rows, target=self.target, filename=filename or "ratings.csv")
