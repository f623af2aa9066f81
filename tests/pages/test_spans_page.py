"""The span page: add, retype, delete through the selector's events; undo; done; blind by default."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from components.span_selector.apptest import simulate_action
from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from db.repositories.queue import item_status
from tests.pages.demo_store import APP, DEMO, demo_store


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(item: str = "demo-004") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "item": item, "user": "tester"})
    at.run()
    at.switch_page("app_pages/spans.py").run()
    assert not at.exception, at.exception
    return at


def _spans(url: str, external_id: str = "demo-004"):
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    ls = next(v for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == "tester")
    return item, ls, item_annotations(engine, item.id, [ls.id])[ls.id].spans


def test_add_retype_delete_and_undo(store: str) -> None:
    at = _open()
    item = get_item(make_engine(store), 1, "demo-004")
    key = f"span_selector_{item.id}"
    word = item.response.index("circle")
    span = {"start": word, "end": word + len("circle"), "type": "Object"}  # a whole word
    simulate_action(at, key, "add", span)
    assert not at.exception
    assert [(s.start, s.end, s.type) for s in _spans(store)[2]] == [(word, word + 6, "Object")]
    assert any("✓ Saved" in c.value and "added span" in c.value for c in at.caption)
    simulate_action(at, key, "retype", span, type="OCR")
    assert [s.type for s in _spans(store)[2]] == ["OCR"]
    simulate_action(at, key, "delete", {**span, "type": "OCR"})
    assert _spans(store)[2] == ()
    next(b for b in at.button if b.key == "frame_undo").click().run()
    assert [s.type for s in _spans(store)[2]] == ["OCR"]


def test_item_done_marks_status_and_other_sets_are_hidden(store: str) -> None:
    at = _open()
    assert not any(m.value.strip("*") == "Gold" for m in at.markdown)
    next(b for b in at.button if b.key == "spans_done").click().run()
    item, ls, _ = _spans(store)
    assert item_status(make_engine(store), ls.id, item.id, "spans").status == "done"
    at.sidebar.toggle[0].set_value(True).run()
    assert any(m.value == "**Gold**" for m in at.markdown)
