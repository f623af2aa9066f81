"""Text longer than the store's column for it, found before anything is written.

An item's id, a span's type, a label set's name and a few other fields are kept in text columns of a
bounded length (``VARCHAR(n)``, :mod:`db.models`). PostgreSQL refuses a longer value mid-write: an item id
of 301 characters failed the whole import with the database's own error instead of a problem naming the
record and field. SQLite keeps it, so a store later moved to PostgreSQL would fail there. Every import
checks these fields against the columns' own lengths (read from the models, never written twice) and
reports a longer value like any other flaw of its record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

from db import models as m
from formats.records import Annotations, Bundle, ItemRecord, LabelSetRecord, RatingTaskRecord


def _length(column: Any) -> int:
    """The length of a model's bounded text column (``String(n)``)."""
    length: int = column.property.columns[0].type.length
    return length


# The bounded fields of each record, with the length of the column that keeps them (read once: asked of
# the column on every record, it took longer than the rest of an import's checks).
_ITEM = {
    "external_id": _length(m.Item.external_id),
    "subset": _length(m.Item.subset),
    "split": _length(m.Item.split),
    "source_model": _length(m.Item.source_model),
    "task_type": _length(m.Item.task_type),
    "image_ref": _length(m.Item.image_ref),
}
_DATASET = {
    "name": _length(m.Dataset.name),
    "source_format": _length(m.Dataset.source_format),
    "image_root": _length(m.Dataset.image_root),
}
_LABEL_SET = {
    "name": _length(m.LabelSet.name),
    "detector_version": _length(m.LabelSet.detector_version),
    "prompt_strategy": _length(m.LabelSet.prompt_strategy),
    "annotator": _length(m.Annotator.name),
}
_RATING_TASK = {"name": _length(m.RatingTask.name)}
_RATER = _length(m.Annotator.name)
# An annotation's types: (the records' attribute of the annotation, their field, the column's length).
_TYPES = (
    ("spans", "type", _length(m.Span.type)),
    ("sentence_labels", "error_type", _length(m.SentenceLabel.error_type)),
    ("claim_labels", "type", _length(m.ClaimLabel.type)),
    ("token_probabilities", "type", _length(m.TokenProbability.type)),
)


def too_long(value: object, limit: int) -> str | None:
    """Why ``value`` cannot be kept in a column of ``limit`` characters, or None when it can."""
    if isinstance(value, str) and len(value) > limit:
        return f"is {len(value):,} characters long; at most {limit:,} can be stored"
    return None


def _fields(record: object, limits: Mapping[str, int], prefix: str = "") -> list[tuple[str, str]]:
    found = []
    for name, limit in limits.items():
        reason = too_long(getattr(record, name, None), limit)
        if reason is not None:
            found.append((f"{prefix}{name}", reason))
    return found


def overlong_item_fields(item: ItemRecord) -> list[tuple[str, str]]:
    """``(field, reason)`` of each field of ``item`` too long for its column."""
    return _fields(item, _ITEM)


def overlong_annotation_fields(annotations: Annotations) -> Iterable[tuple[str, str]]:
    """``(field, reason)`` of each type a record gives that is too long for its column. (Asked of every
    record of an import: the longest of a kind's types is measured first, and the records are gone
    through one by one only when it is too long.)"""
    for kind, name, limit in _TYPES:
        records = getattr(annotations, kind)
        if not records:
            continue
        types = map(attrgetter(name), records)
        if max((len(t) for t in types if type(t) is str), default=0) <= limit:
            continue
        for k, record in enumerate(records):
            if (reason := too_long(getattr(record, name), limit)) is not None:
                yield f"{kind}[{k}].{name}", reason


def overlong_label_set(label_set: LabelSetRecord) -> list[tuple[str, str]]:
    """``(field, reason)`` of each of a label set's own fields too long for its column."""
    return _fields(label_set, _LABEL_SET)


def overlong_rater(rater: object) -> str | None:
    """Why a rating's rater name cannot be kept (it names an account), or None."""
    return too_long(rater, _RATER)


def overlong_headers(bundle: Bundle) -> list[tuple[str, str, str]]:
    """``(where, field, reason)`` of each field of the dataset, a label set or a rating task too long for
    its column: these concern the whole input, which is refused."""
    found = [("dataset", field, reason) for field, reason in _fields(bundle.dataset, _DATASET)]
    found += [  # each is a span's type once chosen
        ("dataset", f"taxonomy[{k}]", reason)
        for k, type_ in enumerate(bundle.dataset.taxonomy)
        if (reason := too_long(type_, _TYPES[0][2])) is not None
    ]
    label_set: LabelSetRecord
    for label_set in bundle.label_sets:
        where = f"label set {_shown(label_set.name)}"
        found += [(where, field, reason) for field, reason in overlong_label_set(label_set)]
    task: RatingTaskRecord
    for task in bundle.rating_tasks:
        where = f"rating task {_shown(task.name)}"
        found += [(where, field, reason) for field, reason in _fields(task, _RATING_TASK)]
    return found


def _shown(name: object, limit: int = 60) -> str:
    """A name as a problem names its record: quoted, and cut short when too long to read."""
    text = repr(name)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def refuse_too_long(text: object, column: Any, what: str) -> None:
    """Refuse text a person typed (a type, a task's name, a folder) longer than ``column`` keeps, with a
    message for the page (:class:`ValueError`), before anything is written: PostgreSQL refused it
    mid-write, and the page could only say "try again"."""
    reason = too_long(text, _length(column))
    if reason is not None:
        raise ValueError(f"The {what} {reason}; shorten it and save again.")
