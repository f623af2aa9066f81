"""Rate detector outputs on a blind dataset in team mode: an annotator who has still to label an item
(their spans of it, say) is shown no detector's spans on it, but why, and a way to that labeling; their
rating queue passes over such items, and says so when only those are left. Reviewers and datasets that
are not blind see the detector as before."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from streamlit.testing.v1 import AppTest

from db import models as m
from db.engine import make_engine
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set
from render.literal_text import literal
from tests.pages.team_store import assign, set_dataset_settings, signed_in
from tests.pages.test_blind_visibility import _key_reasons

DETECTOR = "**Response** with the predicted spans of **eager**"
HELD = (
    "Rate this item after you finish labeling it on: spans. This dataset is blind: a detector's output "
    "here would answer part of what you have still to label on it."
)


@pytest.fixture
def store(team_db: str) -> str:
    return team_db


def _rate(name: str, **query: str) -> AppTest:
    at = signed_in(name, **query)
    at.query_params.update(query)
    at.switch_page("app_pages/rate.py").run()
    assert not at.exception, at.exception
    return at


def _shows_detector(at: AppTest) -> bool:
    return any(md.value == DETECTOR for md in at.markdown) or any(
        "segment 1" in h.proto.body for h in at.get("html")
    )


def _spans_done(url: str, name: str, external_id: str) -> None:
    """The annotator finished their spans of the item (the status the spans page writes)."""
    engine = make_engine(url)
    who = get_or_create_annotator(engine, name)
    item = get_item(engine, 1, external_id)
    assert item is not None
    own = human_label_set(engine, 1, who.id)
    labeling.sync_done(engine, own.id, item.id, "spans", True, who.id)
    engine.dispose()


def test_an_item_whose_spans_are_still_to_mark_shows_no_detector_but_why(store: str) -> None:
    """QA: "Response with the predicted spans of eager" on an item whose spans she had still to mark."""
    assign(store, "alice", "spans", "demo-001")
    assign(store, "alice", "ratings", "demo-001", "demo-002")
    at = _rate("alice", item="demo-001")
    assert [i.value for i in at.info] == [HELD]
    assert not _shows_detector(at)
    links = {link.proto.page: link.proto for link in at.get("page_link")}
    assert links["spans"].query_string == "dataset=Spanlight+demo+%28synthetic%29&item=demo-001"
    assert not [b for b in at.button if b.key and b.key.startswith("rate_")]  # nothing to rate with

    opened = _rate("alice")  # her next item is the one she may rate
    assert opened.query_params["item"] == "demo-002"
    assert _shows_detector(opened) and not opened.info

    assert _shows_detector(_rate("rev", item="demo-001"))  # a reviewer sees every detector


def test_once_the_spans_are_done_the_detector_is_shown(store: str) -> None:
    assign(store, "alice", "spans", "demo-001")
    assign(store, "alice", "ratings", "demo-001")
    at = _rate("alice")
    assert [i.value for i in at.info] == [
        "No item is ready for you to rate now. 1 item(s) assigned to you here wait until you finish "
        "labeling them on: spans (1 item). A detector's output on them would answer part of that labeling."
    ]
    assert not at.success  # not "every item is done"
    assert "spans" in {link.proto.page for link in at.get("page_link")}

    _spans_done(store, "alice", "demo-001")
    at = _rate("alice")
    assert _shows_detector(at) and not at.info


@pytest.mark.parametrize("settings", [{"blind": False}, {"blind": True, "allow_preannotation": True}])
def test_a_dataset_that_shows_detectors_while_labeling_holds_nothing_back(
    store: str, settings: dict[str, bool]
) -> None:
    assign(store, "alice", "spans", "demo-001")
    assign(store, "alice", "ratings", "demo-001")
    set_dataset_settings(store, **settings)
    at = _rate("alice", item="demo-001")
    assert _shows_detector(at) and not at.info


def test_n_says_the_other_items_wait_for_her_labeling(store: str) -> None:
    """N with only held items left said "every other one is done, skipped or locked", beside a notice
    that they wait for her labeling."""
    assign(store, "alice", "spans", "demo-001")
    assign(store, "alice", "ratings", "demo-001", "demo-002")
    at = _rate("alice", item="demo-002")
    assert _shows_detector(at)
    assert next(b for b in at.button if b.key == "frame_next").disabled
    assert _key_reasons(at)["n"] == (
        "No other item is ready for you to rate now. 1 item(s) assigned to you here wait until you finish "
        "labeling them on: spans (1 item). A detector's output on them would answer part of that labeling."
    )


def _bar(at: AppTest) -> str:
    (bar,) = at.get("progress")
    return str(bar.proto.text)


def test_the_header_says_how_many_of_her_items_are_held_back(store: str) -> None:
    """It read "0 / 5 done" with 3 of the 5 held back: as if 5 waited for her rating, while N offered 2."""
    assign(store, "alice", "spans", "demo-001", "demo-002", "demo-003")
    assign(store, "alice", "ratings", "demo-001", "demo-002", "demo-003", "demo-004", "demo-005")
    held = "0 / 5 done · 3 held back until your labeling is done"
    assert _bar(_rate("alice", item="demo-004")) == held
    assert _bar(_rate("alice", item="demo-001")) == held  # on an item held back, too
    _spans_done(store, "alice", "demo-001")
    assert _bar(_rate("alice", item="demo-004")) == "0 / 5 done · 2 held back until your labeling is done"
    assert _bar(_rate("rev", item="demo-004")).endswith(" done")  # a reviewer's queue holds nothing back


def _rating_statuses(url: str) -> list[tuple[str, str]]:
    """Every status on a rating campaign's queue in the store (page, status)."""
    engine = make_engine(url)
    query = select(m.ItemStatus.page, m.ItemStatus.status).where(m.ItemStatus.page.startswith("rating:"))
    with Session(engine) as session:
        found = [(page, status) for page, status in session.execute(query)]
    engine.dispose()
    return found


@pytest.mark.parametrize(
    ("button", "status"), [("frame_flag_skipped", "skipped"), ("frame_flag_unsure", "unsure")]
)
def test_a_mark_sent_from_a_page_drawn_before_the_item_was_held_back_is_refused_in_plain_words(
    store: str, button: str, status: str
) -> None:
    """Her tab showed demo-001 to rate; then its spans were assigned to her, and "Skip this item" from
    that tab was saved: the item left her rating queue before she had labeled it."""
    assign(store, "alice", "ratings", "demo-001")
    at = _rate("alice", item="demo-001")
    assert _shows_detector(at)
    assign(store, "alice", "spans", "demo-001")
    at.button(key=button).click().run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [
        literal(
            f"Item 'demo-001' was not marked {status}: it is held back from your rating until your "
            f"labeling of it is done. {HELD}"
        )
    ]
    assert [i.value for i in at.info] == [HELD] and not _shows_detector(at)
    assert _rating_statuses(store) == []
    at.run()  # said once, not again on the next drawing
    assert not at.error
