"""A bare page for trying the span selector by hand and for the browser tests.

Run from the repository root:  streamlit run tests/components/selector_app.py
Environment: SELECTOR_TEXT (the text), SELECTOR_SPANS (JSON list of initial spans),
SELECTOR_TYPES (JSON list of types; default four MHALO types). A ``?spans=<JSON>`` query parameter
overrides SELECTOR_SPANS for one session, and ``?disabled=1`` shows the selector read-only, so one
server can serve several test cases.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `streamlit run` puts only this file's folder on the path
    sys.path.insert(0, str(ROOT))

from components.span_selector import selection_from_state, span_selector  # noqa: E402

KEY = "selector"
TEXT = os.environ.get("SELECTOR_TEXT", "The red <b>cube</b> sits left of two 🙂 balls.")
TYPES = json.loads(
    os.environ.get("SELECTOR_TYPES", '["Object", "Color Attribute", "Spatial Relation", "OCR"]')
)

if "spans" not in st.session_state:
    st.session_state.spans = json.loads(
        st.query_params.get("spans") or os.environ.get("SELECTOR_SPANS", "[]")
    )
    st.session_state.history = []  # earlier span lists, for undo
    st.session_state.events = []


def on_action() -> None:
    selection = selection_from_state(KEY)
    if selection is None or selection.event is None:
        return
    st.session_state.history.append(st.session_state.spans)
    st.session_state.spans = selection.spans
    st.session_state.events.append(selection.event)


def undo() -> None:
    if st.session_state.history:
        st.session_state.spans = st.session_state.history.pop()


st.title("Span selector")
disabled = st.query_params.get("disabled") == "1"
result = span_selector(TEXT, st.session_state.spans, TYPES, key=KEY, on_change=on_action, disabled=disabled)
st.button("Undo", on_click=undo, disabled=not st.session_state.history)
st.button("Rerun")  # a run that changes nothing: once it is over, every earlier edit has been handled

value = {"spans": result.spans, "event": result.event, "events": len(st.session_state.events)}
st.json(value)
st.code(json.dumps(value, ensure_ascii=False), language="json")
