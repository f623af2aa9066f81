"""Where a label set stands on each item (done, skipped, unsure with a note), on its way into the store.

A status is kept per label set, item and task. "Done" is how a person says they finished an item, also
when they found nothing in it, so the metrics count such an item as annotated; a note says why they are
unsure. The store names a rating campaign's queue by the campaign's id (``rating:<id>``); a file names it
by the campaign's name (``rating:<name>``, :func:`db.exporter.status_task`), which another store knows
it by. A canonical file lists its rating campaigns after every label set's records, so the statuses on a
campaign's queue are held until the whole input is written: each is then placed on the queue of the
campaign of that name, or reported by record and field when the dataset has none.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models as m
from db.exporter import RATING_QUEUE
from db.label_set_keys import Key, label_set_ids
from formats.problems import Problem, shown_id
from formats.records import Annotations, ItemStatusRecord, LabelSetRecord

# The tasks with a queue of their own besides rating campaigns (``ItemStatus.page``).
STATUS_TASKS = ("spans", "sentences", "claims", "triplets", "response_scores")
StatusRow = tuple[int, int, str, str, str | None]  # label set id, item id, page, status, note


def status_problems(annotations: Annotations) -> Iterable[tuple[str, str]]:
    """What is wrong with the statuses of one record by themselves, as (field, reason) (a task given two
    statuses is found with the other things given twice, :func:`db.importer._repeats`)."""
    for k, given in enumerate(annotations.statuses):
        where = f"statuses[{k}]"
        if given.task not in STATUS_TASKS and not campaign_name(given.task):
            yield (
                f"{where}.task",
                f"{given.task!r} is not one of {', '.join(STATUS_TASKS)}, or {RATING_QUEUE} and a rating "
                "task's name",
            )
        if given.status not in m.ITEM_STATUSES:
            yield f"{where}.status", f"{given.status!r} is not one of {', '.join(m.ITEM_STATUSES)}"


def campaign_name(task: str) -> str | None:
    """The rating campaign a status's task names (``rating:<name>``), or None for another task."""
    if not task.startswith(RATING_QUEUE):
        return None
    name = task[len(RATING_QUEUE) :]
    return name if name.strip() else None


def campaign_ids(session: Session, dataset_id: int) -> dict[str, int]:
    """The dataset's rating campaigns' ids by name."""
    query = select(m.RatingTask.name, m.RatingTask.id).where(m.RatingTask.dataset_id == dataset_id)
    return {name: task_id for name, task_id in session.execute(query)}


def pages(tasks: Collection[str], campaigns: Mapping[str, int]) -> list[str]:
    """The stored pages of ``tasks`` (a file's names) that the store has: a campaign's by its id."""
    found = []
    for task in tasks:
        name = campaign_name(task)
        if name is None:
            found.append(task)
        elif name in campaigns:
            found.append(f"{RATING_QUEUE}{campaigns[name]}")
    return sorted(found)


@dataclass
class _Held:
    label_set: Key
    where: str  # the record, as a problem names it
    name: str  # the label set's name, which starts the problem's field
    item: str
    index: int  # the status's position in its record
    status: ItemStatusRecord


@dataclass
class PendingStatuses:
    """The statuses of an input on rating campaigns' queues, held until every rating task is written."""

    held: list[_Held] = field(default_factory=list)
    dropped: set[Key] = field(default_factory=set)  # label sets with a status left out by resolve

    def note(self, label_set: LabelSetRecord, first: int, items: Collection[str] | None = None) -> None:
        """Take the campaign statuses of ``label_set``'s records (numbered from ``first``, as the label
        set's records of the whole input are) on ``items`` (None: on every item)."""
        key = (label_set.kind, label_set.name)
        for number, record in enumerate(label_set.annotations, first):
            if items is not None and record.item not in items:
                continue
            for k, status in enumerate(record.statuses):
                if campaign_name(status.task) is not None:
                    where = f"#{number} (id={shown_id(record.item)})"
                    self.held.append(_Held(key, where, label_set.name, record.item, k, status))

    def named_items(self) -> list[str]:
        """The external ids of the items the statuses held are on."""
        return [held.item for held in self.held]

    def resolve(
        self, session: Session, dataset_id: int, item_ids: Mapping[str, int], source: str
    ) -> tuple[list[StatusRow], list[Problem]]:
        """The rows of the statuses held, on the queues of the campaigns stored now, and the problems of
        those naming a campaign the dataset does not have."""
        if not self.held:
            return [], []
        campaigns = campaign_ids(session, dataset_id)
        label_sets = label_set_ids(session, dataset_id)
        rows: list[StatusRow] = []
        problems: list[Problem] = []
        for held in self.held:
            name = campaign_name(held.status.task) or ""
            if name not in campaigns:
                problems.append(
                    Problem(
                        source,
                        held.where,
                        f"{held.name}.statuses[{held.index}].task",
                        f"this dataset has no rating task {name!r}",
                    )
                )
                self.dropped.add(held.label_set)
                continue
            if held.label_set in label_sets and held.item in item_ids:
                page = f"{RATING_QUEUE}{campaigns[name]}"
                rows.append(
                    (
                        label_sets[held.label_set],
                        item_ids[held.item],
                        page,
                        held.status.status,
                        held.status.note,
                    )
                )
        return rows, problems
