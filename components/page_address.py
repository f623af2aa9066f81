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

The choices a page draws as widgets (Metrics' paper and filters, Agreement's and Adjudicate's labels,
Correlation's task) follow the same rule (:func:`one_choice`, :func:`many_choices`): the widget's value
is what the page shows, the address is written from it on every run, and the address is read into the
widget only when the page opens. Streamlit's own binding of a widget to the address took the widget's
value from the run but left the address as the run was asked for, so after a watcher's run with an
older address the browser kept showing the older choice, and a reload, a shared link or presenter
mode's Esc opened it.

The browser's back and forward buttons open the page again: the address they go to is read as when
the page opens, so they step back through the choices the address recorded.

An address value that names no option (a stale shared link: ``?view=`` of a paper the dataset lacks,
``?detector=`` of a run since removed) cannot be shown, and dropping it unseen left the reader looking at
something else than the link promised. :func:`notice` says so, beside the choice, in one wording on every
page (:func:`unknown_values`), literally (the values come from a URL): from the run that read the address
until the reader changes that choice or the page opens again, so a rerun (a watcher's, a cookie's
confirmation on a first visit) does not take it away before it is read, and an older address brought
back later does not say it again.

A page run by itself (a test of one page script, without ``app.py``) reads its address on every run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from formats.problems import quoted
from render.literal_text import literal

T = TypeVar("T")
Value = str | list[str]  # one ``?name=``, or a list of them (``?subset=a&subset=b``)

_SHOWN = "_address_page"  # the page the last full run showed
_OPENED_WITH = "_address_opened_with"  # the address it opened with, less the values read since
_KEPT = "_address_kept"  # what this run keeps in the address: name -> value, or None for left out
_CHOSEN = "_address_chosen"  # widget key -> the value last shown, kept while the widget is not drawn
_OPENING = "_address_opening"  # whether this run is the first since the page opened
_NOTICES = "_address_notices"  # choice -> (what the page says of the address's values, the value shown)
_LISTED = 8  # the options an unknown value's notice names, at most


def begin_run(url_path: str) -> None:
    """Note the page a full run is about to show (``app.py``, on every run): the address it opened with,
    when it is another page than the last run's or the browser went back or forward to it, and nothing
    kept yet this run; a page opened forgets the notices of the one before."""
    opened = st.session_state.get(_SHOWN) != url_path or back_or_forward()
    if opened:
        st.session_state[_SHOWN] = url_path
        st.session_state[_OPENED_WITH] = {name: st.query_params.get_all(name) for name in st.query_params}
        st.session_state[_NOTICES] = {}
    st.session_state[_OPENING] = opened
    st.session_state[_KEPT] = {}


def opening() -> bool:
    """Whether this run is the first since the page opened or the browser went back or forward to it
    (always, for a page run by itself). A page that keeps values without widgets (presenter mode's
    filters) reads them from the address then, where a value the address lacks means none."""
    return _SHOWN not in st.session_state or bool(st.session_state.get(_OPENING, True))


def back_or_forward() -> bool:
    """Whether the browser asked for this run with its back or forward button (the page opens again at
    the address it went to, where a value left out is the default, not the one last shown)."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.is_history_navigation)


def from_address(name: str) -> str | None:
    """``?name=`` of the address the page opened with, the first time it is asked for since; None after
    that, or when the address had none. The caller keeps what it takes in the session at once: a later
    run of the page gets None and uses the session's value."""
    values = all_from_address(name)
    return values[-1] if values else None


def all_from_address(name: str) -> list[str] | None:
    """Every ``?name=`` of the address the page opened with (``?subset=a&subset=b``), as
    :func:`from_address` reads one."""
    if _SHOWN not in st.session_state:
        return st.query_params.get_all(name) if name in st.query_params else None
    opened_with: dict[str, list[str]] = st.session_state.get(_OPENED_WITH, {})
    return opened_with.pop(name, None)


def keep(name: str, value: Value | None) -> None:
    """Show ``value`` as ``?name=`` (None: no ``?name=``) now, and again after any watcher run that
    brought an older address back. Call it on every run of the page that keeps the value."""
    kept_this_run()[name] = value
    _write(name, value)


def kept_this_run() -> dict[str, Value | None]:
    """The values this run keeps in the address, as :func:`keep` notes them: the same dict goes on
    filling while the run goes, so it can be held for the address the run leaves (:func:`address_left`)."""
    kept: dict[str, Value | None] = st.session_state.setdefault(_KEPT, {})
    return kept


def address_left(asked: Mapping[str, Value], kept: Mapping[str, Value | None]) -> dict[str, Value]:
    """The address a run asked for with ``asked`` leaves once it has kept ``kept``: it may be newer than
    the one it was asked for (a watcher run asks with an older one)."""
    address: dict[str, Value] = {name: value for name, value in asked.items() if name not in kept}
    address.update({name: value for name, value in kept.items() if value is not None})
    return address


def write_kept() -> None:
    """Write the values this run keeps into the address again, where it says otherwise (the watcher)."""
    for name, value in st.session_state.get(_KEPT, {}).items():
        _write(name, value)


def _write(name: str, value: Value | None) -> None:
    if value is None or value == []:
        if name in st.query_params:
            del st.query_params[name]
        return
    values = [value] if isinstance(value, str) else list(value)
    if st.query_params.get_all(name) != values:
        st.query_params[name] = values if len(values) > 1 else values[0]


def unknown_values(called: str, unknown: Sequence[str], offered: Sequence[str], instead: str) -> str:
    """What a page says when its address asked for values no option names: the same words on every page.
    ``called``: what one option is ("paper", "detector"); ``instead``: what is shown in their place.
    Plain text (the values quoted as written: :func:`formats.problems.quoted`); :func:`notice` shows it
    literally."""
    names = ", ".join(map(quoted, unknown))
    if offered:
        listed = ", ".join(map(quoted, offered[:_LISTED]))
        more = len(offered) - _LISTED
        among = f"not one of {listed}" + (f" (or {more} more)" if more > 0 else "")
    else:
        among = f"not offered here (there is no {called})"
    which = "which is" if len(unknown) == 1 else "which are"
    return f"The link asked for {called} {names}, {which} {among}; {instead}."


def notice(key: str, shown: object, said: str | None = None) -> None:
    """Say ``said`` (plain text: shown literally) of the address's value of the choice ``key`` now, and on
    every run after while the choice stays ``shown`` and the page stays open; None: nothing new to say
    (a notice said before stays while the choice is still the one it was said of). Call it on every run,
    where the notice should stand (beside the choice)."""
    notices: dict[str, tuple[str, object]] = st.session_state.setdefault(_NOTICES, {})
    if said is not None:
        notices[key] = (said, shown)
    elif key in notices and notices[key][1] != shown:
        del notices[key]
    if key in notices:
        st.warning(literal(notices[key][0]), icon=":material/link_off:")


def one_choice(
    key: str, options: Sequence[T], default: T, spell: Callable[[T], str] = str, *, called: str
) -> None:
    """Set the one-choice widget ``key`` (drawn next, without a default of its own) to the choice the
    page shows: ``?key=`` of the address the page opened with (the option ``spell`` writes so), else the
    widget's value (the user's choice, or the last run's), else the one last shown in this session, else
    ``default`` (at once, when the browser went back or forward to an address without it, as a choice at
    its default is written). An address naming no option is passed over, and said (:func:`notice`, ``called`` naming
    what an option is). After drawing it, call :func:`keep_one`."""
    spelled = {spell(o): o for o in options}
    asked = from_address(key)
    remembered = st.session_state.get(_CHOSEN, {}).get(key)
    candidates = [spelled.get(asked) if asked is not None else None, st.session_state.get(key), remembered]
    if asked is None and back_or_forward():  # an address stepped back to, at the default
        candidates = []
    # Set on every run: a widget of another page with the same key is another widget (see dataset_picker).
    shown = st.session_state[key] = next((c for c in candidates if c is not None and c in options), default)
    said = None
    if asked is not None and asked not in spelled:
        said = unknown_values(called, [asked], list(spelled), f"showing {quoted(spell(shown))} instead")
    notice(key, shown, said)


def keep_one(key: str, shown: T, default: T | None, spell: Callable[[T], str] = str) -> None:
    """Keep the choice the widget ``key`` shows in the address (left out at ``default``; None: always
    written) and in the session, for when the page is opened again without it."""
    st.session_state.setdefault(_CHOSEN, {})[key] = shown
    keep(key, None if shown == default else spell(shown))


def many_choices(key: str, options: Sequence[str], *, called: str) -> None:
    """Set the many-choice widget ``key`` (drawn next) to the choices the page shows: those of the address
    the page opened with (``?key=a&key=b``) that are options (none, when the browser went back or forward
    to an address without them), else the widget's, else those last shown in this session that are
    options. Those of the address no option names are left out, and said
    (:func:`notice`, ``called`` naming what an option is). After drawing it, call :func:`keep_many`."""
    asked = all_from_address(key)
    if asked is None and back_or_forward():  # an address stepped back to, without this filter
        asked = []
    if asked is not None:
        chosen = [o for o in dict.fromkeys(asked) if o in options]
    else:
        current = st.session_state.get(key, st.session_state.get(_CHOSEN, {}).get(key))
        chosen = [o for o in current if o in options] if isinstance(current, list) else []
    st.session_state[key] = chosen
    notice(key, chosen, left_out(called, asked or [], options))


def left_out(called: str, asked: Sequence[str], options: Sequence[str]) -> str | None:
    """What a many-choice filter says of the values the address asked for that no option names (None:
    every one is an option): they are left out of the filter."""
    unknown = [a for a in dict.fromkeys(asked) if a not in options]
    if not unknown:
        return None
    return unknown_values(
        called, unknown, options, "it is left out" if len(unknown) == 1 else "they are left out"
    )


def keep_many(key: str, shown: Sequence[str] | None) -> None:
    """Keep the choices the widget ``key`` shows in the address and in the session; None: the page does
    not draw the widget, and its address leaves it out."""
    if shown is not None:
        st.session_state.setdefault(_CHOSEN, {})[key] = list(shown)
    keep(key, list(shown) if shown else None)
