"""Judge object–relation–object triplets extracted from a model's answer (Tri-HE), beside the image's
reference scene graph: is each triplet supported (yes) or hallucinated (no), and which part is wrong.

Keys: ``1`` yes, ``2`` no, then ``3``/``4``/``5`` for the wrong part (subject / relation / object, Tri-HE's
object 1 / relation / object 2),
``J``/``K`` next/previous triplet.

On a blind dataset an annotator is offered only the triplets they may judge unanchored: a detector's
extraction without the detector's name, never gold's or a colleague's
(:func:`db.repositories.visibility.triplet_sources_to_judge`).
"""

from __future__ import annotations

import html

import pandas as pd
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
    say_item_finished,
    still_showing,
)
from components.item_parts import show_image, show_text
from components.page_setup import setup_page
from components.unit_keys import unit_keys
from db.repositories import labeling
from db.repositories.annotations import TripletJudgmentView, judged_triplets
from db.repositories.visibility import triplet_sources_to_judge
from render.literal_text import literal

# Named as the triplet is shown (subject · relation · object); stored as Tri-HE's object1/relation/object2.
PARTS = tuple(
    (part, labeling.TRIPLET_PART_NAMES[part], key)
    for part, key in (("object1", "3"), ("relation", "4"), ("object2", "5"))
)

ctx = setup_page("Judge triplets")
ctx.require("label")
opened = open_workspace(ctx, "triplets", "triplets")
if opened is None:
    st.stop()
ws = opened  # bound after the check, so the handlers below see a Workspace
item, engine = ws.item, ctx.engine

# Only what the judge may see: on a blind dataset an annotator judges the answer's extracted triplets
# under no detector's name, and never gold's or a colleague's (``visibility.triplet_sources_to_judge``).
# The page shows no verdict but the judge's own.
sources = {s.label_set_id: s for s in triplet_sources_to_judge(engine, ctx.actor, ws.dataset.id, ws.view_id)}
if not sources:
    st.info("No label set of this dataset has extracted triplets to judge.")
    finish(ws, None)
    st.stop()
source_id = st.sidebar.selectbox(
    "Triplets extracted by",
    list(sources),
    format_func=lambda i: sources[i].title,
    key="triplet_source",
    help="Whose answer's triplets you judge (on a blind dataset, a detector's extraction goes unnamed).",
)
triplets: tuple[TripletJudgmentView, ...] = ()  # what the unit shows; read by each of its runs

cursor_key = f"triplet_cursor_{item.id}_{source_id}"
st.session_state.setdefault(cursor_key, 0)


def move(step: int) -> None:
    st.session_state[cursor_key] = max(0, min(len(triplets) - 1, st.session_state[cursor_key] + step))


def judge(index: int | None, verdict: str, wrong_part: str | None = None) -> None:
    """Save a verdict for triplet ``index`` (None: the triplet current when the key arrived).

    "No" without a part keeps the part already chosen; the part keys then complete the judgment.
    """
    if not still_showing(ws):
        return
    if index is None:
        index = current_unit(cursor_key, len(triplets))
    triplet_id = triplets[index].triplet_id
    if verdict == "no" and wrong_part is None:
        wrong_part = triplets[index].wrong_part
    done = act(
        labeling.set_triplet_judgment,
        engine,
        ws.label_set.id,
        triplet_id,
        verdict,
        ws.who,
        wrong_part=wrong_part,
        expected_version=triplets[index].version or labeling.ABSENT,
    )
    if done is not None and (verdict == "yes" or wrong_part is not None):
        st.session_state[cursor_key] = min(index + 1, len(triplets) - 1)


def missing_parts(current: int) -> dict[str, str]:
    """Why 3, 4 or 5 finds no wrong part to choose: the current triplet is not judged "no"."""
    if not triplets or triplets[current].verdict == "no":
        return {}
    verdict = triplets[current].verdict
    state = "is not judged yet" if verdict is None else f"is judged {verdict}"
    why = label_first(
        f"Triplet {current + 1}",
        state,
        "a triplet judged no",
        "a wrong part",
        "2, then 3, 4 or 5",
        moved_on=False,
    )
    return {key: why for _, _, key in PARTS}


