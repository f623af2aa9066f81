"""The Item page's History: every change on the item, newest first, and "Restore this state".

What is listed follows who may see it: everyone's changes for those who may see all labels, otherwise
only the user's own label set's (in team mode an annotator never sees a colleague's labels, nor gold).
A restore button appears on the entries of label sets the user may write: their own human label set,
and gold for those who adjudicate. It puts the label set's rows on the item back as they were right
after that entry, as new logged changes (see :mod:`db.repositories.history`), and passes the newest
change of that label set the page showed, so a change made meanwhile is never overwritten unseen.
Everything shown comes from people and files, so it is shown literally.
"""

from __future__ import annotations

import math

import streamlit as st
from sqlalchemy import Engine

from components.login import still_signed_in
from components.page_setup import PageContext
from components.store_cache import cached
from db.access import Forbidden
from db.repositories import history
from db.repositories.annotators import InvalidName
from db.repositories.datasets import DatasetInfo
from db.repositories.items import ItemView
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.labeling import StaleEdit, StoreBusy
from render.literal_text import literal

PAGE_SIZE = 20
_MESSAGE = "item_history_message"


def show_item_history(ctx: PageContext, dataset: DatasetInfo, item: ItemView) -> None:
    """The History expander of one item."""
    label_sets = {ls.id: ls for ls in list_label_sets(ctx.engine, dataset.id)}
    stored = ctx.annotator.stored()
    own = {
        ls.id
        for ls in label_sets.values()
        if ls.kind == "human" and stored is not None and ls.annotator == stored.name
    }
    visible = None if ctx.may("see_all_labels") else own
    with st.expander("History", expanded=_MESSAGE in st.session_state):
        kind, message = st.session_state.pop(_MESSAGE, (None, ""))
        if kind == "success":
            st.success(literal(message))
        elif kind == "error":
            st.error(literal(message))
        if visible is not None and not visible:
            st.caption("Your changes on this item are listed here once you have labeled it.")
            return
        entries = cached(_history, ctx.engine, item.id, None if visible is None else tuple(sorted(visible)))
        if not entries:
            st.caption("Nothing has changed on this item since it was imported.")
            return
        writable = {i for i, ls in label_sets.items() if _may_write(ctx, ls, own)}
        newest: dict[int, int] = {}
        for entry in entries:  # newest first: the first entry of a label set is its latest change
            if entry.label_set_id is not None:
                newest.setdefault(entry.label_set_id, entry.log_id)
        pages = math.ceil(len(entries) / PAGE_SIZE)
        page = 1
        if pages > 1:
            page = int(
                st.number_input(
                    f"Page (of {pages}, newest first)", 1, pages, 1, key=f"item_history_page_{item.id}"
                )
            )
        st.caption(
            f"{len(entries):,} change(s), newest first. “Restore this state” puts that label set's labels on "
            "this item back as they were right after the change, as new changes in this history."
        )
        for entry in entries[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
            _entry(ctx, item, entry, entry.label_set_id in writable, newest)


def _history(
    engine: Engine, item_id: int, label_set_ids: tuple[int, ...] | None
) -> list[history.HistoryEntry]:
    return history.item_history(engine, item_id, label_set_ids=label_set_ids)


def _may_write(ctx: PageContext, label_set: LabelSetView, own: set[int]) -> bool:
    if label_set.kind == "gold":
        return ctx.may("adjudicate")
    return label_set.kind == "human" and label_set.id in own and ctx.may("label")


def _entry(
    ctx: PageContext, item: ItemView, entry: history.HistoryEntry, writable: bool, newest: dict[int, int]
) -> None:
    left, middle, right = st.columns([3, 7, 2], vertical_alignment="center")
    doing = entry.who if entry.who == entry.action else f"{entry.who} · {entry.action}"  # "import"
    left.text(f"{history.when(entry.at)}\n{doing}")
    middle.text(f"{entry.label_set or '(no label set)'}\n{entry.what}")
    if not writable or entry.label_set_id is None:
        return
    latest = newest[entry.label_set_id]
    right.button(
        "Restore this state",
        key=f"item_history_restore_{entry.log_id}_{entry.label_set_id}",
        disabled=entry.log_id == latest,
        help="This is the current state." if entry.log_id == latest else None,
        on_click=_restore,
        args=(ctx, item, entry, latest),
    )


def _restore(ctx: PageContext, item: ItemView, entry: history.HistoryEntry, latest: int) -> None:
    assert entry.label_set_id is not None
    # The restore takes the annotator's id, not the page's actor, so the login is checked here: this
    # callback runs before the page's own check, in a tab that may have logged out elsewhere.
    if ctx.team and not still_signed_in(ctx.engine):
        st.session_state[_MESSAGE] = ("error", "You are no longer logged in here; log in again.")
        return
    try:
        done = history.restore_state(
            ctx.engine,
            entry.label_set_id,
            item.id,
            entry.log_id,
            annotator_id=ctx.annotator.id,
            expected_latest=latest,
        )
    except (StaleEdit, history.RestoreRefused, Forbidden, StoreBusy, InvalidName) as refused:
        st.session_state[_MESSAGE] = ("error", str(refused))
        return
    st.session_state[_MESSAGE] = (
        "success",
        f"{entry.label_set} is back as it was at {history.when(entry.at)}: "
        + ("nothing differed." if not done.changed else f"{done.changed} change(s), each in this history."),
    )
