"""Choosing the dataset a page works on, and keeping that choice until the user changes it.

The dataset of a page is, in this order: the ``?dataset=`` of the address the page opened with (read
once: see :mod:`components.page_address`); the one this user last worked on in this browser session;
the one they last worked on in this browser (a cookie, read when the browser connects, so a reload or
a new tab keeps it); else the demo, else the dataset imported last. Never the first name in
alphabetical order: a dataset whose name sorts first would become everyone's default.
Every page writes its dataset back to ``?dataset=``, so the address always says which one it shows,
and moving to another page (where the menu's links carry no parameters) keeps it.

The memory is per user: in team mode each account has its own cookie and its own entry in the
session, so signing in as someone else on the same browser never opens the previous user's dataset;
and only a dataset the store still lists is ever opened from it.

The picker reads only the datasets' settings, never their counts: counting scans every item and label,
and every annotator action changes the store, so the counts would be recomputed on each rerun of an
annotation page (about 0.25 s at 100 K items).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

import streamlit as st
from sqlalchemy import Engine

from components import page_controls
from components.browser_cookies import BrowserCookie
from components.page_address import from_address, keep
from components.store_cache import cached
from db.repositories.datasets import DatasetInfo, list_dataset_infos
from formats.problems import quoted
from render.literal_text import literal

WIDGET = "dataset_picker"
_OWNER = "spanlight_dataset_owner"  # whose memory this run uses (set by setup_page on every run)
_MEMORY = "spanlight_dataset"  # {"owner": …, "name": …}: the dataset last used in this session
_COOKIE_PREFIX = "spanlight_dataset"
_KEEP_SECONDS = 365 * 24 * 3600
LOCAL_OWNER = ""


def remember_for(owner: str) -> None:
    """Whose choice this run reads and keeps: ``LOCAL_OWNER`` for the person at the machine, else the
    signed-in account's id (called by ``setup_page``)."""
    st.session_state[_OWNER] = owner


def _owner() -> str:
    return str(st.session_state.get(_OWNER, LOCAL_OWNER))


def _cookie() -> BrowserCookie:
    owner = _owner()
    name = f"{_COOKIE_PREFIX}_{owner}" if owner else _COOKIE_PREFIX
    return BrowserCookie(name, component="spanlight_dataset_cookie", max_age=_KEEP_SECONDS)


def _remembered() -> str | None:
    """The dataset this user last used: in this session, else in this browser."""
    memory = st.session_state.get(_MEMORY)
    if isinstance(memory, dict) and memory.get("owner") == _owner():
        return str(memory["name"])
    stored = _cookie().read()
    return unquote(stored) if stored else None


def _remember(name: str) -> None:
    st.session_state[_MEMORY] = {"owner": _owner(), "name": name}
    cookie = _cookie()
    value = quote(name, safe="")
    if value != cookie.kept():
        cookie.ask(value)


def _fallback(datasets: list[DatasetInfo]) -> DatasetInfo:
    """A first visit's dataset: the demo, else the one imported last."""
    demo = next((d for d in datasets if d.is_synthetic), None)
    return demo or max(datasets, key=lambda d: d.id)


def _resolve(datasets: list[DatasetInfo]) -> tuple[DatasetInfo, str | None]:
    """The dataset to open, and the ``?dataset=`` asked for when no dataset has that name."""
    by_name = {d.name: d for d in datasets}
    wanted = from_address("dataset")
    if wanted is not None and wanted in by_name:
        st.session_state[_MEMORY] = {"owner": _owner(), "name": wanted}  # the address is read once
        return by_name[wanted], None
    remembered = _remembered()
    chosen = by_name[remembered] if remembered in by_name else _fallback(datasets)
    return chosen, wanted


def current_dataset(engine: Engine) -> DatasetInfo | None:
    """The dataset the user works on (see the module docstring), without drawing anything."""
    datasets = cached(list_dataset_infos, engine)
    return _resolve(datasets)[0] if datasets else None


def _missing_dataset(missing: str, chosen: DatasetInfo, *, home: bool = False) -> None:
    """Say that the link's dataset does not exist, what is shown instead, and (off the Datasets page)
    link to the list of datasets."""
    st.warning(
        f"There is no dataset named {literal(quoted(missing))}: it may have been renamed or removed. "
        f"Showing {literal(quoted(chosen.name))} instead."
    )
    if not home:
        st.page_link("app_pages/home.py", label="All datasets", icon=":material/dataset:")


def _picked() -> None:
    name = str(st.session_state[WIDGET])
    st.query_params["dataset"] = name
    _remember(name)


def pick_dataset(engine: Engine, *, where: Any = None) -> DatasetInfo | None:
    """The dataset selector, in the page controls' place unless ``where`` says otherwise; starts from
    :func:`current_dataset` and keeps the choice in the address and in the user's memory."""
    datasets = cached(list_dataset_infos, engine)
    if not datasets:
        st.info("No dataset yet: run `python cli.py demo` for the synthetic demo, or import a benchmark.")
        return None
    chosen, missing = _resolve(datasets)
    if missing is not None:
        _missing_dataset(missing, chosen)
    # Set on every run: a widget of another page with the same key is another widget, which would
    # otherwise start at the first option.
    st.session_state[WIDGET] = chosen.name
    target = page_controls.place() if where is None else where
    target.selectbox("Dataset", [d.name for d in datasets], key=WIDGET, on_change=_picked)
    _keep(chosen.name, target)
    return chosen


def dataset_switched(marker: str, dataset: DatasetInfo) -> bool:
    """Whether ``dataset`` is another than the one of the last run that asked under ``marker`` (True on
    the first), noting it for the next run. A page drops the choices it keeps for one dataset when this
    says so: a widget keeps its value whatever its default, so they would outlive a switch."""
    switched = st.session_state.get(marker) != dataset.id
    st.session_state[marker] = dataset.id
    return switched


def _keep(name: str, where: Any) -> None:
    """Write the page's dataset to the address and to the user's memory (the cookie's writer goes in
    ``where``)."""
    keep("dataset", name)
    _remember(name)
    with where:
        _cookie().draw()


def keep_dataset(engine: Engine) -> DatasetInfo | None:
    """For a page without the picker (the Datasets page): the current dataset, kept like a pick, so a
    ``?dataset=`` link to it is remembered too."""
    datasets = cached(list_dataset_infos, engine)
    if not datasets:
        return None
    chosen, missing = _resolve(datasets)
    if missing is not None:  # said here; the address is left for the page the link goes on to
        _missing_dataset(missing, chosen, home=True)
    else:
        _keep(chosen.name, page_controls.place())
    return chosen
