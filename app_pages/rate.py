"""Rate one detector's outputs the way the papers validated their metrics, by mouse or keyboard.

MHALO (section 5.1, appendix B.2 Table 4) had raters score every predicted hallucination segment from
1 (completely wrong) to 4 (completely accurate and minimal); Tri-HE (section 5.3, Table 9) scored whole
responses from 1 to 5. The rating task chosen in the sidebar fixes the detector, the scale, its rubric
and whether segments or responses are rated. Keys: the scale's digits score the current segment,
``J``/``K`` move between segments, ``N`` next item, ``U`` undo. Raters work blind: nobody else's scores
are shown, and the gold spans only once every segment of the item is rated. On a blind dataset an
annotator sees a detector's spans on an item only once their own labeling of it (spans, sentences,
claims, triplets) is done: until then the page says so, and their queue passes the item over.
"""

from __future__ import annotations

import html
from urllib.parse import urlencode

import streamlit as st

from components.annotation_frame import (
    FRAME_KEYS,
    act,
    assigned_to,
    finish,
    key_reasons,
    labeling_unit,
    open_workspace,
    place_cursor,
    say_item_finished,
    show_held_back,
)
from components.dataset_picker import current_dataset, pick_dataset
from components.item_parts import show_image, show_text
from components.page_setup import setup_page
from components.unit_keys import unit_keys
from db.repositories.annotations import item_annotations
from db.repositories.label_sets import gold_label_set
from db.repositories.labeling import ABSENT
from db.repositories.queue import rating_waits_on
from db.repositories.rating_tasks import (
    MyRating,
    RatingTaskView,
    list_rating_tasks,
    my_ratings,
    rate,
    segments_of,
)
from db.repositories.visibility import label_sight
from render.literal_text import literal
from render.span_html import SpanStyle, render_spans_html

CONTEXT = 60  # characters shown either side of a segment
CURRENT, RATED, UNRATED = "#EE7733", "#228833", "#4477AA"
NOTHING_FLAGGED = ((True, "Right: nothing to flag", "1"), (False, "Wrong: it missed a hallucination", "2"))

ctx = setup_page("Rate detector outputs")
ctx.require("label")
engine = ctx.engine

# The task decides the work queue, so it is known before the shared frame draws it; its selector is
# drawn below the dataset picker afterwards (a widget's value is in session state before the rerun).
dataset = current_dataset(engine)
tasks = {t.id: t for t in list_rating_tasks(engine, dataset.id)} if dataset else {}
if dataset is None or not tasks:
    pick_dataset(engine)
    if dataset is not None:
        st.info("This dataset has no rating task yet. Create one (detector, scale, rubric) first.")
        st.page_link("app_pages/rating_tasks.py", label="Rating tasks", icon=":material/rule:")
    st.stop()

task_key = f"rating_task_{dataset.id}"
chosen = st.session_state.get(task_key)
if chosen not in tasks:
    asked = str(st.query_params.get("task", ""))
    chosen = int(asked) if asked.isdigit() and int(asked) in tasks else next(iter(tasks))
task: RatingTaskView = tasks[chosen]
opened = open_workspace(ctx, task.queue, "rate")
st.sidebar.selectbox(
    "Rating task",
    list(tasks),
    index=list(tasks).index(task.id),
    key=task_key,
    format_func=lambda t: f"{tasks[t].name} · {tasks[t].detector}",
    help="Each task rates one detector run on its own scale, with its own queue and progress.",
)
if st.query_params.get("task") != str(task.id):
    st.query_params["task"] = str(task.id)
if opened is None:
    st.stop()
ws = opened  # bound after the check, so the handlers below see a Workspace
item = ws.item
# A blind annotator sees a detector's output on an item only once their own labeling of it is done.
waits_on = rating_waits_on(
    engine, ws.dataset.id, task.queue, item.id, assigned_to=assigned_to(ctx), holding=ws.holds
)
if waits_on:
    show_held_back(ws, waits_on)
    st.stop()

detector_spans = item_annotations(engine, item.id, [task.detector_label_set_id])[
    task.detector_label_set_id
].spans
segments = segments_of(detector_spans)
# What this rater scores on the item: each predicted segment, or (None) the response as a whole.
units: list[tuple[int, int] | None] = [*segments] if task.granularity == "segment" and segments else [None]
nothing_flagged = task.granularity == "segment" and not segments
stored = ctx.annotator.stored()
mine = my_ratings(engine, task.id, item.id, stored.id) if stored is not None else {}


