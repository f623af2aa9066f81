"""The browser's search answered from the texts held in memory finds exactly what the store's ``LIKE``
finds (on PostgreSQL, names every item its ``ILIKE`` finds), for the items of the reader's snapshot, as
items are added and datasets made again."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, event, select, text

from db import models as m
from db import text_index
from db.access import OPERATOR
from db.engine import make_engine, read_session
from db.importer import import_bundle, import_bundles
from db.repositories import items as items_module
from db.repositories import text_search
from db.repositories.datasets import delete_dataset, list_datasets
from db.repositories.items import ItemFilter, browse_page, item_page
from db.text_index import TextIndex
from formats.records import Bundle, DatasetRecord, ItemRecord

# Letters whose case only some folds ignore: SQLite's LIKE folds the ASCII ones alone.
TEXTS = [
    ("item-01", "Describe it.", "A Cube and a ball."),
    ("item-02", "", "ÉCOLE et école; STRASSE, Straße."),
    ("item-03", "Kelvin: \u212a", "50% of a_b is 100%."),
    ("Item-04", "İstanbul", "a cube, A CUBE, a cUbE."),
    ("item-05", "x", "no match here"),
]
NEEDLES = [
    "cube",
    "CUBE",
    "école",
    "École",
    "ÉCOLE",
    "strasse",
    "straße",
    "k",
    "\u212a",
    "50%",
    "a_b",
    "%",
    "_",
    "item-01",
    "ITEM-0",
    "01describe",
    "it.a",
    "istanbul",
    "i̇stanbul",
    "e",
    "zebra",
    "é",
]


def _import(engine: Engine, name: str, texts: list[tuple[str, str, str]]) -> int:
    items = [ItemRecord(external_id=ext, prompt=prompt, response=response) for ext, prompt, response in texts]
    import_bundle(engine, Bundle(DatasetRecord(name, "canonical"), items, []), actor=OPERATOR)
    return next(d.id for d in list_datasets(engine) if d.name == name)


@pytest.fixture
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    engine = make_engine(sqlite_url)
    yield engine
    engine.dispose()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    text_search.forget()
    yield
    text_search.forget()


def _from_memory(engine: Engine, dataset_id: int, needle: str, at_most: int = 100) -> list[int] | None:
    """The ids the texts held give (those that match on SQLite, those that may on PostgreSQL)."""
    with read_session(engine) as session:
        found = text_search.matching_items(engine, session, dataset_id, needle, at_most)
    if found is not None:
        assert found.exact == (engine.dialect.name == "sqlite")
    return None if found is None else found.ids


def _read(engine: Engine, dataset_id: int) -> None:
    """Start reading the dataset's texts (a first search) and wait for them."""
    _from_memory(engine, dataset_id, "anything")
    text_search.settle()


@pytest.mark.parametrize("needle", NEEDLES)
def test_the_texts_in_memory_find_what_the_store_finds(engine: Engine, needle: str) -> None:
    dataset_id = _import(engine, "search", TEXTS)
    expected = item_page(engine, dataset_id, ItemFilter(text=needle), 0, 100)  # the store's LIKE
    first = browse_page(engine, dataset_id, ItemFilter(text=needle), 1, 100)
    text_search.settle()
    again = browse_page(engine, dataset_id, ItemFilter(text=needle), 1, 100)
    assert first.rows == expected and again.rows == expected
    held = _from_memory(engine, dataset_id, needle)
    if engine.dialect.name == "sqlite":  # answered from memory the second time
        assert held == [row.id for row in expected]
    elif all(c >= "\x80" for c in needle):  # no character says which items may hold it
        assert held is None
    else:  # PostgreSQL's ILIKE folds letters by locale: the items that may hold it, every match among them
        assert held is not None and {row.id for row in expected} <= set(held)


