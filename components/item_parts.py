"""Pieces of an item shown on several pages: its image (or a placeholder that says why), its text."""

from __future__ import annotations

import html

import streamlit as st
from PIL import Image, UnidentifiedImageError

from db.images import resolve_image
from db.repositories.datasets import DatasetInfo
from db.repositories.items import ItemView
from render.literal_text import literal, literal_code
from render.span_html import render_spans_html

# Refuse to decode absurdly large images in the browser view (decompression bombs).
MAX_VIEW_PIXELS = 80_000_000


def show_image(dataset: DatasetInfo, item: ItemView) -> None:
    """The item's image, zoomable via the fullscreen button, or a placeholder naming what is missing."""
    caption = "Model output image (text-to-image)" if item.task_type == "text-to-image" else None
    path = resolve_image(dataset.image_root, item.image_ref)
    if path is not None:
        try:
            with Image.open(path) as image:
                if image.width * image.height > MAX_VIEW_PIXELS:
                    raise ValueError(f"{image.width}×{image.height} pixels is too large to show")
                image.load()
                st.image(image.copy(), caption=caption, width="stretch")
            return
        except (OSError, UnidentifiedImageError, ValueError) as error:
            reason = f"{literal_code(item.image_ref or '')} could not be read: {literal(error)}"
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
    if item.image_ref:
        reason += " Set the image root below (Image settings) to the folder holding the images."
    st.warning(reason)


def show_text(text: str, *, label: str | None = None) -> None:
    """Untrusted text exactly as written: escaped, whitespace kept, no Markdown."""
    if label:
        st.markdown(f"**{literal(label)}**")
    st.html(render_spans_html(text, [], legend=False))


def escaped(text: str) -> str:
    return html.escape(text)
