"""Team assignments: which annotators label which items of a dataset on a task, and how far they are.

:func:`assign` gives every item of the task's queue (the items with something to label on the task, as
:func:`db.repositories.queue.in_queue` defines them; for ratings every item of the dataset, which every
rating campaign covers) exactly ``k`` distinct annotators among those chosen. Items are taken in dataset
order (``Item.position``) and each goes to the chosen annotators with the fewest assignments on the task
so far — earlier assignments included — ties going to the one named first; where an item had to skip
an annotator already on it, new assignments are then handed on until the loads are even. So the chosen
annotators' loads end up differing by at most one (whenever the new assignments can even out earlier
ones), the same inputs always give the same split, and running it again adds only what is missing:
existing assignments are never moved or removed.

Progress counts an assigned item as finished when the annotator's own label set has it done or skipped
on the task. A rating campaign's statuses are filed under its own queue (``rating:<id>``), a response's
score under ``response_scores``; the ``ratings`` task covers every campaign of the dataset and the
scoring of responses, so there an item is finished once each of them has it done or skipped (and counts
as skipped if any skipped it; see :func:`db.repositories.queue.task_pages`). The reads also take one
campaign's queue name, to follow that campaign alone.

Writes need the ``manage_team`` permission, checked here (:mod:`db.access`); pages show the progress to
those with ``see_progress``.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Final

from sqlalchemy import (
    ColumnElement,
    Engine,
    Subquery,
    and_,
    case,
    delete,
    distinct,
    func,
    insert,
    or_,
    select,
    union,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from db import models as m
from db.access import PERMISSIONS, Actor, is_assigned, require_in, sighting_locks
from db.engine import read_session, write_session
from db.repositories import queue
from db.repositories.queue import assignment_task, in_queue
from formats.problems import quoted

# An annotator's vote weight and trust on a dataset until an admin sets them.
DEFAULT_WEIGHT: Final = (1.0, True)
# From this many new assignments on, PostgreSQL's planner statistics of the table are refreshed at once.
_ANALYZE_AFTER = 1000


class AssignmentError(ValueError):
    """A refused assignment or weight (unknown task, dataset or annotator, k too large …); says why."""


@dataclass(frozen=True)
class AssignCounts:
    items: int  # items in the task's queue
    added: int  # assignments made by this run
    kept: int  # assignments of the chosen annotators to queued items that were there already
    loads: dict[int, int]  # each chosen annotator's assignments on the task afterwards, earlier ones included


@dataclass(frozen=True)
class AnnotatorProgress:
    annotator_id: int
    name: str
    assigned: int
    done: int
    skipped: int
    # Not finished, and never to be: gold of the item was shown to the annotator, whose labels there are
    # kept as they were (:mod:`db.repositories.gold_sightings`). Neither done nor remaining.
    locked: int = 0

    @property
    def remaining(self) -> int:
        return self.assigned - self.done - self.skipped - self.locked


@dataclass(frozen=True)
class ItemProgress:
    item_id: int
    external_id: str
    position: int
    annotators: tuple[str, ...]  # assigned on the task, by name
    finished: int  # how many of them have it done or skipped
    locked: int = 0  # how many of the others were shown its gold: they cannot finish it


def _check_task(task: str) -> None:
    if task not in m.TASKS:
        raise AssignmentError(f"Unknown task {quoted(str(task))}; choose one of {', '.join(m.TASKS)}.")


def _check_queue(task: str) -> None:
    """A task, or one rating campaign's queue (``rating:<id>``)."""
    campaign = task.removeprefix("rating:")
    if campaign == task or not campaign.isdigit():
        _check_task(task)


def _finished(session: Session, dataset_id: int, task: str, *, items: Subquery | None = None) -> Subquery:
    """(annotator_id, item_id, status) of every item an annotator finished on the task, status being
    ``done`` or ``skipped`` (:func:`db.repositories.queue.finished_on`, the rule every progress count
    shares); ``items`` (a subquery with an ``id`` column) narrows the scan."""
    query = (
        queue.finished_on(
            queue.task_pages(session, dataset_id, task), m.LabelSet.annotator_id.label("annotator_id")
        )
        .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
        .where(
            m.LabelSet.dataset_id == dataset_id,
            m.LabelSet.kind == "human",
            m.LabelSet.annotator_id.is_not(None),
        )
    )
    if items is not None:
        query = query.where(m.ItemStatus.item_id.in_(select(items.c.id)))
    return query.subquery("finished")


