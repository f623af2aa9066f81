"""An admin lifts the lock that gold shown to a blind annotator put on an item: the record stays, marked
with who lifted it and when, and from then on no reader of the records counts the item as locked (the
store's refusal, the queue, every progress count, the annotation pages' note). Only admins lift; each lift
is in the edit log; gold shown again locks again, as a record of its own. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, Forbidden, GoldShown
from db.engine import store_revision
from db.repositories import queue
from db.repositories.annotators import get_or_create_annotator
from db.repositories.assignments import progress_by_annotator, progress_by_item
from db.repositories.gold_sightings import gold_seen, lift_locks, list_sightings, record_gold_shown
from db.repositories.label_sets import human_label_set
from tests.db.test_gold_sightings import _setup, _span


def _admin(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Actor:
    """An admin account, made as the command line makes one (in team mode no typed name creates one)."""
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    made = get_or_create_annotator(engine, "adm", "admin")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    return Actor(made.id, "adm", "admin")


def _lift_entries(engine: Engine) -> list[m.EditLog]:
    with Session(engine) as session:
        return list(session.scalars(select(m.EditLog).where(m.EditLog.entity == "gold_sightings")))


def test_a_lifted_lock_lets_her_label_again_and_no_progress_counts_it_locked(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a, admin = actors["a"], _admin(engine, monkeypatch)
    assert a.id is not None
    mine = human_label_set(engine, dataset_id, a.id).id
    record_gold_shown(engine, a, dataset_id, [ids["it-0"], ids["it-1"]])
    assert queue.progress(engine, dataset_id, mine, "spans", assigned_to=a.id).locked == 2

    assert lift_locks(engine, dataset_id, a.id, actor=admin, item_ids=[ids["it-0"]]) == ["it-0"]

    _span(engine, dataset_id, a, ids["it-0"], 6, 10)  # refused before the lift
    with pytest.raises(GoldShown):  # the lock of the other item stays
        _span(engine, dataset_id, a, ids["it-1"], 6, 10)
    assert gold_seen(engine, a.id, ids["it-0"]) is None  # the annotation pages' read-only note
    assert gold_seen(engine, a.id, ids["it-1"]) is not None
    header = queue.progress(engine, dataset_id, mine, "spans", assigned_to=a.id)
    assert (header.locked, header.remaining) == (1, 2)
    assert queue.locked_count(engine, dataset_id, mine, "spans", a.id) == 1
    assert queue.task_progress(engine, dataset_id, mine, "spans", assigned_to=a.id).locked == 1
    assert queue.own_progress(engine, dataset_id, a.id, assigned_only=True).locked == 1
    assert queue.next_item(engine, dataset_id, mine, "spans", assigned_to=a.id) == "it-0"
    assert {p.name: p.locked for p in progress_by_annotator(engine, dataset_id, "spans")} == {"a": 1, "b": 0}
    by_item = [(r.external_id, r.locked) for r in progress_by_item(engine, dataset_id, "spans")]
    assert by_item == [("it-0", 0), ("it-1", 1), ("it-2", 0)]

    # The record of what she saw stays, with who lifted it and when.
    records = {s.external_id: s for s in list_sightings(engine, dataset_id)}
    assert set(records) == {"it-0", "it-1"}
    lifted, kept = records["it-0"], records["it-1"]
    assert (lifted.annotator, lifted.page, lifted.lifted_by, lifted.locks) == (
        "a",
        "Overridden labels",
        "adm",
        False,
    )
    assert lifted.lifted_at is not None
    assert (kept.lifted_at, kept.lifted_by, kept.locks) == (None, None, True)
    [entry] = _lift_entries(engine)
    assert (entry.annotator_id, entry.action, entry.item_id) == (admin.id, "update", ids["it-0"])
    assert entry.after is not None and entry.after["items"] == ["it-0"]
    assert entry.after["description"] == "lifted the gold-shown lock of 'a' on 1 item(s)"

    # All of hers at once; then nothing is left to lift, and nothing is written.
    assert lift_locks(engine, dataset_id, a.id, actor=admin) == ["it-1"]
    assert queue.own_progress(engine, dataset_id, a.id, assigned_only=True).locked == 0
    revision = store_revision(engine)
    assert lift_locks(engine, dataset_id, a.id, actor=admin) == []
    assert store_revision(engine) == revision and len(_lift_entries(engine)) == 2


def test_only_an_admin_may_lift_a_lock(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a = actors["a"]
    assert a.id is not None
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    revision = store_revision(engine)
    for who in (actors["r"], a, actors["b"]):
        with pytest.raises(Forbidden, match="cannot manage users and assignments"):
            lift_locks(engine, dataset_id, a.id, actor=who)
    assert store_revision(engine) == revision and _lift_entries(engine) == []
    with pytest.raises(GoldShown):
        _span(engine, dataset_id, a, ids["it-0"], 6, 10)


def test_gold_shown_again_after_a_lift_locks_again_as_a_record_of_its_own(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lift is kept in the first record; the second showing is a second record, which locks."""
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a, admin = actors["a"], _admin(engine, monkeypatch)
    assert a.id is not None
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    lift_locks(engine, dataset_id, a.id, actor=admin)
    _span(engine, dataset_id, a, ids["it-0"], 6, 10)
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    with pytest.raises(GoldShown):
        _span(engine, dataset_id, a, ids["it-0"], 11, 15)
    revision = store_revision(engine)
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])  # shown a third time: locked already
    assert store_revision(engine) == revision
    newest, first = list_sightings(engine, dataset_id, annotator_id=a.id)
    assert (newest.locks, newest.lifted_by) == (True, None)
    assert (first.locks, first.lifted_by) == (False, "adm")
    assert newest.shown_at >= first.shown_at and newest.id > first.id
