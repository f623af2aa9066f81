"""One rule of when an item is finished on an assignment task (done or skipped on every queue of the
task: every rating campaign of a dataset that has one, else the response scores), and every progress
count reads it: the Team page's per annotator and per item, the rating pages' header, an annotator's
own. The header counts in the store, in one statement, rather than loading every status. On SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, event, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.repositories import queue
from db.repositories.assignments import assign, assigned_items, progress_by_annotator, progress_by_item
from db.repositories.gold_sightings import record_gold_shown
from db.repositories.label_sets import human_label_set
from db.repositories.rating_tasks import TaskSpec, create_rating_task
from tests.db.test_assignments import _actor, _dataset, _mark


def _two_campaigns_half_rated(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[int], list[str], dict[int, list[int]]]:
    """Nine items, two campaigns, annotators a and b each assigned all of them on the ratings task, with
    a mix of done, skipped and unsure across the campaigns and the (extra) response scores, and gold of
    two items shown to a (team mode). Returns the dataset, the annotators, the campaigns' queues and the items."""
    dataset_id = _dataset(engine, n_items=9)
    a, b = _actor(engine, "a", "annotator"), _actor(engine, "b", "annotator")
    assert a.id is not None and b.id is not None
    with Session(engine) as session:
        detector = session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == "detector"))
    assert detector is not None
    pages = [
        f"rating:{create_rating_task(engine, dataset_id, TaskSpec(name, detector), None, actor=OPERATOR)}"
        for name in ("one", "two")
    ]
    assign(engine, dataset_id, "ratings", [a.id, b.id], 2, actor=OPERATOR)
    items = assigned_items(engine, dataset_id, "ratings", a.id)
    first, second = pages
    statuses = {
        a.id: [
            (0, first, "done"), (0, second, "done"),  # finished
            (1, first, "done"), (1, second, "skipped"),  # finished, skipped
            (2, first, "done"), (2, second, "unsure"),  # flagged, not finished
            (3, first, "done"),  # half
            (4, "response_scores", "done"),  # a score alone finishes nothing beside campaigns
            (5, first, "skipped"), (5, second, "skipped"),  # finished, skipped
        ],
        b.id: [(k, page, "done") for k in range(6) for page in pages] + [(6, first, "unsure")],
    }  # fmt: skip
    for who, marks in statuses.items():
        for k, page, status in marks:
            _mark(engine, dataset_id, who, items[k], page, status)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    record_gold_shown(engine, a, dataset_id, [items[3], items[8]])  # locked: neither finished
    return dataset_id, [a.id, b.id], pages, {a.id: items, b.id: items}


def test_every_progress_count_reads_the_same_finished_items(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule was written three times (SQL for the Team page, Python for the header and the home card);
    each count must say what it said before, and the three must agree."""
    dataset_id, (a, b), pages, _ = _two_campaigns_half_rated(engine, monkeypatch)
    team = {p.annotator_id: p for p in progress_by_annotator(engine, dataset_id, "ratings")}
    expected = {a: (3, 2, 2, 3, 9), b: (6, 0, 0, 1, 9)}  # finished, skipped, locked, flagged, total
    for who in (a, b):
        own = human_label_set(engine, dataset_id, who).id
        for page in [*pages, "response_scores"]:
            header = queue.task_progress(engine, dataset_id, own, page, assigned_to=who)
            said = (header.finished, header.skipped, header.locked, header.flagged, header.total)
            assert said == expected[who], (who, page)
        home = queue.own_progress(engine, dataset_id, who, assigned_only=True)
        assert (home.finished, home.skipped, home.locked, home.total) == expected[who][:3] + (9,)
        row = team[who]
        assert (row.done + row.skipped, row.skipped, row.locked) == expected[who][:3]
        reviewer_view = queue.task_progress(engine, dataset_id, own, pages[0])  # the whole dataset
        assert (reviewer_view.finished, reviewer_view.skipped, reviewer_view.locked) == (
            expected[who][0],
            expected[who][1],
            0,
        )
    assert [row.finished for row in progress_by_item(engine, dataset_id, "ratings")] == [
        2, 2, 1, 1, 1, 2, 0, 0, 0
    ]  # fmt: skip


def test_the_header_counts_the_task_in_one_statement(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """It counted the queue, then loaded every status of the label set on the task's queues and the
    annotator's sightings to count in Python (three reads, the second as long as the queue)."""
    dataset_id, (a, _), pages, _ = _two_campaigns_half_rated(engine, monkeypatch)
    own = human_label_set(engine, dataset_id, a).id
    statements: list[str] = []

    def seen(_connection: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", seen)
    try:
        header = queue.task_progress(engine, dataset_id, own, pages[0], assigned_to=a, pages=pages)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert header.finished == 3
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(reads) == 1, reads
