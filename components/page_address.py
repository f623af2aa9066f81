"""What a page keeps in its address, and when it reads it back.

A page keeps some of its state in its address (``?dataset=``, ``?iou=``, presenter mode's ``?slide=``),
so that a link or a reload opens it as it was. It reads that state from the address when it opens (a
link followed, a page chosen in the menu, a reload) and not while it stays open: there the session
holds the value the user last chose.

The address of a run is the one the browser showed when it asked for the run. On a busy machine a live
page's watcher (:mod:`components.live_refresh`) asked for its run before the browser had taken the
address of the run just before it, and Streamlit then put that older address back: presenter mode's
next → stepped from the slide before, and a dataset or threshold just chosen would have come back as it
was at the next run of the page. So a value is read from the address once per opening of the page
(:func:`from_address`), and the values a run keeps (:func:`keep`) are written back by the watcher
whenever one of its runs finds the address changed.

A page run by itself (a test of one page script, without ``app.py``) reads its address on every run.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

_SHOWN = "_address_page"  # the page the last full run showed
_OPENED_WITH = "_address_opened_with"  # the address it opened with, less the values read since
_KEPT = "_address_kept"  # what this run keeps in the address: name -> value, or None for left out


def begin_run(url_path: str) -> None:
    """Note the page a full run is about to show (``app.py``, on every run): the address it opened with,
    when it is another page than the last run's, and nothing kept yet this run."""
    if st.session_state.get(_SHOWN) != url_path:
        st.session_state[_SHOWN] = url_path
        st.session_state[_OPENED_WITH] = {name: st.query_params.get(name) for name in st.query_params}
    st.session_state[_KEPT] = {}


def from_address(name: str) -> str | None:
    """``?name=`` of the address the page opened with, the first time it is asked for since; None after
    that, or when the address had none. The caller keeps what it takes in the session at once: a later
    run of the page gets None and uses the session's value."""
    if _SHOWN not in st.session_state:
        return st.query_params.get(name)
    opened_with: dict[str, str | None] = st.session_state.get(_OPENED_WITH, {})
    return opened_with.pop(name, None)


def keep(name: str, value: str | None) -> None:
    """Show ``value`` as ``?name=`` (None: no ``?name=``) now, and again after any watcher run that
    brought an older address back. Call it on every run of the page that keeps the value."""
    kept_this_run()[name] = value
    _write(name, value)


def kept_this_run() -> dict[str, str | None]:
    """The values this run keeps in the address, as :func:`keep` notes them: the same dict goes on
    filling while the run goes, so it can be held for the address the run leaves (:func:`address_left`)."""
    kept: dict[str, str | None] = st.session_state.setdefault(_KEPT, {})
    return kept


def address_left(asked: Mapping[str, str], kept: Mapping[str, str | None]) -> dict[str, str]:
    """The address a run asked for with ``asked`` leaves once it has kept ``kept``: it may be newer than
    the one it was asked for (a watcher run asks with an older one)."""
    address = {name: value for name, value in asked.items() if name not in kept}
    address.update({name: value for name, value in kept.items() if value is not None})
    return address


def write_kept() -> None:
    """Write the values this run keeps into the address again, where it says otherwise (the watcher)."""
    for name, value in st.session_state.get(_KEPT, {}).items():
        _write(name, value)


def _write(name: str, value: str | None) -> None:
    if value is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value
