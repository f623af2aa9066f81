"""Values of an in-memory bundle that no store can keep: a NUL character, broken Unicode (a lone
surrogate), or a NaN or infinite number in a JSON column.

A file's reader refuses such values itself, naming line and field (:mod:`formats.storable`). A bundle
built in memory has had no reader: a live detector run turns a model's reply into records, and code
may call :func:`db.importer.import_bundle` directly. Unchecked, such a value failed mid-write (broken
Unicode on either store, a NUL or a NaN on PostgreSQL, with an internal error) or was kept as a NaN
no JSON reader takes back (SQLite). Here each record is walked before anything is written, so it is
refused like any other flaw of its record; a bundle whose JSON shows no such value, as nearly every
one, is not walked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from formats.problems import Problem
from formats.records import Bundle
from formats.storable import records_may_hold_unstorable, unstorable


@dataclass
class ValueProblems:
    """What :func:`unstorable_values` found: problems of whole-input parts (the dataset, a label set's
    or rating task's own fields), which refuse the input, and the items whose records hold such a
    value, which are left out like any other unsound item."""

    whole_input: list[Problem] = field(default_factory=list)
    items: list[Problem] = field(default_factory=list)
    bad_items: set[str] = field(default_factory=set)


def unstorable_values(bundle: Bundle, source: str, first_item: int = 0) -> ValueProblems:
    """Every record of ``bundle`` holding a value no store can keep, numbered as the importer numbers
    records (``#k (id=…)``; items from ``first_item``, each label set's annotations from 0)."""
    found = ValueProblems()
    if not records_may_hold_unstorable(bundle):
        return found

    def whole(where: str, value: object, prefix: str = "") -> None:
        bad = unstorable(value, prefix)
        if bad is not None:
            found.whole_input.append(Problem(source, where, *bad))

    def of_item(external_id: object, where: str, value: object, prefix: str = "") -> None:
        bad = unstorable(value, prefix)
        if bad is not None:
            found.items.append(Problem(source, where, *bad))
            found.bad_items.add(str(external_id))

    whole("dataset", bundle.dataset)
    whole("dataset", bundle.dataset_settings, "settings")
    for index, item in enumerate(bundle.items, first_item):
        of_item(item.external_id, f"#{index} (id={item.external_id})", item)
    for label_set in bundle.label_sets:
        where = f"label set {label_set.name!r}"
        whole(where, label_set.name, "name")
        for name in ("annotator", "detector_version", "prompt_strategy"):
            whole(where, getattr(label_set, name), name)
        whole(where, label_set.meta, "meta")
        for index, given in enumerate(label_set.annotations):
            of_item(
                given.item,
                f"#{index} (id={given.item})",
                given,
                label_set.name if isinstance(label_set.name, str) else "",
            )
    for task in bundle.rating_tasks:
        where = f"rating task {task.name!r}"
        whole(where, {k: v for k, v in vars(task).items() if k != "ratings"})
        for index, rating in enumerate(task.ratings):
            of_item(rating.item, f"{where} #{index} (id={rating.item})", rating)
    return found
