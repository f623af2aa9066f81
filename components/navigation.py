"""The app's pages and the rights that open each one: the menu ``app.py`` builds.

:data:`SECTIONS` is the one list of pages. A page with ``needs`` opens for whoever holds at least one of
those permissions (``db.access.PERMISSIONS``); a page without opens for every role. In team mode the menu
lists only the pages the signed-in user may open, and lists none before sign-in. Every page is still
registered (hidden when not listed), so a deep link to any page URL runs that page: its own
``ctx.require(...)`` then shows the refusal, and before sign-in :func:`components.page_setup.setup_page`
shows the login form. Hiding a page from the menu is convenience; the page's own check is the guard.

To add a page: add its :class:`PageSpec` here, and start the page with ``ctx = setup_page(...)`` and
``ctx.require(permission)`` for the same permission.

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
from dataclasses import dataclass
from functools import partial

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.scriptrunner import get_script_run_ctx

from db.access import PERMISSIONS, Actor, may


@dataclass(frozen=True)
class PageSpec:
    path: str  # the page file, relative to app.py
    title: str
    icon: str
    # Any one of these permissions opens the page; none: every role may open it.
    needs: tuple[str, ...] = ()
    url_path: str | None = None
    default: bool = False

    def __post_init__(self) -> None:
        unknown = [p for p in self.needs if p not in PERMISSIONS]
        if unknown:
            raise KeyError(f"{self.path}: unknown permission(s) {unknown}")

    def url_path_or_default(self) -> str:
        """The page's address as ``st.Page`` makes it: its url_path, "" for the default page, else the
        file's name."""
        return "" if self.default else self.url_name()

    def url_name(self) -> str:
        """The name ``st.Page`` registers the page under, the default page too (which it serves at "")."""
        return self.url_path or self.path.rsplit("/", 1)[-1].removesuffix(".py")


SECTIONS: dict[str, tuple[PageSpec, ...]] = {
    "Data": (
        PageSpec("app_pages/home.py", "Datasets", ":material/dataset:", default=True),
        PageSpec("app_pages/browse.py", "Browse items", ":material/table_rows:"),
        PageSpec("app_pages/item.py", "Item", ":material/image:"),
        PageSpec("app_pages/import_data.py", "Import", ":material/upload:", ("manage_data",)),
        PageSpec("app_pages/export_data.py", "Export", ":material/download:", ("export",)),
    ),
    "Annotate": (
        PageSpec("app_pages/spans.py", "Mark spans", ":material/format_ink_highlighter:", ("label",)),
        PageSpec("app_pages/sentences.py", "Label sentences", ":material/format_list_bulleted:", ("label",)),
        PageSpec("app_pages/claims.py", "Judge claims", ":material/fact_check:", ("label",)),
        PageSpec("app_pages/triplets.py", "Judge triplets", ":material/account_tree:", ("label",)),
        PageSpec("app_pages/rate.py", "Rate detector outputs", ":material/star_rate:", ("label",)),
        PageSpec("app_pages/score_responses.py", "Score responses", ":material/grade:", ("label",)),
        PageSpec("app_pages/rating_tasks.py", "Rating tasks", ":material/rule:", ("manage_data",)),
        PageSpec("app_pages/adjudicate.py", "Adjudicate", ":material/gavel:", ("adjudicate",)),
        PageSpec("app_pages/overrides.py", "Overridden labels", ":material/feedback:", ("label",)),
    ),
    "Inspect": (
        PageSpec("app_pages/compare.py", "Compare detectors", ":material/compare:", ("view_reports",)),
        PageSpec("app_pages/failures.py", "Failure cases", ":material/bug_report:", ("view_reports",)),
        PageSpec("app_pages/run_detector.py", "Run detector", ":material/smart_toy:", ("manage_data",)),
    ),
    "Measure": (
        PageSpec(
            "app_pages/paper_metrics.py",
            "Metrics",
            ":material/leaderboard:",
            ("view_reports",),
            url_path="metrics",
        ),
        PageSpec("app_pages/correlation.py", "Correlation", ":material/scatter_plot:", ("view_reports",)),
        PageSpec("app_pages/agreement.py", "Agreement", ":material/group:", ("view_reports",)),
        PageSpec("app_pages/presenter.py", "Presenter mode", ":material/slideshow:", ("view_reports",)),
    ),
    "Team": (PageSpec("app_pages/team.py", "Team", ":material/groups:", ("manage_team", "see_progress")),),
}


def pages() -> list[PageSpec]:
    return [spec for section in SECTIONS.values() for spec in section]


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


def remember_origin(page: StreamlitPage) -> None:
    """Note the page about to run, so presenter mode's Esc can go back to where it was opened from."""
    if page.url_path != spec_for(PRESENTER).url_path_or_default():
        st.session_state[_ORIGIN] = (page.url_path, st.query_params.to_dict())


def origin() -> tuple[str, dict[str, str]]:
    """The page (its file) and address presenter mode was opened from; the Metrics page if none."""
    url_path, query = st.session_state.get(_ORIGIN, ("metrics", {}))
    spec = next(
        (s for s in pages() if s.url_path_or_default() == url_path), spec_for("app_pages/paper_metrics.py")
    )
    return spec.path, query


def spec_for(path: str) -> PageSpec:
    return next(spec for spec in pages() if spec.path == path)
