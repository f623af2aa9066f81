"""Drive the span selector from ``streamlit.testing.v1.AppTest``, where its script never runs.

:func:`simulate_action` sends what the browser would send for one action — the new span list and
the action event — so the page's ``on_change`` callback runs exactly as in a real session::

    at = AppTest.from_file("app.py").run()
    simulate_action(at, "spans-42", "add", {"start": 4, "end": 7, "type": "Object"})
    assert not at.exception

It relies on how Streamlit 1.67 names a component's trigger widget; the selector's own tests pin it.
"""

from __future__ import annotations

import json
from typing import Any

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from components.span_selector import ACTIONS


def _selector_element(at: AppTest, key: str) -> Any:
    for element in at.get("bidi_component"):
        if element.key == key:
            return element
    raise LookupError(f"no span selector with key {key!r} on the last run")


def simulate_action(
    at: AppTest, key: str, action: str, span: dict[str, Any], *, type: str | None = None
) -> AppTest:
    """Rerun ``at`` as if the user had done ``action`` on the selector with ``key``.

    ``span`` is the span to add, or the existing span to retype (to ``type``) or delete. The span
    list sent is the one the page passed in on the last run with the action applied, as the browser
    would compute it.
    """
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {ACTIONS}")
    element = _selector_element(at, key)
    data = json.loads(element.proto.json)
    spans = [dict(s) for s in data["spans"]]
    span = {"start": span["start"], "end": span["end"], "type": span.get("type")}
    event: dict[str, Any] = {"action": action, "span": span}
    if action == "add":
        spans.append(span)
    else:
        if span not in spans:
            raise LookupError(f"{span} is not among the selector's spans {spans}")
        index = spans.index(span)
        if action == "delete":
            del spans[index]
        else:
            spans[index] = {**span, "type": type}
            event = {"action": "retype", "span": spans[index], "previous": span}
    rev = data["rev"] + 1
    event["rev"] = rev

    component_id = element.proto.id
    state = WidgetState(id=component_id, json_value=json.dumps({"spans": spans, "rev": rev}))
    trigger = WidgetState(
        id=_make_trigger_id(component_id, "events"),
        json_trigger_value=json.dumps([{"event": "event", "value": event}]),
    )
    widget_states = at._tree.get_widget_states()
    widget_states.widgets.extend([state, trigger])
    return at._run(widget_states)
