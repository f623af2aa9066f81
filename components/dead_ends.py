"""What a page shows when a link leads nowhere — an item id that is not in the dataset, an address that
names no page: what is missing, and links on (the dataset's first item on this page, Browse, the
Datasets page; every page the user may open), so a stale or mistyped link is never a dead end."""

from __future__ import annotations

import difflib

import streamlit as st

from components.navigation import MISSING_TITLE, listed_pages
from components.page_setup import setup_page
from db.repositories.datasets import DatasetInfo
from formats.problems import quoted
from page_table import SECTIONS, PageSpec
from render.literal_text import literal, literal_code


def missing_item(dataset: DatasetInfo, wanted: str | None, page: str, first: str | None) -> None:
    """Say that ``dataset`` has no item ``wanted`` and offer ways on. ``page``: this page's script
    (for the link to ``first``, the item to open instead; None: the page picks one itself)."""
    st.warning(
        f"Dataset {literal(quoted(dataset.name))} has no item with id {literal(quoted(str(wanted)))}: "
        "it may have been removed, or the link is mistyped."
    )
    ways = st.container(horizontal=True)
    ways.page_link(
        page,
        label="Open its first item" if first is not None else "Open the next item",
        icon=":material/arrow_forward:",
        query_params={"dataset": dataset.name, **({"item": first} if first is not None else {})},
    )
    ways.page_link(
        "app_pages/browse.py",
        label=f"Browse {literal(dataset.name)}",
        icon=":material/table_rows:",
        query_params={"dataset": dataset.name},
    )
    ways.page_link("app_pages/home.py", label="All datasets", icon=":material/dataset:")


def _likely(address: str, specs: list[PageSpec]) -> list[PageSpec]:
    """The pages whose address or title the unknown ``address`` nearly spells ("Claims", "paper_metrics")."""
    names = {spec.url_path_or_default() or "home": spec for spec in specs}
    names.update({spec.title.lower(): spec for spec in specs})
    close = difflib.get_close_matches(address.lower(), list(names), n=3, cutoff=0.6)
    return list(dict.fromkeys(names[name] for name in close))


def missing_page(address: str) -> None:
    """The page at an address that names no page (``address``, without its leading ``/``; untrusted:
    shown as its characters): it says so, offers the pages it nearly spells, and lists every page the
    user may open, by the menu's sections. It runs the shared setup first, like every page, so in team
    mode nobody signed in sees the login form instead."""
    ctx = setup_page(MISSING_TITLE)
    st.title(MISSING_TITLE, anchor=False)
    st.warning(
        f"There is no page at {literal_code('/' + address)}: the address may be mistyped, or a bookmark "
        "of a page that has since moved.",
        icon=":material/link_off:",
    )
    opens = listed_pages(ctx.actor)
    likely = _likely(address, opens)
    if likely:
        st.markdown("**Did you mean**")
        with st.container(horizontal=True):
            for spec in likely:
                st.page_link(spec.path, label=spec.title, icon=spec.icon)
    st.markdown("**The pages you can open**")
    for name, specs in SECTIONS.items():
        mine = [spec for spec in specs if spec in opens]
        if mine:
            st.caption(name)
            with st.container(horizontal=True, gap="small"):  # a row per section, wrapped, never cut
                for spec in mine:
                    st.page_link(spec.path, label=spec.title, icon=spec.icon)
