"""The Import page's list of recent imports, each with an Undo button that puts back what it replaced.

File names, dataset names and the reasons an undo is refused come from people and files, so they are
shown as plain text, never as Markdown.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from sqlalchemy import Engine

from db.access import Actor, Forbidden
from db.import_undo import ImportEntry, UndoRefused, recent_imports, undo_import
from formats.problems import quoted

_MESSAGE = "import_undo_message"


def _undo(engine: Engine, log_id: int, annotator: str | None, actor: Actor) -> None:
    try:
        result = undo_import(engine, log_id, annotator, actor=actor)
    except (UndoRefused, Forbidden) as refused:
        st.session_state[_MESSAGE] = (False, str(refused))
        return
    st.session_state[_MESSAGE] = (
        True,
        f"Import {log_id} undone on {quoted(result.dataset)}: {result.summary()}.",
    )


def _line(entry: ImportEntry) -> str:
    changed = entry.summary()
    by = f" · by {entry.annotator}" if entry.annotator else ""
    state = " · undone" if entry.undone else ""
    return (
        f"#{entry.log_id} · {entry.at:%Y-%m-%d %H:%M} · {entry.dataset or '(deleted dataset)'} · "
        f"{entry.source}{by} · {changed}{state}"
    )


def recent_imports_panel(
    engine: Engine, annotator: str | None, *, actor: Actor, limit: int = 10
) -> Callable[[], None]:
    """The latest imports (and undos), newest first; Undo on each that can still be taken back.

    Drawn at the top of the page, before an import the page runs further down: the function returned
    draws the list again in the same place, with that import in it (it was missing, with its count,
    until the next click)."""
    place = st.empty()
    with place.container():
        _panel(engine, annotator, actor, limit, "import_undo")

    def again() -> None:
        with place.container():
            _panel(engine, annotator, actor, limit, "import_undo_again")  # other widget keys this run

    return again


def _panel(engine: Engine, annotator: str | None, actor: Actor, limit: int, key_prefix: str) -> None:
    message = st.session_state.pop(_MESSAGE, None)
    if message is not None:
        ok, text = message
        (st.success if ok else st.error)("Undone." if ok else "The import could not be undone.")
        st.text(text)
    entries = recent_imports(engine, limit)
    with st.expander(f"Recent imports ({len(entries)})", expanded=message is not None):
        if not entries:
            st.caption("No imports yet.")
        for entry in entries:
            left, right = st.columns([6, 1], vertical_alignment="center")
            left.text(_line(entry))
            if entry.undoable:
                right.button(
                    "Undo",
                    key=f"{key_prefix}_{entry.log_id}",
                    on_click=_undo,
                    args=(engine, entry.log_id, annotator, actor),
                    help="Put back the annotations this import replaced (refused if they changed since).",
                )
