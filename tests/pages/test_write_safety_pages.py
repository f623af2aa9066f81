"""Two sessions of one annotator, undo scoped to the item on screen, and who may be working."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.annotators import list_annotators
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from tests.pages.demo_store import APP, DEMO, demo_store


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(page: str, user: str = "tester", **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "user": user})
    at.run()
    at.query_params.update(params)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def _sentence_labels(url: str, external_id: str, user: str = "tester") -> dict[int, str]:
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    ls = next(v for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == user)
    return {i: v.label for i, v in item_annotations(engine, item.id, [ls.id])[ls.id].sentence_labels.items()}


def test_a_stale_session_cannot_overwrite_a_label_it_never_saw(store: str) -> None:
    first = _open("sentences", item="demo-001")
    second = _open("sentences", item="demo-001")  # shows "—" for sentence 1, like the first
    _button(first, "sentence_now_correct").click().run()
    assert _sentence_labels(store, "demo-001") == {0: "correct"}
    _button(second, "sentence_now_incorrect").click().run()
    assert not second.exception
    assert _sentence_labels(store, "demo-001") == {0: "correct"}  # not overwritten
    assert any("changed by you in another tab or window meanwhile" in e.value for e in second.error)
    assert not any("✓ Saved" in c.value for c in second.caption)


def test_undo_refuses_when_another_session_acted_since(store: str) -> None:
    first = _open("sentences", item="demo-001")
    _button(first, "sentence_now_correct").click().run()
    second = _open("sentences", item="demo-001")  # it starts on sentence 2, the first without a label
    _button(second, "sent_prev").click().run()
    _button(second, "sentence_now_incorrect").click().run()  # sentence 1, shown as "correct" there
    assert _sentence_labels(store, "demo-001") == {0: "incorrect"}
    _button(first, "frame_undo").click().run()  # the first session still offers to undo its own label
    assert _sentence_labels(store, "demo-001") == {0: "incorrect"}  # the second session's edit stays
    assert any("changed by you in another tab or window meanwhile" in e.value for e in first.error)
    # The refusal replaces the receipt of the label it could not undo: side by side, they read as if
    # something had been saved.
    assert not any("✓ Saved" in c.value for c in first.caption)


def test_undo_acts_on_the_item_on_screen_and_says_which(store: str) -> None:
    at = _open("rate", item="demo-001")
    _button(at, "rate_now_4").click().run()
    assert not at.exception
    other = _open("rate", item="demo-002")
    undo = _button(other, "frame_undo")
    assert undo.disabled  # nothing was done on demo-002
    _button(at, "frame_undo").click().run()
    assert any("demo-001" in c.value and "undid" in c.value for c in at.caption)


@pytest.mark.parametrize("name", ["gold", "eager", "a\x07b"])
def test_reserved_or_control_character_names_are_refused(store: str, name: str) -> None:
    before = {a.name for a in list_annotators(make_engine(store))}
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "user": name, "item": "demo-001"})
    at.run()
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    assert any("cannot work as" in e.value.lower() for e in at.sidebar.error)
    assert {a.name for a in list_annotators(make_engine(store))} == before


def test_visiting_pages_creates_no_annotator_until_a_label_is_saved(store: str) -> None:
    before = {a.name for a in list_annotators(make_engine(store))}
    at = _open("sentences", user="zzz123", item="demo-001")
    at.switch_page("app_pages/spans.py").run()
    at.switch_page("app_pages/rate.py").run()
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception
    assert {a.name for a in list_annotators(make_engine(store))} == before
    _button(at, "sentence_now_unknown").click().run()
    assert {a.name for a in list_annotators(make_engine(store))} == before | {"zzz123"}
    assert _sentence_labels(store, "demo-001", "zzz123") == {0: "unknown"}


def test_a_refused_skip_from_a_stale_tab_says_why(store: str) -> None:
    """Tab A clears the skip tab B still shows; B's "Mark unsure" is refused, and B says so. The page
    redrew itself for the changed status and dropped the refusal: it looked as if it had worked."""
    first = _open("sentences", item="demo-005")
    _button(first, "frame_flag_skipped").click().run()
    second = _open("sentences", item="demo-005")  # shows it skipped, as the first does
    _button(first, "frame_flag_clear").click().run()
    _button(second, "frame_flag_unsure").click().run()
    assert not second.exception
    # (and not "by someone else": the annotator's own first tab took the mark away)
    assert any("removed by you in another tab or window meanwhile" in e.value for e in second.error)
