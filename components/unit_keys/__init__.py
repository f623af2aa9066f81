"""The keyboard around an annotation page's current unit (a sentence, claim, triplet or segment), and
of presenter mode (no unit: its keys step through slides, held the same way while the page answers).

A key press moves the cursor to the next unit, and the next unit may lie below the window's edge
(Error type boxes and wrong-part rows make the list grow): :func:`unit_keys` scrolls the current unit
into view after every run of the unit. It also lets keys open the unit's fields (``E`` the sentence's
Error type, ``T`` a claim's Type: a select box then filters as you type, Enter picks), those of the
unit just labeled first, as the cursor has moved on from it. It gives the keys back after Enter in the
header's jump box, opens "Skip / unsure" on ``S``, and ``?`` shows every key of the page in an overlay
(Esc closes it).

A key of the page is never silently lost: one that finds no field to open (``T`` on a claim judged not
a hallucination, which has no type), no enabled button (``U`` with nothing to undo) or no button at all
yet (``3`` before a triplet is judged wrong) says why in a notice at the foot of the window, in the
page's words where it gives them (``unavailable``).

A key typed while the page's code still loads (a first visit) waits too (:func:`catch_early_keys`).
A key pressed while the page is still answering an earlier one waits and is pressed once the page is
drawn again: Streamlit merges two quick presses of one button into a single click. A field key waits
too, for the field that run draws, and what is typed meanwhile goes into that field, not to the page.
A unit's run that asks for a run of the whole page (the item it labels became done) does not count as
the page's answer: the keys wait for that run (:func:`held_until_settled`).
A click on a button with a shortcut waits the same way, and is then made on the button of the same name
in the unit it was made in: the current unit's buttons label whichever unit is current when their click
arrives, so a quick second click (a double-click) labeled the next unit.

Built on Streamlit's components v2 API like the span selector (no iframe): the script, ``unit_keys.js``,
runs in the page itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st

_mount = st.components.v2.component(
    "spanlight_unit_keys",
    html='<span class="unit-keys" hidden></span>',
    js=(Path(__file__).parent / "unit_keys.js").read_text(encoding="utf-8"),
)
# Notes keys typed before ``unit_keys.js`` is attached (see :func:`catch_early_keys`). The app's own
# code, no data in it: the one script the page runs outside a component.
_EARLY_KEYS = "<script>" + (Path(__file__).parent / "early_keys.js").read_text(encoding="utf-8") + "</script>"
_RUNS = "unit_keys_runs"
# The annotation header's box for an item id: Enter there opens the item and gives the keys back to the
# page (focus left in the box would take the next label key as typing).
JUMP_LABEL = "Jump to item id"
# The annotation frame's popover for skipping an item or marking it unsure: ``S`` opens it with the
# cursor in its note box (then Tab reaches its two buttons, Enter presses one).
FLAG_LABEL = "Skip / unsure"
# In ``unavailable``: why any key whose button is drawn disabled does nothing (an item someone else labels).
ANY_KEY = "*"
# While a unit is drawn (:func:`held_until_settled`): the keys' mounts it asked for, each with its slot.
# Per script thread, which is the session's: the slots are this run's elements.
_held = threading.local()


def container_class(container_key: str) -> str:
    """The CSS class Streamlit gives a container created with ``key=container_key``."""
    return f"st-key-{container_key}"


def catch_early_keys() -> None:
    """Note the keys typed while the page's code still loads; :func:`unit_keys` presses them once the
    page is drawn. Call it before the unit is drawn.

    On a first visit Streamlit loads each kind of element's code when it is first drawn, shown as a
    placeholder until then, and a busy machine makes that last seconds: the sentences could be read
    while their buttons, and the script that holds keys for them, were not there, and keys typed then
    were lost without a word (all four of "2 2 2 1"). This listener is an ``st.html`` drawn before the
    unit, the element the prompt and the sentences are drawn with, so it listens by the time they can be
    read; ``unit_keys.js`` takes the keys it noted once attached, and holds the page's keys while any
    element still loads."""
    st.html(_EARLY_KEYS, unsafe_allow_javascript=True)


def unit_keys(
    current: str | None,
    keys: Sequence[tuple[str, str]],
    fields: Mapping[str, str] | None = None,
    recent: str | None = None,
    unavailable: Mapping[str, str] | None = None,
    release: Sequence[str] = (),
    listed_off: Mapping[str, str] | None = None,
) -> None:
    """Keep the container keyed ``current`` in view, open its ``fields`` (key → the field's label) by
    key, and list ``keys`` (key, what it does) on ``?``. Call it once per run of the unit.

    ``recent`` is the container of the unit labeled by the last key, when the cursor moved on from it:
    a field key opens that unit's field first. Marking a sentence incorrect moves the cursor to the
    next sentence, and its Error type box opens under the one just marked, so ``E`` is meant for it.

    ``unavailable`` maps a key to why it does nothing now, said when it is pressed and finds no field
    or no enabled button (:data:`ANY_KEY`: for every key whose button is disabled); a key without a
    reason names its disabled button or its missing field instead.

    ``release`` names the labels of more boxes that only lead elsewhere (presenter mode's slide list):
    a pick there (Enter or a click) gives the keys back to the page, and Esc with its list open only
    closes the list, as focus left in the box took the next → as the box's own and the next Esc left
    the page.

    ``listed_off`` maps keys of ``keys`` (as listed: "D", "1–9, 0, Q, W …") to why they do nothing on
    this unit now: the ``?`` list draws them greyed, marked "not available now", with each reason said
    once under the list (read-only, it listed every key as if it worked)."""
    # A new value each run, so the browser keeps the unit in view after every action, not only when
    # the cursor moved (an Error type box opening under the current sentence makes it taller).
    runs = st.session_state.get(_RUNS, 0) + 1
    st.session_state[_RUNS] = runs
    data = {
        "current": container_class(current) if current else None,
        "recent": container_class(recent) if recent and recent != current else None,
        "keys": [
            [key, what, (listed_off or {}).get(key, "")]
            for key, what in [*keys, ("?", "show or hide this list of keys")]
        ],
        "fields": {key.lower(): label for key, label in (fields or {}).items()},
        "release": [JUMP_LABEL, *release],
        "openers": {"s": FLAG_LABEL},
        "unavailable": {key.lower(): why for key, why in (unavailable or {}).items()},
        "run": runs,
    }
    held: list[tuple[Any, dict[str, Any]]] | None = getattr(_held, "mounts", None)
    if held is None:
        _mount(key="unit_keys", data={**data, "settled": True})
    else:
        held.append((st.empty(), data))  # mounted in its place once the unit knows (held_until_settled)


@contextmanager
def held_until_settled() -> Iterator[dict[str, bool]]:
    """Hold the keys' mount of the unit drawn in the block until the block knows whether this run is
    the page's last for now: set ``settled["rerun"]`` when a run of the whole page follows.

    A key let through to its button waits for the run that mounts the keys again; the keys behind it
    are pressed once that run is over. A unit's run that then asks for a run of the whole page (the
    item became done, the header must count it) ends with the page idle to the eye before the next run
    starts, and N pressed right after D was clicked in that moment: its run merged with the one asked
    for and showed the item before. Mounted with ``settled`` false, the keys wait for the next run."""
    _held.mounts = []
    settled = {"rerun": False}
    try:
        yield settled
    except BaseException:
        _held.mounts = None  # stopped (a rerun asked for): the next run mounts the keys
        raise
    held, _held.mounts = _held.mounts, None
    for slot, data in held:
        with slot:
            _mount(key="unit_keys", data={**data, "settled": not settled["rerun"]})