def test_a_match_never_runs_from_one_text_into_the_next(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    dataset_id = _import(engine, "search", TEXTS)
    _read(engine, dataset_id)
    assert _from_memory(engine, dataset_id, "item-01describe") == []
    assert _from_memory(engine, dataset_id, "ball.item-02") == []
    assert _from_memory(engine, dataset_id, "\x00") == []


def test_more_matches_than_asked_for_stop_the_search_at_one_more(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    dataset_id = _import(engine, "search", TEXTS)
    _read(engine, dataset_id)
    with read_session(engine) as session:
        common = text_search.matching_items(engine, session, dataset_id, "e", 2)
        rare = text_search.matching_items(engine, session, dataset_id, "cube", 2)
    assert common is not None and len(common.ids) == 3 and not common.complete
    assert common.read == 3  # "e" is in the first three items
    assert rare is not None and len(rare.ids) == 2 and rare.complete and rare.read == len(TEXTS)


# Fifty items: "cube" in every fifth (found in memory, then read by id), "ball" in all but every fifth
# (so common that the store's own search in order reads few more rows than it keeps).
MANY = [
    (f"m-{k:02d}", "", ("A cube" if k % 5 == 0 else "A ball") + (" CUBE" if k % 10 == 3 else ""))
    for k in range(50)
]


def _store_says(engine: Engine, dataset_id: int, flt: ItemFilter) -> list[int]:
    """The ids of the items the store's own search finds, in order (no texts held are asked)."""
    return [row.id for row in item_page(engine, dataset_id, flt, 0, 1000)]


@pytest.mark.parametrize(
    "flt",
    [
        ItemFilter(text="cube"),
        ItemFilter(text="ball"),
        ItemFilter(text="CUBE", external_ids=("m-03", "m-13", "m-45")),  # found first, then kept to fewer
        ItemFilter(text="cube", hallucinated=False),
        ItemFilter(text="zebra"),
    ],
    ids=["sparse", "dense", "fewer kept", "with gold", "none"],
)
def test_a_page_of_matches_found_in_memory_is_the_stores_page(engine: Engine, flt: ItemFilter) -> None:
    """Whether the texts held give every match or only the first ones, each page and the count are what
    the store's own search gives."""
    dataset_id = _import(engine, "search", MANY)
    _read(engine, dataset_id)
    _pages_as_the_store_gives_them(engine, dataset_id, flt)


@pytest.mark.parametrize("needle", ["cube", "m-13", "zebra"])
def test_a_page_past_the_ids_handed_to_the_store_is_the_stores_page(
    engine: Engine, needle: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deep pages of a word held by more items than the store is handed ids of: the store searches (a
    word held by fewer is still found in memory)."""
    monkeypatch.setattr(items_module, "MAX_FOUND_IDS", 4)
    dataset_id = _import(engine, "search", MANY)
    _read(engine, dataset_id)
    _pages_as_the_store_gives_them(engine, dataset_id, ItemFilter(text=needle))


def test_pages_of_items_sharing_positions_and_subsets_are_the_stores_pages(engine: Engine) -> None:
    """Items sharing a position are in id order, in memory as in the store; a subset kept after the
    first matches are found is the store's page too."""
    dataset_id = _import(engine, "search", MANY)
    with engine.begin() as connection:  # pairs of items on one position, in reverse; every third in a subset
        connection.execute(
            text(
                "UPDATE items SET position = (60 - position) / 2,"
                " subset = CASE WHEN position % 3 = 0 THEN 'x' END"
            )
        )
    _read(engine, dataset_id)
    for flt in (ItemFilter(text="cube"), ItemFilter(text="cube", subsets=("x",)), ItemFilter(text="ball")):
        _pages_as_the_store_gives_them(engine, dataset_id, flt)


def _pages_as_the_store_gives_them(engine: Engine, dataset_id: int, flt: ItemFilter) -> None:
    expected = _store_says(engine, dataset_id, flt)
    for count_bound in (1, 3, 12, 1000):
        for page in (1, 2, 3, 7):
            got = browse_page(engine, dataset_id, flt, page, 2, count_bound=count_bound)
            bound = max(count_bound, page * 2)
            assert got.counted_all == (len(expected) <= bound)
            assert got.n_matching == (len(expected) if got.counted_all else bound)
            shown = min(page, max(1, -(-min(len(expected), bound + 1) // 2)))
            assert got.page == shown
            assert [r.id for r in got.rows] == expected[(shown - 1) * 2 : shown * 2]


def test_a_word_found_in_memory_is_read_by_id(engine: Engine) -> None:
    """A word in one item of five, found in the texts held, is read from the store by id: on SQLite its
    texts are not searched again, and on PostgreSQL only those items' are."""
    dataset_id = _import(engine, "search", MANY)
    _read(engine, dataset_id)
    said: list[str] = []

    def note(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        said.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        page = browse_page(engine, dataset_id, ItemFilter(text="cube"), 1, 2, count_bound=3)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert [r.external_id for r in page.rows] == ["m-00", "m-03"]
    (ids_query,) = [q for q in said if "ORDER BY" in q and "LIMIT" in q]
    if engine.dialect.name == "sqlite":
        assert " IN (" in ids_query and "LIKE" not in ids_query.upper()
    else:
        assert "= ANY (" in ids_query and "ILIKE" in ids_query.upper()


def test_items_added_later_are_found(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    dataset_id = _import(engine, "search", TEXTS)
    _read(engine, dataset_id)
    _import(engine, "search", [("item-06", "", "A zebra.")])
    # Held texts older than the store: the store answers while the new items are read.
    assert _from_memory(engine, dataset_id, "zebra") is None
    assert [r.external_id for r in browse_page(engine, dataset_id, ItemFilter(text="zebra"), 1, 10).rows] == [
        "item-06"
    ]
    text_search.settle()
    found = _from_memory(engine, dataset_id, "zebra", 10)
    assert found is not None and len(found) == 1


def test_a_reader_older_than_the_texts_held_is_answered_by_the_store(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    dataset_id = _import(engine, "search", TEXTS)
    with read_session(engine) as older:
        older.connection()  # its snapshot starts with its first read
        assert text_search.matching_items(engine, older, dataset_id, "zebra", 10) is None
        text_search.settle()
        _import(engine, "search", [("item-06", "", "A zebra.")])
        _read(engine, dataset_id)
        assert _from_memory(engine, dataset_id, "zebra") is not None
        # This reader does not see item-06: the texts held do.
        assert text_search.matching_items(engine, older, dataset_id, "zebra", 10) is None


def test_a_dataset_made_again_under_the_same_id_is_read_again(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    dataset_id = _import(engine, "search", TEXTS)
    _read(engine, dataset_id)
    assert delete_dataset(engine, "search", actor=OPERATOR)
    again = _import(engine, "search", [("item-01", "", "A zebra.")])
    assert again == dataset_id  # SQLite gives the freed id again
    assert _from_memory(engine, again, "zebra") is None  # the texts held are another dataset's
    text_search.settle()
    assert _from_memory(engine, again, "zebra") == [
        next(r.id for r in item_page(engine, again, ItemFilter(), 0, 10))
    ]
    assert _from_memory(engine, again, "cube") == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.lists(st.text(st.sampled_from("abAB é\u212a"), max_size=12), min_size=3, max_size=3), max_size=30
    ),
    needle=st.text(st.sampled_from("abAB é"), min_size=1, max_size=4),
    block=st.integers(1, 40),
)
def test_blocks_of_any_size_find_every_match(texts: list[list[str]], needle: str, block: int) -> None:
    original = text_index.BLOCK_BYTES
    text_index.BLOCK_BYTES = block  # many blocks, a match at every place in one
    try:
        index = (
            TextIndex.empty()
            .extended(enumerate(texts[:15]))
            .extended((k + 15, t) for k, t in enumerate(texts[15:]))
        )
    finally:
        text_index.BLOCK_BYTES = original
    folded = text_index.folded(needle)
    expected = [k for k, t in enumerate(texts) if any(folded in text_index.folded(s) for s in t)]
    assert index.matching(needle, 100).ids == expected
    # Asked for fewer: the search stops at the first one more, having read the items up to it.
    at_most = max(0, len(expected) - 2)
    stopped = index.matching(needle, at_most)
    assert stopped.ids == expected[: at_most + 1]
    assert stopped.read == (expected[at_most] + 1 if len(expected) > at_most else len(texts))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.lists(st.text(st.sampled_from("abiIkK éÉ\u212a\u0130ı%"), max_size=12), min_size=3, max_size=3),
        max_size=30,
    ),
    needle=st.text(st.sampled_from("abABiIkK éÉ\u212a\u0130ı%"), min_size=1, max_size=4),
    block=st.integers(1, 40),
)
@example(texts=[["the \u212aelvin sign", "", ""]], needle="kelvin", block=8)  # folds into k
@example(texts=[["", "\u0130stanbul", ""]], needle="istanbul", block=8)  # into i, and a dot
@example(texts=[["", "", "ISTANBUL"]], needle="ıstanbul", block=8)  # I into ı, in a Turkish locale
@example(texts=[["", "", "ılık"]], needle="ILIK", block=8)
def test_candidates_hold_every_item_a_locale_folding_every_letter_matches(
    texts: list[list[str]], needle: str, block: int
) -> None:
    original = text_index.BLOCK_BYTES
    text_index.BLOCK_BYTES = block
    try:
        index = TextIndex.empty(every_case=True).extended(enumerate(texts))
    finally:
        text_index.BLOCK_BYTES = original
    hits = index.candidates(needle, 100)
    if hits is None:  # nothing in the word says which items may hold it
        assert all(c >= "\x80" for c in needle)
        return
    found = hits.ids
    # Every letter folded, as a locale does (Python's own folding: the Kelvin sign to k, İ to i and a dot),
    # and, as in a Turkish locale, I to ı and İ to i.
    for fold in (str.lower, lambda t: t.replace("I", "ı").replace("\u0130", "i").lower()):
        wanted = fold(needle)
        matches = {k for k, t in enumerate(texts) if any(wanted in fold(s) for s in t)}
        assert matches <= set(found)
    assert found == sorted(found)


def test_a_word_of_no_ascii_character_is_left_to_the_store() -> None:
    index = TextIndex.empty(every_case=True).extended([(1, ["Kelvin \u212a", "İstanbul"]), (2, ["ılık"])])
    assert index.candidates("\u212a", 10) is None
    assert index.candidates("é", 10) is None
    for needle, ids in [("\x00", []), ("ISTANBUL", [1]), ("kk", []), ("k", [1, 2]), ("zebra", [])]:
        hits = index.candidates(needle, 10)
        assert hits is not None and hits.ids == ids
    hits = index.candidates("ILIK", 10)
    assert hits is not None and hits.ids == [2]  # Turkish: ı is I's lower case
    with pytest.raises(ValueError):
        index.matching("zebra", 10)
    with pytest.raises(ValueError):
        TextIndex.empty().candidates("zebra", 10)


def test_an_import_appending_to_a_dataset_waits_for_another_appending_to_it(engine: Engine) -> None:
    """Two imports appending to one dataset at once gave their items the same positions on PostgreSQL:
    the texts read after the first committed, up to its last position, then missed the items the second
    committed there later. The second now waits, and its items come after."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time")
    dataset_id = _import(engine, "search", TEXTS)
    gates = {name: (threading.Event(), threading.Event()) for name in ("first", "second")}

    def batches(name: str, *records: tuple[str, str]) -> Iterator[Bundle]:
        asked, go_on = gates[name]
        for ext, response in records:
            yield Bundle(DatasetRecord("search", "canonical"), [ItemRecord(ext, "", response)], [])
            asked.set()  # asked for its next batch: this one is written, in its open transaction
            go_on.wait(60)

    def importing(name: str, *records: tuple[str, str]) -> threading.Thread:
        thread = threading.Thread(
            target=lambda: import_bundles(engine, batches(name, *records), actor=OPERATOR, problems=[]),
            daemon=True,
        )
        thread.start()
        return thread

    first = importing("first", ("a-1", "An alpaca."), ("a-2", "A bison."))
    assert gates["first"][0].wait(60)
    second = importing("second", ("b-1", "A camel."))
    with engine.connect() as connection:  # the second waits for the first (before: went on, or not)
        while (
            second.is_alive()
            and not connection.execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar()
        ):
            connection.rollback()
    gates["first"][1].set()
    first.join(60)
    assert gates["second"][0].wait(60)  # written, not committed
    _read(engine, dataset_id)
    assert _from_memory(engine, dataset_id, "bison") is not None
    gates["second"][1].set()
    second.join(60)
    with read_session(engine) as session:
        query = select(m.Item.external_id, m.Item.position).where(m.Item.dataset_id == dataset_id)
        positions = {ext: position for ext, position in session.execute(query)}
    assert positions["a-1"] < positions["a-2"] < positions["b-1"]
    _read(engine, dataset_id)
    for word, ext in (("alpaca", "a-1"), ("bison", "a-2"), ("camel", "b-1")):
        assert [
            r.external_id for r in browse_page(engine, dataset_id, ItemFilter(text=word), 1, 10).rows
        ] == [ext]
        held = _from_memory(engine, dataset_id, word)
        assert held is not None and held == [
            next(r.id for r in item_page(engine, dataset_id, ItemFilter(text=word), 0, 1))
        ]
