"""Values no store can keep (a NUL character, broken Unicode such as a lone surrogate, a NaN or an
infinite number in a JSON column), arriving where no file reader has checked them: a bundle built in
memory, or text typed into a page.

A file's reader refuses such values itself, naming line and field (:mod:`formats.storable`). A bundle
built in memory has had no reader: a live detector run turns a model's reply into records, and code
may call :func:`db.importer.import_bundle` directly. Unchecked, such a value failed mid-write (broken
Unicode on either store, a NUL or a NaN on PostgreSQL, with an internal error) or was kept as a NaN
no JSON reader takes back (SQLite). Here each record is walked before anything of the bundle is
written, so it is refused like any other flaw of its record; a bundle whose JSON shows no such value,
as nearly every one, is not walked. Text a person types into a page has had no reader either: the
names typed for an import are checked with the bundle's headers (:func:`unstorable_headers`), and
the repositories that write typed text (annotation notes and reasons, the types of spans, claims
and sentences that come in a request, rating tasks, a dataset's folder and types) refuse it with a
message first (:func:`refuse_unstorable_text`); a live run's typed names are checked with its other
settings (:meth:`detectors.runner.RunSpec.problems`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from formats.problems import Problem, shown_id
from formats.records import Bundle
from formats.storable import record_fields, records_may_hold_unstorable, unstorable


@dataclass
class ValueProblems:
    """What :func:`unstorable_values` found: problems of whole-input parts (the dataset, a label set's
    or rating task's own fields), which refuse the input; the items whose records hold such a value,
    which are left out like any other unsound item; and the ratings that hold one (``(task position,
    rating position)``), which are left out alone, as a rating with any other flaw is."""

    whole_input: list[Problem] = field(default_factory=list)
    items: list[Problem] = field(default_factory=list)
    bad_items: set[str] = field(default_factory=set)
    bad_ratings: set[tuple[int, int]] = field(default_factory=set)


def _own_fields(record: Any, nested: str) -> dict[str, Any]:
    """A record's fields but the list of records it holds (checked one by one, by their own number)."""
    return {name: value for name, value in record_fields(record).items() if name != nested}


def unstorable_headers(bundle: Bundle, source: str, kept_settings: Collection[str] = ()) -> list[Problem]:
    """Problems of the parts of ``bundle`` that concern the whole input (the dataset record and the
    settings of it that are kept, each label set's and rating task's own fields), which refuse it.

    Cheap, so asked of every import: a file's reader checks its records, but the dataset's name or a
    detector run's name may have been typed into the import page rather than read from the file."""
    problems: list[Problem] = []

    def whole(where: str, value: object, prefix: str = "") -> None:
        bad = unstorable(value, prefix)
        if bad is not None:
            problems.append(Problem(source, where, *bad))

    whole("dataset", bundle.dataset)
    whole("dataset", {k: v for k, v in bundle.dataset_settings.items() if k in kept_settings}, "settings")
    for label_set in bundle.label_sets:
        whole(f"label set {label_set.name!r}", _own_fields(label_set, "annotations"))
    for task in bundle.rating_tasks:
        whole(f"rating task {task.name!r}", _own_fields(task, "ratings"))
    return problems


def unstorable_values(
    bundle: Bundle,
    source: str,
    counted: Mapping[tuple[str, str], int] | None = None,
    kept_settings: Collection[str] = (),
) -> ValueProblems:
    """Every record of ``bundle`` holding a value no store can keep, numbered as the importer numbers
    records (``#k (id=…)``): ``counted`` holds the records of the batches before, as
    :func:`db.importer._validate` counts them (items under ``("", "")``, annotations under the label
    set's ``(kind, name)``). Of the dataset's settings only ``kept_settings`` are stored, and checked."""
    found = ValueProblems(whole_input=unstorable_headers(bundle, source, kept_settings))
    if not records_may_hold_unstorable(bundle):
        return found
    counted = counted or {}

    def flaw(where: str, value: object, prefix: str = "") -> bool:
        bad = unstorable(value, prefix)
        if bad is not None:
            found.items.append(Problem(source, where, *bad))
        return bad is not None

    for index, item in enumerate(bundle.items, counted.get(("", ""), 0)):
        if flaw(f"#{index} (id={shown_id(item.external_id)})", item):
            found.bad_items.add(str(item.external_id))
    for label_set in bundle.label_sets:
        first = counted.get((label_set.kind, label_set.name), 0)
        prefix = label_set.name if isinstance(label_set.name, str) else ""
        for index, given in enumerate(label_set.annotations, first):
            if flaw(f"#{index} (id={shown_id(given.item)})", given, prefix):
                found.bad_items.add(str(given.item))
    for position, task in enumerate(bundle.rating_tasks):
        for index, rating in enumerate(task.ratings):
            if flaw(f"rating task {task.name!r} #{index} (id={shown_id(rating.item)})", rating):
                found.bad_ratings.add((position, index))
    return found


def refuse_unstorable_text(text: object, what: str) -> None:
    """Refuse text a person typed or a request sent (a reason, a note, a type, a task's name, a folder)
    that no store can keep, with a message for the page (:class:`ValueError`), before anything is
    written: PostgreSQL refused a NUL mid-write, and the page could only say "try again"; SQLite kept
    it, to fail later (a folder holding a NUL cannot even be opened)."""
    bad = unstorable(text)
    if bad is not None:
        raise ValueError(f"The {what} {bad[1]}; remove it and save again.")
