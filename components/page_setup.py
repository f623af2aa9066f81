"""The one setup every page runs first: page config, the store, migrations, who is working.

The pages live in ``app_pages/``, not ``pages/``: Streamlit's legacy router discovers a folder named
``pages`` beside the entry script and, on a freshly started server, would serve a first request to a
page URL from that file alone, skipping ``app.py`` and its navigation. With no such folder every request
runs ``app.py``, whose ``st.navigation`` then runs the page; each page still starts with
:func:`setup_page` for its title, and the setup is idempotent and cheap on reruns (the engine is cached
per database URL).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import streamlit as st
from sqlalchemy import Engine

from db.config import redact, resolve_url, setting
from db.engine import make_engine
from db.migrate import upgrade
from db.repositories.annotators import AnnotatorView, get_or_create_annotator

DEFAULT_ANNOTATOR = "annotator"
_USER_KEY = "spanlight_user"


@dataclass(frozen=True)
class PageContext:
    engine: Engine
    annotator: AnnotatorView
    database: str  # redacted URL, for display


@st.cache_resource(show_spinner="Opening the store…")
def engine_for(url: str) -> Engine:
    """One engine per database URL for the whole server, migrated to the newest schema once."""
    engine = make_engine(url)
    upgrade(engine)
    return engine


def _who(engine: Engine) -> AnnotatorView:
    """The annotator of this browser session: kept in session state and in the URL (survives reload)."""
    name = (
        st.session_state.get(_USER_KEY) or st.query_params.get("user") or setting("USER") or DEFAULT_ANNOTATOR
    )
    annotator = get_or_create_annotator(engine, name)
    st.session_state[_USER_KEY] = annotator.name
    if st.query_params.get("user") != annotator.name:
        st.query_params["user"] = annotator.name
    return annotator


def _change_user() -> None:
    typed = " ".join(str(st.session_state.get("_user_input", "")).split())
    if typed:
        st.session_state[_USER_KEY] = typed


def setup_page(title: str, *, layout: Literal["centered", "wide"] = "wide") -> PageContext:
    """Configure the page and return the store and the current annotator."""
    st.set_page_config(page_title=f"{title} · Spanlight", page_icon="🔍", layout=layout)
    url = resolve_url()
    engine = engine_for(url)
    annotator = _who(engine)
    with st.sidebar:
        st.text_input(
            "Working as",
            value=annotator.name,
            key="_user_input",
            on_change=_change_user,
            help="Your labels are saved under this name. It stays in the page address, so a reload keeps it.",
        )
        st.caption(f"Store: `{redact(url)}`")
    return PageContext(engine=engine, annotator=annotator, database=redact(url))