def _of_assignment(finished: Subquery) -> ColumnElement[bool]:
    """What joins an assignment to its row of :func:`_finished`: the annotator's status of the item."""
    return and_(
        finished.c.annotator_id == m.Assignment.annotator_id, finished.c.item_id == m.Assignment.item_id
    )


def _sighting_of_assignment() -> ColumnElement[bool]:
    """What joins an assignment to the record that gold of its item was shown to its annotator and still
    locks it (one at most: see :class:`~db.models.GoldSighting`); lifted records join nothing."""
    return and_(
        m.GoldSighting.annotator_id == m.Assignment.annotator_id,
        m.GoldSighting.item_id == m.Assignment.item_id,
        sighting_locks(),
    )


def open_assigned_items(session: Session, dataset_id: int, annotator_id: int, task: str) -> set[int]:
    """The items assigned to the annotator on the task that they have not done: work still to do, on
    which gold must not be shown to a blind annotator (it would give the answers). A skipped item is
    still open: it leaves the queue to be come back to, and "Open the first skipped item" leads there."""
    finished = _finished(session, dataset_id, task)
    return set(
        session.scalars(
            select(m.Assignment.item_id)
            .outerjoin(finished, _of_assignment(finished))
            .where(
                m.Assignment.dataset_id == dataset_id,
                m.Assignment.annotator_id == annotator_id,
                m.Assignment.task == assignment_task(task),
                or_(finished.c.item_id.is_(None), finished.c.status == "skipped"),
            )
        )
    )


def _check_annotators(session: Session, annotator_ids: list[int]) -> None:
    rows = {
        row.id: row for row in session.scalars(select(m.Annotator).where(m.Annotator.id.in_(annotator_ids)))
    }
    for annotator_id in annotator_ids:
        row = rows.get(annotator_id)
        if row is None:
            raise AssignmentError(f"There is no user with id {annotator_id}.")
        if row.disabled:
            raise AssignmentError(f"The account {quoted(row.name)} is disabled.")
        if row.role not in PERMISSIONS["label"]:
            raise AssignmentError(f"{quoted(row.name)} has the {row.role} role, which cannot label.")


def _split(
    item_ids: list[int], present: dict[int, set[int]], loads: dict[int, int], k: int
) -> list[tuple[int, int]]:
    """The (item, annotator) pairs that give every item ``k`` of the annotators in ``loads`` (whose
    order is the tie-break), each item going to the least loaded ones not on it yet, then evened out
    (:func:`_even_out`). ``present`` (item → annotators on it) and ``loads`` are updated."""
    rank = {annotator_id: n for n, annotator_id in enumerate(loads)}
    heap = [(load, rank[a], a) for a, load in loads.items()]
    heapq.heapify(heap)
    new: dict[int, list[int]] = {a: [] for a in loads}
    for item_id in item_ids:
        there = present.setdefault(item_id, set())
        need = k - len(there)
        picked: list[tuple[int, int, int]] = []
        passed: list[tuple[int, int, int]] = []
        while len(picked) < need:  # terminates: at least ``need`` annotators are not on the item
            entry = heapq.heappop(heap)
            (passed if entry[2] in there else picked).append(entry)
        for load, order, annotator_id in picked:
            new[annotator_id].append(item_id)
            there.add(annotator_id)
            heapq.heappush(heap, (load + 1, order, annotator_id))
        for entry in passed:
            heapq.heappush(heap, entry)
    for load, _, annotator_id in heap:
        loads[annotator_id] = load
    _even_out(new, present, loads, rank)
    return [(item_id, a) for a in loads for item_id in new[a]]


