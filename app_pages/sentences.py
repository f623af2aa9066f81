"""Label every sentence of a response correct / incorrect / unknown, by mouse or keyboard (1/2/3, j/k).

As in AlignBench's annotation tool (appendix D, Figures A and B): one image, each sentence with
Correct / Incorrect / Unknown, progress, next. A sentence holding one of your hallucinated spans cannot
be saved as correct without an explicit override.
"""

from __future__ import annotations

import streamlit as st

from analysis.sentence_labels import shown_sentence_labels
from components.annotation_frame import (
    FRAME_KEYS,
    NO_LABEL_SET,
    act,
    current_unit,
    finish,
    key_reasons,
    label_first,
    labeling_unit,
    open_workspace,
    place_cursor,
    refused_as,
    say_item_finished,
    still_showing,
    track_labeled_unit,
)
from components.item_parts import show_image, show_text
from components.page_setup import setup_page
from components.preannotation import start_from_detector
from components.unit_keys import unit_keys
from db.repositories import labeling
from db.repositories.annotations import ItemAnnotations, SpanView, item_annotations
from db.repositories.items import SentenceView
from db.repositories.label_sets import gold_label_set
from db.repositories.visibility import label_sight
from render.literal_text import literal
from render.span_html import render_spans_html

LABELS = (
    ("correct", "Correct", "1", "✓"),
    ("incorrect", "Incorrect", "2", "✗"),
    ("unknown", "Unknown", "3", "?"),
)
PENDING = "sentences_pending_override"

ctx = setup_page("Label sentences")
ctx.require("label")
opened = open_workspace(ctx, "sentences", "sentences")
if opened is None:
    st.stop()
ws = opened  # bound after the check, so the handlers below see a Workspace
item, engine = ws.item, ctx.engine
if not item.sentences:
    st.info("This item's response has no sentences.")
    finish(ws, None)
    st.stop()

cursor_key = f"sentence_cursor_{item.id}"
recent_key = f"sentence_recent_{item.id}"  # the sentence the last label key labeled (its E box opens)


def labeled_sentences() -> list[bool]:
    labels = item_annotations(engine, item.id, [ws.view_id])[ws.view_id].sentence_labels
    return [s.index in labels for s in item.sentences]


place_cursor(cursor_key, labeled_sentences)


track_labeled_unit(ws, cursor_key, recent_key)


def move(step: int) -> None:
    st.session_state.pop(recent_key, None)  # moved on: E is for the sentence the cursor is on
    st.session_state[cursor_key] = max(0, min(len(item.sentences) - 1, st.session_state[cursor_key] + step))


def label(index: int | None, value: str, *, override: bool = False) -> None:
    """Save ``value`` for sentence ``index`` (None: the sentence current when the key arrived)."""
    if not still_showing(ws):
        return
    if index is None:
        index = current_unit(cursor_key, len(item.sentences))
    st.session_state.pop(PENDING, None)
    if value == "correct" and not override and my_spans_in(item.sentences[index]):
        # Refused here, next to the sentence, with the override; the store refuses it too.
        st.session_state[PENDING] = index
        return
    existing = mine.sentence_labels.get(index)
    error_type = existing.error_type if existing and value == "incorrect" else None
    done = act(
        labeling.set_sentence_label,
        engine,
        ws.label_set.id,
        item.id,
        index,
        value,
        ws.who,
        error_type=error_type,
        override=override,
        expected_version=existing.version if existing else labeling.ABSENT,
    )
    if done is None and value == "correct" and not override and refused_as(labeling.InconsistentLabel):
        st.session_state[PENDING] = index  # offer the explicit override (not for any other refusal)
    elif done is not None:  # advance to the next sentence, as a keyboard labeler expects
        st.session_state[cursor_key] = min(index + 1, len(item.sentences) - 1)
        st.session_state[recent_key] = index


def my_spans_in(sentence: SentenceView) -> list[SpanView]:
    """The annotator's spans overlapping the sentence."""
    return [s for s in mine.spans if s.start < sentence.end and s.end > sentence.start]


def error_type_key(index: int) -> str:
    """The key of a sentence's Error type box, per stored label: a box keeps what it holds whatever its
    ``index``, so one keyed per sentence still showed a type an undo (or another name in the sidebar) had
    taken away."""
    existing = mine.sentence_labels.get(index)
    return f"error_type_{item.id}_{index}_{ws.view_id}_{existing.version if existing else 0}"


def set_error_type(index: int) -> None:
    existing = mine.sentence_labels.get(index)
    act(
        labeling.set_sentence_label,
        engine,
        ws.label_set.id,
        item.id,
        index,
        "incorrect",
        ws.who,
        error_type=st.session_state[error_type_key(index)] or None,
        expected_version=existing.version if existing else labeling.ABSENT,
    )


def missing_error_type(current: int) -> dict[str, str]:
    """Why E finds no Error type box: the sentence it is for (the one just labeled, else the current
    one) is not labeled yet, or is labeled correct or unknown; or the item is read-only for this user,
    whose box is drawn disabled (:func:`components.annotation_frame.key_reasons` says why)."""
    if ws.read_only:
        return {"E": ws.why_read_only}
    target = int(st.session_state.get(recent_key, current))
    existing = mine.sentence_labels.get(target)
    if existing is not None and existing.label == "incorrect":
        return {}  # its box is drawn under it
    state = "has no label yet" if existing is None else f"is marked {existing.label}"
    why = label_first(
        f"Sentence {target + 1}",
        state,
        "an incorrect sentence",
        "an error type",
        "2, then E",
        moved_on=target != current,
    )
    return {"E": why}


