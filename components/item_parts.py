"""Pieces of an item shown on several pages: its image (or a placeholder that says why), its text."""

from __future__ import annotations

import html
from pathlib import Path

import streamlit as st
from PIL import Image

from db.images import display_copy, resolve_image
from db.repositories.annotations import RawOutputView
from db.repositories.datasets import DatasetInfo
from db.repositories.items import ItemView
from render.literal_text import literal, literal_code
from render.span_html import render_spans_html


@st.cache_data(max_entries=64, show_spinner=False)
def _display_copy(path: str, mtime_ns: int, size: int) -> Image.Image | str:
    """The display copy of the image at ``path`` (or why there is none), cached per file version."""
    try:
        return display_copy(Path(path))
    except ValueError as error:
        return str(error)


def show_image(dataset: DatasetInfo, item: ItemView, *, settings_below: bool = False) -> None:
    """The item's image (a copy at most 2048 px on the long side), zoomable via the fullscreen button,
    or a placeholder naming what is missing or wrong (never a server path beyond the image reference)."""
    caption = "Model output image (text-to-image)" if item.task_type == "text-to-image" else None
    path = resolve_image(dataset.image_root, item.image_ref)
    if path is not None:
        try:
            version = path.stat()
            shown = _display_copy(str(path), version.st_mtime_ns, version.st_size)
        except OSError as error:
            shown = f"cannot be opened: {error.strerror or 'error'}"
        if not isinstance(shown, str):
            st.image(shown, caption=caption, width="stretch")
            return
        reason = f"Image {literal_code(item.image_ref or '')} cannot be shown: {literal(shown)}."
    elif not item.image_ref:
        reason = "This item has no image reference."
    elif not dataset.image_root:
        reason = (
            f"Image {literal_code(item.image_ref)} cannot be found because the dataset has no image root set."
        )
    else:
        reason = f"Image {literal_code(item.image_ref)} was not found under the image root {literal_code(dataset.image_root)}."
    st.html(
        '<div style="border:2px dashed #999;border-radius:8px;padding:2.5em 1em;text-align:center;'
        'color:#555;background:#f6f6f6">🖼️ No image</div>'
    )
    if path is None and item.image_ref:
        reason += (
            " Set the image root below (Image settings) to the folder holding the images."
            if settings_below
            else " The image root is set on the Item page (Image settings), by whoever manages the data."
        )
    st.warning(reason)


# Formats whose item response is the benchmark's reference answer, not a model's answer (Tri-HE: the
# models' answers come with their runs, as the text their triplets were extracted from).
_REFERENCE_RESPONSES = frozenset({"trihe"})


def response_title(dataset: DatasetInfo) -> str:
    """What an item's response is called on a page: "Reference answer" where the dataset's responses are
    the benchmark's own answers, so a run's triplets beside it are not read as extracted from it."""
    return "Reference answer" if dataset.source_format in _REFERENCE_RESPONSES else "Response"


def judged_on_the_response(dataset: DatasetInfo, has_own_answer: bool) -> bool:
    """Whether a label set's marks on an item are about the item's response. Not so for a run that
    brings its own answer where the response is the benchmark's reference answer (Tri-HE): its spans
    would be offered over the reference, as "0 span(s) from" the run, as if it had judged that text."""
    return not (has_own_answer and dataset.source_format in _REFERENCE_RESPONSES)


def show_text(text: str, *, label: str | None = None) -> None:
    """Untrusted text exactly as written: escaped, whitespace kept, no Markdown."""
    if label:
        st.markdown(f"**{literal(label)}**")
    st.html(render_spans_html(text, [], legend=False))


def show_raw_output(raw: RawOutputView, *, title: str, analysis_label: str = "Analysis") -> None:
    """A detector's output as it came, in an expander whose title says whether it followed the format
    and whether the endpoint cut it at its token limit: a cut answer may stop before it tagged anything,
    so it must not pass for a whole one where it is read."""
    flags = ["follows the format" if raw.follows_format else "does NOT follow the format"]
    if raw.cut:
        flags.append("CUT at the token limit")
    with st.expander(f"{title} ({' · '.join(flags)})"):
        if raw.cut:
            st.warning(
                "The endpoint cut this answer at its token limit (finish reason 'length'). It is kept and "
                "read as it came, but it may end before the model tagged or judged everything: what it "
                "leaves out may read as no hallucination."
            )
        if raw.parse_error:
            st.error(literal(raw.parse_error))
        if raw.analysis:
            show_text(raw.analysis, label=analysis_label)
        show_text(raw.text, label="Output")


def escaped(text: str) -> str:
    return html.escape(text)
