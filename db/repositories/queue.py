"""An annotator's work queue on one dataset and task: what is next, how far along, which are flagged.

In team mode an annotator's queue holds only the items assigned to them on the task (``assigned_to``,
see :mod:`db.repositories.assignments`); reviewers and admins work on the whole dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Engine, Exists, Select, and_, case, distinct, exists, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased

from db import models as m
from db.access import sighting_locks
from db.engine import read_session
from db.repositories.datasets import dataset_settings
from db.repositories.visibility import detectors_wait_for_labels

# What the progress views say of the items locked for an annotator (:data:`Progress.locked`).
LOCKED_NOTE = "locked: gold was shown to you"
_FINISHED = ("done", "skipped")
_NOBODY = 0  # no annotator has id 0: whose gold sightings lock nothing


@dataclass(frozen=True)
class Progress:
    finished: int  # done or skipped
    flagged: int  # skipped or unsure
    total: int
    skipped: int = 0  # of the finished, those skipped (left the queue without being done)
    # Not finished, and never to be: gold of the item was shown to the annotator, whose labels there are
    # kept as they were (:mod:`db.repositories.gold_sightings`). Neither done nor remaining.
    locked: int = 0

    @property
    def remaining(self) -> int:
        """What is still to do: the locked items can no longer be done, so they are not counted."""
        return self.total - self.finished - self.locked

    @property
    def fraction(self) -> float:
        """How far through the queue: finished or locked, so the bar is full once nothing remains (it
        stopped short for good on an annotator's first locked item)."""
        return (self.finished + self.locked) / self.total if self.total else 0.0


def _gold_shown_to(annotator_id: int, item_id: ColumnElement[int] | InstrumentedAttribute[int]) -> Exists:
    """Gold of the item (``item_id``, a column of the outer query) was shown to the annotator, who may
    no longer change their labels there."""
    return exists().where(
        m.GoldSighting.annotator_id == annotator_id, m.GoldSighting.item_id == item_id, sighting_locks()
    )


def _has_units(page: str) -> Exists | None:
    """Only items that have something to label on this task are in its queue."""
    if page == "sentences":
        return exists().where(m.Sentence.item_id == m.Item.id)
    if page == "claims":
        return exists().where(m.Claim.item_id == m.Item.id)
    if page == "triplets":
        return exists().where(m.Triplet.item_id == m.Item.id, m.Triplet.label_set_id.is_not(None))
    return None


# Queues whose work is assigned as another task: scoring whole responses is rating work, assigned (and
# checked at every write) as the ratings task, which the Team page and the command line offer.
_RATINGS = "ratings"
_ASSIGNED_AS = {"response_scores": _RATINGS}


def task_pages(session: Session, dataset_id: int, task: str) -> list[str]:
    """The status pages (queues) whose done or skipped mark an item finished on an assignment task, all
    of them needed; a queue's own name for a queue (``rating:<id>``, ``response_scores``).

    The ``ratings`` task covers both kinds of rating work: the dataset's rating campaigns (rating
    detector outputs, ``rating:<id>``) and scoring whole responses (``response_scores``). A dataset's
    rating work is its campaigns when it has any (MHALO's segment ratings): an item is finished once every
    campaign has it done or skipped, and a response score beside them is extra. A dataset without one
    is rated by scoring its responses (MMHal-Bench): the score finishes the item. Counting the scoring
    page out everywhere made an item its rater had scored count 0 on the Team page and the command line
    while the page said it was done; counting it in beside campaigns would leave a team that assigned
    campaign ratings at 0 done until they also scored every response, which nobody asked of them."""
    if task != _RATINGS:
        return [task]
    campaigns = session.scalars(select(m.RatingTask.id).where(m.RatingTask.dataset_id == dataset_id)).all()
    return [f"rating:{task_id}" for task_id in campaigns] or ["response_scores"]  # RatingTaskView.queue


def finished_on(pages: Sequence[str], *by: ColumnElement[Any]) -> Select[Any]:
    """The rule of when an item is finished on an assignment task, written once: (the ``by`` columns,
    ``item_id``, ``status``) of each item whose every queue of the task (``pages``, :func:`task_pages`)
    has it done or skipped, per value of ``by`` (an annotator, say; none: per item), ``status`` being
    ``skipped`` if any of them skipped it, else ``done``. Callers narrow it (``where``: the label set,
    the items) and join what ``by`` and their narrowing need (the label set, to name its annotator). The
    Team page, the ``progress`` command, the rating pages' header and an annotator's own progress all
    count with it, so they cannot disagree on what a finished item is."""
    any_skipped = func.max(case((m.ItemStatus.status == "skipped", 1), else_=0))
    return (
        select(
            *by,
            m.ItemStatus.item_id.label("item_id"),
            case((any_skipped == 1, "skipped"), else_="done").label("status"),
        )
        .where(m.ItemStatus.page.in_(pages), m.ItemStatus.status.in_(_FINISHED))
        .group_by(*by, m.ItemStatus.item_id)
        .having(func.count(distinct(m.ItemStatus.page)) == len(pages))
    )


def pages_of_task(engine: Engine, dataset_id: int, page: str) -> tuple[str, ...]:
    """The queues of the assignment task the page's queue is part of (:func:`task_pages`), in a read of
    their own; a page decides them once per run. Only the ratings task reads the store (its campaigns)."""
    task = assignment_task(page)
    if task != _RATINGS:
        return (task,)
    with read_session(engine) as session:
        return tuple(task_pages(session, dataset_id, task))


def assignment_task(page: str) -> str:
    """The assignment task a queue belongs to: every rating campaign's queue (``rating:<id>``) and the
    response scores queue are part of the ``ratings`` task; the other queues are named after their task.
    (Score responses had a queue of its own name, which nothing could assign: an annotator in team mode
    was always told nothing was assigned to them.)"""
    return "ratings" if page.startswith("rating:") else _ASSIGNED_AS.get(page, page)


def _assigned(annotator_id: int, dataset_id: int, page: str, item_id: InstrumentedAttribute[int]) -> Exists:
    """The item (``item_id``, a column of the outer query) is assigned to the annotator on the task."""
    return exists().where(
        m.Assignment.annotator_id == annotator_id,
        m.Assignment.dataset_id == dataset_id,
        m.Assignment.task == assignment_task(page),
        m.Assignment.item_id == item_id,
    )


def in_queue(dataset_id: int, page: str, *, assigned_to: int | None = None) -> list[ColumnElement[bool]]:
    """The conditions on :class:`Item` of the task's queue: the dataset's items with something to label
    on the task, and with ``assigned_to`` only those assigned to that annotator on the task."""
    conditions = [m.Item.dataset_id == dataset_id]
    has_units = _has_units(page)
    if has_units is not None:
        conditions.append(has_units)
    if assigned_to is not None:
        conditions.append(_assigned(assigned_to, dataset_id, page, m.Item.id))
    return conditions


# The labeling tasks a detector's output answers in part: its spans say where the response is wrong,
# and so which sentences, claims and triplets are.
DETECTOR_ANSWERED = ("spans", "sentences", "claims", "triplets")


def _open_labeling(dataset_id: int, annotator_id: int) -> tuple[Select[str, int], type[m.Assignment]]:
    """(task, item id) of each labeling task (:data:`DETECTOR_ANSWERED`) assigned to the annotator whose
    item their own label set has not marked done there (a skipped item is still to be done), unless gold
    of the item was shown to them: their labels there are then kept as they were and can never be
    finished, and gold answered more than a detector would. With the assignment's alias, to narrow by."""
    labeling = aliased(m.Assignment)
    done = exists().where(
        m.ItemStatus.item_id == labeling.item_id,
        m.ItemStatus.page == labeling.task,
        m.ItemStatus.status == "done",
        m.LabelSet.id == m.ItemStatus.label_set_id,
        m.LabelSet.dataset_id == dataset_id,
        m.LabelSet.kind == "human",
        m.LabelSet.annotator_id == annotator_id,
    )
    query = select(labeling.task, labeling.item_id).where(
        labeling.annotator_id == annotator_id,
        labeling.dataset_id == dataset_id,
        labeling.task.in_(DETECTOR_ANSWERED),
        ~done,
        ~_gold_shown_to(annotator_id, labeling.item_id),
    )
    return query, labeling


def _held_back(dataset_id: int, annotator_id: int) -> ColumnElement[bool]:
    """The item (of the outer query) has labeling work of the annotator still open: see :func:`holds`."""
    query, labeling = _open_labeling(dataset_id, annotator_id)
    return query.where(labeling.item_id == m.Item.id).exists()


def holds(engine: Engine, dataset_id: int, page: str, assigned_to: int | None) -> bool:
    """Whether the annotator's rating queue (``rating:<id>``) holds back their items still to be labeled.

    A blind annotator (team mode, a blind dataset without pre-annotation) is shown no detector while
    labeling, but the Rate detector outputs page shows a detector's spans: seen on an item whose spans
    (or sentences, claims, triplets) they have still to label, they answer part of it. So such an item
    waits, out of their rating queue, until that labeling is done. Scoring whole responses shows no
    detector, and reviewers and admins (whose queues are not narrowed) see detectors anyway.

    Reads the dataset's settings: a page decides it once per run and passes it on as ``holding`` to
    :func:`next_item`, :func:`held_for_rating` and :func:`rating_waits_on` (each reads it itself
    without)."""
    if assigned_to is None or not rating_campaign_queue(page):
        return False
    return detectors_wait_for_labels(dataset_settings(engine, dataset_id))


def rating_campaign_queue(page: str) -> bool:
    """Whether the queue is a rating campaign's (``rating:<id>``): the rating work that shows a
    detector's output, and so the only queue that :func:`holds` items back (scoring whole responses,
    the other part of the ratings task, shows none)."""
    return page.startswith("rating:")


def _holding(engine: Engine, dataset_id: int, page: str, assigned_to: int, holding: bool | None) -> bool:
    """:func:`holds`, unless the caller decided it already (``holding``)."""
    return holds(engine, dataset_id, page, assigned_to) if holding is None else holding


def _unfinished(label_set_id: int, page: str) -> ColumnElement[bool]:
    return ~exists().where(
        m.ItemStatus.item_id == m.Item.id,
        m.ItemStatus.label_set_id == label_set_id,
        m.ItemStatus.page == page,
        m.ItemStatus.status.in_(("done", "skipped")),
    )


def next_item(
    engine: Engine,
    dataset_id: int,
    label_set_id: int,
    page: str,
    *,
    after_position: int | None = None,
    assigned_to: int | None = None,
    holding: bool | None = None,
) -> str | None:
    """The next item not yet done or skipped by this label set on this task, in dataset order.

    Items with nothing to label on the task (no sentence, claim or extracted triplet) are not queued;
    with ``assigned_to``, neither are items not assigned to that annotator on the task.

    Nor is an item whose gold was shown to ``assigned_to``: their labels there are kept as they were
    (:mod:`db.repositories.gold_sightings`), so it can be neither labelled nor finished, and an item
    assigned to them again on another task after that would otherwise come back to them every time.

    Nor, in a rating queue that :func:`holds` items back, is an item whose labeling ``assigned_to`` has
    still to do (:func:`held_for_rating` tells the page how many wait so); ``holding`` is what
    :func:`holds` said of the queue, when the caller has it.

    Starts after ``after_position`` and wraps around to the beginning; None when everything is finished.
    """
    base = select(m.Item.external_id).where(
        *in_queue(dataset_id, page, assigned_to=assigned_to), _unfinished(label_set_id, page)
    )
    if assigned_to is not None:
        base = base.where(~_gold_shown_to(assigned_to, m.Item.id))
        if _holding(engine, dataset_id, page, assigned_to, holding):
            base = base.where(~_held_back(dataset_id, assigned_to))
    return _first_after(engine, base, after_position)


@dataclass(frozen=True)
class HeldBack:
    """Items of a rating queue held back from an annotator until they finish labeling them."""

    items: int  # unfinished items of the queue held back
    tasks: dict[str, int]  # per labeling task, how many of those items are still open there


def held_for_rating(
    engine: Engine,
    dataset_id: int,
    label_set_id: int,
    page: str,
    *,
    assigned_to: int | None,
    holding: bool | None = None,
) -> HeldBack:
    """The items of the annotator's rating queue that :func:`next_item` passes over because their
    labeling is still open (none when the queue :func:`holds` nothing back): how many, and on which
    tasks, so the page says why the queue stops rather than that everything is done."""
    if assigned_to is None or not _holding(engine, dataset_id, page, assigned_to, holding):
        return HeldBack(0, {})
    waiting = select(m.Item.id).where(
        *in_queue(dataset_id, page, assigned_to=assigned_to),
        _unfinished(label_set_id, page),
        ~_gold_shown_to(assigned_to, m.Item.id),
    )
    query, labeling = _open_labeling(dataset_id, assigned_to)
    query = query.where(labeling.item_id.in_(waiting))
    with read_session(engine) as session:
        rows = session.execute(query).all()
    tasks: dict[str, int] = {}
    for task, _ in rows:
        tasks[task] = tasks.get(task, 0) + 1
    return HeldBack(len({item for _, item in rows}), {t: tasks[t] for t in DETECTOR_ANSWERED if t in tasks})


def rating_waits_on(
    engine: Engine,
    dataset_id: int,
    page: str,
    item_id: int,
    *,
    assigned_to: int | None,
    holding: bool | None = None,
) -> list[str]:
    """The labeling tasks of the item the annotator must finish before the rating page shows them a
    detector's output on it (see :func:`holds`); empty when it may be shown."""
    if assigned_to is None or not _holding(engine, dataset_id, page, assigned_to, holding):
        return []
    with read_session(engine) as session:
        return open_labeling_on(session, dataset_id, assigned_to, item_id)


def open_labeling_on(session: Session, dataset_id: int, annotator_id: int, item_id: int) -> list[str]:
    """The labeling tasks (:data:`DETECTOR_ANSWERED`) of the item still open for the annotator, in a
    transaction already open: what holds the item back from their rating queue where it :func:`holds`
    items back; the store's refusal of a rating there reads it in its own transaction."""
    query, labeling = _open_labeling(dataset_id, annotator_id)
    found = {task for task, _ in session.execute(query.where(labeling.item_id == item_id))}
    return [task for task in DETECTOR_ANSWERED if task in found]


def held_back_reason(tasks: Sequence[str]) -> str:
    """Why an item is held back from a blind annotator's rating (:func:`rating_waits_on`): what the
    rating page says instead of the detector's output, and the store's refusal of a rating there."""
    return (
        f"Rate this item after you finish labeling it on: {', '.join(tasks)}. This dataset is blind: a "
        "detector's output here would answer part of what you have still to label on it."
    )


def _first_after(engine: Engine, base: Select[str], after_position: int | None) -> str | None:
    """The first item of ``base`` in dataset order after ``after_position``, wrapping around."""
    with read_session(engine) as session:
        if after_position is not None:
            found = session.scalar(
                base.where(m.Item.position > after_position).order_by(m.Item.position).limit(1)
            )
            if found is not None:
                return found
        return session.scalar(base.order_by(m.Item.position).limit(1))


def queue_size(engine: Engine, dataset_id: int, page: str, *, assigned_to: int | None = None) -> int:
    """How many items the task's queue holds. Scans the dataset's items (about 25 ms at 100 K items);
    it changes only when items are imported or removed or assignments change, never through an
    annotator's action."""
    with read_session(engine) as session:
        query = (
            select(func.count())
            .select_from(m.Item)
            .where(*in_queue(dataset_id, page, assigned_to=assigned_to))
        )
        return session.scalar(query) or 0


def assignments_mark(engine: Engine, dataset_id: int, page: str, annotator_id: int) -> tuple[int, int, int]:
    """A mark of the annotator's assignments on the task's queue, which changes whenever one is added or
    taken away (how many, the newest row, the sum of their items): a cheap read (the annotator's own rows,
    by index) that tells a page its counted :func:`queue_size` is out of date."""
    query = select(
        func.count(m.Assignment.id), func.max(m.Assignment.id), func.sum(m.Assignment.item_id)
    ).where(
        m.Assignment.annotator_id == annotator_id,
        m.Assignment.dataset_id == dataset_id,
        m.Assignment.task == assignment_task(page),
    )
    with read_session(engine) as session:
        count, newest, items = session.execute(query).one()
    return int(count or 0), int(newest or 0), int(items or 0)


def progress(
    engine: Engine,
    dataset_id: int,
    label_set_id: int,
    page: str,
    *,
    total: int | None = None,
    assigned_to: int | None = None,
) -> Progress:
    """This label set's progress on the task; ``total`` is :func:`queue_size` when the caller has it.
    With ``assigned_to`` only the statuses of items assigned to that annotator count, and the items of
    their queue they have not finished and whose gold was shown to them are counted as ``locked``: they
    can finish them no more than :func:`next_item` offers them, and counted as remaining they kept the
    annotator's progress from ever reaching the end. Read from the annotator's sightings, which are few."""
    if total is None:
        total = queue_size(engine, dataset_id, page, assigned_to=assigned_to)
    query = (
        select(m.ItemStatus.status, func.count())
        .where(m.ItemStatus.label_set_id == label_set_id, m.ItemStatus.page == page)
        .group_by(m.ItemStatus.status)
    )
    if assigned_to is not None:
        query = query.where(_assigned(assigned_to, dataset_id, page, m.ItemStatus.item_id))
    locked = _locked(dataset_id, label_set_id, page, assigned_to) if assigned_to is not None else None
    with read_session(engine) as session:
        counts = dict(session.execute(query).all())
        n_locked = (session.scalar(locked) or 0) if locked is not None else 0
    return Progress(
        finished=counts.get("done", 0) + counts.get("skipped", 0),
        flagged=counts.get("skipped", 0) + counts.get("unsure", 0),
        total=total,
        skipped=counts.get("skipped", 0),
        locked=n_locked,
    )


def _locked(dataset_id: int, label_set_id: int, page: str, annotator_id: int) -> Select[int]:
    """How many items of the annotator's queue they have not finished and whose gold was shown to them.
    Starts from their sightings on the dataset, which are few, not from the queue."""
    return (
        select(func.count())
        .select_from(m.Item)
        .where(
            m.Item.id.in_(
                select(m.GoldSighting.item_id).where(
                    m.GoldSighting.annotator_id == annotator_id,
                    m.GoldSighting.dataset_id == dataset_id,
                    sighting_locks(),
                )
            ),
            *in_queue(dataset_id, page, assigned_to=annotator_id),
            _unfinished(label_set_id, page),
        )
    )


def locked_count(engine: Engine, dataset_id: int, label_set_id: int, page: str, annotator_id: int) -> int:
    """:attr:`Progress.locked` alone, without counting the queue: for "every item is done", which must
    not leave out the items the annotator can no longer finish."""
    with read_session(engine) as session:
        return session.scalar(_locked(dataset_id, label_set_id, page, annotator_id)) or 0


def next_skipped(
    engine: Engine,
    dataset_id: int,
    label_set_id: int,
    page: str,
    *,
    after_position: int | None = None,
    assigned_to: int | None = None,
) -> str | None:
    """The next item this label set skipped on this task (of its queue), in dataset order after
    ``after_position``, wrapping around; None when it skipped none. The way back to skipped items, which
    :func:`next_item` passes over."""
    base = select(m.Item.external_id).where(
        *in_queue(dataset_id, page, assigned_to=assigned_to),
        exists().where(
            m.ItemStatus.item_id == m.Item.id,
            m.ItemStatus.label_set_id == label_set_id,
            m.ItemStatus.page == page,
            m.ItemStatus.status == "skipped",
        ),
    )
    return _first_after(engine, base, after_position)


def task_progress(
    engine: Engine,
    dataset_id: int,
    label_set_id: int,
    page: str,
    *,
    assigned_to: int | None = None,
    pages: Sequence[str] | None = None,
) -> Progress:
    """This label set's progress on the assignment task the page's queue is part of (``ratings`` for a
    rating campaign's queue and the scoring page's): an item is finished once every queue of the task has
    it done or skipped (:func:`task_pages`), and skipped if any skipped it, as the Team page and the
    ``progress`` command count it. The rating pages show it beside their own queue's count, which alone
    called an item done that the Team page counted as not. With ``assigned_to``, the annotator's items on
    the task, those not finished whose gold was shown to them counted as ``locked``. ``pages``: the
    task's queues (:func:`pages_of_task`), when the caller has them."""
    task = assignment_task(page)
    with read_session(engine) as session:
        if pages is None:
            pages = task_pages(session, dataset_id, task)
        finished = finished_on(pages).where(m.ItemStatus.label_set_id == label_set_id).subquery("finished")
        flagged = (
            select(m.ItemStatus.item_id)
            .where(
                m.ItemStatus.label_set_id == label_set_id,
                m.ItemStatus.page.in_(pages),
                m.ItemStatus.status.in_(("skipped", "unsure")),
            )
            .distinct()
            .subquery("flagged")
        )
        # One pass over the queue, each item joined to whether it is finished (and how), flagged and,
        # for an annotator, locked.
        sighted = and_(
            m.GoldSighting.annotator_id == (assigned_to if assigned_to is not None else _NOBODY),
            m.GoldSighting.item_id == m.Item.id,
            sighting_locks(),  # at most one such record per annotator and item
        )
        total, n_finished, n_skipped, n_flagged, locked = session.execute(
            select(
                func.count(),
                func.count(finished.c.item_id),
                func.count(case((finished.c.status == "skipped", 1))),
                func.count(flagged.c.item_id),
                func.count(case((and_(finished.c.item_id.is_(None), m.GoldSighting.id.is_not(None)), 1))),
            )
            .select_from(m.Item)
            .outerjoin(finished, finished.c.item_id == m.Item.id)
            .outerjoin(flagged, flagged.c.item_id == m.Item.id)
            .outerjoin(m.GoldSighting, sighted)
            .where(*in_queue(dataset_id, task, assigned_to=assigned_to))
        ).one()
    return Progress(
        finished=int(n_finished),
        flagged=int(n_flagged),
        total=int(total),
        skipped=int(n_skipped),
        locked=int(locked),
    )


def own_progress(engine: Engine, dataset_id: int, annotator_id: int, *, assigned_only: bool) -> Progress:
    """One annotator's progress on a dataset over every task, by item: what a blind annotator is shown
    instead of everyone's progress and gold coverage. Of their items (with ``assigned_only``, those
    assigned to them on any task, else all), one is ``finished`` once every task they have on it is
    finished (done or skipped; ``skipped`` if any task skipped it) — with ``assigned_only`` every task
    assigned to them on it, else every task they began on it — each task as :func:`task_pages` counts
    it. Counting an item done on any one of its tasks said "3 done" of items each with work left on
    another task. Their items not finished whose gold was shown to them are ``locked``: they cannot be
    finished any more, so they are neither finished nor remaining. ``flagged``: items skipped or marked
    unsure on any task.

    Reads the annotator's own assignments, statuses and sightings on the dataset; without
    ``assigned_only``, also the count of the dataset's items."""
    assigned = select(m.Assignment.item_id).where(
        m.Assignment.dataset_id == dataset_id, m.Assignment.annotator_id == annotator_id
    )
    own_label_set = (
        m.LabelSet.dataset_id == dataset_id,
        m.LabelSet.kind == "human",
        m.LabelSet.annotator_id == annotator_id,
    )
    statuses = (
        select(m.ItemStatus.item_id, m.ItemStatus.page, m.ItemStatus.status)
        .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
        .where(*own_label_set)
    )
    sightings = select(m.GoldSighting.item_id).where(
        m.GoldSighting.annotator_id == annotator_id, m.GoldSighting.dataset_id == dataset_id, sighting_locks()
    )
    if assigned_only:
        statuses = statuses.where(m.ItemStatus.item_id.in_(assigned))
        sightings = sightings.where(m.GoldSighting.item_id.in_(assigned))
    with read_session(engine) as session:
        found: dict[int, dict[str, str]] = {}
        for item_id, page, status in session.execute(statuses):
            found.setdefault(item_id, {})[page] = status
        tasks: dict[int, set[str]] = {}
        if assigned_only:
            for item_id, task in session.execute(
                assigned.with_only_columns(m.Assignment.item_id, m.Assignment.task)
            ):
                tasks.setdefault(item_id, set()).add(task)
            total = len(tasks)
        else:
            for item_id, pages_of_item in found.items():
                tasks[item_id] = {assignment_task(page) for page in pages_of_item}
            total = (
                session.scalar(
                    select(func.count()).select_from(m.Item).where(m.Item.dataset_id == dataset_id)
                )
                or 0
            )
        # Per task, the items finished on it and how (done, or skipped on one of its queues).
        finished_on_task: dict[str, dict[int, str]] = {}
        for task in set().union(*tasks.values()):
            query = (
                finished_on(task_pages(session, dataset_id, task))
                .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
                .where(*own_label_set)
            )
            if assigned_only:
                query = query.where(m.ItemStatus.item_id.in_(assigned))
            finished_on_task[task] = {item_id: status for item_id, status in session.execute(query)}
        sighted = set(session.scalars(sightings))
    finished = {
        item_id
        for item_id, item_tasks in tasks.items()
        if all(item_id in finished_on_task[task] for task in item_tasks)
    }
    return Progress(
        finished=len(finished),
        flagged=sum(1 for item in found.values() if {"skipped", "unsure"} & set(item.values())),
        total=total,
        skipped=sum(
            1
            for item_id in finished
            if any(finished_on_task[task][item_id] == "skipped" for task in tasks[item_id])
        ),
        locked=len(sighted - finished),
    )


@dataclass(frozen=True)
class ItemStatusView:
    status: str
    note: str | None
    # Passed back when the status is changed, so a change made meanwhile is not overwritten.
    version: int = field(default=0, compare=False)


def item_status(engine: Engine, label_set_id: int, item_id: int, page: str) -> ItemStatusView | None:
    with read_session(engine) as session:
        row = session.scalar(
            select(m.ItemStatus).where(
                m.ItemStatus.label_set_id == label_set_id,
                m.ItemStatus.item_id == item_id,
                m.ItemStatus.page == page,
            )
        )
        return None if row is None else ItemStatusView(row.status, row.note, row.version)
