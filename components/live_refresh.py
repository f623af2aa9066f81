"""Dashboards that follow the store: a change saved in any session shows within a couple of seconds.

Every write bumps the store revision (``db.engine.store_revision``). A page that calls
:func:`follow_store` remembers the revision its content was computed from; a small fragment, rerun every
``POLL_S`` seconds on its own, reads the revision again (one indexed query) and reruns the whole page
only when it differs. While nothing changes nothing else runs: widgets, scroll position and charts stay
as they are, and the page costs one tiny query per tick.

A watcher's run can bring an older page address back (``slide=4`` under presenter mode's slide 5): it is
asked for with the address the browser showed when it asked. The watcher writes the values the page
keeps in its address (:mod:`components.page_address`) again whenever one of its runs finds them changed.

Compare follows the store only while a detector run of this server is going (:func:`follow_runs`):
it is a page for stepping through items, whose clicks should not share the server with a timer when
nothing is arriving; during a run a presenter watches the run's track fill in.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine
from streamlit.runtime.scriptrunner import get_script_run_ctx

from components.page_address import write_kept
from components.run_registry import run_registry
from db.engine import store_revision

POLL_S = 1.0  # a change shows within POLL_S plus one page run: under the 2 s a live dashboard promises
_SEEN = "_live_store_revision"


def follow_store(engine: Engine) -> None:
    """Rerun the page when the store changes. Call it before the page reads the store."""
    _remember(engine)
    _watch(engine)


def _remember(engine: Engine) -> None:
    """What the watcher compares with: the revision read now."""
    st.session_state[_SEEN] = store_revision(engine)


@st.fragment(run_every=POLL_S)
def _watch(engine: Engine) -> None:
    write_kept()
    if store_revision(engine) != st.session_state.get(_SEEN):
        st.rerun(scope="app")


def poll_left_as_shown(key: str, shown: object) -> bool:
    """Whether this run is the watcher's alone (a fragment's run), not one of the whole page; if so, the
    widget ``key`` is set back to ``shown``, the value the page last drew it with. For the on_change
    callback of a widget whose value the page sets itself: it returns at once when this is True.

    The tab asks for the watcher's run every ``POLL_S`` seconds, sending its widgets as it shows them
    then, which may be before the page's last run has reached it: a value that run set on a widget
    (presenter mode's slide list, set to the slide shown; Compare's tracks, set in the order arranged)
    comes back as it was before, and a callback that took it for the person's choice undid the step."""
    ctx = get_script_run_ctx()
    if ctx is None or not ctx.fragment_ids_this_run:
        return False
    st.session_state[key] = shown
    return True


def _runs_going() -> bool:
    return any(run.running for run in run_registry().runs())


def follow_runs(engine: Engine) -> None:
    """:func:`follow_store` while a detector run of this server is going, and not otherwise. The run's
    last writes (its outputs, then closing it) change the revision once more, so the page reruns after
    the run ends and draws itself without the timer."""
    _remember(engine)
    if _runs_going():
        _watch(engine)
