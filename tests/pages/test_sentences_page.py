"""The sentence page: label by button, the consistency rule and its override, undo, queue, done."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from tests.pages.demo_store import APP, DEMO, demo_store


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(item: str = "demo-001", user: str = "tester") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "item": item, "user": user})
    at.run()
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    return at


def _mine(url: str, external_id: str, user: str = "tester"):
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    # No label set until the annotator's first save (id 0 matches no row: nothing saved yet).
    ls = next((v.id for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == user), 0)
    return item, item_annotations(engine, item.id, [ls])[ls]


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def test_label_every_sentence_then_done_and_undo(store: str) -> None:
    at = _open()
    item, _ = _mine(store, "demo-001")
    for _ in item.sentences:
        _button(at, "sentence_now_unknown").click().run()  # the keyed button follows the cursor
        assert not at.exception
    _, mine = _mine(store, "demo-001")
    assert {i: v.label for i, v in mine.sentence_labels.items()} == {
        s.index: "unknown" for s in item.sentences
    }
    assert any("Every sentence is labeled. Press **N**" in s.value for s in at.success)
    receipt = next(c.value for c in at.caption if "✓ Saved" in c.value)
    assert re.fullmatch(r"✓ Saved · .+ · \d\d:\d\d:\d\d", receipt), receipt  # a time as typed, no joiners
    at.run()  # opened again, complete: the unit is drawn before the header, and still says N
    assert any("Every sentence is labeled. Press **N**" in s.value for s in at.success)
    _button(at, "frame_undo").click().run()
    _, mine = _mine(store, "demo-001")
    assert len(mine.sentence_labels) == len(item.sentences) - 1
    assert not any("Every sentence is labeled" in s.value for s in at.success)
    _button(at, "frame_next").click().run()
    assert at.query_params["item"] == "demo-002"


def test_correct_with_a_span_needs_an_override(store: str) -> None:
    from db.repositories import labeling
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.label_sets import human_label_set

    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester")
    ls = human_label_set(engine, 1, who.id)
    item = get_item(engine, 1, "demo-001")
    first = item.sentences[0]
    labeling.add_span(engine, ls.id, item.id, first.start, first.start + 1, None, who.id)
    at = _open()
    _button(at, "sentence_now_correct").click().run()
    assert "contains a span you marked" in at.warning[-1].value or any(
        "contains a span" in w.value for w in at.warning
    )
    assert 0 not in _mine(store, "demo-001")[1].sentence_labels
    _button(at, f"override_{item.id}_0").click().run()
    saved = _mine(store, "demo-001")[1].sentence_labels[0]
    assert (saved.label, saved.override) == ("correct", True)


def test_a_stale_correct_is_refused_as_stale_with_no_override_offered(store: str) -> None:
    """A Correct refused because another tab changed the label was also explained as a span conflict
    ("a span you marked ()"), and its "Save as correct anyway" overwrote the other tab's label with a
    false override flag."""
    from db.repositories import labeling
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.label_sets import human_label_set

    at = _open()
    item, _ = _mine(store, "demo-001")
    _button(at, "sentence_now_unknown").click().run()  # sentence 1, this tab; the cursor moves on
    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester")
    ls = human_label_set(engine, 1, who.id)
    saved = _mine(store, "demo-001")[1].sentence_labels[0]
    # The annotator's other tab marks the sentence incorrect meanwhile.
    labeling.set_sentence_label(
        engine, ls.id, item.id, 0, "incorrect", who.id, expected_version=saved.version
    )
    _button(at, f"label_{item.id}_0_correct").click().run()
    assert not at.exception
    shown = [e.value for e in [*at.error, *at.warning]]
    assert any("another tab or window" in text for text in shown), shown
    assert not any("contains a span" in text for text in shown), shown
    assert not [b for b in at.button if b.key == f"override_{item.id}_0"]
    kept = _mine(store, "demo-001")[1].sentence_labels[0]
    assert (kept.label, kept.override) == ("incorrect", False)


def test_incorrect_takes_an_error_type(store: str) -> None:
    at = _open()
    item, _ = _mine(store, "demo-001")
    _button(at, f"label_{item.id}_1_incorrect").click().run()
    _error_type(at).set_value("Spatial Attribute").run()
    saved = _mine(store, "demo-001")[1].sentence_labels[1]
    assert (saved.label, saved.error_type) == ("incorrect", "Spatial Attribute")


def _error_type(at: AppTest):
    (box,) = [s for s in at.selectbox if s.label == "Error type"]
    return box


def test_after_undo_the_error_type_box_shows_the_saved_type(store: str) -> None:
    """Undo took a sentence's error type back, but its Error type box still showed it, as if saved."""
    at = _open()
    item, _ = _mine(store, "demo-001")
    _button(at, f"label_{item.id}_1_incorrect").click().run()
    _error_type(at).set_value("Spatial Attribute").run()
    _button(at, "frame_undo").click().run()
    saved = _mine(store, "demo-001")[1].sentence_labels[1]
    assert (saved.label, saved.error_type) == ("incorrect", None)
    assert _error_type(at).value == ""


