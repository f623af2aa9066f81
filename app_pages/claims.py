"""Judge claims (MHaluBench): hallucination or not, its type and an optional reason, by mouse or keys.

For text-to-image items the image is the model's output and the claims come from the user's prompt.
Keys: ``1`` hallucination, ``2`` not a hallucination, ``J``/``K`` next/previous claim.
"""

from __future__ import annotations

import html

import streamlit as st

from components.annotation_frame import (
    FRAME_KEYS,
    act,
    current_unit,
    finish,
    key_reasons,
    label_first,
    labeling_unit,
    open_workspace,
    place_cursor,
    say_item_finished,
    still_showing,
    track_labeled_unit,
)
from components.item_parts import show_image, show_text
from components.page_setup import setup_page
from components.unit_keys import unit_keys
from db.repositories import labeling
from db.repositories.annotations import ClaimLabelView, item_annotations
from formats.taxonomies import MHALUBENCH
from render.literal_text import literal

VERDICTS = (("hallucination", "Hallucination", "1"), ("non-hallucination", "Not a hallucination", "2"))

ctx = setup_page("Judge claims")
ctx.require("label")
opened = open_workspace(ctx, "claims", "claims")
if opened is None:
    st.stop()
ws = opened  # bound after the check, so the handlers below see a Workspace
item, engine = ws.item, ctx.engine
if not item.claims:
    st.info("This item has no claims to judge. Press **N** for the next item.")
    finish(ws, None)
    st.stop()

cursor_key = f"claim_cursor_{item.id}"
recent_key = f"claim_recent_{item.id}"  # the claim the last verdict key judged (T and W open its fields)


def labeled_claims() -> list[bool]:
    labels = item_annotations(engine, item.id, [ws.view_id])[ws.view_id].claim_labels
    return [k in labels for k in range(len(item.claims))]


place_cursor(cursor_key, labeled_claims)
mine: dict[int, ClaimLabelView] = {}


track_labeled_unit(ws, cursor_key, recent_key)


def move(step: int) -> None:
    st.session_state.pop(recent_key, None)  # moved on: T and W are for the claim the cursor is on
    st.session_state[cursor_key] = max(0, min(len(item.claims) - 1, st.session_state[cursor_key] + step))


def judge(claim_index: int | None, label: str) -> None:
    """Save ``label`` for claim ``claim_index`` (None: the claim current when the key arrived)."""
    if not still_showing(ws):
        return
    if claim_index is None:
        claim_index = current_unit(cursor_key, len(item.claims))
    claim_id = item.claims[claim_index].id
    existing = mine.get(claim_index)
    done = act(
        labeling.set_claim_label,
        engine,
        ws.label_set.id,
        claim_id,
        label,
        ws.who,
        # A type says what kind of hallucination: it goes when the claim is no longer one (as a
        # sentence's error type does). The reason stays: MHaluBench gives one for either verdict.
        type_=existing.type if existing and label == "hallucination" else None,
        reason=existing.reason if existing else None,
        expected_version=existing.version if existing else labeling.ABSENT,
    )
    if done is not None:
        st.session_state[cursor_key] = min(claim_index + 1, len(item.claims) - 1)
        st.session_state[recent_key] = claim_index


def detail_key(field: str, claim_id: int, shown: ClaimLabelView) -> str:
    """The key of a claim's Type or Reason box, per stored label: a box keeps what it holds whatever its
    ``value``, so one keyed per claim still showed a type or reason an undo (or another name in the
    sidebar) had taken away, and the next save wrote it back."""
    return f"claim_{field}_{claim_id}_{ws.view_id}_{shown.version}"


def save_details(claim_index: int, claim_id: int) -> None:
    existing = mine.get(claim_index)
    if existing is None:
        st.session_state["annotation_refused"] = (
            "Choose hallucination or not first; then its type and reason."
        )
        return
    act(
        labeling.set_claim_label,
        engine,
        ws.label_set.id,
        claim_id,
        existing.label,
        ws.who,
        type_=st.session_state.get(detail_key("type", claim_id, existing)) or None,
        reason=st.session_state.get(detail_key("reason", claim_id, existing)) or None,
        expected_version=existing.version,
    )


