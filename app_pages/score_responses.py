"""Score whole responses as MMHal-Bench does: a rating from 0 to 6 and whether the response hallucinates.

A response-level rating needs no detector: the rating is the label, kept in the rater's own label set,
so a person's measures stand beside a judge's and gold's on the Metrics page. The question, the
model's answer, the standard human answer and the image's object labels are what MMHal-Bench's judge
is shown, and the rubric is its rubric. Keys: ``0``-``6`` score the response, ``H`` it hallucinates,
``G`` it does not (grounded), ``N`` next item, ``U`` undo. Raters work blind: no other rater's or judge's score is
shown.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.annotation_frame import (
    FRAME_KEYS,
    act,
    finish,
    key_reasons,
    open_workspace,
    say_item_finished,
    still_showing,
)
from components.item_parts import show_image, show_text
from components.page_setup import setup_page
from components.unit_keys import unit_keys
from db.repositories import labeling
from db.repositories.annotations import item_annotations, response_scale_of
from formats.mmhal import RUBRIC, RUBRIC_HALLUCINATES, image_contents
from formats.records import RESPONSE_SCALE
from metrics import HALLUCINATION_BELOW
from render.literal_text import literal

KEEP: Any = object()  # a save that leaves this part of the rating as shown
FLAGS = ((True, "Hallucination", "H"), (False, "No hallucination", "G"))

ctx = setup_page("Score responses")
ctx.require("label")
opened = open_workspace(ctx, labeling.RESPONSE_SCORES, "score_responses")
if opened is None:
    st.stop()
ws = opened  # bound after the check, so the handlers below see a Workspace
item, engine = ws.item, ctx.engine
mine = item_annotations(engine, item.id, [ws.view_id])[ws.view_id].response_score
low, high = response_scale_of(engine, ws.view_id)
rubric = RUBRIC if (low, high) == RESPONSE_SCALE else {}
# Per stored rating: a box keeps what it holds whatever its ``value``, so after an undo (or another
# rater's name in the sidebar) it showed a note the rating no longer had.
note_key = f"score_note_{item.id}_{ws.view_id}_{mine.version if mine else 0}"


def save(score: float | None = None, *, hallucination: Any = KEEP, rationale: Any = KEEP) -> None:
    """Save the rating as shown with one part changed; a new score keeps the flag and note shown."""
    if not still_showing(ws):
        return
    given = score if score is not None else mine.score if mine is not None else None
    if given is None:
        st.session_state["annotation_refused"] = "Score the response first; then say whether it hallucinates."
        return
    act(
        labeling.set_response_score,
        engine,
        ws.label_set.id,
        item.id,
        given,
        ws.who,
        hallucination=(mine.hallucination if mine else None) if hallucination is KEEP else hallucination,
        rationale=(mine.rationale if mine else None) if rationale is KEEP else rationale,
        expected_version=mine.version if mine else labeling.ABSENT,
    )


def save_note() -> None:
    save(rationale=st.session_state.get(note_key) or None)


left, right = st.columns([2, 3], gap="large")
with left:
    show_image(ws.dataset, item)
    contents = image_contents(item.meta)
    if contents:
        st.caption("Image contents: " + literal(", ".join(contents)))
with right:
    show_text(item.prompt or "(no question)", label="Question")
    show_text(item.response or "(no answer)", label="Response")
    if item.reference:
        show_text(item.reference, label="Standard answer")
    st.markdown(
        f"**Score** ({low}–{high}) · keys: `{low}`–`{high}` score · `H` hallucination · `G` none"
        if high - low < 10
        else f"**Score** ({low}–{high})"
    )
    # Above the score buttons: below the flags it was under the fold, where a rater never saw it.
    warning = st.empty()
    for point in range(high, low - 1, -1):
        st.button(
            f"{point} · {rubric[point]}" if point in rubric else str(point),
            key=f"score_{point}",
            shortcut=str(point) if high - low < 10 else None,
            type="primary" if mine is not None and mine.score == point else "secondary",
            on_click=save,
            args=(float(point),),
            width="stretch",
            disabled=ws.read_only,
        )
    if mine is not None and not float(mine.score).is_integer():
        st.caption(f"Stored score: {mine.score:g} (imported)")
    with st.container(horizontal=True, gap="small"):
        for value, title, key in FLAGS:
            chosen = mine is not None and mine.hallucination is value
            st.button(
                title,
                key=f"score_flag_{key}",
                shortcut=key,
                type="primary" if chosen else "secondary",
                disabled=mine is None or ws.read_only,
                on_click=save,
                kwargs={"hallucination": None if chosen else value},
                help="Score the response first" if mine is None else "Click again to leave it unsaid",
            )
    if mine is not None and rubric and mine.hallucination is not None and float(mine.score).is_integer():
        said = RUBRIC_HALLUCINATES[int(mine.score)]
        if said is not mine.hallucination:
            warning.warning(
                f'Score {mine.score:g} reads "{rubric[int(mine.score)]}", but the response is flagged '
                f"as {'hallucinating' if mine.hallucination else 'not hallucinating'}: check one of them. "
                f"The hallucination rate counts scores below {HALLUCINATION_BELOW:g}; agreement on flags "
                "counts the flag."
            )
    # Keys pressed before the page has answered the one before (a score, then at once H) wait their turn.
    unit_keys(
        None,
        [
            *([(f"{low}–{high}", "score the response")] if high - low < 10 else []),
            *((key, f"the response: {title.lower()} (once scored)") for _, title, key in FLAGS),
            *FRAME_KEYS,
        ],
        unavailable=key_reasons(
            ws,
            {key: f"Score the response first ({low}–{high}), then {key}." for _, _, key in FLAGS}
            if mine is None
            else {},
        ),
    )
    st.text_input(
        "Note (optional)",
        value=(mine.rationale or "") if mine else "",
        key=note_key,
        disabled=mine is None or ws.read_only,
        on_change=save_note,
        help="Why this score: saved with the rating.",
    )

finish(ws, mine is not None)
if mine is not None:
    say_item_finished(ws, "This response is scored.")
