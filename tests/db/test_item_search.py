"""Searching items: the typed text matches literally, LIKE wildcards included, in either case."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.datasets import list_datasets
from db.repositories.items import ItemFilter, count_items, item_page
from formats.records import Bundle, DatasetRecord, ItemRecord

RESPONSES = {
    "plain": "A red cube and a blue ball.",
    "percent": "The cube covers 50% of the image.",
    "fifty": "The cube covers 500 pixels.",
    "under_score": "A sign reads a_b.",
    "axb": "A sign reads axb.",
    "slash": "A path a/b and a back\\slash.",
}


@pytest.fixture
def dataset_id(engine: Engine) -> int:
    items = [
        ItemRecord(external_id=key, response=text, prompt="Describe.") for key, text in RESPONSES.items()
    ]
    import_bundle(
        engine,
        Bundle(dataset=DatasetRecord("search", "canonical"), items=items, label_sets=[]),
        actor=OPERATOR,
    )
    return next(d.id for d in list_datasets(engine) if d.name == "search")


def _found(engine: Engine, dataset_id: int, text: str) -> list[str]:
    flt = ItemFilter(text=text)
    rows = item_page(engine, dataset_id, flt, 0, 100)
    assert count_items(engine, dataset_id, flt) == len(rows)
    return sorted(r.external_id for r in rows)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("50%", ["percent"]),
        ("%", ["percent"]),
        ("a_b", ["under_score"]),
        ("_", ["under_score"]),
        ("a/b", ["slash"]),
        ("k\\s", ["slash"]),
        ("RED CUBE", ["plain"]),
        ("  cube covers  ", ["fifty", "percent"]),
        ("", sorted(RESPONSES)),
    ],
)
def test_search_matches_the_typed_characters(
    engine: Engine, dataset_id: int, text: str, expected: list[str]
) -> None:
    assert _found(engine, dataset_id, text) == expected


def test_search_looks_at_ids_too(engine: Engine, dataset_id: int) -> None:
    assert _found(engine, dataset_id, "under_") == ["under_score"]