def is_rated(unit: tuple[int, int] | None) -> bool:
    given = mine.get(unit)
    if given is None:
        return False
    return given.nothing_flagged_correct is not None if nothing_flagged else given.score is not None


cursor_key = f"rate_cursor_{task.id}_{item.id}"
place_cursor(cursor_key, lambda: [is_rated(u) for u in units])
current = min(st.session_state[cursor_key], len(units) - 1)


def move(step: int) -> None:
    st.session_state[cursor_key] = max(0, min(len(units) - 1, st.session_state[cursor_key] + step))


def give(index: int | None, score: float | None = None, judged: bool | None = None) -> None:
    """Save a score of unit ``index`` (None: the current one, read now — see below) and move on."""
    if st.query_params.get("item") != item.external_id:
        # A key pressed while the next item was loading: its buttons were still this item's.
        st.session_state["annotation_refused"] = (
            "That key arrived while the next item was loading; press it again."
        )
        return
    if index is None:
        index = min(st.session_state[cursor_key], len(units) - 1)
    unit = units[index]
    existing = mine.get(unit)
    done = act(
        rate,
        engine,
        task.id,
        item.id,
        ws.who,
        ws.label_set.id,
        score=score,
        segment=unit,
        nothing_flagged_correct=judged,
        expected_version=existing.version if existing else ABSENT,
    )
    if done is not None:  # on to the next segment, as a keyboard rater expects
        st.session_state[cursor_key] = min(index + 1, len(units) - 1)


def score_button(point: int, index: int, is_current: bool, given: MyRating | None) -> None:
    """One score button. The current segment's buttons carry the keys and keep the same widget keys
    from segment to segment, and score whatever segment is current when the key arrives: a rater who
    types faster than the page redraws may hit a button drawn for the previous segment, and must not
    overwrite that segment's score. A keyed button shows its key as its whole label (Streamlit draws the
    key beside the label, which read "1 1")."""
    keyed = is_current and 0 <= point <= 9
    st.button(
        " " if keyed else str(point),
        key=f"rate_now_{point}" if is_current else f"rate_{task.id}_{item.id}_{index}_{point}",
        shortcut=str(point) if keyed else None,
        type="primary" if given and given.score == point else "secondary",
        help=literal(task.rubric_for(point)) if task.rubric_for(point) else None,
        on_click=give,
        args=(None if is_current else index,),
        kwargs={"score": point},
        width="stretch",
        disabled=ws.read_only,
    )


def snippet(start: int, end: int, colour: str) -> str:
    """The segment highlighted in a window of the response around it (escaped by render_spans_html)."""
    text = item.response
    left, right = max(0, start - CONTEXT), min(len(text), end + CONTEXT)
    before, after = ("…" if left > 0 else ""), ("…" if right < len(text) else "")
    window = before + text[left:right] + after
    shift = len(before) - left
    return render_spans_html(window, [SpanStyle(start + shift, end + shift, colour=colour)], legend=False)


def colour_of(index: int) -> str:
    """A segment's colour: being rated, rated, or not yet (all alike when whole responses are rated)."""
    if units[0] is None:
        return UNRATED
    return CURRENT if index == current else RATED if is_rated(units[index]) else UNRATED


complete = all(is_rated(u) for u in units)
# The detector's spans are what is rated, so every rater sees them; gold only whoever may see it.
sees_gold = label_sight(engine, ctx.actor, ws.dataset.id).gold
gold = gold_label_set(engine, ws.dataset.id) if sees_gold else None
show_gold = sees_gold and st.sidebar.toggle(
    "Show gold spans",
    value=False,
    key="rate_show_gold",
    disabled=gold is None or not complete,
    help="Rate first: the reference stays hidden until every segment of this item is rated.",
)
link = "?" + urlencode({"dataset": ws.dataset.name, "task": task.id, "item": item.external_id})
st.caption(
    f"Task **{literal(task.name)}** · detector **{literal(task.detector)}** · per {literal(task.granularity)} · "
    f"scale {task.scale_min}–{task.scale_max} · [link to this item in this task](rate{link})"
)

