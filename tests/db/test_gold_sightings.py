"""Gold shown to a blind annotator keeps their labels on that item as they were: the store refuses their
edits there (every path: label, status, undo, an item unassigned and assigned again), and nobody
else's; and gold is shown only once all their work on the item is done. On SQLite and PostgreSQL."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Actor, Forbidden, GoldShown
from db.engine import store_revision
from db.importer import import_bundle
from db.repositories import labeling, queue
from db.repositories.accounts import set_disabled
from db.repositories.adjudication import overrides_for, promote_item
from db.repositories.annotators import get_or_create_annotator
from db.repositories.assignments import assign, progress_by_annotator, progress_by_item, unassign
from db.repositories.datasets import get_dataset
from db.repositories.gold_sightings import gold_seen, record_gold_shown
from db.repositories.label_sets import human_label_set
from db.repositories.queue import next_item
from formats.records import Bundle, DatasetRecord, ItemRecord

REASON = re.compile(
    r"Gold for this item was shown to you on \d{4}-\d\d-\d\d \d\d:\d\d UTC \(Overridden labels page\); "
    r"your labels on it are kept as they were\."
)


def _setup(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, int], dict[str, Actor]]:
    """Three items, each assigned on spans to annotators a and b, who marked a span on each; team mode."""
    items = [ItemRecord(f"it-{k}", f"A red cube number {k}. The ball is blue.") for k in range(3)]
    import_bundle(engine, Bundle(DatasetRecord("ds", "test"), items=items), actor=OPERATOR)
    found = get_dataset(engine, "ds")
    assert found is not None
    actors = {
        name: Actor(get_or_create_annotator(engine, name, role).id, name, role)
        for name, role in (("a", "annotator"), ("b", "annotator"), ("r", "reviewer"))
    }
    assign(engine, found.id, "spans", [actors["a"].id, actors["b"].id], 2, actor=OPERATOR)  # type: ignore[list-item]
    with Session(engine) as session:
        ids = {ext: item_id for ext, item_id in session.execute(select(m.Item.external_id, m.Item.id))}
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    for name in ("a", "b"):
        for item_id in ids.values():
            _span(engine, found.id, actors[name], item_id, 2, 5)
    return found.id, ids, actors


def _span(engine: Engine, dataset_id: int, actor: Actor, item_id: int, start: int, end: int) -> None:
    assert actor.id is not None
    own = human_label_set(engine, dataset_id, actor.id)
    labeling.add_span(engine, own.id, item_id, start, end, None, actor.id)


def _spans(engine: Engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(m.Span)) or 0


def test_after_gold_was_shown_the_annotators_edits_to_that_item_are_refused(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """She saw gold of it-0 on Overridden labels and could still go back and move her spans to gold's."""
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a = actors["a"]
    assert a.id is not None
    own = human_label_set(engine, dataset_id, a.id)
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    seen = gold_seen(engine, a.id, ids["it-0"])
    assert seen is not None and REASON.fullmatch(seen.reason), seen

    before, revision = _spans(engine), store_revision(engine)
    with pytest.raises(GoldShown, match=REASON.pattern):
        _span(engine, dataset_id, a, ids["it-0"], 6, 10)
    with Session(engine) as session:
        span_id = session.scalar(
            select(m.Span.id).where(m.Span.label_set_id == own.id, m.Span.item_id == ids["it-0"])
        )
    assert span_id is not None
    with pytest.raises(GoldShown):
        labeling.delete_span(engine, span_id, a.id)
    with pytest.raises(GoldShown):
        labeling.set_item_status(engine, own.id, ids["it-0"], "spans", "skipped", a.id)
    with pytest.raises(GoldShown):  # her span on it-0 was her last action there
        labeling.undo_last(engine, a.id, [own.id], item_id=ids["it-0"], task="spans")
    assert (_spans(engine), store_revision(engine)) == (before, revision)

    # Her other items, the other annotator on this one, a reviewer: as before.
    _span(engine, dataset_id, a, ids["it-1"], 6, 10)
    _span(engine, dataset_id, actors["b"], ids["it-0"], 6, 10)
    _span(engine, dataset_id, actors["r"], ids["it-0"], 6, 10)
    assert gold_seen(engine, actors["b"].id, ids["it-0"]) is None  # type: ignore[arg-type]
    # Local mode: one person at their own machine, nobody kept blind.
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    _span(engine, dataset_id, a, ids["it-0"], 11, 15)


def test_the_lock_outlives_an_unassignment_and_the_first_sighting_is_kept(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a = actors["a"]
    assert a.id is not None
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    first = gold_seen(engine, a.id, ids["it-0"])
    revision = store_revision(engine)
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])  # the page shown again: nothing written
    assert store_revision(engine) == revision and gold_seen(engine, a.id, ids["it-0"]) == first

    unassign(engine, dataset_id, "spans", a.id, actor=OPERATOR, only_unfinished=False)
    with pytest.raises(Forbidden, match="not assigned to you"):
        _span(engine, dataset_id, a, ids["it-0"], 6, 10)
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    assign(engine, dataset_id, "spans", [a.id], 1, actor=OPERATOR)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    with pytest.raises(GoldShown):
        _span(engine, dataset_id, a, ids["it-0"], 6, 10)
    _span(engine, dataset_id, a, ids["it-1"], 6, 10)


