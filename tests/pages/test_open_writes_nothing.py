"""Opening an annotation page on an item the annotator has labeled whole already (an import, another
tab) writes nothing: the item used to be marked done on the spot, raising the progress count for whoever
opened it and adding an "item done" to the edit log. It is done by the label that completes it, or by
"Item done" (key D), which the page offers for such an item."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from db import models as m
from db.engine import make_engine, read_session
from db.repositories import labeling
from db.repositories.annotations import judged_triplets, triplet_sources
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set
from db.repositories.queue import item_status
from db.repositories.rating_tasks import detector_segments, list_rating_tasks
from tests.pages.demo_store import APP, DEMO, demo_store


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(page: str, item: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "item": item, "user": "tester"})
    at.run()
    at.query_params.update(params)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _writes(url: str) -> tuple[int, int]:
    """How many item statuses and edit log entries the store holds."""
    engine = make_engine(url)
    with read_session(engine) as session:
        counted = (
            session.scalar(select(func.count()).select_from(m.ItemStatus)) or 0,
            session.scalar(select(func.count()).select_from(m.EditLog)) or 0,
        )
    engine.dispose()
    return counted


def _status(url: str, external_id: str, task: str) -> str | None:
    engine = make_engine(url)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    status = item_status(engine, own, get_item(engine, 1, external_id).id, task)
    engine.dispose()
    return status.status if status else None


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def _label_sentences(url: str, external_id: str, leave: int = 0) -> None:
    """The tester's labels on every sentence of the item but the last ``leave``, saved elsewhere."""
    engine = make_engine(url)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    item = get_item(engine, 1, external_id)
    for sentence in item.sentences[: len(item.sentences) - leave]:
        labeling.set_sentence_label(engine, own, item.id, sentence.index, "correct", who)
    engine.dispose()


def _label_claims(url: str, external_id: str) -> None:
    engine = make_engine(url)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    for claim in get_item(engine, 1, external_id).claims:
        labeling.set_claim_label(engine, own, claim.id, "non-hallucination", who)
    engine.dispose()


def _judge_triplets(url: str, external_id: str) -> None:
    engine = make_engine(url)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    item = get_item(engine, 1, external_id)
    source = next(i for i in triplet_sources(engine, 1) if i != own)  # the page's first source
    triplets = judged_triplets(engine, item.id, source, own)
    assert triplets
    for triplet in triplets:
        labeling.set_triplet_judgment(engine, own, triplet.triplet_id, "yes", who)
    engine.dispose()


def _rate(url: str, external_id: str) -> dict[str, str]:
    engine = make_engine(url)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    task = next(t for t in list_rating_tasks(engine, 1) if t.name == "MHALO segment ratings")
    item = get_item(engine, 1, external_id)
    segments = detector_segments(engine, task)[external_id]
    assert segments
    for segment in segments:
        labeling.set_rating(engine, task.id, item.id, who, score=3.0, segment=segment, label_set_id=own)
    engine.dispose()
    return {"task": str(task.id)}


CASES: dict[str, tuple[str, str, str, Callable[[str, str], dict[str, str] | None]]] = {
    "sentences": ("sentences", "demo-008", "sentences", _label_sentences),
    "claims": ("claims", "demo-003", "claims", _label_claims),
    "triplets": ("triplets", "demo-001", "triplets", _judge_triplets),
    "rate": ("rate", "demo-001", "rating", _rate),
}


@pytest.mark.parametrize("case", list(CASES))
def test_opening_a_labeled_item_writes_nothing_and_offers_done(store: str, case: str) -> None:
    page, external_id, task, label = CASES[case]
    params = label(store, external_id) or {}
    if task == "rating":
        task = f"rating:{params['task']}"
    before = _writes(store)
    at = _open(page, external_id, **params)
    at.run()  # drawn again (a reload): still nothing
    assert _writes(store) == before
    assert _status(store, external_id, task) is None
    assert not any("Status: **done**" in c.value for c in at.caption)
    assert [p.proto.text for p in at.get("progress")][0].startswith("0 / ")
    assert any("Press **D** (Item done)" in s.value for s in at.success)
    _button(at, "frame_done").click().run()  # the annotator's word finishes it
    assert not at.exception, at.exception
    assert _status(store, external_id, task) == "done"
    assert any("Status: **done**" in c.value for c in at.caption)
    assert [p.proto.text for p in at.get("progress")][0].startswith("1 / ")
    assert not [b for b in at.button if b.key == "frame_done"]
    assert any("Press **N**" in s.value for s in at.success)


def test_the_label_that_completes_an_item_still_marks_it_done(store: str) -> None:
    _label_sentences(store, "demo-008", leave=1)
    before = _writes(store)
    at = _open("sentences", "demo-008")
    assert _writes(store) == before
    assert not [b for b in at.button if b.key == "frame_done"]  # not every sentence is labeled
    _button(at, "sentence_now_unknown").click().run()  # the cursor starts on the unlabeled one
    assert not at.exception, at.exception
    assert _status(store, "demo-008", "sentences") == "done"
    assert any("Status: **done**" in c.value for c in at.caption)
    assert [p.proto.text for p in at.get("progress")][0].startswith("1 / ")
    assert any("Every sentence is labeled. Press **N**" in s.value for s in at.success)
    assert not [b for b in at.button if b.key == "frame_done"]
    _button(at, "frame_undo").click().run()  # the label taken back reopens the item, as before
    assert _status(store, "demo-008", "sentences") is None


