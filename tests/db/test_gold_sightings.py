"""Gold shown to a blind annotator on Overridden labels waits until all their work on the item is done, on
every task of it: gold of one task answers another. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Actor
from db.importer import import_bundle
from db.repositories import labeling
from db.repositories.adjudication import overrides_for, promote_item
from db.repositories.annotators import get_or_create_annotator
from db.repositories.assignments import assign
from db.repositories.datasets import get_dataset
from db.repositories.label_sets import human_label_set
from formats.records import Bundle, DatasetRecord, ItemRecord


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