def _even_out(
    new: dict[int, list[int]], present: dict[int, set[int]], loads: dict[int, int], rank: dict[int, int]
) -> None:
    """Pass new assignments on until no annotator has two more than one they can pass an item to.

    Taking items in order, an item may have to skip the least loaded annotator because they are on it
    already (topping up from k = 2 to 3, say), and the loads drift apart. Here an annotator hands one of
    their new items to one who is not on it, or along a chain of such hand-overs (found breadth first,
    the annotators in the given order, their latest items first), to someone holding at least two
    fewer. Each hand-over lowers the sum of the squared loads, so this ends; earlier assignments never
    move."""

    def spare(giver: int, taker: int) -> int | None:
        return next((item for item in reversed(new[giver]) if taker not in present[item]), None)

    def chain(source: int) -> list[tuple[int, int, int]] | None:
        came_from: dict[int, tuple[int, int]] = {}
        frontier = deque([source])
        while frontier:
            giver = frontier.popleft()
            for taker in rank:
                if taker == source or taker in came_from:
                    continue
                item = spare(giver, taker)
                if item is None:
                    continue
                came_from[taker] = (giver, item)
                if loads[taker] <= loads[source] - 2:
                    moves = []
                    while taker != source:
                        giver, item = came_from[taker]
                        moves.append((giver, taker, item))
                        taker = giver
                    return moves
                frontier.append(taker)
        return None

    while True:
        lowest = min(loads.values())
        sources = sorted((a for a in loads if loads[a] >= lowest + 2), key=lambda a: (-loads[a], rank[a]))
        moves = next((found for found in map(chain, sources) if found), None)
        if moves is None:
            return
        for giver, taker, item in moves:
            new[giver].remove(item)
            new[taker].append(item)
            present[item].discard(giver)
            present[item].add(taker)
            loads[giver] -= 1
            loads[taker] += 1


def _assign_once(
    engine: Engine, dataset_id: int, task: str, chosen: list[int], k: int, actor: Actor
) -> AssignCounts:
    with write_session(engine) as session:
        require_in(session, actor, "manage_team")
        _check_task(task)
        if session.get(m.Dataset, dataset_id) is None:
            raise AssignmentError(f"There is no dataset with id {dataset_id}.")
        if not chosen:
            raise AssignmentError("Choose at least one annotator.")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise AssignmentError(
                f"k, the number of annotators per item, is a whole number of 1 or more; got {k!r}."
            )
        if k > len(chosen):
            raise AssignmentError(
                f"Each item needs {k} different annotators, but only {len(chosen)} "
                f"{'was' if len(chosen) == 1 else 'were'} chosen."
            )
        _check_annotators(session, chosen)
        item_ids = list(
            session.scalars(
                select(m.Item.id).where(*in_queue(dataset_id, task)).order_by(m.Item.position, m.Item.id)
            )
        )
        loads = dict.fromkeys(chosen, 0)
        present: dict[int, set[int]] = {}
        for item_id, annotator_id in session.execute(
            select(m.Assignment.item_id, m.Assignment.annotator_id).where(
                m.Assignment.dataset_id == dataset_id, m.Assignment.task == task
            )
        ):
            if annotator_id in loads:
                loads[annotator_id] += 1
                present.setdefault(item_id, set()).add(annotator_id)
        kept = sum(len(present.get(item_id, ())) for item_id in item_ids)
        pairs = _split(item_ids, present, loads, k)
        now = m.utcnow()
        if pairs:  # Core's executemany: the ORM's bulk path costs several times the insert itself
            session.connection().execute(
                insert(m.Base.metadata.tables[m.Assignment.__tablename__]),
                [
                    {
                        "dataset_id": dataset_id,
                        "task": task,
                        "item_id": item_id,
                        "annotator_id": annotator_id,
                        "created_at": now,
                    }
                    for item_id, annotator_id in pairs
                ],
            )
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="create",
                entity="assignments",
                after={
                    "dataset_id": dataset_id,
                    "task": task,
                    "annotators": chosen,
                    "k": k,
                    "added": len(pairs),
                    "description": f"assigned {len(pairs)} item(s) on {task}, {k} annotator(s) each",
                },
            )
        )
        return AssignCounts(items=len(item_ids), added=len(pairs), kept=kept, loads=loads)