# Gold is offered only to whoever may see it (team mode, blind dataset: not to annotators).
sees_gold = label_sight(engine, ctx.actor, ws.dataset.id).gold
gold = gold_label_set(engine, ws.dataset.id) if sees_gold else None
show_reference = sees_gold and st.sidebar.toggle(
    "Show gold labels", value=False, help="Hidden by default for blind annotation."
)
found: dict[int, ItemAnnotations] = {}
mine = ItemAnnotations(label_set_id=NO_LABEL_SET)


def sentences_unit() -> bool | None:
    """The sentences with their labels (a fragment: a click reruns only this); True when all are labeled."""
    global found, mine
    ids = [ws.view_id] + ([gold.id] if gold and show_reference else [])
    found = item_annotations(engine, item.id, ids)
    mine = found[ws.view_id]
    current = current_unit(cursor_key, len(item.sentences))
    # Gold's label per sentence; a clean gold item (spans complete, none here) shows "correct".
    gold_labels = (
        shown_sentence_labels(
            [(s.start, s.end) for s in item.sentences],
            {index: lab.label for index, lab in found[gold.id].sentence_labels.items()},
            [(s.start, s.end) for s in found[gold.id].spans],
            found[gold.id].spans_complete,
        )
        if gold and show_reference
        else [None] * len(item.sentences)
    )
    st.markdown(
        f"**{len(mine.sentence_labels)} / {len(item.sentences)} sentences labeled** · keys: "
        "`1` correct · `2` incorrect · `3` unknown · `E` error type · `J`/`↓` next · `K`/`↑` previous · "
        "`?` all keys"
    )
    draft = start_from_detector(ws, "sentences", len(mine.sentence_labels), done_button=True)
    for sentence in item.sentences:
        index = sentence.index
        spans = [
            (max(s.start, sentence.start) - sentence.start, min(s.end, sentence.end) - sentence.start, s.type)
            for s in mine.spans
            if s.start < sentence.end and s.end > sentence.start
        ]
        is_current = index == current
        with st.container(border=is_current, key=f"sentence_row_{index}"):
            existing = mine.sentence_labels.get(index)
            badge = next(
                (f"{sym} {title}" for v, title, _, sym in LABELS if existing and existing.label == v), "—"
            )
            st.html(render_spans_html(sentence.text, spans, legend=False))
            # Buttons at their natural width (a narrow column cut their labels to "C…"), then the state.
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                for value, title, key, _ in LABELS:
                    # The current sentence's buttons keep one widget key and label whichever sentence
                    # is current when pressed (see components.annotation_frame).
                    st.button(
                        title,
                        key=f"sentence_now_{value}" if is_current else f"label_{item.id}_{index}_{value}",
                        shortcut=key if is_current else None,
                        type="primary" if existing and existing.label == value else "secondary",
                        on_click=label,
                        args=(None if is_current else index, value),
                        disabled=ws.read_only,
                    )
                caption = f"{'▶ ' if is_current else ''}Sentence {index + 1} · **{badge}**"
                if existing and existing.override:
                    caption += " (confirmed despite a span)"
                if gold_labels[index] is not None:
                    caption += f" · gold: {literal(gold_labels[index])}"
                st.caption(caption, width="content")
            if existing and existing.label == "incorrect":
                options = ["", *ws.dataset.taxonomy]
                st.selectbox(
                    "Error type",
                    options,
                    index=options.index(existing.error_type) if existing.error_type in options else 0,
                    key=error_type_key(index),
                    on_change=set_error_type,
                    args=(index,),
                    format_func=lambda t: t or "— choose —",
                    width=260,
                    disabled=ws.read_only,
                )
            if st.session_state.get(PENDING) == index:
                quoted = ", ".join(f"“{literal(sentence.text[a:b])}”" for a, b, _ in spans[:3])
                st.warning(
                    f"This sentence contains a span you marked as hallucinated ({quoted}), so it was not "
                    "saved as correct. Remove the span on the span page, or confirm that the sentence is "
                    "correct anyway."
                )
                st.button(
                    "Save as correct anyway",
                    key=f"override_{item.id}_{index}",
                    on_click=label,
                    args=(index,),
                    kwargs={"value": "correct", "override": True},
                )

    with st.container(horizontal=True, gap="small"):
        st.button("Previous sentence", shortcut="K", on_click=move, args=(-1,), key="sent_prev")
        st.button("Next sentence", shortcut="J", on_click=move, args=(1,), key="sent_next")
        # The arrow keys too; the key hint is the whole label.
        st.button(" ", shortcut="Up", on_click=move, args=(-1,), key="sent_up", help="Previous sentence")
        st.button(" ", shortcut="Down", on_click=move, args=(1,), key="sent_down", help="Next sentence")

    unit_keys(
        f"sentence_row_{current}",
        [
            *((key, f"the current sentence is {title.lower()}") for _, title, key, _ in LABELS),
            (
                "E",
                "choose the error type of the sentence just marked incorrect, else of the current one: "
                "type to filter, Enter picks",
            ),
            ("J / ↓", "next sentence"),
            ("K / ↑", "previous sentence"),
            *FRAME_KEYS,
        ],
        {"E": "Error type"},
        recent=f"sentence_row_{st.session_state[recent_key]}" if recent_key in st.session_state else None,
        unavailable=key_reasons(ws, missing_error_type(current)),
    )
    complete = len(mine.sentence_labels) == len(item.sentences)
    if complete and not draft:
        say_item_finished(ws, "Every sentence is labeled.")
    return None if draft else complete  # a detector's draft is done when the annotator says so


left, right = st.columns([2, 3], gap="large")
with left:
    show_image(ws.dataset, item)
    show_text(item.prompt or "(no prompt)", label="Prompt")
with right:
    labeling_unit(ws, sentences_unit)
finish(ws)
