"""Copying text from any page gives the characters the page shows, without the invisible word joiners
(U+2060) that :func:`render.literal_text.literal` puts inside untrusted text to keep Streamlit's
renderer from rewriting it: an item id copied from a header and pasted into the jump box finds the
item. The script, ``clean_copy.js``, runs in the page itself (components v2, no iframe).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

KEY = "clean_copy"  # its element on every page, which draws nothing
# The mount draws nothing, and its element would still take a gap's height at the top of every page.
_HIDDEN = f"<style>.st-key-{KEY} {{ display: none; }}</style>"
_mount = st.components.v2.component(
    "spanlight_clean_copy",
    html='<span class="clean-copy" hidden></span>',
    js=(Path(__file__).parent / "clean_copy.js").read_text(encoding="utf-8"),
)


def clean_copy() -> None:
    """Make every copy from this page leave the word joiners out (call once per run of a page)."""
    st.html(_HIDDEN)
    _mount(key=KEY, data={})