def missing_fields(current: int) -> dict[str, str]:
    """Why T or W finds no field: the claim they are for (the one just judged, else the current one)
    is not judged yet, or (T) is judged not a hallucination, which has no type."""
    target = int(st.session_state.get(recent_key, current))
    name, moved_on = f"Claim {target + 1}", target != current
    judged = mine.get(target)
    if judged is None:
        state = "is not judged yet"
        return {
            "T": label_first(name, state, "a hallucination", "a type", "1, then T", moved_on=moved_on),
            "W": label_first(name, state, "a judged claim", "a reason", "1 or 2, then W", moved_on=moved_on),
        }
    if judged.label == "hallucination":
        return {}  # both fields are drawn under it
    state = "is judged not a hallucination"
    return {"T": label_first(name, state, "a hallucination", "a type", "1, then T", moved_on=moved_on)}


left, right = st.columns([2, 3], gap="large")
with left:
    show_image(ws.dataset, item)
    if item.task_type == "text-to-image":
        st.info("Text-to-image item: the image is the model's output; the claims come from the prompt.")


def claims_unit() -> bool:
    """The claims with their verdicts (a fragment: a click reruns only this); True when all are judged."""
    global mine
    mine = item_annotations(engine, item.id, [ws.view_id])[ws.view_id].claim_labels
    st.markdown(
        f"**{len(mine)} / {len(item.claims)} claims judged** · keys: `1` hallucination · `2` not · "
        "`T` type · `W` reason · `J`/`K` move · `?` all keys"
    )
    current = current_unit(cursor_key, len(item.claims))
    types = ["", *MHALUBENCH]  # claim types are MHaluBench's, whatever the span taxonomy
    for claim in item.claims:
        existing = mine.get(claim.index)
        is_current = claim.index == current
        with st.container(border=is_current, key=f"claim_row_{claim.index}"):
            st.html(
                f'<div style="white-space:pre-wrap">{"▶ " if is_current else ""}'
                f"{claim.index + 1}. {html.escape(claim.text)}</div>"
            )
            # Buttons at their natural width (in narrow columns their labels were cut off), then the source.
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                for value, title, key in VERDICTS:
                    st.button(
                        title,
                        key=f"claim_now_{value}" if is_current else f"claim_{claim.id}_{value}",
                        shortcut=key if is_current else None,
                        type="primary" if existing and existing.label == value else "secondary",
                        on_click=judge,
                        args=(None if is_current else claim.index, value),
                        disabled=ws.read_only,
                    )
                st.caption(
                    f"from the {literal(claim.source)}"
                    + (f" · segment {claim.segment + 1}" if claim.segment is not None else ""),
                    width="content",
                )
            if existing is not None:  # a reason for either verdict (as MHaluBench gives), a type for one
                a, b = st.columns([1, 2])
                if existing.label == "hallucination":
                    a.selectbox(
                        "Type",
                        types,
                        index=types.index(existing.type) if existing.type in types else 0,
                        key=detail_key("type", claim.id, existing),
                        on_change=save_details,
                        args=(claim.index, claim.id),
                        format_func=lambda t: t or "— choose —",
                    )
                b.text_input(
                    "Reason (optional)",
                    value=existing.reason or "",
                    key=detail_key("reason", claim.id, existing),
                    on_change=save_details,
                    args=(claim.index, claim.id),
                )
    nav = st.columns(2)
    nav[0].button(
        "Previous claim", shortcut="K", on_click=move, args=(-1,), key="claim_prev", width="stretch"
    )
    nav[1].button("Next claim", shortcut="J", on_click=move, args=(1,), key="claim_next", width="stretch")

    unit_keys(
        f"claim_row_{current}",
        [
            *((key, f"the current claim: {title.lower()}") for _, title, key in VERDICTS),
            (
                "T",
                "choose the type of the claim just judged a hallucination, else of the current one: "
                "type to filter, Enter picks",
            ),
            ("W", "write why (the reason) for the claim just judged, else the current one; Enter saves"),
            ("J", "next claim"),
            ("K", "previous claim"),
            *FRAME_KEYS,
        ],
        {"T": "Type", "W": "Reason"},
        recent=f"claim_row_{st.session_state[recent_key]}" if recent_key in st.session_state else None,
        unavailable=key_reasons(ws, missing_fields(current)),
    )
    complete = len(mine) == len(item.claims)
    if complete:
        say_item_finished(ws, "Every claim is judged.")
    return complete


with right:
    show_text(item.prompt or "(no prompt)", label="Prompt")
    if item.task_type != "text-to-image":
        show_text(item.response, label="Response")
    labeling_unit(ws, claims_unit)
finish(ws)