def test_only_a_team_annotator_is_recorded_and_only_while_logged_in(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    record_gold_shown(engine, actors["r"], dataset_id, [ids["it-0"]])
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    record_gold_shown(engine, actors["a"], dataset_id, [ids["it-0"]])
    with Session(engine) as session:
        assert not session.scalar(select(func.count()).select_from(m.GoldSighting))
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    set_disabled(engine, "b", True, actor=OPERATOR)
    with pytest.raises(Forbidden, match="disabled"):  # the page then shows no gold either
        record_gold_shown(engine, actors["b"], dataset_id, [ids["it-0"]])


def test_gold_of_an_item_waits_until_every_task_of_it_is_done(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Her spans on it-0 were done and overridden, her sentences on it not: the page showed gold's spans,
    answering the sentences she was still to label, and the lock would then have kept her from them."""
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a = actors["a"]
    assert a.id is not None
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    assign(engine, dataset_id, "sentences", [a.id], 1, actor=OPERATOR)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    own = human_label_set(engine, dataset_id, a.id)
    labeling.set_item_status(engine, own.id, ids["it-0"], "spans", "done", a.id)
    promote_item(
        engine,
        dataset_id,
        ids["it-0"],
        "spans",
        [(6, 10, None)],
        method="edit",
        sources=[],
        actor=actors["r"],
    )

    assert overrides_for(engine, dataset_id, a.id, open_items_hidden=True) == []
    assert {o.item_id for o in overrides_for(engine, dataset_id, a.id)} == {ids["it-0"]}  # not blind
    labeling.set_item_status(engine, own.id, ids["it-0"], "sentences", "done", a.id)
    assert {o.item_id for o in overrides_for(engine, dataset_id, a.id, open_items_hidden=True)} == {
        ids["it-0"]
    }


def test_the_next_item_is_never_one_whose_gold_was_shown(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An item she cannot label or finish (assigned to her again, say, after its gold was shown) came back
    as her next item every time, and "Open my next item" opened it again."""
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a, b = actors["a"], actors["b"]
    assert a.id is not None and b.id is not None
    mine = human_label_set(engine, dataset_id, a.id).id
    assert next_item(engine, dataset_id, mine, "spans", assigned_to=a.id) == "it-0"
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    assert next_item(engine, dataset_id, mine, "spans", assigned_to=a.id) == "it-1"
    theirs = human_label_set(engine, dataset_id, b.id).id
    assert next_item(engine, dataset_id, theirs, "spans", assigned_to=b.id) == "it-0"  # not hers: not locked


def test_an_item_locked_for_her_is_neither_done_nor_remaining_in_any_progress(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It-0 came back to her queue after its gold was shown to her: she could never finish it, yet every
    view of her progress counted it as still to do, so hers never reached the end ("1 remaining")."""
    dataset_id, ids, actors = _setup(engine, monkeypatch)
    a, b = actors["a"], actors["b"]
    assert a.id is not None and b.id is not None
    mine = human_label_set(engine, dataset_id, a.id).id
    # Taken from her unfinished, its gold shown to her (no longer open for her), then hers again.
    unassign(engine, dataset_id, "spans", a.id, actor=OPERATOR, only_unfinished=False)
    record_gold_shown(engine, a, dataset_id, [ids["it-0"]])
    assign(engine, dataset_id, "spans", [a.id], 1, actor=OPERATOR)
    for ext in ("it-1", "it-2"):
        labeling.set_item_status(engine, mine, ids[ext], "spans", "done", a.id)
    # One of hers done before gold was shown: it stays done, not locked.
    record_gold_shown(engine, a, dataset_id, [ids["it-1"]])

    header = queue.progress(engine, dataset_id, mine, "spans", assigned_to=a.id)
    assert (header.finished, header.locked, header.total, header.remaining) == (2, 1, 3, 0)
    assert header.fraction == 1.0
    home = queue.own_progress(engine, dataset_id, a.id, assigned_only=True)
    assert (home.finished, home.locked, home.total, home.remaining) == (2, 1, 3, 0)
    team = {
        p.name: (p.assigned, p.done, p.locked, p.remaining)
        for p in progress_by_annotator(engine, dataset_id, "spans")
    }
    assert team == {"a": (3, 2, 1, 0), "b": (3, 0, 0, 3)}
    assert [(r.external_id, r.finished, r.locked) for r in progress_by_item(engine, dataset_id, "spans")] == [
        ("it-0", 0, 1),
        ("it-1", 1, 0),
        ("it-2", 1, 0),
    ]
    # The other annotator's queue: nothing of hers is locked.
    theirs = human_label_set(engine, dataset_id, b.id).id
    other = queue.progress(engine, dataset_id, theirs, "spans", assigned_to=b.id)
    assert (other.locked, other.remaining) == (0, 3)
    # A reviewer's view of the whole dataset counts no lock either: nobody's locks are theirs.
    assert queue.progress(engine, dataset_id, mine, "spans").locked == 0