def assign(
    engine: Engine, dataset_id: int, task: str, annotator_ids: list[int], k: int, *, actor: Actor
) -> AssignCounts:
    """Give every item of the task's queue ``k`` distinct annotators among ``annotator_ids`` (see the
    module doc), in one transaction; the counts of what was added and kept.

    Raises :class:`db.access.Forbidden` without ``manage_team``, :class:`AssignmentError` for an unknown
    task, dataset or annotator, a disabled or viewer account, or ``k`` above the number chosen.
    """
    chosen = list(dict.fromkeys(annotator_ids))
    try:
        counts = _assign_once(engine, dataset_id, task, chosen, k, actor)
    except IntegrityError:  # another admin assigned the same items meanwhile (PostgreSQL): start over
        try:
            counts = _assign_once(engine, dataset_id, task, chosen, k, actor)
        except IntegrityError as clash:
            raise AssignmentError(
                "The assignments changed meanwhile and nothing was saved; try again."
            ) from clash
    if counts.added >= _ANALYZE_AFTER and engine.dialect.name == "postgresql":
        _refresh_statistics(engine)
    return counts


def _refresh_statistics(engine: Engine) -> None:
    """ANALYZE the assignments table after a bulk assignment. Until autovacuum gets to it, PostgreSQL
    plans with the old row counts; taking a table of thousands of assignments for a few rows, it probes
    each annotator's queue row by row against a whole scan (seconds per page at 10 K items instead of
    milliseconds). A non-owner's ANALYZE only warns; the statistics then wait for autovacuum."""
    with engine.connect() as connection:
        connection.exec_driver_sql(f"ANALYZE {m.Assignment.__tablename__}")
        connection.commit()


def unassign(
    engine: Engine,
    dataset_id: int,
    task: str,
    annotator_id: int,
    *,
    actor: Actor,
    only_unfinished: bool = True,
) -> int:
    """Take the annotator's items on the task away (by default only those they have not finished, so
    their finished work keeps counting); how many assignments were removed."""
    with write_session(engine) as session:
        require_in(session, actor, "manage_team")
        _check_task(task)
        conditions = [
            m.Assignment.dataset_id == dataset_id,
            m.Assignment.task == task,
            m.Assignment.annotator_id == annotator_id,
        ]
        if only_unfinished:
            finished = _finished(session, dataset_id, task)
            conditions.append(
                m.Assignment.item_id.not_in(
                    select(finished.c.item_id).where(finished.c.annotator_id == annotator_id)
                )
            )
        removed = session.scalar(select(func.count()).select_from(m.Assignment).where(*conditions)) or 0
        session.execute(delete(m.Assignment).where(*conditions))
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="delete",
                entity="assignments",
                before={
                    "dataset_id": dataset_id,
                    "task": task,
                    "annotator_id": annotator_id,
                    "removed": removed,
                    "description": f"removed {removed} assignment(s) on {task}",
                },
            )
        )
        return removed


# ----------------------------------------------------------------------------------------------- reads


def assigned_items(engine: Engine, dataset_id: int, task: str, annotator_id: int) -> list[int]:
    """Ids of the items of the task's queue assigned to the annotator, in dataset order."""
    _check_queue(task)
    with read_session(engine) as session:
        return list(
            session.scalars(
                select(m.Item.id)
                .where(*in_queue(dataset_id, task, assigned_to=annotator_id))
                .order_by(m.Item.position, m.Item.id)
            )
        )


def is_item_assigned(engine: Engine, annotator_id: int, item_id: int, task: str) -> bool:
    """Whether the item is assigned to the annotator on the task's queue (``rating:<id>``: ``ratings``)."""
    with read_session(engine) as session:
        return is_assigned(session, annotator_id, item_id, queue.assignment_task(task))


