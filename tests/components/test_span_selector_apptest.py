"""The selector's Python side under AppTest: what it sends the browser, and actions reaching callbacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.span_selector.apptest import simulate_action

APP = str(Path(__file__).with_name("selector_app.py"))
TEXT = "The red <b>cube</b> sits left of two 🙂 balls."  # the test page's default text


def sent_data(at: AppTest) -> dict:
    (element,) = at.get("bidi_component")
    return json.loads(element.proto.json)


def shown(at: AppTest) -> dict:
    return json.loads(at.code[0].value)


@pytest.fixture
def at() -> AppTest:
    return AppTest.from_file(APP).run()


def test_sends_text_spans_types_and_stable_colours(at: AppTest) -> None:
    data = sent_data(at)
    assert data["text"] == TEXT
    assert data["spans"] == [] and data["rev"] == 0 and data["active_type"] is None
    assert data["types"] == ["Object", "Color Attribute", "Spatial Relation", "OCR"]
    assert data["colours"]["Object"] == "#4477AA" and data["colours"]["Color Attribute"] == "#EE6677"


def test_each_action_reaches_the_callback_once_and_undo_passes_old_spans_back(at: AppTest) -> None:
    cube = {"start": TEXT.index("cube"), "end": TEXT.index("cube") + 4, "type": "Object"}
    simulate_action(at, "selector", "add", cube)
    assert not at.exception
    assert shown(at)["spans"] == [cube] and shown(at)["event"]["action"] == "add"
    assert sent_data(at)["spans"] == [cube] and sent_data(at)["rev"] == 1

    at.run()  # an unrelated rerun: no event, the callback does not run again
    assert shown(at) == {"spans": [cube], "event": None, "events": 1}

    simulate_action(at, "selector", "retype", cube, type="OCR")
    event = shown(at)["event"]
    assert event["action"] == "retype" and event["previous"] == cube and event["span"]["type"] == "OCR"

    simulate_action(at, "selector", "delete", {**cube, "type": "OCR"})
    assert shown(at)["spans"] == [] and shown(at)["events"] == 3

    at.button[0].click().run()  # Undo: the page passes the previous list, the selector gets it
    assert sent_data(at)["spans"] == [{**cube, "type": "OCR"}]
    assert shown(at)["event"] is None


def test_invalid_spans_and_types_are_rejected() -> None:
    from components.span_selector import _plain_span

    with pytest.raises(ValueError):
        _plain_span({"start": 3, "end": 3, "type": "Object"}, 10)
    with pytest.raises(ValueError):
        _plain_span({"start": 0, "end": 11, "type": "Object"}, 10)
    with pytest.raises(TypeError):
        _plain_span({"start": "0", "end": 1}, 10)

    script = """
from components.span_selector import span_selector
span_selector("abc", [], ["Object"], key="s", active_type="Nope")
"""
    at = AppTest.from_string(script).run()
    assert "active_type" in at.exception[0].message
