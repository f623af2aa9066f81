"""Claim and triplet pages: verdicts, types and reasons, wrong parts, done when complete."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from db.repositories.annotations import item_annotations, judged_triplets
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from db.repositories.queue import item_status
from tests.pages.demo_store import APP, DEMO, demo_store


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(page: str, item: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "item": item, "user": "tester"})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _click(at: AppTest, key: str) -> None:
    next(b for b in at.button if b.key == key).click().run()
    assert not at.exception, at.exception


def _tester(engine):
    return next(v for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == "tester")


def _box(widgets, field: str, claim_id: int):
    """A claim's Type or Reason box (keyed by the claim and the label it shows)."""
    (box,) = [w for w in widgets if w.key.startswith(f"claim_{field}_{claim_id}_")]
    return box


def _only(widgets, label: str):
    (box,) = [w for w in widgets if w.label == label]
    return box


def test_claims_verdict_type_reason_and_done(store: str) -> None:
    engine = make_engine(store)
    item = get_item(engine, 1, "demo-003")
    assert item.claims
    at = _open("app_pages/claims.py", "demo-003")
    first = item.claims[0]
    _click(at, "claim_now_hallucination")
    _box(at.selectbox, "type", first.id).set_value("object").run()
    _box(at.text_input, "reason", first.id).input("no such object").run()
    ls = _tester(engine)
    saved = item_annotations(engine, item.id, [ls.id])[ls.id].claim_labels[0]
    assert (saved.label, saved.type, saved.reason) == ("hallucination", "object", "no such object")
    for _ in item.claims[1:]:
        _click(at, "claim_now_non-hallucination")  # the keyed buttons follow the cursor
    assert item_status(engine, ls.id, item.id, "claims").status == "done"


def test_a_claim_judged_again_as_no_hallucination_loses_its_type_and_keeps_its_reason(store: str) -> None:
    engine = make_engine(store)
    item = get_item(engine, 1, "demo-003")
    at = _open("app_pages/claims.py", "demo-003")
    first = item.claims[0]
    _click(at, "claim_now_hallucination")
    _box(at.selectbox, "type", first.id).set_value("object").run()
    _box(at.text_input, "reason", first.id).input("the sign says CAFE").run()
    _click(at, "claim_prev")
    _click(at, "claim_now_non-hallucination")
    ls = _tester(engine)
    saved = item_annotations(engine, item.id, [ls.id])[ls.id].claim_labels[0]
    assert (saved.label, saved.type, saved.reason) == ("non-hallucination", None, "the sign says CAFE")
    # The reason stays in sight, and can be changed: no type box for a claim that is no hallucination.
    assert _box(at.text_input, "reason", first.id).value == "the sign says CAFE"
    assert not [b for b in at.selectbox if b.key.startswith(f"claim_type_{first.id}_")]
    _box(at.text_input, "reason", first.id).input("the sign does say CAFE").run()
    saved = item_annotations(engine, item.id, [ls.id])[ls.id].claim_labels[0]
    assert (saved.label, saved.type, saved.reason) == ("non-hallucination", None, "the sign does say CAFE")


def test_after_undo_a_claims_type_and_reason_boxes_show_what_is_saved(store: str) -> None:
    """Undo took a claim's reason back, but the Reason box still showed it, and choosing a type then saved
    the undone reason again."""
    engine = make_engine(store)
    item = get_item(engine, 1, "demo-003")
    at = _open("app_pages/claims.py", "demo-003")
    _click(at, "claim_now_hallucination")  # the first claim: the only one with these boxes
    _only(at.text_input, "Reason (optional)").input("no such object").run()
    _click(at, "frame_undo")
    ls = _tester(engine)
    saved = item_annotations(engine, item.id, [ls.id])[ls.id].claim_labels[0]
    assert (saved.label, saved.reason) == ("hallucination", None)
    assert _only(at.text_input, "Reason (optional)").value == ""
    _only(at.selectbox, "Type").set_value("object").run()
    _only(at.selectbox, "Type").set_value("attribute").run()
    _click(at, "frame_undo")
    saved = item_annotations(engine, item.id, [ls.id])[ls.id].claim_labels[0]
    assert (saved.type, saved.reason) == ("object", None)
    assert _only(at.selectbox, "Type").value == "object"
    _only(at.text_input, "Reason (optional)").input("the sign says CAFE").run()
    saved = item_annotations(engine, item.id, [ls.id])[ls.id].claim_labels[0]
    assert (saved.type, saved.reason) == ("object", "the sign says CAFE")


def test_text_to_image_claims_say_where_they_come_from(store: str) -> None:
    at = _open("app_pages/claims.py", "demo-007")
    assert any("image is the model's output" in i.value for i in at.info)


def test_triplets_yes_no_and_wrong_part(store: str) -> None:
    engine = make_engine(store)
    item = get_item(engine, 1, "demo-001")
    at = _open("app_pages/triplets.py", "demo-001")
    source = at.sidebar.selectbox(key="triplet_source").value
    _click(at, "triplet_now_no")
    ls = _tester(engine)  # created by the first judgment
    triplets = judged_triplets(engine, item.id, source, ls.id)
    assert triplets
    _click(at, "triplet_now_relation")
    for _ in triplets[1:]:
        _click(at, "triplet_now_yes")  # the keyed buttons follow the cursor
    judged = judged_triplets(engine, item.id, source, ls.id)
    assert (judged[0].verdict, judged[0].wrong_part) == ("no", "relation")
    assert all(t.verdict == "yes" for t in judged[1:])
    assert item_status(engine, ls.id, item.id, "triplets").status == "done"
    assert len(item.reference_triplets) > 0


def test_claims_are_numbered_from_one_on_the_item_page_as_on_judge_claims(store: str) -> None:
    """One numbering everywhere: the Item page's claim 1 is Judge claims' "1." and receipts' "claim 1"."""
    engine = make_engine(store)
    item = get_item(engine, 1, "demo-003")
    judge = _open("app_pages/claims.py", "demo-003")
    first_shown = next(h.proto.body for h in judge.get("html") if item.claims[0].text in h.proto.body)
    assert "1. " in first_shown
    at = _open("app_pages/item.py", "demo-003")
    claims = next(d.value for d in at.dataframe if "claim" in d.value.columns)
    assert list(claims["#"]) == list(range(1, len(item.claims) + 1))
    assert claims["claim"].iloc[0] == item.claims[0].text


def test_the_header_places_the_item_in_the_dataset_beside_the_pages_queue(store: str) -> None:
    """It read "(3 of 15)" on Judge claims: the item's place in the dataset over the number of items with
    claims (and "(1 of 15)" on an item without any)."""
    at = _open("app_pages/claims.py", "demo-003")
    captions = [c.value for c in at.caption]
    assert any(re.search(r"\(at 3 in the dataset · \d+ in this page's queue\)", c) for c in captions), (
        captions
    )