def next_assigned_item(
    engine: Engine,
    dataset_id: int,
    task: str,
    annotator_id: int,
    label_set_id: int,
    *,
    after_position: int | None,
) -> str | None:
    """The annotator's next assigned item not yet finished by ``label_set_id`` (external id), after
    ``after_position`` and wrapping around; ``task`` is the queue (a rating campaign's for ratings)."""
    _check_queue(task)
    return queue.next_item(
        engine, dataset_id, label_set_id, task, after_position=after_position, assigned_to=annotator_id
    )


def progress_by_annotator(engine: Engine, dataset_id: int, task: str) -> list[AnnotatorProgress]:
    """Every annotator with items of the task's queue assigned: how many, done, skipped, and locked (not
    finished, their gold shown to them: they cannot finish them, so these are not remaining), by name."""
    _check_queue(task)
    with read_session(engine) as session:
        finished = _finished(session, dataset_id, task)
        rows = session.execute(
            select(
                m.Assignment.annotator_id,
                m.Annotator.name,
                func.count(),
                func.count(case((finished.c.status == "done", 1))),
                func.count(case((finished.c.status == "skipped", 1))),
                func.count(case((and_(finished.c.item_id.is_(None), m.GoldSighting.id.is_not(None)), 1))),
            )
            .join(m.Annotator, m.Annotator.id == m.Assignment.annotator_id)
            .join(m.Item, m.Item.id == m.Assignment.item_id)
            .outerjoin(finished, _of_assignment(finished))
            .outerjoin(m.GoldSighting, _sighting_of_assignment())
            .where(
                m.Assignment.dataset_id == dataset_id,
                m.Assignment.task == assignment_task(task),
                *in_queue(dataset_id, task),
            )
            .group_by(m.Assignment.annotator_id, m.Annotator.name)
        ).all()
    found = [AnnotatorProgress(*row) for row in rows]
    return sorted(found, key=lambda p: (p.name.casefold(), p.annotator_id))


def progress_by_item(
    engine: Engine, dataset_id: int, task: str, offset: int = 0, limit: int | None = None
) -> list[ItemProgress]:
    """The items of the task's queue in dataset order (``offset``/``limit`` page through them; the queue's
    size is :func:`db.repositories.queue.queue_size`): who is assigned, how many of them finished, and how
    many of the others cannot, its gold having been shown to them."""
    _check_queue(task)
    with read_session(engine) as session:
        items = (
            select(m.Item.id, m.Item.external_id, m.Item.position)
            .where(*in_queue(dataset_id, task))
            .order_by(m.Item.position, m.Item.id)
            .offset(offset)
            .limit(limit)
            .subquery("shown")
        )
        finished = _finished(session, dataset_id, task, items=items)
        rows = session.execute(
            select(
                items.c.id,
                items.c.external_id,
                items.c.position,
                m.Annotator.name,
                finished.c.status,
                m.GoldSighting.id,
            )
            .select_from(items)
            .outerjoin(
                m.Assignment,
                and_(
                    m.Assignment.item_id == items.c.id,
                    m.Assignment.dataset_id == dataset_id,
                    m.Assignment.task == assignment_task(task),
                ),
            )
            .outerjoin(m.Annotator, m.Annotator.id == m.Assignment.annotator_id)
            .outerjoin(finished, _of_assignment(finished))
            .outerjoin(m.GoldSighting, _sighting_of_assignment())
            .order_by(items.c.position, items.c.id, m.Annotator.name)
        ).all()
    out: list[ItemProgress] = []
    names: list[str] = []
    n_finished = n_locked = 0
    for index, (item_id, external_id, position, name, status, sighting) in enumerate(rows):
        if name is not None:
            names.append(name)
            n_finished += status is not None
            n_locked += status is None and sighting is not None
        if index + 1 == len(rows) or rows[index + 1][0] != item_id:
            out.append(ItemProgress(item_id, external_id, position, tuple(names), n_finished, n_locked))
            names, n_finished, n_locked = [], 0, 0
    return out


@dataclass(frozen=True)
class AssignedWork:
    """How far a dataset's assigned work is, item by item, as the Team page's per-item table counts it."""

    items: int  # items with an annotator assigned on a task whose queue holds them
    finished: int  # of those, items every annotator assigned to them finished on every such task