def test_an_item_labeled_whole_is_done_when_drawn_again_after_another(store: str) -> None:
    """The last sentence labeled, then N pressed before the page redrew: the run the label asked for
    was cut short by N's, which drew the next item first. The label's mark was dropped at that drawing,
    so the item stayed not done though labeled whole in this session. It is kept until the item itself
    is drawn again, which brings it in step, as the label that completed it said."""
    _label_sentences(store, "demo-008")  # whole: the last label saved, its page run never finished
    at = _open("sentences", "demo-009")
    at.session_state["frame_labeled_items"] = {("sentences", "demo-008")}  # as that label's action left it
    at.run()  # N's run, drawing demo-009
    assert _status(store, "demo-008", "sentences") is None
    at.query_params["item"] = "demo-008"
    at.run()
    assert not at.exception, at.exception
    assert _status(store, "demo-008", "sentences") == "done"


def test_a_skipped_item_labeled_elsewhere_stays_skipped_when_opened(store: str) -> None:
    """A skipped item whose labels were completed elsewhere was turned done by being opened."""
    _label_sentences(store, "demo-008")
    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    labeling.set_item_status(engine, own, get_item(engine, 1, "demo-008").id, "sentences", "skipped", who)
    engine.dispose()
    before = _writes(store)
    at = _open("sentences", "demo-008")
    assert _writes(store) == before
    assert _status(store, "demo-008", "sentences") == "skipped"
    _button(at, "frame_done").click().run()
    assert _status(store, "demo-008", "sentences") == "done"


def test_in_team_mode_an_assigned_item_labeled_by_an_import_is_not_done_by_opening_it(team_db: str) -> None:
    """As the annotator "alice" found it: the demo holds her labels on every sentence of demo-008,
    assigned to her; opening it said "Status: done" and counted it, with an "item done" in the log."""
    from tests.pages.team_store import assign, signed_in

    assign(team_db, "alice", "sentences", "demo-008")
    before = _writes(team_db)
    at = signed_in("alice", item="demo-008")
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    assert at.query_params["item"] == "demo-008"
    assert any("7 / 7 sentences labeled" in md.value for md in at.markdown)
    assert _writes(team_db) == before
    assert not any("Status: **done**" in c.value for c in at.caption)
    assert [p.proto.text for p in at.get("progress")] == ["0 / 1 done"]
    _button(at, "frame_done").click().run()
    assert not at.exception, at.exception
    assert [p.proto.text for p in at.get("progress")] == ["1 / 1 done"]
    assert any("Status: **done**" in c.value for c in at.caption)


# The current unit's button for one label key on each page: the item is complete before it and after.
ONE_KEY = {
    "sentences": "sentence_now_unknown",
    "claims": "claim_now_non-hallucination",
    "triplets": "triplet_now_yes",
    "rate": "rate_now_3",
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_label_on_an_item_labeled_whole_before_leaves_it_for_item_done(store: str, case: str) -> None:
    """Opened labeled whole, the page says "Press D". One label key on a unit (even one saving the label
    it had) marked the item done and logged an "item done": only a label that completes the item does."""
    page, external_id, task, label = CASES[case]
    params = label(store, external_id) or {}
    if task == "rating":
        task = f"rating:{params['task']}"
    at = _open(page, external_id, **params)
    statuses = _writes(store)[0]
    _button(at, ONE_KEY[case]).click().run()
    assert not at.exception, at.exception
    assert any("✓ Saved" in c.value for c in at.caption)  # the label was saved
    assert _status(store, external_id, task) is None
    assert _writes(store)[0] == statuses
    assert any("Press **D** (Item done)" in s.value for s in at.success)
    assert [p.proto.text for p in at.get("progress")][0].startswith("0 / ")
    _button(at, "frame_done").click().run()  # D, as the page says
    assert _status(store, external_id, task) == "done"


def test_a_label_that_changes_nothing_on_a_whole_item_does_not_mark_it_done(team_db: str) -> None:
    """As found: bob's labels cover every sentence of demo-008 after the import; "Incorrect" pressed
    on a sentence already incorrect marked the item done."""
    from tests.pages.team_store import assign, signed_in

    assign(team_db, "bob", "sentences", "demo-008")
    at = signed_in("bob", item="demo-008")
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    assert any("Every sentence is labeled. Press **D**" in s.value for s in at.success)
    current = next(c.value for c in at.caption if c.value.startswith("▶ Sentence"))
    value = next(
        v
        for v, title in (("incorrect", "Incorrect"), ("correct", "Correct"), ("unknown", "Unknown"))
        if f" {title}**" in current
    )  # the label it has: pressed again, a no-op
    _button(at, f"sentence_now_{value}").click().run()
    assert not at.exception, at.exception
    assert [p.proto.text for p in at.get("progress")] == ["0 / 1 done"]
    assert not any("Status: **done**" in c.value for c in at.caption)
    assert any("Every sentence is labeled. Press **D**" in s.value for s in at.success)
