"""What the Import page shows of an import before and after it: the preview (counts, the first items with
their spans drawn, the validation report) and the outcome (what was written, or why nothing was).

Both import modes (a recognised format, or fields mapped by hand) show them alike. Item text, ids,
prompts and every reason come from files, so they are drawn through the escaping span renderer or shown
literally, never as Markdown.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import streamlit as st
from sqlalchemy import Engine
from streamlit.delta_generator import DeltaGenerator

from db.images import ImageRootCheck, checked_image_root
from db.import_folder import file_image_root
from db.repositories.exchange import dataset_image_root
from db.transfer import ImportOutcome
from formats.preview import Preview, left_out_note, problem_rows
from formats.problems import Problem
from render.literal_text import literal
from render.problem_table import problems_html
from render.span_html import render_spans_html


def with_image_check(
    engine: Engine,
    preview: Preview,
    chosen: str | None,
    source: str,
    *,
    typed: str | None = None,
    folder: Path | None = None,
) -> Preview:
    """The preview with the import's own image warnings for its items, in the folder the import will
    check (:func:`~db.images.checked_image_root`), so the counts shown before an import are the ones
    it will report. (Images in a ZIP are checked once it is unpacked, by the import.) ``chosen`` is the
    folder chosen for it (resolved; ``typed`` as typed), ``folder`` the file's own folder on the server
    (None for an upload), where a relative folder the file names is looked for, as the import will
    (:func:`~db.import_folder.file_image_root`). A folder the file names outside the import and data
    folders is not probed, as the page's import will not use it; that is said only while no folder is
    chosen, which would be used instead of it anyway."""
    stored = dataset_image_root(engine, preview.dataset) if preview.dataset else None
    file_root, refused = (
        file_image_root(preview.image_root, folder, confine=True) if preview.image_root else (None, None)
    )
    root = checked_image_root(chosen, file_root, stored[1] if stored else None)
    if chosen:
        check = ImageRootCheck(root, source, typed or chosen)
    elif file_root:
        check = ImageRootCheck(root, source, preview.image_root, "named in the file")
    else:
        check = ImageRootCheck(root, source, named="stored for the dataset")
    found = check.batch(dict(preview.image_refs))
    if (missing := check.summary()) is not None:
        found.insert(0, missing)
    if refused and chosen is None:
        found.insert(0, Problem(source, "-", "image_root", refused, "warning"))
    return dataclasses.replace(preview, problems=preview.problems + tuple(found)) if found else preview


def show_preview(
    preview: Preview, *, noun: str = "Items", partial_note: str = "", none_whole_note: str = ""
) -> None:
    """Counts, the first items with their spans, and every problem found (in a table that wraps).

    ``none_whole_note``: what to say, instead of a count, when the part of the file the preview read
    holds no whole record (its first is longer): "0 items" there told of an empty file, which a file of
    one long first record is not."""
    st.subheader("Preview", anchor=False)
    none_whole = preview.partial and preview.n_items == 0 and bool(none_whole_note)
    a, b, c = st.columns(3)
    a.metric(noun, "—" if none_whole else f"{preview.n_items:,}")
    b.metric("Errors", preview.n_errors)
    c.metric("Warnings", preview.n_warnings)
    if none_whole:
        st.info(none_whole_note)
    elif preview.partial and partial_note:
        st.caption(partial_note)
    for item in preview.items:
        with st.container(border=True):
            st.text(f"{item.external_id}" + (f" · {item.prompt[:200]}" if item.prompt else ""))
            st.html(render_spans_html(item.text, list(item.spans), legend=bool(item.spans)))
            if item.chars_left_out:
                st.caption(left_out_note(item))
            if item.note:
                st.caption(literal(item.note))
    if preview.problems:
        st.subheader("Validation report", anchor=False)
        st.html(problems_html(preview.problem_rows()))


def show_outcome(outcome: ImportOutcome, bar: DeltaGenerator, *, key_prefix: str) -> None:
    """What an import wrote, or why it wrote nothing, with every problem it reports."""
    if outcome.ok:
        bar.progress(1.0, text="Done")
        st.success(literal(outcome.summary()))
    elif outcome.refused_changes is not None:
        bar.empty()
        st.error(
            "Nothing was imported: the file would remove or change annotations already stored. Tick "
            "“Replace existing annotations” to apply it; Undo in Recent imports can put them back."
        )
        st.dataframe(
            outcome.refused_changes.table_rows(), hide_index=True, key=f"{key_prefix}_changes_report"
        )
        if outcome.refused_changes.items:
            st.text(outcome.refused_changes.items_line())
    else:
        bar.empty()
        st.error(literal(outcome.summary()))
    if outcome.problems:
        st.html(problems_html(problem_rows(outcome.problems)))