def test_skip_with_a_note_moves_the_queue(store: str) -> None:
    at = _open(item="demo-003")
    at.text_input(key="frame_flag_note").input("image too small").run()
    _button(at, "frame_flag_skipped").click().run()
    assert any("skipped" in c.value and "image too small" in c.value for c in at.caption)


def test_skipped_items_can_be_found_again_and_put_back_in_the_queue(store: str) -> None:
    """The queue passes skipped items over; the header links to the next one, and clearing the mark puts
    the item back in the queue (before, nothing led back to a skipped item)."""
    at = _open(item="demo-003")
    at.text_input(key="frame_flag_note").input("too dark").run()
    _button(at, "frame_flag_skipped").click().run()
    at.query_params["item"] = "demo-001"
    at.run()
    assert at.text_input(key="frame_flag_note").value == ""  # the note stays with its item
    assert [p.proto.text for p in at.get("progress")] == ["0 / 60 done · 1 skipped"]  # not "1 / 60 done"
    assert _button(at, "frame_next_skipped").label == "Next skipped (1 skipped)"
    _button(at, "frame_next_skipped").click().run()  # it sets the address, as Next does
    assert at.query_params["item"] == "demo-003"
    _button(at, "frame_flag_clear").click().run()
    assert not any("Status: **skipped**" in c.value for c in at.caption)
    at.query_params["item"] = "demo-001"
    at.run()
    assert not [b for b in at.button if b.key == "frame_next_skipped"]
    at.query_params["item"] = "demo-003"
    at.run()
    _button(at, "frame_undo").click().run()  # the clear is undone like any action: skipped again
    assert any("Status: **skipped**" in c.value for c in at.caption)


def test_a_skipped_item_labeled_whole_is_done(store: str) -> None:
    """Skipped, then every sentence labeled after all: done, no longer led back to as skipped."""
    at = _open(item="demo-003")
    _button(at, "frame_flag_skipped").click().run()
    item, _ = _mine(store, "demo-003")
    for _ in item.sentences:
        _button(at, "sentence_now_correct").click().run()
    assert any("Status: **done**" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "frame_next_skipped"]


def test_the_last_item_left_says_so_instead_of_pressing_n(store: str) -> None:
    """Finishing the last item left said "Press N to continue" with N disabled."""
    from db.repositories import labeling
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.label_sets import human_label_set
    from db.repositories.queue import queue_size

    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    last = get_item(engine, 1, "demo-003")
    for item_id in range(1, queue_size(engine, 1, "sentences") + 1):
        if item_id != last.id:
            labeling.set_item_status(engine, own, item_id, "sentences", "done", who)
    engine.dispose()
    at = _open(item="demo-003")
    for _ in last.sentences:
        _button(at, "sentence_now_correct").click().run()
    said = [s.value for s in at.success if "Every sentence is labeled" in s.value]
    assert said == [
        "Every sentence is labeled. That was the last item left: every item of this dataset is done for "
        "this task. 🎉"
    ]


