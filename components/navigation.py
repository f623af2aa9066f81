"""The menu ``app.py`` builds from the app's pages (:mod:`page_table`) and the rights that open each.

:data:`~page_table.SECTIONS` is the one list of pages. A page with ``needs`` opens for whoever holds at
least one of those permissions (``db.access.PERMISSIONS``); a page without opens for every role. In team mode the menu
lists only the pages the signed-in user may open, and lists none before sign-in. Every page is still
registered (hidden when not listed), so a deep link to any page URL runs that page: its own
``ctx.require(...)`` then shows the refusal, and before sign-in :func:`components.page_setup.setup_page`
shows the login form. Hiding a page from the menu is convenience; the page's own check is the guard.

To add a page: add its :class:`~page_table.PageSpec` to :mod:`page_table`, and start the page with
``ctx = setup_page(...)`` and ``ctx.require(permission)`` for the same permission.

An address that names no page (a mistyped link, an old bookmark): ``st.navigation`` runs the default
page in its place and the browser rewrites the address to it, under a dialog that names neither the
address nor a way on; once it is closed, the Datasets page stands as if nothing were wrong (and in team
mode the dialog covered the login form). So :func:`build_navigation` registers
each such address the browser asks for as one more hidden page, which runs the "page not found" view it
is given (``missing``): the address stays in the browser, a reload keeps saying it, and the view runs the
shared setup (and in team mode the login form) like every page. The address is remembered for the
browser session, since later runs ask for the page by its hash, not by its name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.scriptrunner import get_script_run_ctx

from components.page_address import Value, address_left, kept_this_run
from db.access import Actor, may
from page_table import SECTIONS, PageSpec, pages, spec_for


def may_open(actor: Actor, spec: PageSpec) -> bool:
    """Whether the actor may open the page (always in local mode)."""
    return not spec.needs or any(may(actor, permission) for permission in spec.needs)


def listed_pages(actor: Actor | None) -> list[PageSpec]:
    """The pages the menu lists for the actor; none for nobody signed in (team mode before login)."""
    return [] if actor is None else [spec for spec in pages() if may_open(actor, spec)]


_UNKNOWN = "_unknown_page_addresses"  # session state: addresses asked for that name no page
MISSING_TITLE = "Page not found"


def _asked_by_name() -> str:
    """The page the browser asked for by its address ("" for none, or when it asked for a page by its
    hash: every run after a session's first, and a click in the menu). Streamlit keeps this in the
    session's page manager, which ``st.navigation`` resolves it against; it has no public reader."""
    ctx = get_script_run_ctx()
    if ctx is None or ctx.pages_manager.intended_page_script_hash:
        return ""
    return ctx.pages_manager.intended_page_name or ""


def unknown_addresses() -> list[str]:
    """The addresses this browser session asked for that name no page, the newest last. An address a
    page cannot be registered under (spaces or ``/`` at its ends) is left to ``st.navigation``'s own
    fallback; a nested one (a ``/`` inside) never reaches the app: ``server.py`` answers it."""
    # "home" names the default page to Streamlit, which serves it at "/" only (``server.py`` sends
    # "/home" there): taken, not unknown.
    known = {spec.url_name() for spec in pages()}
    seen: list[str] = st.session_state.setdefault(_UNKNOWN, [])
    asked = _asked_by_name()
    if (
        asked
        and asked not in known
        and asked not in seen
        and asked == asked.strip().strip("/")
        and "/" not in asked
    ):
        seen.append(asked)
    return list(seen)


def build_navigation(actor: Actor | None, missing: Callable[[str], None]) -> StreamlitPage:
    """``st.navigation`` over every page, listing those :func:`listed_pages` gives; returns the page to
    run. The menu is hidden altogether while nobody is signed in. An address that names no page runs
    ``missing`` with that address (see the module's docstring)."""
    listed = {spec.path for spec in listed_pages(actor)}
    menu: dict[str, list[StreamlitPage]] = {
        section: [
            st.Page(
                spec.path,
                title=spec.title,
                icon=spec.icon,
                url_path=spec.url_path,
                default=spec.default,
                visibility="visible" if spec.path in listed else "hidden",
            )
            for spec in specs
        ]
        for section, specs in SECTIONS.items()
    }
    first = next(iter(menu))
    menu[first] += [
        st.Page(partial(missing, address), title=MISSING_TITLE, url_path=address, visibility="hidden")
        for address in unknown_addresses()
    ]
    return st.navigation(menu, position="sidebar" if listed else "hidden", expanded=True)


PRESENTER = "app_pages/presenter.py"
_ORIGIN = "_origin_page"  # session state: the last page shown other than presenter mode, and its address
# Session state: the slide presenter mode shows while it stays open. Any other page's run forgets it, so
# presenter mode opened again starts where its address says.
PRESENTER_SLIDE = "_presenter_slide"


def remember_origin(page: StreamlitPage) -> None:
    """Note the page about to run, so presenter mode's Esc can go back to where it was opened from (and
    presenter mode opened again reads its slide from its address). Call it after
    :func:`components.page_address.begin_run`: the address noted is the one the run leaves, with the
    values the page keeps written over the one it was asked for, which may be older."""
    if page.url_path != spec_for(PRESENTER).url_path_or_default():
        asked = {name: st.query_params.get_all(name) for name in st.query_params}  # ?subset=a&subset=b
        address = {name: values[0] if len(values) == 1 else values for name, values in asked.items()}
        st.session_state[_ORIGIN] = (page.url_path, address, kept_this_run())
        st.session_state.pop(PRESENTER_SLIDE, None)


def origin() -> tuple[str, dict[str, Value]]:
    """The page (its file) and address presenter mode was opened from; the Metrics page if none."""
    url_path, asked, kept = st.session_state.get(_ORIGIN, ("metrics", {}, {}))
    spec = next(
        (s for s in pages() if s.url_path_or_default() == url_path), spec_for("app_pages/paper_metrics.py")
    )
    return spec.path, address_left(asked, kept)