left, right = st.columns([2, 3], gap="large")
with left:
    show_image(ws.dataset, item)
    st.markdown("**Reference scene graph**")
    st.dataframe(
        pd.DataFrame(
            [
                {"subject": t.subject, "relation": t.relation, "object": t.object}
                for t in item.reference_triplets
            ],
            columns=["subject", "relation", "object"],
        ),
        hide_index=True,
        width="stretch",
    )


def triplets_unit() -> bool:
    """The triplets with their verdicts (a fragment: a click reruns only this); True when all are judged."""
    global triplets
    triplets = judged_triplets(engine, item.id, source_id, ws.view_id)
    if not triplets:
        st.info(f"{literal(sources[source_id].title)} extracted no triplet from this answer.")
    judged = sum(1 for t in triplets if t.verdict is not None)
    st.markdown(
        f"**{judged} / {len(triplets)} triplets judged** · keys: `1` yes · `2` no · `3`/`4`/`5` wrong part · `J`/`K` · `?` all keys"
    )
    current = current_unit(cursor_key, len(triplets)) if triplets else 0
    for t in triplets:
        is_current = t.index == current
        with st.container(border=is_current, key=f"triplet_row_{t.triplet_id}"):
            st.html(
                '<div style="white-space:pre-wrap">'
                + ("▶ " if is_current else "")
                + " · ".join(
                    f"<b>{label}</b> {html.escape(value)}"
                    for label, value in (
                        ("subject", t.subject),
                        ("relation", t.relation),
                        ("object", t.object),
                    )
                )
                + "</div>"
            )
            # Buttons at their natural width (in five narrow columns their labels were cut off); the
            # wrong part on a line of its own.
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                st.button(
                    "Yes",
                    key="triplet_now_yes" if is_current else f"triplet_{t.triplet_id}_yes",
                    shortcut="1" if is_current else None,
                    type="primary" if t.verdict == "yes" else "secondary",
                    on_click=judge,
                    args=(None if is_current else t.index, "yes"),
                    disabled=ws.read_only,
                )
                st.button(
                    "No",
                    key="triplet_now_no" if is_current else f"triplet_{t.triplet_id}_no",
                    shortcut="2" if is_current else None,
                    type="primary" if t.verdict == "no" else "secondary",
                    on_click=judge,
                    args=(None if is_current else t.index, "no"),
                    disabled=ws.read_only,
                )
            if t.verdict == "no":
                with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                    st.caption("Wrong part:", width="content")
                    for part, title, key in PARTS:
                        st.button(
                            title,
                            key=f"triplet_now_{part}" if is_current else f"triplet_{t.triplet_id}_{part}",
                            shortcut=key if is_current else None,
                            type="primary" if t.wrong_part == part else "secondary",
                            on_click=judge,
                            args=(None if is_current else t.index, "no", part),
                            disabled=ws.read_only,
                        )
    nav = st.columns(2)
    nav[0].button(
        "Previous triplet", shortcut="K", on_click=move, args=(-1,), key="triplet_prev", width="stretch"
    )
    nav[1].button("Next triplet", shortcut="J", on_click=move, args=(1,), key="triplet_next", width="stretch")

    unit_keys(
        next((f"triplet_row_{t.triplet_id}" for t in triplets if t.index == current), None),
        [
            ("1", "the current triplet is supported (yes)"),
            ("2", "the current triplet is hallucinated (no)"),
            *((key, f"after no: the wrong part is the {title.lower()}") for _, title, key in PARTS),
            ("J", "next triplet"),
            ("K", "previous triplet"),
            *FRAME_KEYS,
        ],
        unavailable=key_reasons(ws, missing_parts(current)),
    )
    complete = bool(triplets) and judged == len(triplets)
    if complete:
        say_item_finished(ws, "Every triplet is judged.")
    return complete


with right:
    show_text(item.prompt or "(no question)", label="Question")
    show_text(item.response, label="Answer")
    labeling_unit(ws, triplets_unit)
finish(ws)