def test_a_finished_queue_links_to_the_items_skipped(store: str) -> None:
    from db.repositories import labeling
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.label_sets import human_label_set
    from db.repositories.queue import queue_size

    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    for item_id in range(1, queue_size(engine, 1, "sentences") + 1):
        labeling.set_item_status(
            engine, own, item_id, "sentences", "skipped" if item_id in (4, 9) else "done", who
        )
    engine.dispose()
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "user": "tester"})
    at.run()
    at.switch_page("app_pages/sentences.py").run()
    assert any("Every item of this dataset is done" in s.value for s in at.success)
    assert any("2 of them skipped, not done." in c.value for c in at.caption)
    _button(at, "frame_first_skipped").click().run()
    assert at.query_params["item"] == "demo-004"
    assert any("Item **demo-004**" in c.value for c in at.caption)


def test_a_note_typed_just_before_skip_is_kept(store: str) -> None:
    """Typed and clicked at once: the note reaches the server in the click's own rerun."""
    at = _open(item="demo-003")
    at.text_input(key="frame_flag_note").input("blurry")
    _button(at, "frame_flag_unsure").click().run()
    assert any("unsure" in c.value and "blurry" in c.value for c in at.caption)


def test_keyed_buttons_label_the_sentence_current_when_pressed(store: str) -> None:
    """Two quick keys: the second labels the next sentence, never relabels the first."""
    at = _open()
    _button(at, "sentence_now_unknown").click().run()
    _button(at, "sentence_now_incorrect").click().run()
    labels = {i: v.label for i, v in _mine(store, "demo-001")[1].sentence_labels.items()}
    assert labels == {0: "unknown", 1: "incorrect"}


def test_a_key_for_an_item_no_longer_shown_is_refused(store: str) -> None:
    at = _open()
    at.query_params["item"] = "demo-002"  # the next item is loading while the old buttons are on screen
    _button(at, "sentence_now_correct").click().run()
    assert any("press it again" in e.value for e in at.error)
    assert _mine(store, "demo-001")[1].sentence_labels == {}


def test_a_refused_label_is_shown_and_not_saved(store: str) -> None:
    """The store refuses the label (here: the account is disabled, and has no label set yet, so even
    making one is refused); the page shows why instead of failing, and nothing is saved."""
    from db.access import OPERATOR
    from db.repositories.accounts import set_disabled
    from db.repositories.annotators import get_or_create_annotator

    engine = make_engine(store)
    set_disabled(engine, get_or_create_annotator(engine, "tester").name, True, actor=OPERATOR)
    at = _open()
    _button(at, "sentence_now_unknown").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["The account 'tester' is disabled."]
    assert not any(v.kind == "human" and v.name == "tester" for v in list_label_sets(engine, 1))


def test_jumping_to_an_item_empties_the_box_so_next_moves_on(store: str) -> None:
    at = _open()
    jump = next(t for t in at.text_input if t.key == "frame_jump")
    jump.input("demo-012").run()
    assert not at.exception and at.query_params["item"] == "demo-012"
    assert next(t for t in at.text_input if t.key == "frame_jump").value == ""
    _button(at, "frame_next").click().run()
    assert at.query_params["item"] == "demo-013"  # not back to the item jumped to
    next(t for t in at.text_input if t.key == "frame_jump").input("no-such-item").run()
    assert at.query_params["item"] == "demo-013"
    assert [e.value for e in at.error] == ["No item 'no-such-item'."]


def test_a_new_session_starts_on_the_first_sentence_without_a_label(store: str) -> None:
    """After a reload the cursor must not sit on sentence 1, where the next key would overwrite a label."""
    first = _open()
    _button(first, "sentence_now_correct").click().run()
    _button(first, "sentence_now_incorrect").click().run()
    again = _open()  # a reload: a new browser session
    _button(again, "sentence_now_unknown").click().run()
    _, mine = _mine(store, "demo-001")
    assert {i: v.label for i, v in mine.sentence_labels.items()} == {
        0: "correct",
        1: "incorrect",
        2: "unknown",
    }


def test_the_sentence_just_labeled_is_forgotten_when_the_item_is_left(store: str) -> None:
    """E opens the Error type of the sentence the last key labeled, in this visit of the item only."""
    at = _open()
    item, _ = _mine(store, "demo-001")
    recent = f"sentence_recent_{item.id}"
    _button(at, "sentence_now_incorrect").click().run()
    assert at.session_state[recent] == 0
    _button(at, "frame_next").click().run()
    assert at.query_params["item"] == "demo-002"
    at.query_params["item"] = "demo-001"
    at.run()
    assert not at.exception and recent not in at.session_state