def assigned_work(engine: Engine, dataset_id: int) -> AssignedWork:
    """The dataset's assigned items and those finished by all their annotators: an item counts as
    finished once each of its assignments is, by the rule of :func:`progress_by_item` (done or skipped by
    the annotator's own label set on the task; an item whose gold was shown to one of them is not).
    Without assignments this is one look at the assignments' index."""
    with read_session(engine) as session:
        return _assigned_work(session, dataset_id)


def _assigned_work(session: Session, dataset_id: int) -> AssignedWork:
    tasks = session.scalars(
        select(m.Assignment.task).where(m.Assignment.dataset_id == dataset_id).distinct()
    ).all()
    assigned, unfinished = [], []
    for task in tasks:
        finished = _finished(session, dataset_id, task)
        held = (
            select(m.Assignment.item_id)
            .join(m.Item, m.Item.id == m.Assignment.item_id)
            .where(
                m.Assignment.dataset_id == dataset_id, m.Assignment.task == task, *in_queue(dataset_id, task)
            )
        )
        assigned.append(held)
        unfinished.append(
            held.outerjoin(finished, _of_assignment(finished)).where(finished.c.item_id.is_(None))
        )
    if not assigned:
        return AssignedWork(items=0, finished=0)
    # Each item once, however many tasks and annotators it has.
    assigned_items, unfinished_items = union(*assigned).subquery(), union(*unfinished).subquery()
    items = session.scalar(select(func.count(distinct(assigned_items.c.item_id)))) or 0
    left = session.scalar(select(func.count(distinct(unfinished_items.c.item_id)))) or 0
    return AssignedWork(items=items, finished=items - left)


# --------------------------------------------------------------------------------------------- weights


def set_weight(
    engine: Engine, dataset_id: int, annotator_id: int, weight: float, trusted: bool, *, actor: Actor
) -> None:
    """Set how much the annotator's vote counts on the dataset when agreed labels are promoted to gold,
    and whether they are trusted (their "incorrect" sends an item to review)."""
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        raise AssignmentError(f"A weight is a number; got {weight!r}.")
    if weight < 0:
        raise AssignmentError(f"A weight is 0 or more; got {weight}.")
    with write_session(engine) as session:
        require_in(session, actor, "manage_team")
        if session.get(m.Dataset, dataset_id) is None:
            raise AssignmentError(f"There is no dataset with id {dataset_id}.")
        annotator = session.get(m.Annotator, annotator_id)
        if annotator is None:
            raise AssignmentError(f"There is no user with id {annotator_id}.")
        row = session.scalar(
            select(m.AnnotatorWeight).where(
                m.AnnotatorWeight.dataset_id == dataset_id, m.AnnotatorWeight.annotator_id == annotator_id
            )
        )
        before = None if row is None else {"weight": row.weight, "trusted": row.trusted}
        if row is None:
            row = m.AnnotatorWeight(dataset_id=dataset_id, annotator_id=annotator_id)
            session.add(row)
        row.weight, row.trusted = float(weight), bool(trusted)
        session.flush()
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="create" if before is None else "update",
                entity="annotator_weights",
                entity_id=row.id,
                before=before,
                after={
                    "dataset_id": dataset_id,
                    "annotator_id": annotator_id,
                    "weight": row.weight,
                    "trusted": row.trusted,
                    "description": f"set the weight of {quoted(annotator.name)} to {row.weight:g}"
                    + ("" if row.trusted else ", not trusted"),
                },
            )
        )


def weights(engine: Engine, dataset_id: int) -> dict[int, tuple[float, bool]]:
    """Every user's (weight, trusted) on the dataset: as set, else :data:`DEFAULT_WEIGHT`."""
    with read_session(engine) as session:
        out = dict.fromkeys(session.scalars(select(m.Annotator.id)), DEFAULT_WEIGHT)
        for annotator_id, weight, trusted in session.execute(
            select(m.AnnotatorWeight.annotator_id, m.AnnotatorWeight.weight, m.AnnotatorWeight.trusted).where(
                m.AnnotatorWeight.dataset_id == dataset_id
            )
        ):
            out[annotator_id] = (float(weight), bool(trusted))
    return out
