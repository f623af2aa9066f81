"""Widgets of pre-annotation: "Start from detector" on the span and sentence pages, and the anchoring
section of the Agreement page.

The control appears only where starting from a detector is allowed and the user may see detectors (in
team mode an admin allows it per dataset, as it breaks blind annotation; the store refuses it otherwise
too). Labels the annotator already has on the item are replaced only after they tick the confirmation;
the whole dataset is offered as well, for the items they have not labeled yet. Once an item was started
from a detector the page says so, naming it, for as long as the labels are there.
"""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st
from sqlalchemy import Engine

from analysis.reports import anchoring
from components.annotation_frame import NO_LABEL_SET, Workspace, act, mark_done, still_showing
from components.report_footer import show_table
from components.store_cache import cached
from db.repositories import labeling, preannotation
from db.repositories.datasets import DatasetInfo
from db.repositories.label_sets import LabelSetView
from db.repositories.queue import item_status
from render.literal_text import literal

_WHAT = {"spans": "span(s)", "sentences": "sentence label(s)"}


def _when(at: str) -> str:
    """A record's ISO time as the pages show times ("2026-01-02 10:11 UTC")."""
    try:
        return datetime.fromisoformat(at).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return at


def _source_key(task: str) -> str:
    return f"preannotate_source_{task}"


def _replace_key(task: str, item_id: int) -> str:
    """The "Replace my labels" tick, per item: a tick given on one item must not stand ready on the
    next, where one click would then replace labels nobody agreed to replace."""
    return f"preannotate_replace_{task}_{item_id}"


def _chosen(task: str, sources: dict[str, LabelSetView]) -> LabelSetView | None:
    """The detector picked in the popover, read when the button is pressed: a pick made just before the
    click reaches the server in the same rerun as the click, after the button was drawn."""
    return sources.get(str(st.session_state.get(_source_key(task))))


def _start(ws: Workspace, task: str, sources: dict[str, LabelSetView]) -> None:
    detector = _chosen(task, sources)
    replace = bool(st.session_state.get(_replace_key(task, ws.item.id)))
    if detector is not None and still_showing(ws):
        act(
            preannotation.preannotate,
            ws.ctx.engine,
            ws.label_set.id,
            ws.item.id,
            task,
            detector.id,
            ws.who,
            replace=replace,
        )


def _start_all(ws: Workspace, task: str, sources: dict[str, LabelSetView]) -> None:
    detector = _chosen(task, sources)
    if detector is None:
        return

    def run() -> labeling.Action:
        engine, label_set = ws.ctx.engine, ws.label_set.id
        started = preannotation.preannotate_dataset(engine, label_set, task, detector.id, ws.who)
        return labeling.Action(
            0, "label_sets", None, "preannotate", f"{started} item(s) started from {detector.title}"
        )

    act(run)


def start_from_detector(
    ws: Workspace, task: str, labels_on_item: int, *, done_button: bool = False
) -> preannotation.Preannotation | None:
    """The "Start from detector" control for ``task`` ("spans" or "sentences") on the item on screen,
    and the note that the item was started from one (returned, None if it was not).
    ``labels_on_item``: the annotator's labels there. ``done_button``: for a page that counts an item
    done once every unit is labeled — a draft labels them all, so a started item is done only when the
    annotator says they checked it (the page then passes ``complete=None`` to ``finish``)."""
    engine = ws.ctx.engine
    own = ws.view_id != NO_LABEL_SET  # the label set may have been created by this very click
    record = preannotation.preannotation_of(engine, ws.view_id, ws.item.id, task) if own else None
    if record is not None:
        st.caption(
            f"Started from detector **{literal(record.detector)}** ({record.copied} copied, "
            f"{literal(_when(record.at))}): a draft, yours to correct."
        )
    sources = preannotation.detector_sources(engine, ws.ctx.actor, ws.dataset.id, task)
    checked = record is not None and done_button
    if not sources and not checked:
        return record
    with st.container(horizontal=True, gap="small"):
        if checked:
            _checked_button(ws, task)
        if sources:
            _popover(ws, task, sources, labels_on_item)
    return record


def _checked_button(ws: Workspace, task: str) -> None:
    status = item_status(ws.ctx.engine, ws.view_id, ws.item.id, task)
    done = status is not None and status.status == "done"
    st.button(
        "Draft checked: item done" if not done else "Done ✓",
        icon=":material/task_alt:",
        disabled=done,
        key=f"preannotate_checked_{task}",
        help="A draft from a detector counts as done only once you have checked every label.",
        on_click=mark_done,
        args=(ws, status.version if status else labeling.ABSENT, task),
    )


def _popover(ws: Workspace, task: str, sources: list[LabelSetView], labels_on_item: int) -> None:
    with st.popover("Start from detector", icon=":material/auto_fix_high:"):
        titles = {ls.title: ls for ls in sources}
        chosen = titles[st.selectbox("Detector", list(titles), key=_source_key(task))]
        st.caption(
            f"Copies {literal(chosen.title)}'s {_WHAT[task]} on this item into your labels as an editable "
            "draft; the item is recorded as started from it."
        )
        replace = False
        if labels_on_item:
            st.warning(
                f"You already have {labels_on_item} {_WHAT[task]} on this item; starting from the detector "
                "replaces them."
            )
            replace = st.checkbox("Replace my labels on this item", key=_replace_key(task, ws.item.id))
        st.button(
            "Start this item from it",
            key=f"preannotate_item_{task}",
            disabled=bool(labels_on_item) and not replace,
            on_click=_start,
            args=(ws, task, titles),
        )
        st.button(
            "Start every item I have not labeled",
            key=f"preannotate_all_{task}",
            help="Every item you may label that the detector ran on and that has none of your "
            f"{_WHAT[task]} yet; items you labeled are left alone.",
            on_click=_start_all,
            args=(ws, task, titles),
        )


def anchoring_section(engine: Engine, dataset: DatasetInfo) -> None:
    """The Agreement page's anchoring tables: each annotator against the detector they started from."""
    report = cached(anchoring.build_for, engine, dataset.id)
    if not report.tables:  # nobody started from a detector here: nothing to say
        return
    st.subheader("Anchoring on detector drafts")
    st.caption(
        "Annotators who started items from a detector's draft, against that detector on those items: "
        "how much of the draft they kept. High agreement here may be anchoring rather than independent "
        "judgment; compare with the annotators who started from nothing."
    )
    for key, table in report.tables.items():
        show_table(table, report.provenance, key=f"anchoring-{key}", decimals=1)
