"""The one setup every page runs first: page config, the store, migrations, who is working.

The pages live in ``app_pages/``, not ``pages/``: Streamlit's legacy router discovers a folder named
``pages`` beside the entry script and, on a freshly started server, would serve a first request to a
page URL from that file alone, skipping ``app.py`` and its navigation. With no such folder every request
runs ``app.py``, whose ``st.navigation`` then runs the page; each page still starts with
:func:`setup_page` for its title, and the setup is idempotent and cheap on reruns (the engine is cached
per database URL).

Visiting a page writes nothing: the name in "Working as" becomes an annotator row with their first
saved label (:attr:`Annotator.id`), and a name that cannot be an annotator's (reserved, empty, control
characters) is refused in the sidebar with the reason.

In team mode (``SPANLIGHT_MODE=team``) there is no "Working as" box and ``?user=`` is ignored: who is
working is the signed-in user (:mod:`components.login`), and until someone signs in every page shows
the login form instead of itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import streamlit as st
from sqlalchemy import Engine

from components import page_controls
from components.clean_copy import clean_copy
from components.dataset_picker import LOCAL_OWNER, remember_for
from components.login import drawn_for, login_gate, signed_in_panel, signed_in_user
from db.access import Actor, Forbidden, may, require, team_mode
from db.config import redact, resolve_url, setting
from db.engine import make_engine
from db.migrate import upgrade
from db.repositories.accounts import UserView
from db.repositories.annotators import (
    AnnotatorView,
    InvalidName,
    find_annotator,
    get_or_create_annotator,
    validate_name,
)
from formats.problems import quoted

DEFAULT_ANNOTATOR = "annotator"
_USER_KEY = "spanlight_user"


class Annotator:
    """Who is working: a name, stored as an annotator only when they first save something."""

    def __init__(self, engine: Engine, name: str, refused: str | None) -> None:
        self._engine = engine
        self.name = name
        self.refused = refused  # why this name cannot be an annotator's, or None
        self._stored: AnnotatorView | None = None

    def stored(self) -> AnnotatorView | None:
        """The annotator's row if they have saved anything yet (reads only)."""
        if self._stored is None and self.refused is None:
            self._stored = find_annotator(self._engine, self.name)
        return self._stored

    @classmethod
    def signed_in(cls, engine: Engine, user: UserView) -> Annotator:
        """The signed-in user of team mode, whose account is their annotator row."""
        annotator = cls(engine, user.name, None)
        annotator._stored = AnnotatorView(user.id, user.name, user.role)
        return annotator

    @property
    def id(self) -> int:
        """The annotator's id, creating their row: only for a save (raises InvalidName if refused)."""
        if self.refused is not None:
            raise InvalidName(self.refused)
        if self._stored is None:
            self._stored = get_or_create_annotator(self._engine, self.name)
        return self._stored.id


@dataclass(frozen=True)
class PageContext:
    engine: Engine
    annotator: Annotator
    database: str  # redacted URL, for display
    # Who is acting: the logged-in user in team mode; in local mode the person at the machine, who
    # holds every right (their annotator row may not exist yet: ``id`` is then None).
    actor: Actor
    team: bool = False

    def may(self, permission: str) -> bool:
        """Whether the current user holds the permission (see ``db.access.PERMISSIONS``)."""
        return may(self.actor, permission)

    def require(self, permission: str) -> None:
        """Stop the page with the reason unless the current user holds the permission: every page
        checks what it shows, not only what its buttons write."""
        try:
            require(self.actor, permission)
        except Forbidden as refused:
            st.error(str(refused))
            st.stop()


@st.cache_resource(show_spinner="Opening the store…")
def engine_for(url: str) -> Engine:
    """One engine per database URL for the whole server, migrated to the newest schema once."""
    engine = make_engine(url)
    upgrade(engine)
    return engine


# In local mode the person at the machine holds every right; the menu needs no more than that.
LOCAL_ACTOR = Actor(None, "local", "admin")


def menu_actor() -> Actor | None:
    """Whose pages the menu lists: in team mode the signed-in user (None before sign-in); in local mode
    the person at the machine."""
    if not team_mode():
        return LOCAL_ACTOR
    user = signed_in_user(engine_for(resolve_url()))
    return None if user is None else user.as_actor()


def _who(engine: Engine) -> Annotator:
    """The annotator of this browser session: kept in session state and in the URL (survives reload)."""
    name = (
        st.session_state.get(_USER_KEY) or st.query_params.get("user") or setting("USER") or DEFAULT_ANNOTATOR
    )
    try:
        annotator = Annotator(engine, validate_name(engine, name), None)
    except InvalidName as refused:
        annotator = Annotator(engine, name, f"You cannot work as {quoted(name)}: {refused}")
    st.session_state[_USER_KEY] = annotator.name
    if st.query_params.get("user") != annotator.name:
        st.query_params["user"] = annotator.name
    return annotator


def _literal(text: str) -> str:
    """Markdown that shows ``text`` exactly (a typed name is untrusted): every punctuation escaped."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)


def _change_user() -> None:
    typed = " ".join(str(st.session_state.get("_user_input", "")).split())
    if typed:
        st.session_state[_USER_KEY] = typed


def setup_page(title: str, *, layout: Literal["centered", "wide"] = "wide") -> PageContext:
    """Configure the page and return the store and the current annotator (in team mode: the signed-in
    user, after the login form when nobody is)."""
    st.set_page_config(page_title=f"{title} · Spanlight", page_icon="🔍", layout=layout)
    clean_copy()
    url = resolve_url()
    engine = engine_for(url)
    if team_mode():
        user = signed_in_user(engine) or login_gate(engine)
        drawn_for(user)
        page_controls.reserve()
        remember_for(f"u{user.id}")
        signed_in_panel(engine, user)
        st.sidebar.caption(f"Store: `{redact(url)}`")
        if "user" in st.query_params:  # identity comes from the login alone
            del st.query_params["user"]
        return PageContext(
            engine=engine,
            annotator=Annotator.signed_in(engine, user),
            database=redact(url),
            actor=user.as_actor(),
            team=True,
        )
    annotator = _who(engine)
    page_controls.reserve()
    remember_for(LOCAL_OWNER)
    with st.sidebar:
        st.text_input(
            "Working as",
            value=annotator.name,
            key="_user_input",
            on_change=_change_user,
            help="Your labels are saved under this name. It stays in the page address, so a reload keeps it.",
        )
        if annotator.refused:
            st.error(_literal(annotator.refused))
        st.caption(f"Store: `{redact(url)}`")
    stored = annotator.stored()
    actor = Actor(stored.id if stored is not None else None, annotator.name, "admin")
    return PageContext(
        engine=engine, annotator=annotator, database=redact(url), actor=actor, team=team_mode()
    )
