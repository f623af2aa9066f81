"""The browser's pages: a search counts its matches up to a bound, index filters count them all, and
every page holds exactly the matches :func:`item_page` lists there."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.datasets import list_datasets
from db.repositories.items import ItemFilter, browse_page, count_items, item_page
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SpanRecord,
)

N_ITEMS = 30


@pytest.fixture
def dataset_id(engine: Engine) -> int:
    # Every item says "cube"; every third says "ball" too; items 0-9 come from model "a".
    items = [
        ItemRecord(
            external_id=f"item-{k:02d}",
            response="A cube and a ball." if k % 3 == 0 else "A cube.",
            source_model="a" if k < 10 else "b",
        )
        for k in range(N_ITEMS)
    ]
    gold = [Annotations(f"item-{k:02d}", spans=[SpanRecord(2, 6)]) for k in range(0, N_ITEMS, 2)]
    import_bundle(
        engine,
        Bundle(
            DatasetRecord("browse", "canonical"), items, [LabelSetRecord("gold", "gold", annotations=gold)]
        ),
        actor=OPERATOR,
    )
    return next(d.id for d in list_datasets(engine) if d.name == "browse")


def _ids(rows: list) -> list[str]:
    return [r.external_id for r in rows]


def test_a_search_counts_up_to_the_bound_and_knows_the_next_page(engine: Engine, dataset_id: int) -> None:
    flt = ItemFilter(text="CUBE")
    found = browse_page(engine, dataset_id, flt, 1, 5, count_bound=10)
    assert not found.counted_all
    assert found.n_matching == 10  # more than ten match
    assert found.n_pages == 3  # the eleventh match is on page 3
    assert _ids(found.rows) == [f"item-{k:02d}" for k in range(5)]

    later = browse_page(engine, dataset_id, flt, 3, 5, count_bound=10)
    assert (later.page, later.n_pages, later.n_matching, later.counted_all) == (3, 4, 15, False)
    assert _ids(later.rows) == [f"item-{k:02d}" for k in range(10, 15)]


def test_a_search_past_its_last_page_counts_all_and_shows_the_last_page(
    engine: Engine, dataset_id: int
) -> None:
    found = browse_page(engine, dataset_id, ItemFilter(text="cube"), 9, 7, count_bound=10)
    assert (found.page, found.n_pages, found.n_matching, found.counted_all) == (5, 5, N_ITEMS, True)
    assert _ids(found.rows) == ["item-28", "item-29"]


def test_a_search_within_the_bound_is_counted_exactly(engine: Engine, dataset_id: int) -> None:
    found = browse_page(engine, dataset_id, ItemFilter(text="ball"), 1, 4, count_bound=10)
    assert (found.n_matching, found.counted_all, found.n_pages) == (10, True, 3)
    assert _ids(found.rows) == ["item-00", "item-03", "item-06", "item-09"]


def test_a_search_without_a_match_has_one_empty_page(engine: Engine, dataset_id: int) -> None:
    found = browse_page(engine, dataset_id, ItemFilter(text="zebra"), 3, 5, count_bound=10)
    assert (found.rows, found.page, found.n_pages, found.n_matching, found.counted_all) == ([], 1, 1, 0, True)


def test_filters_an_index_answers_are_counted_past_the_bound(engine: Engine, dataset_id: int) -> None:
    found = browse_page(engine, dataset_id, ItemFilter(source_models=("b",)), 2, 5, count_bound=3)
    assert (found.n_matching, found.counted_all, found.n_pages) == (20, True, 4)
    assert _ids(found.rows) == [f"item-{k:02d}" for k in range(15, 20)]


def test_what_gold_says_is_counted_like_a_search(engine: Engine, dataset_id: int) -> None:
    found = browse_page(engine, dataset_id, ItemFilter(hallucinated=False), 1, 5, count_bound=5)
    assert (found.n_matching, found.counted_all) == (5, False)
    assert _ids(found.rows) == [f"item-{k:02d}" for k in range(1, 11, 2)]
    assert found.rows[0].n_gold_spans == 0
    flagged = browse_page(engine, dataset_id, ItemFilter(hallucinated=True), 1, 5, count_bound=100)
    assert flagged.rows[0].n_gold_spans == 1 and flagged.n_matching == 15


@pytest.mark.parametrize(
    "flt",
    [
        ItemFilter(),
        ItemFilter(text="ball"),
        ItemFilter(text="cube", source_models=("a",)),
        ItemFilter(text="item-1"),
        ItemFilter(hallucinated=True, text="ball"),
    ],
)
def test_the_pages_hold_the_matches_item_page_lists(engine: Engine, dataset_id: int, flt: ItemFilter) -> None:
    expected = item_page(engine, dataset_id, flt, 0, 1000)
    pages, page = [], 1
    while True:
        found = browse_page(engine, dataset_id, flt, page, 4, count_bound=6)
        pages.extend(found.rows)
        if found.page == found.n_pages:
            assert found.counted_all and found.n_matching == count_items(engine, dataset_id, flt)
            break
        page += 1
    assert pages == expected


def test_page_size_must_be_positive(engine: Engine, dataset_id: int) -> None:
    with pytest.raises(ValueError, match="page_size"):
        browse_page(engine, dataset_id, ItemFilter(), 1, 0)
