"""Mark hallucinated spans in a response: select words with the mouse, type them, fix them.

Follows MHALO's minimal-span rule (mark the smallest erroneous part) and its twelve types, or whatever
taxonomy the dataset carries. Every add, retype and delete is saved at once and can be undone.
"""

from __future__ import annotations

import streamlit as st

from components.annotation_frame import (
    FRAME_KEYS,
    act,
    finish,
    key_reasons,
    keys_off,
    labeling_unit,
    open_workspace,
)
from components.item_parts import show_image, show_text
from components.page_setup import setup_page
from components.preannotation import start_from_detector
from components.span_selector import selection_from_state, span_selector, type_keys
from components.unit_keys import unit_keys
from db.repositories import labeling
from db.repositories.annotations import SpanView, item_annotations
from db.repositories.datasets import dataset_settings
from db.repositories.queue import item_status
from db.repositories.visibility import visible_label_sets
from render.literal_text import literal
from render.span_html import SpanStyle, render_spans_html

ctx = setup_page("Mark spans")
ctx.require("label")
opened = open_workspace(ctx, "spans", "spans")
if opened is None:
    st.stop()
ws = opened  # bound after the check, so the handlers below see a Workspace
item, engine = ws.item, ctx.engine
taxonomy = list(ws.dataset.taxonomy)
mine: tuple[SpanView, ...] = ()  # the spans the unit shows; read by each of its runs
selector_key = f"span_selector_{item.id}"
char_precision = dataset_settings(engine, ws.dataset.id).char_precision


def _find(spans: tuple[SpanView, ...], span: dict[str, object]) -> SpanView | None:
    """The stored span the browser refers to (same offsets, and same type when it says one)."""
    same = [s for s in spans if (s.start, s.end) == (span["start"], span["end"])]
    typed = [s for s in same if s.type == span.get("type")]
    found = typed or same
    return found[0] if found else None


def save_action() -> None:
    """Persist the one action the selector reports; each is its own transaction."""
    selection = selection_from_state(selector_key)
    if selection is None or selection.event is None:
        return
    event, span = selection.event, selection.event["span"]
    if event["action"] == "add":
        act(
            labeling.add_span,
            engine,
            ws.label_set.id,
            item.id,
            span["start"],
            span["end"],
            span.get("type"),
            ws.who,
        )
        return
    # The span as this page showed it (``mine`` of the render the browser acted on), with its version.
    stored = _find(mine, event.get("previous", span) if event["action"] == "retype" else span)
    if stored is None:
        st.session_state["annotation_refused"] = (
            "That span is no longer stored (someone removed it); reloaded."
        )
    elif event["action"] == "retype":
        act(
            labeling.retype_span, engine, stored.id, span.get("type"), ws.who, expected_version=stored.version
        )
    else:
        act(labeling.delete_span, engine, stored.id, ws.who, expected_version=stored.version)


def mark_done(status_version: int) -> None:
    """Close the item for this annotator: it may rightly have no span at all."""
    act(
        labeling.set_item_status,
        engine,
        ws.label_set.id,
        item.id,
        "spans",
        "done",
        ws.who,
        expected_version=status_version,
    )


left, right = st.columns([2, 3], gap="large")
with left:
    show_image(ws.dataset, item)


def spans_unit() -> None:
    """The response with the annotator's spans (a fragment: an action reruns only this)."""
    global mine
    mine = item_annotations(engine, item.id, [ws.view_id])[ws.view_id].spans
    st.markdown(f"**Response** · {len(mine)} span(s) marked by you")
    start_from_detector(ws, "spans", len(mine))
    if ws.read_only:  # how to mark spans, on an item where no span can be marked, read as a fault
        st.caption("Your spans on this item are shown as they are: they cannot be changed here (see above).")
    else:
        st.caption(
            "Drag over words or double-click a word to mark it; the type comes from the picker (the key "
            "shown on each type). Click a span to retype it (its type's key) or remove it (Delete). Mark "
            "the smallest wrong part. `?` lists every key. "
            + (
                "A span snaps to whole words; hold Alt while dragging to mark exact characters."
                if char_precision
                else "A span snaps to whole words, as MHALO scores them."
            )
        )
    span_selector(
        item.response,
        [{"start": s.start, "end": s.end, "type": s.type} for s in mine],
        taxonomy,
        key=selector_key,
        on_change=save_action,
        active_type=taxonomy[0] if taxonomy else None,
        char_precision=char_precision,
        disabled=ws.read_only,
        disabled_why=ws.why_read_only,
    )
    status = item_status(engine, ws.view_id, item.id, "spans")
    done = status is not None and status.status == "done"
    st.button(
        "Item done" if not done else "Done ✓",
        icon=":material/task_alt:",
        shortcut="D",
        disabled=done or ws.read_only,
        help="No span left to mark (an item may have none). Key D.",
        on_click=mark_done,
        args=(status.version if status else labeling.ABSENT,),
        key="spans_done",
    )
    keys = [
        ("1–9, 0, Q, W …", "the type shown with that key: new spans get it, a selected span takes it"),
        ("Delete", "remove the selected span"),
        ("Esc", "unselect the span"),
        *FRAME_KEYS,
    ]
    page_reasons = {"D": "This item is marked done already."} if done else {}
    if ws.read_only:
        # The selector takes none of its keys here: each says why when pressed, as the buttons' keys do
        # (key_reasons gives them the item's reason), rather than doing nothing without a word.
        page_reasons.update(dict.fromkeys([*type_keys(len(taxonomy)), "Delete", "Backspace"], ""))
    unit_keys(None, keys, unavailable=key_reasons(ws, page_reasons), listed_off=keys_off(ws, keys))


with right:
    show_text(item.prompt or "(no prompt)", label="Prompt")
    labeling_unit(ws, spans_unit)  # the item is done when the annotator says so (it may have no span)
    if item.reference:
        with st.expander("Reference answer"):
            show_text(item.reference)

# Only what this user may see (team mode, blind dataset: nothing but their own labels).
others = [ls for ls in visible_label_sets(engine, ctx.actor, ws.dataset.id) if ls.id != ws.view_id]
if others and st.sidebar.toggle(
    "Show other label sets", value=False, help="Hidden by default for blind annotation."
):
    chosen = st.sidebar.multiselect("Label sets", [ls.title for ls in others], default=[others[0].title])
    shown = [ls for ls in others if ls.title in chosen]
    found = item_annotations(engine, item.id, [ls.id for ls in shown])
    for ls in shown:
        st.markdown(f"**{literal(ls.title)}**")
        st.html(
            render_spans_html(
                item.response,
                [SpanStyle(s.start, s.end, s.type, tooltip=s.type or "untyped") for s in found[ls.id].spans],
                types=taxonomy,
            )
        )

finish(ws)
