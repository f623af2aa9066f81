"""Blind annotation in team mode: what each role sees of other label sets on the Item, Browse and
annotation pages, by the dataset's settings (blind by default, pre-annotation off by default)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.team_store import assign, set_dataset_settings, signed_in

GOLD, ALICE, BOB = "Gold", "Annotator · alice", "Annotator · bob"
DETECTORS = [f"Detector · {name} simulated-1" for name in ("cautious", "eager", "sloppy")]
EVERYTHING = [GOLD, ALICE, BOB, *DETECTORS]


@pytest.fixture
def store(team_db: str) -> str:
    return team_db


def _page(name: str, page: str, **query: str) -> AppTest:
    at = signed_in(name, **query)
    at.query_params.update(query)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _spans_of(at: AppTest) -> list[str]:
    return list(at.selectbox(key="item_label_set").options)


@pytest.mark.parametrize(
    ("name", "settings", "expected"),
    [
        ("alice", {}, [ALICE]),
        ("alice", {"blind": True, "allow_preannotation": True}, [ALICE, *DETECTORS]),
        ("alice", {"blind": False}, EVERYTHING),
        ("rev", {}, EVERYTHING),
        ("adm", {}, EVERYTHING),
        ("vic", {}, [GOLD, *DETECTORS]),
    ],
)
def test_item_page_offers_only_the_label_sets_the_user_may_see(
    store: str, name: str, settings: dict[str, bool], expected: list[str]
) -> None:
    if settings:
        set_dataset_settings(store, **settings)
    at = _page(name, "item", item="demo-003")
    assert _spans_of(at) == expected
    claims = at.dataframe[0].value  # demo-003 has claims: a column per label set shown
    assert [c for c in claims.columns if c not in ("#", "claim", "from", "segment")] == expected


def test_item_page_hides_the_image_settings_from_all_but_admins(store: str) -> None:
    assert not [e for e in _page("rev", "item").expander if e.label == "Image settings"]
    assert [e for e in _page("adm", "item").expander if e.label == "Image settings"]


def test_annotator_browses_only_assigned_items_without_gold(store: str) -> None:
    assign(store, "alice", "spans", "demo-002", "demo-005")
    assign(store, "alice", "sentences", "demo-005", "demo-007")
    at = _page("alice", "browse")
    table = at.dataframe[0].value
    assert sorted(table["id"]) == ["demo-002", "demo-005", "demo-007"]
    assert "gold spans" not in table.columns
    assert "Gold says" not in [s.label for s in at.selectbox]
    assert any("**3** matching items" in md.value for md in at.markdown)
    reviewer = _page("rev", "browse")
    assert "gold spans" in reviewer.dataframe[0].value.columns
    assert any("**60** matching items" in md.value for md in reviewer.markdown)
    assert "Gold says" in [s.label for s in reviewer.selectbox]


def test_spans_page_shows_other_label_sets_only_where_allowed(store: str) -> None:
    assert not _page("alice", "spans", item="demo-004").sidebar.toggle
    set_dataset_settings(store, blind=True, allow_preannotation=True)
    at = _page("alice", "spans", item="demo-004")
    at.sidebar.toggle[0].set_value(True).run()
    assert list(at.sidebar.multiselect[0].options) == DETECTORS
    at = _page("rev", "spans", item="demo-004")
    at.sidebar.toggle[0].set_value(True).run()
    assert list(at.sidebar.multiselect[0].options) == [GOLD, ALICE, BOB, *DETECTORS]


def test_sentences_page_offers_gold_only_to_who_may_see_it(store: str) -> None:
    assert "Show gold labels" not in [t.label for t in _page("alice", "sentences", item="demo-004").toggle]
    assert "Show gold labels" in [t.label for t in _page("rev", "sentences", item="demo-004").toggle]


def test_rating_shows_the_detector_to_every_rater_and_gold_only_to_who_may_see_it(store: str) -> None:
    at = _page("alice", "rate", item="demo-001")
    assert any(md.value == "**Response** with the predicted spans of **eager**" for md in at.markdown)
    assert "rate_show_gold" not in [t.key for t in at.toggle]
    assert "rate_show_gold" in [t.key for t in _page("rev", "rate", item="demo-001").toggle]


@pytest.mark.parametrize("page", ["spans", "sentences", "claims"])
def test_a_link_to_an_item_assigned_to_someone_else_says_it_cannot_be_labeled(store: str, page: str) -> None:
    """Read, yes; but the page says so before the annotator's first label is refused."""
    assign(store, "alice", page, "demo-002")
    notice = "Item 'demo-004' is not assigned to you on the " + page + " task: you can read it, not label it."
    assert [w.value for w in _page("alice", page, item="demo-004").warning] == [notice]
    assert not _page("alice", page, item="demo-002").warning  # an item of her own
    assert not _page("rev", page, item="demo-004").warning  # reviewers label any item