left, right = st.columns([2, 3], gap="large")
with left:
    show_image(ws.dataset, item)
    show_text(item.prompt or "(no prompt)", label="Prompt")
    with st.expander("Rubric", expanded=True):
        st.html(
            '<dl class="hs-rubric" style="margin:0">'
            + "".join(
                f'<dt style="font-weight:bold">{p}</dt><dd style="margin:0 0 0.4em 1.2em">'
                f"{html.escape(task.rubric_for(p) or '(no description)')}</dd>"
                for p in task.points
            )
            + "</dl>"
        )


def rating_unit() -> bool:
    """The segments (or the response) with their scores (a fragment: a click reruns only this); True
    when everything on the item is rated."""
    global mine, current
    who = ctx.annotator.stored()
    mine = my_ratings(engine, task.id, item.id, who.id) if who is not None else {}
    current = min(st.session_state[cursor_key], len(units) - 1)
    complete = all(is_rated(u) for u in units)
    rated = sum(is_rated(u) for u in units)
    what = "segments" if not nothing_flagged and units != [None] else "judgment"
    keys = f"`{task.scale_min}`–`{task.scale_max}` score" if not nothing_flagged else "`1` right · `2` wrong"
    st.markdown(
        f"**{rated} / {len(units)} {what} rated** · keys: {keys} · `J`/`K` next/previous segment · "
        "`N` next item · `U` undo · `?` all keys"
    )
    spans = [
        SpanStyle(
            s,
            e,
            type=f"segment {k + 1}",
            colour=colour_of(k),
            css_class="hs-current" if k == current else None,
            tooltip=f"segment {k + 1} · {item.response[s:e]}",
        )
        for k, (s, e) in enumerate(segments)
    ]
    st.markdown(f"**Response** with the predicted spans of **{literal(task.detector)}**")
    st.html(render_spans_html(item.response, spans, legend=False))
    if show_gold and gold is not None and complete:
        gold_spans = item_annotations(engine, item.id, [gold.id])[gold.id].spans
        st.markdown("**Gold spans**" + ("" if gold_spans else " — none: the response is clean"))
        st.html(render_spans_html(item.response, gold_spans, types=ws.dataset.taxonomy))

    for index, unit in enumerate(units):
        is_current = index == current
        given = mine.get(unit)
        with st.container(border=is_current, key=f"rate_row_{index}"):
            if nothing_flagged:
                st.markdown("**The detector flagged nothing on this item.** Is that right?")
                cols = st.columns(2)
                for col, (value, title, key) in zip(cols, NOTHING_FLAGGED, strict=True):
                    col.button(
                        title,  # Streamlit shows the key beside it
                        key=f"rate_nothing_{value}",
                        shortcut=key,
                        type="primary" if given and given.nothing_flagged_correct is value else "secondary",
                        on_click=give,
                        args=(None,),
                        kwargs={"judged": value},
                        width="stretch",
                        disabled=ws.read_only,
                    )
                continue
            if unit is None:
                st.markdown(f"{'▶ ' if is_current else ''}**The whole response**")
            else:
                st.markdown(
                    f"{'▶ ' if is_current else ''}**Segment {index + 1} of {len(units)}** · "
                    f"characters {unit[0]}–{unit[1]}"
                )
                st.html(snippet(*unit, colour_of(index)))
            for col, point in zip(st.columns(len(task.points)), task.points, strict=True):
                with col:
                    score_button(point, index, is_current, given)
            if given and given.score is not None:
                st.caption(f"Your score: **{given.score:g}** — {literal(task.rubric_for(int(given.score)))}")

    if len(units) > 1:
        nav = st.columns(2)
        nav[0].button(
            "Previous segment", shortcut="K", on_click=move, args=(-1,), key="rate_prev", width="stretch"
        )
        nav[1].button(
            "Next segment", shortcut="J", on_click=move, args=(1,), key="rate_next", width="stretch"
        )

    unit_keys(
        f"rate_row_{current}",
        [
            *(
                [(key, title) for _, title, key in NOTHING_FLAGGED]
                if nothing_flagged
                else [(str(p), f"score {p}: {task.rubric_for(p) or ''}") for p in task.points if 0 <= p <= 9]
            ),
            ("J", "next segment"),
            ("K", "previous segment"),
            *FRAME_KEYS,
        ],
        unavailable=key_reasons(ws),
    )
    if complete:
        say_item_finished(ws, "Everything on this item is rated.")
    return complete


with right:
    labeling_unit(ws, rating_unit)
finish(ws)
