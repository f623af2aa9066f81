"""A blind annotator's rating queue holds back the items whose labeling (spans, sentences, claims,
triplets) they have still to do: the rating page would show them a detector's spans there. Reviewers'
queues, local mode, a dataset that is not blind and one with pre-annotation hold nothing back. The store refuses a rating of
an item held back. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Actor, Forbidden, RatingHeldBack
from db.importer import import_bundle
from db.repositories import history, labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset, set_dataset_settings
from db.repositories.gold_sightings import record_gold_shown
from db.repositories.label_sets import human_label_set
from db.repositories.queue import HeldBack, held_for_rating, next_item, rating_waits_on
from db.repositories.rating_tasks import TaskSpec, create_rating_task, rate
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord

TEXT = "A red cube. The ball is blue."


def _setup(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, dict[str, int], Actor]:
    """Three items, a detector's span on each and a rating task over it; annotator a has the ratings
    task on all three and the spans task on it-0 and it-1 (rows written directly: assigning is tested
    elsewhere); team mode."""
    items = [ItemRecord(f"it-{k}", TEXT) for k in range(3)]
    eager = LabelSetRecord(
        "detector", "eager", annotations=[Annotations(f"it-{k}", spans=[SpanRecord(2, 5)]) for k in range(3)]
    )
    import_bundle(
        engine, Bundle(DatasetRecord("ds", "test"), items=items, label_sets=[eager]), actor=OPERATOR
    )
    found = get_dataset(engine, "ds")
    assert found is not None
    a = get_or_create_annotator(engine, "a", "annotator")
    with Session(engine) as session:
        ids = {ext: item_id for ext, item_id in session.execute(select(m.Item.external_id, m.Item.id))}
        detector = session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == "detector"))
        assert detector is not None
        rows = [("ratings", ext) for ext in ids] + [("spans", "it-0"), ("spans", "it-1")]
        for task, ext in rows:
            session.add(m.Assignment(dataset_id=found.id, task=task, item_id=ids[ext], annotator_id=a.id))
        session.commit()
    task_id = create_rating_task(engine, found.id, TaskSpec("MHALO", detector), None, actor=OPERATOR)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    return found.id, f"rating:{task_id}", ids, Actor(a.id, "a", "annotator")


def _queue(engine: Engine, dataset_id: int, page: str, who: int | None) -> list[str]:
    """Every item :func:`next_item` offers, in turn (none finished: after each one, the next)."""
    seen: list[str] = []
    position = None
    while True:
        found = next_item(engine, dataset_id, 0, page, after_position=position, assigned_to=who)
        if found is None or found in seen:
            return seen
        seen.append(found)
        with Session(engine) as session:
            position = session.scalar(select(m.Item.position).where(m.Item.external_id == found))


def _done(engine: Engine, dataset_id: int, actor: Actor, item_id: int, page: str = "spans") -> None:
    assert actor.id is not None
    own = human_label_set(engine, dataset_id, actor.id)
    labeling.sync_done(engine, own.id, item_id, page, True, actor.id)


def test_items_with_labeling_still_open_wait_out_of_the_rating_queue(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blind by default: "next item" on the rating page led to it-0 while its spans were still to mark."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert _queue(engine, dataset_id, page, a.id) == ["it-2"]
    assert rating_waits_on(engine, dataset_id, page, ids["it-0"], assigned_to=a.id) == ["spans"]
    assert rating_waits_on(engine, dataset_id, page, ids["it-2"], assigned_to=a.id) == []
    assert held_for_rating(engine, dataset_id, 0, page, assigned_to=a.id) == HeldBack(2, {"spans": 2})

    _done(engine, dataset_id, a, ids["it-0"])  # her spans of it-0 are done: it may be rated now
    assert _queue(engine, dataset_id, page, a.id) == ["it-0", "it-2"]
    assert rating_waits_on(engine, dataset_id, page, ids["it-0"], assigned_to=a.id) == []
    assert held_for_rating(engine, dataset_id, 0, page, assigned_to=a.id) == HeldBack(1, {"spans": 1})


def test_a_skipped_labeling_item_still_waits_and_other_tasks_count_too(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    labeling.set_item_status(engine, own.id, ids["it-0"], "spans", "skipped", a.id)
    with Session(engine) as session:  # it-2's sentences are hers to label too
        session.add(
            m.Assignment(dataset_id=dataset_id, task="sentences", item_id=ids["it-2"], annotator_id=a.id)
        )
        session.commit()
    assert _queue(engine, dataset_id, page, a.id) == []
    assert rating_waits_on(engine, dataset_id, page, ids["it-2"], assigned_to=a.id) == ["sentences"]
    assert held_for_rating(engine, dataset_id, own.id, page, assigned_to=a.id) == HeldBack(
        3, {"spans": 2, "sentences": 1}
    )


def test_an_item_rated_already_is_not_counted_as_waiting(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    labeling.sync_done(engine, own.id, ids["it-1"], page, True, a.id)
    assert held_for_rating(engine, dataset_id, own.id, page, assigned_to=a.id) == HeldBack(1, {"spans": 1})


def test_gold_shown_on_an_item_releases_it(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Her labels there are kept as they were, so its spans can never be done; gold told her more."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    record_gold_shown(engine, a, dataset_id, [ids["it-1"]])
    assert rating_waits_on(engine, dataset_id, page, ids["it-1"], assigned_to=a.id) == []


@pytest.mark.parametrize(
    "settings",
    [{"blind": False}, {"blind": True, "allow_preannotation": True}],
    ids=["open", "preannotation"],
)
def test_a_dataset_that_shows_detectors_while_labeling_holds_nothing_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, settings: dict[str, bool]
) -> None:
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    set_dataset_settings(engine, dataset_id, **settings, actor=OPERATOR)
    assert _queue(engine, dataset_id, page, a.id) == ["it-0", "it-1", "it-2"]
    assert rating_waits_on(engine, dataset_id, page, ids["it-0"], assigned_to=a.id) == []
    assert held_for_rating(engine, dataset_id, 0, page, assigned_to=a.id) == HeldBack(0, {})


def test_whole_queues_local_mode_and_response_scores_hold_nothing_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reviewer's queue is not narrowed to anyone (``assigned_to`` None); Score responses shows no
    detector; local mode shows everyone everything."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert _queue(engine, dataset_id, page, None) == ["it-0", "it-1", "it-2"]
    assert rating_waits_on(engine, dataset_id, page, ids["it-0"], assigned_to=None) == []
    assert rating_waits_on(engine, dataset_id, "response_scores", ids["it-0"], assigned_to=a.id) == []
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    assert rating_waits_on(engine, dataset_id, page, ids["it-0"], assigned_to=a.id) == []
    assert _queue(engine, dataset_id, page, a.id) == ["it-0", "it-1", "it-2"]


def test_the_store_refuses_a_rating_of_an_item_held_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page shows no detector on it and no way to rate, but the store took a rating sent anyway (an
    old tab, a crafted request): a judgment of the detector made before her own labeling of the item."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    task_id = int(page.removeprefix("rating:"))

    def rate_it(external_id: str, who: int) -> None:
        rate(engine, task_id, ids[external_id], who, own.id, score=3, segment=(2, 5))

    with pytest.raises(RatingHeldBack) as refused:
        rate_it("it-0", a.id)
    assert str(refused.value) == (
        "Rate this item after you finish labeling it on: spans. This dataset is blind: a detector's "
        "output here would answer part of what you have still to label on it."
    )
    assert isinstance(refused.value, Forbidden)  # the pages show it as they show every refusal
    with Session(engine) as session:
        assert session.scalar(select(func.count(m.Rating.id))) == 0
    rate_it("it-2", a.id)  # nothing of it left to label
    _done(engine, dataset_id, a, ids["it-0"])
    rate_it("it-0", a.id)  # her spans of it-0 are done: it may be rated now
    with Session(engine) as session:
        assert session.scalar(select(func.count(m.Rating.id))) == 2


def test_the_store_takes_a_rating_where_nothing_is_held_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset that shows detectors while labeling, and local mode, hold nothing back."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    task_id = int(page.removeprefix("rating:"))
    set_dataset_settings(engine, dataset_id, blind=False, actor=OPERATOR)
    rate(engine, task_id, ids["it-0"], a.id, own.id, score=3, segment=(2, 5))
    set_dataset_settings(engine, dataset_id, blind=True, actor=OPERATOR)
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    rate(engine, task_id, ids["it-1"], a.id, own.id, score=2, segment=(2, 5))


def _statuses(engine: Engine, item_id: int) -> list[tuple[str, str, str | None]]:
    """The item's statuses (page, status, note), in page order."""
    with Session(engine) as session:
        rows = session.execute(
            select(m.ItemStatus.page, m.ItemStatus.status, m.ItemStatus.note)
            .where(m.ItemStatus.item_id == item_id)
            .order_by(m.ItemStatus.page)
        )
        return [(page, status, note) for page, status, note in rows]


