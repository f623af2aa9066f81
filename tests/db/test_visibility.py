"""Who sees which label sets and items (db/repositories/visibility.py), and a dataset's team settings;
on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from db import models as m
from db.access import OPERATOR, Actor
from db.engine import read_session, write_session
from db.importer import import_bundle
from db.repositories.datasets import DatasetSettings, dataset_settings
from db.repositories.items import ItemFilter, count_items, item_page
from db.repositories.visibility import (
    EVERYTHING,
    LabelSight,
    assigned_item_ids,
    label_sight,
    sees_assigned_only,
    sight_for,
    visible_label_sets,
)
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord

ITEMS = [f"item-{k}" for k in range(6)]


def _bundle() -> Bundle:
    def label_set(kind: str, name: str, annotator: str | None = None) -> LabelSetRecord:
        return LabelSetRecord(
            kind=kind,
            name=name,
            annotator=annotator,
            annotations=[Annotations("item-0", spans=[SpanRecord(0, 3)])],
        )

    return Bundle(
        dataset=DatasetRecord("visibility", "canonical", label_kinds=["span"]),
        items=[ItemRecord(external_id=ext, response="One two three four.") for ext in ITEMS],
        label_sets=[
            label_set("gold", "gold"),
            label_set("human", "ann", "ann"),
            label_set("human", "olga", "olga"),
            label_set("detector", "eager"),
        ],
    )


@pytest.fixture
def dataset_id(engine: Engine) -> int:
    import_bundle(engine, _bundle(), source="test", actor=OPERATOR)
    with read_session(engine) as session:
        return session.scalar(select(m.Dataset.id).where(m.Dataset.name == "visibility"))


def _ids(engine: Engine, name: str) -> dict[str, int]:
    with read_session(engine) as session:
        annotator = session.scalar(select(m.Annotator.id).where(m.Annotator.name == name))
        items = {ext: item_id for ext, item_id in session.execute(select(m.Item.external_id, m.Item.id))}
    return {"annotator": annotator, **items}


def _set_settings(engine: Engine, dataset_id: int, settings: dict[str, object]) -> None:
    with write_session(engine) as session:
        session.get_one(m.Dataset, dataset_id).settings = settings


def test_settings_default_to_blind_without_preannotation(engine: Engine, dataset_id: int) -> None:
    assert dataset_settings(engine, dataset_id) == DatasetSettings(blind=True, allow_preannotation=False)
    assert dataset_settings(engine, dataset_id + 99) == DatasetSettings()
    _set_settings(engine, dataset_id, {"blind": False, "allow_preannotation": True, "other": 1})
    assert dataset_settings(engine, dataset_id) == DatasetSettings(blind=False, allow_preannotation=True)


@pytest.mark.parametrize(
    ("role", "settings", "expected"),
    [
        ("admin", DatasetSettings(), EVERYTHING),
        ("reviewer", DatasetSettings(), EVERYTHING),
        ("viewer", DatasetSettings(), LabelSight(gold=True, detectors=True, other_people=False)),
        ("annotator", DatasetSettings(), LabelSight(gold=False, detectors=False, other_people=False)),
        ("annotator", DatasetSettings(allow_preannotation=True), LabelSight(False, True, False)),
        ("annotator", DatasetSettings(blind=False), EVERYTHING),
        ("viewer", DatasetSettings(blind=False), EVERYTHING),
    ],
)
def test_sight_by_role_and_settings(
    monkeypatch: pytest.MonkeyPatch, role: str, settings: DatasetSettings, expected: LabelSight
) -> None:
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    assert sight_for(Actor(3, "someone", role), settings) == expected
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    assert sight_for(Actor(3, "someone", role), settings) == EVERYTHING


def test_visible_label_sets_of_an_annotator(
    engine: Engine, dataset_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    ann = Actor(_ids(engine, "ann")["annotator"], "ann", "annotator")
    names = lambda actor: [ls.name for ls in visible_label_sets(engine, actor, dataset_id)]  # noqa: E731
    assert names(ann) == ["ann"]
    _set_settings(engine, dataset_id, {"allow_preannotation": True})
    assert names(ann) == ["ann", "eager"]
    assert label_sight(engine, ann, dataset_id) == LabelSight(gold=False, detectors=True, other_people=False)
    assert names(Actor(9, "rev", "reviewer")) == ["gold", "ann", "olga", "eager"]
    assert [ls.name for ls in visible_label_sets(engine, ann, dataset_id, kind="human")] == ["ann"]
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    assert names(ann) == ["gold", "ann", "olga", "eager"]


def test_assigned_items_filter_what_an_annotator_browses(
    engine: Engine, dataset_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _ids(engine, "ann")
    with write_session(engine) as session:
        for task, ext in (
            ("spans", "item-1"),
            ("spans", "item-3"),
            ("sentences", "item-3"),
            ("claims", "item-4"),
        ):
            session.add(
                m.Assignment(
                    dataset_id=dataset_id, task=task, item_id=ids[ext], annotator_id=ids["annotator"]
                )
            )
    assert assigned_item_ids(engine, dataset_id, ids["annotator"]) == {
        ids["item-1"],
        ids["item-3"],
        ids["item-4"],
    }
    assert assigned_item_ids(engine, dataset_id, ids["annotator"], "spans") == {ids["item-1"], ids["item-3"]}
    assert assigned_item_ids(engine, dataset_id, ids["annotator"], "ratings") == set()
    flt = ItemFilter(assigned_to=ids["annotator"])
    assert count_items(engine, dataset_id, flt) == 3
    assert [r.external_id for r in item_page(engine, dataset_id, flt, 0, 10)] == [
        "item-1",
        "item-3",
        "item-4",
    ]
    assert count_items(engine, dataset_id, ItemFilter(text="item-3", assigned_to=ids["annotator"])) == 1
    assert count_items(engine, dataset_id, ItemFilter()) == len(ITEMS)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    assert sees_assigned_only(Actor(ids["annotator"], "ann", "annotator"))
    assert not sees_assigned_only(Actor(9, "rev", "reviewer"))
    monkeypatch.setenv("SPANLIGHT_MODE", "local")
    assert not sees_assigned_only(Actor(ids["annotator"], "ann", "annotator"))
