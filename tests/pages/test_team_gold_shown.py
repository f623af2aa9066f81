"""The Team page's "Gold shown": to whom gold of which items was shown (and so locked), for admins and,
read only, reviewers; an admin lifts one lock or all of an annotator's, each only after confirming.
Team mode, on the demo with one account per role."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from db.access import Actor
from db.engine import make_engine
from db.repositories.annotators import find_annotator
from db.repositories.gold_sightings import gold_seen, record_gold_shown
from db.repositories.items import get_item
from tests.hostile_store import shown
from tests.pages.team_store import USERS, signed_in

ITEMS = ("demo-007", "demo-008")


def _show_gold_to_alice(url: str) -> tuple[int, dict[str, int]]:
    """Gold of :data:`ITEMS` shown to alice (as the Overridden labels page records it)."""
    engine = make_engine(url)
    alice = find_annotator(engine, USERS["annotator"])
    assert alice is not None
    ids = {}
    for external_id in ITEMS:
        item = get_item(engine, 1, external_id)
        assert item is not None
        ids[external_id] = item.id
    record_gold_shown(engine, Actor(alice.id, alice.name, "annotator"), 1, ids.values())
    engine.dispose()
    return alice.id, ids


def _locked(url: str, alice: int, ids: dict[str, int]) -> list[str]:
    engine = make_engine(url)
    try:
        return [ext for ext, item_id in ids.items() if gold_seen(engine, alice, item_id) is not None]
    finally:
        engine.dispose()


def _team(role: str) -> AppTest:
    at = signed_in(USERS[role])
    at.switch_page("app_pages/team.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def _click(at: AppTest, label: str) -> AppTest:
    _button(at, label).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _gold_table(at: AppTest):
    tab = next(t for t in at.tabs if t.label == "Gold shown")
    return tab.dataframe[0].value


def test_an_admin_lifts_one_lock_then_the_rest_each_after_confirming(team_db: str) -> None:
    alice, ids = _show_gold_to_alice(team_db)
    at = _team("admin")
    table = _gold_table(at)
    assert sorted(table["item"]) == list(ITEMS)
    assert set(table["annotator"]) == {"alice"} and set(table["page"]) == {"Overridden labels"}
    assert table["locked"].tolist() == [True, True] and set(table["lifted by"]) == {"—"}

    # One item: "Lift…" asks first, and Cancel lifts nothing.
    at.selectbox(key="team_lift_who").set_value(alice)
    at.selectbox(key="team_lift_item").set_value(ids["demo-007"])
    _click(at, "Lift…")
    [question] = [w.value for w in at.warning]
    assert shown(question).startswith("Lift the lock of 'alice' on 1 item(s): 'demo-007'? ")
    assert _locked(team_db, alice, ids) == list(ITEMS)
    _click(at, "Cancel")
    assert not at.warning and _locked(team_db, alice, ids) == list(ITEMS)

    at.selectbox(key="team_lift_item").set_value(ids["demo-007"])
    _click(at, "Lift…")
    _click(at, "Confirm lift")
    assert _locked(team_db, alice, ids) == ["demo-008"]
    assert [shown(s.value) for s in at.success] == [
        "Lifted the lock of 'alice' on 1 item(s): 'demo-007'. They may change their labels there again; "
        "the records stay, marked lifted."
    ]
    rows = _gold_table(at).set_index("item")
    assert (rows.loc["demo-007", "locked"], rows.loc["demo-007", "lifted by"]) == (False, "adm")
    assert rows.loc["demo-007", "lifted"].endswith(" UTC")
    assert (rows.loc["demo-008", "locked"], rows.loc["demo-008", "lifted by"]) == (True, "—")

    # All that is left of hers: the default choice.
    assert at.selectbox(key="team_lift_item").value is None
    _click(at, "Lift…")
    assert shown(at.warning[0].value).startswith("Lift the lock of 'alice' on 1 item(s): 'demo-008'? ")
    _click(at, "Confirm lift")
    assert _locked(team_db, alice, ids) == []
    assert not [b for b in at.button if b.label == "Lift…"]
    assert "No lock is left to lift: every record above was lifted." in [c.value for c in at.caption]
    assert len(_gold_table(at)) == 2  # the records stay


def test_reviewers_see_the_records_but_cannot_lift(team_db: str) -> None:
    alice, ids = _show_gold_to_alice(team_db)
    at = _team("reviewer")
    assert [s.value for s in at.subheader] == ["Gold shown"]
    gold = at.dataframe[-1].value
    assert sorted(gold["item"]) == list(ITEMS)
    assert not [b for b in at.button if b.label in ("Lift…", "Confirm lift")]
    assert _locked(team_db, alice, ids) == list(ITEMS)


def test_with_no_gold_shown_the_section_says_so(team_db: str) -> None:
    at = _team("admin")
    tab = next(t for t in at.tabs if t.label == "Gold shown")
    assert [i.value for i in tab.info] == ["No gold has been shown to a blind annotator on this dataset."]