@pytest.mark.parametrize(("status", "note"), [("done", None), ("skipped", "later"), ("unsure", "odd")])
def test_the_store_refuses_a_status_on_the_rating_queue_of_an_item_held_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, status: str, note: str | None
) -> None:
    """The store refused her rating of it-0 but took "done" on its rating queue (the item then counted
    as rated) or "skipped" (it left her queue before she had labeled it): rating work all the same."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)

    def mark(external_id: str) -> labeling.Action:
        return labeling.set_item_status(engine, own.id, ids[external_id], page, status, a.id, note=note)

    with pytest.raises(RatingHeldBack) as refused:
        mark("it-0")
    assert str(refused.value) == (
        f"Item 'it-0' was not marked {status}: it is held back from your rating until your labeling of it "
        "is done. Rate this item after you finish labeling it on: spans. This dataset is blind: a "
        "detector's output here would answer part of what you have still to label on it."
    )
    assert _statuses(engine, ids["it-0"]) == []
    mark("it-2")  # nothing of it left to label
    _done(engine, dataset_id, a, ids["it-0"])
    mark("it-0")  # her spans of it-0 are done: its rating work is open now
    assert _statuses(engine, ids["it-0"]) == [(page, status, note), ("spans", "done", None)]


def test_a_mark_given_before_the_item_was_held_back_stays_until_its_labeling_is_done(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Skipped while the dataset showed detectors, then made blind: clearing the mark, its Undo and a
    restore from the item's history are status writes on the rating queue too."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    item_id = ids["it-0"]
    set_dataset_settings(engine, dataset_id, blind=False, actor=OPERATOR)
    skipped = labeling.set_item_status(engine, own.id, item_id, page, "skipped", a.id)
    labeling.set_item_status(engine, own.id, item_id, page, "unsure", a.id, note="odd")
    set_dataset_settings(engine, dataset_id, blind=True, actor=OPERATOR)

    with pytest.raises(RatingHeldBack, match=r"^Item 'it-0' was not cleared of its unsure mark: "):
        labeling.clear_item_status(engine, own.id, item_id, page, a.id)
    with pytest.raises(RatingHeldBack, match=r"^Item 'it-0' was not given its status back by Undo: "):
        labeling.undo_last(engine, a.id, [own.id], item_id=item_id, task=page)
    latest = history.latest_change(engine, own.id, item_id)
    with pytest.raises(RatingHeldBack, match=r"^Item 'it-0' was not restored to an earlier status: "):
        history.restore_state(
            engine, own.id, item_id, skipped.log_id, annotator_id=a.id, expected_latest=latest
        )
    assert _statuses(engine, item_id) == [(page, "unsure", "odd")]

    _done(engine, dataset_id, a, item_id)
    labeling.clear_item_status(engine, own.id, item_id, page, a.id)
    assert _statuses(engine, item_id) == [("spans", "done", None)]


def test_a_rating_given_before_the_item_was_held_back_is_neither_undone_nor_restored(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rated while the dataset showed detectors, then made blind: Undo of her rating and a restore of it
    from the item's history changed her judgment of the detector before her labeling of the item was
    done, though rating it anew was refused."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    task_id, item_id = int(page.removeprefix("rating:")), ids["it-0"]
    set_dataset_settings(engine, dataset_id, blind=False, actor=OPERATOR)
    first = rate(engine, task_id, item_id, a.id, own.id, score=3, segment=(2, 5))
    second = rate(engine, task_id, item_id, a.id, own.id, score=1, segment=(2, 5))
    set_dataset_settings(engine, dataset_id, blind=True, actor=OPERATOR)

    def scores() -> list[float | None]:
        with Session(engine) as session:
            return list(session.scalars(select(m.Rating.score).where(m.Rating.item_id == item_id)))

    with pytest.raises(RatingHeldBack, match=r"^The rating of item 'it-0' was not undone: it is held back"):
        labeling.undo_last(engine, a.id, [own.id], item_id=item_id)
    latest = history.latest_change(engine, own.id, item_id)
    with pytest.raises(
        RatingHeldBack, match=r"^The rating of item 'it-0' was not restored to an earlier state: "
    ):
        history.restore_state(
            engine, own.id, item_id, first.log_id, annotator_id=a.id, expected_latest=latest
        )
    assert scores() == [1]

    _done(engine, dataset_id, a, item_id)  # her spans of it-0 are done: her rating of it is open again
    labeling.undo_last(engine, a.id, [own.id], item_id=item_id)
    assert scores() == [3]
    latest = history.latest_change(engine, own.id, item_id)
    history.restore_state(engine, own.id, item_id, second.log_id, annotator_id=a.id, expected_latest=latest)
    assert scores() == [1]


def test_statuses_where_nothing_is_held_back_are_taken(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Her own labeling queues, Score responses (no detector shown), a reviewer, and local mode."""
    dataset_id, page, ids, a = _setup(engine, monkeypatch)
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    item_id = ids["it-0"]
    labeling.set_item_status(engine, own.id, item_id, "spans", "unsure", a.id, note="odd")
    labeling.set_item_status(engine, own.id, item_id, "response_scores", "skipped", a.id)
    monkeypatch.setenv("SPANLIGHT_MODE", "local")  # an admin's account, made as _setup makes a's
    rev = get_or_create_annotator(engine, "rev", "reviewer")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    theirs = human_label_set(engine, dataset_id, rev.id)
    labeling.set_item_status(engine, theirs.id, item_id, page, "skipped", rev.id)
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    labeling.set_item_status(engine, own.id, item_id, page, "done", a.id)
    assert sorted((p, s) for p, s, _ in _statuses(engine, item_id)) == [
        (page, "done"),
        (page, "skipped"),
        ("response_scores", "skipped"),
        ("spans", "unsure"),
    ]