@pytest.mark.parametrize(
    ("page", "label_keys", "mine", "theirs"),
    [
        (
            "sentences",
            ("sentence_now_correct", "sentence_now_incorrect", "sentence_now_unknown"),
            "002",
            "004",
        ),
        ("claims", ("claim_now_hallucination", "claim_now_non-hallucination"), "003", "007"),
        ("triplets", ("triplet_now_yes", "triplet_now_no"), "001", "005"),
        ("spans", ("spans_done",), "002", "004"),
    ],
)
def test_an_item_assigned_to_someone_else_draws_its_label_buttons_disabled(
    store: str, page: str, label_keys: tuple[str, ...], mine: str, theirs: str
) -> None:
    """The buttons looked active and their keys were taken, each press then refused."""
    assign(store, "alice", page, f"demo-{mine}")
    other = _page("alice", page, item=f"demo-{theirs}")
    own = _page("alice", page, item=f"demo-{mine}")
    for key in label_keys:
        assert next(b for b in other.button if b.key == key).disabled, key
        assert not next(b for b in own.button if b.key == key).disabled, key


def _key_reasons(at: AppTest) -> dict[str, str]:
    """What the page's keyboard says of each key that does nothing now (``unavailable``)."""
    keys = next(c for c in at.get("bidi_component") if c.proto.component_name == "spanlight_unit_keys")
    return dict(json.loads(keys.proto.json)["unavailable"])


@pytest.mark.parametrize(
    ("page", "task", "keys", "mine", "theirs"),
    [
        ("sentences", "sentences", ("e",), "002", "004"),
        ("claims", "claims", ("t", "w"), "003", "007"),
        ("triplets", "triplets", ("3", "4", "5"), "001", "005"),
        ("score_responses", "ratings", ("h", "g"), "001", "004"),
    ],
)
def test_on_an_item_assigned_to_someone_else_every_label_key_says_so(
    store: str, page: str, task: str, keys: tuple[str, ...], mine: str, theirs: str
) -> None:
    """E there said "press 2, then E", though 2 does nothing there either."""
    assign(store, "alice", task, f"demo-{mine}")
    said = _key_reasons(_page("alice", page, item=f"demo-{theirs}"))
    why = f"Item demo-{theirs} is assigned to someone else: you can read it, not label it."
    assert {key: said.get(key) for key in ("*", *keys)} == {key: why for key in ("*", *keys)}
    own = _key_reasons(_page("alice", page, item=f"demo-{mine}"))  # her own item: the page's reasons
    assert "*" not in own and why not in own.values()


def test_an_annotators_header_places_the_item_in_the_dataset_beside_their_queue(store: str) -> None:
    """It read "(5 of 2)": the item's place in the dataset over the size of the annotator's queue."""
    assign(store, "alice", "sentences", "demo-002", "demo-005")
    captions = [c.value for c in _page("alice", "sentences", item="demo-005").caption]
    assert any("(at 5 in the dataset · 2 assigned to you)" in c for c in captions), captions


def test_a_read_only_spans_page_does_not_say_how_to_mark_spans(store: str) -> None:
    """Its help said to drag over words or double-click one, on an item where neither does anything."""
    assign(store, "alice", "spans", "demo-002")
    other = [c.value for c in _page("alice", "spans", item="demo-004").caption]
    own = [c.value for c in _page("alice", "spans", item="demo-002").caption]
    assert not any(c.startswith("Drag over words") for c in other)
    assert any(c.startswith("Your spans on this item are shown as they are") for c in other)
    assert any(c.startswith("Drag over words") for c in own)


def _triplet_sources(at: AppTest) -> list[str]:
    return list(at.sidebar.selectbox(key="triplet_source").options)


def _page_text(at: AppTest) -> str:
    return "\n".join(
        [e.value for e in (*at.markdown, *at.caption, *at.info)]
        + [e.proto.body for e in at.get("html")]
        + [s.label for s in at.sidebar.selectbox]
    )


@pytest.mark.parametrize(
    ("name", "settings", "expected"),
    [
        ("alice", {}, ["Extracted triplets 1", "Extracted triplets 2"]),
        ("alice", {"blind": True, "allow_preannotation": True}, DETECTORS[:2]),
        ("alice", {"blind": False}, [GOLD, *DETECTORS[:2]]),
        ("rev", {}, [GOLD, *DETECTORS[:2]]),
    ],
)
def test_judge_triplets_offers_a_blind_annotator_no_one_elses_name(
    store: str, name: str, settings: dict[str, bool], expected: list[str]
) -> None:
    """A blind annotator was offered "Gold" and each detector by name, and shown gold's triplets on
    choosing it. Now gold is not offered and a detector's extraction goes unnamed; each still shows
    its triplets to judge, with no verdict but the annotator's own."""
    if settings:
        set_dataset_settings(store, **settings)
    at = _page(name, "triplets", item="demo-001")
    assert _triplet_sources(at) == expected
    for index in range(len(expected)):
        at.sidebar.selectbox(key="triplet_source").select_index(index).run()
        assert not at.exception, at.exception
        assert any("0 / " in md.value and "triplets judged" in md.value for md in at.markdown)
        assert [b for b in at.button if b.key == "triplet_now_yes"]  # triplets to judge
        if name == "alice" and not settings:
            shown = _page_text(at)
            for hidden in ("Gold", "cautious", "eager", "sloppy", "bob", "Detector"):
                assert hidden not in shown, hidden
