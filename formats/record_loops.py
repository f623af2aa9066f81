"""The loops that take records out of a file one by one, so every benchmark file and every
predictions file is judged on the same terms whatever its format: a flawed record becomes a
problem and is left out, and the rest of the file is still read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from formats.fields import RecordError, storable_object
from formats.ids import DuplicateIds, external_id, record_of
from formats.json_documents import load_json, load_records
from formats.problems import Problem, shown_id
from formats.records import ItemRecord
from formats.text import looks_like_json

T = TypeVar("T")


def benchmark_items(
    records: Iterable[tuple[int, Any]],
    source: str,
    problems: list[Problem],
    read: Callable[[Any, int, list[tuple[str, str]]], tuple[ItemRecord, T]],
    label_of: Callable[[int, Any], str] = record_of,
) -> tuple[list[ItemRecord], list[T]]:
    """The items of a benchmark file and what ``read`` found with each (its gold labels), in file order.

    Every benchmark reader treats its records alike, so a flawed file is reported the same way whatever
    its format: ``read(record, index, warnings)`` raising RecordError rejects only that record (an error
    naming its field); the ``(field, reason)`` warnings it adds are reported; then a record repeating an
    earlier id is dropped (see :class:`DuplicateIds`). ``label_of`` names a record in the report.
    """
    items: list[ItemRecord] = []
    found: list[T] = []
    duplicates = DuplicateIds()
    for index, record in records:
        label = label_of(index, record)
        warnings: list[tuple[str, str]] = []
        try:
            item, gold = read(record, index, warnings)
        except RecordError as error:
            problems.append(Problem(source, label, error.field, error.reason))
            continue
        problems.extend(Problem(source, label, field, reason, "warning") for field, reason in warnings)
        repeated = duplicates.check(item.external_id, index, record)
        if repeated:
            problems.append(Problem(source, label, "id", repeated[1], repeated[0]))
            continue
        items.append(item)
        found.append(gold)
    return items, found


ITEM_ID_KEYS = ("id", "item", "item_id", "external_id", "question_id")


def prediction_records(data: bytes, source: str) -> tuple[list[tuple[str, Any]] | None, list[Problem]]:
    """``(record label, record)`` of a predictions file: a JSON list, JSON lines, or an object mapping
    item id -> output (each becomes ``{"id": key, "value": output}``)."""
    document = None
    if looks_like_json(data) == "{":
        whole, problems = load_json(data, source)
        if isinstance(whole, dict) and not any(k in whole for k in ITEM_ID_KEYS):
            return [
                (f"id={shown_id(key)}", {"id": key, "value": value}) for key, value in whole.items()
            ], problems
        document = [whole] if isinstance(whole, dict) else None
    if document is None:
        records, problems = load_records(data, source)
        if records is None:
            return None, problems
        return [(record_of(index, record), record) for index, record in records], problems
    return [(record_of(0, document[0]), document[0])], []


def in_dataset(dataset: str | None) -> str:
    """How a missing item's message names the dataset looked in ("this dataset" without a name)."""
    return f"dataset {dataset!r}" if dataset else "this dataset"


class UnknownItem(RecordError):
    """A record naming no stored item: counted apart, as a run none of whose ids is an item is most
    likely one over another dataset (:func:`formats.record_formats.no_item_refusal`)."""


def item_of(record: Mapping[str, Any], known: Mapping[str, Any], dataset: str | None = None) -> str:
    """The stored item a prediction record is about (by its id); RecordError naming the problem (and
    ``dataset``, the one looked in: a run read against the wrong dataset misses every item)."""
    ext, found = external_id(record, ITEM_ID_KEYS, "")
    if not found:
        raise RecordError("id", f"missing: give the item's id in one of {', '.join(ITEM_ID_KEYS)}")
    if ext not in known:
        raise UnknownItem("id", f"no item {ext!r} in {in_dataset(dataset)}")
    return ext


def prediction_items(
    records: Iterable[tuple[str, Any]],
    source: str,
    problems: list[Problem],
    known: Mapping[str, Any],
    read: Callable[[dict[str, Any]], T],
    *,
    output: str = "output",
    read_before_repeat: bool = False,
    dataset: str | None = None,
    unknown: list[str] | None = None,
) -> Iterator[tuple[str, str, dict[str, Any], T]]:
    """``(record label, item id, record, read(record))`` of each usable record of a predictions file.

    Every predictions reader accepts a record on the same terms, so a file is judged alike whatever its
    format: it must be an object, hold only storable text, name a stored item, and be the first
    ``output`` for that item; ``read`` takes out the format's own fields (it may raise RecordError too).
    A record failing any of these is reported once, as an error with its field, and skipped.
    ``read_before_repeat`` runs ``read`` before the repeated-item check (mhalo-outputs names a missing
    output before a second one). ``unknown`` gets the label of each record naming no stored item.
    """
    seen: set[str] = set()
    for label, record in records:
        try:
            storable_object(record)
            ext = item_of(record, known, dataset)
            if read_before_repeat:
                value = read(record)
            if ext in seen:
                raise RecordError("id", f"a second {output} for item {ext!r}")
            if not read_before_repeat:
                value = read(record)
        except RecordError as error:
            problems.append(Problem(source, label, error.field, error.reason))
            if unknown is not None and isinstance(error, UnknownItem):
                unknown.append(label)
            continue
        seen.add(ext)
        yield label, ext, record, value
