"""The one place for the controls a page works under: the dataset, and the IoU threshold of span pages.

Every page draws them at the top of the sidebar's own content, right below the page menu. The menu is
drawn compact, so every page it lists and the controls are in view together at 1400×1000; on a
shorter window it scrolls by itself past a share of the window's height, so the controls are in view
without scrolling at any window size (the menu lists twenty pages: at 1440×900 it alone filled the
sidebar and pushed a page's controls below the fold). :func:`components.page_setup.setup_page` reserves the
place before anything else is drawn in the sidebar; the pages draw into it whenever they know what to
draw.

The IoU threshold is one control for Compare, Failure cases and Metrics: the same range, the same
``?iou=`` in the address (read when a page opens), and the value carries over from page to page within
a session.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.page_address import from_address, keep

_PLACE = "spanlight_page_controls"  # this run's container (session state, set by every setup_page)
_IOU = "spanlight_iou"  # the threshold last chosen in this session (not a widget key: it outlives pages)
IOU_WIDGET = "iou_threshold"
IOU_DEFAULT = 0.5
IOU_MIN, IOU_MAX, IOU_STEP = 0.05, 1.0, 0.05

# The menu is drawn compact (rows of 1.5rem, sections 0.4rem apart; Streamlit's are 2rem and 1rem), so
# all twenty pages and the controls under it fit a 1400×1000 window: at full size it took 956 px, and
# held to what the controls left it, hid five pages past the "Inspect" heading in a scroll area with no
# scroll bar in sight. Only a window too short for both (below about 980 px) scrolls it, leaving the
# controls below it 18rem (or keeping 12rem on a tiny one), with a rule under it.
_MENU_CSS = """<style>
[data-testid="stSidebarNav"] {
  max-height: max(12rem, calc(100vh - 18rem)); overflow-y: auto; scrollbar-width: thin;
  border-bottom: 1px solid rgba(128, 128, 128, 0.3);
}
[data-testid="stSidebarNavItems"] li { margin-top: 1px; margin-bottom: 1px; }
[data-testid="stSidebarNavLink"] { line-height: 1.5rem; margin-top: 0; margin-bottom: 0; }
[data-testid="stSidebarNavItems"] > * + * { margin-top: 0.4rem; }
[data-testid="stNavSectionHeader"] { margin-top: 0.125rem; margin-bottom: 0.125rem; }
</style>"""


def reserve() -> None:
    """Reserve the controls' place at the top of the sidebar's content (called by ``setup_page``)."""
    st.html(_MENU_CSS)
    st.session_state[_PLACE] = st.sidebar.container(key="page_controls")


def place() -> Any:
    """Where the controls go: the reserved place, or the sidebar for a script that reserved none."""
    return st.session_state.get(_PLACE) or st.sidebar


def _iou_param() -> float | None:
    """``?iou=`` of the address the page opened with (read once: see :mod:`components.page_address`) as
    a threshold in range, or None (absent, read already, not a number, out of range)."""
    raw = from_address("iou")
    try:
        value = float(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and IOU_MIN <= value <= IOU_MAX else None


def _write_iou(value: float) -> None:
    """Keep the threshold in the address (left out at the default) and in the session."""
    st.session_state[_IOU] = value
    keep("iou", f"{value:g}" if value != IOU_DEFAULT else None)


def _iou_changed() -> None:
    _write_iou(float(st.session_state[IOU_WIDGET]))


def iou_threshold(help: str) -> float:
    """The IoU threshold slider in the controls' place: the ``?iou=`` the page opened with, else the one
    last used in this session, else 0.5 (MHALO's)."""
    remembered = st.session_state.get(_IOU)
    value = _iou_param() or (remembered if isinstance(remembered, float) else IOU_DEFAULT)
    value = round(value / IOU_STEP) * IOU_STEP  # on the slider's steps
    value = min(max(round(value, 2), IOU_MIN), IOU_MAX)
    st.session_state[_IOU] = value  # now: the address is read once, and the run may be cut short
    st.session_state[IOU_WIDGET] = value  # every run: see components.dataset_picker
    place().slider(
        "IoU threshold",
        IOU_MIN,
        IOU_MAX,
        step=IOU_STEP,
        key=IOU_WIDGET,
        on_change=_iou_changed,
        help=help,
    )
    _write_iou(value)
    return value
