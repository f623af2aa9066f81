"""Cache repository reads until the store changes.

Every write bumps the store revision in the same transaction (``db.engine.write_session``), so a read
cached under (function, database, revision, arguments) is exact: it is served from memory until any
label, prediction or import commits, and recomputed right after, in every app process.

:func:`cached` hands every caller its own copy (``st.cache_data``); :func:`shared` hands every caller
the same object (``st.cache_resource``), for large results the callers only read: copying a table of
a hundred thousand rows on every rerun would cost more than the page itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st
from sqlalchemy import Engine

from db.engine import store_revision

T = TypeVar("T")


@st.cache_data(show_spinner=False, max_entries=512)
def _call(
    name: str, url: str, revision: int, args: tuple[Any, ...], _fn: Callable[..., Any], _engine: Engine
) -> Any:
    return _fn(_engine, *args)


def cached(fn: Callable[..., T], engine: Engine, *args: Any) -> T:
    """``fn(engine, *args)``, computed once per store revision."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    result: T = _call(
        name, engine.url.render_as_string(hide_password=False), store_revision(engine), args, fn, engine
    )
    return result


@st.cache_resource(show_spinner=False, max_entries=16)  # bulk inputs: a few revisions' worth
def _shared(
    name: str, url: str, revision: int, args: tuple[Any, ...], _fn: Callable[..., Any], _engine: Engine
) -> Any:
    return _fn(_engine, *args)


def shared(fn: Callable[..., T], engine: Engine, *args: Any) -> T:
    """``fn(engine, *args)``, computed once per store revision and shared, not copied: treat it as read-only."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    result: T = _shared(
        name, engine.url.render_as_string(hide_password=False), store_revision(engine), args, fn, engine
    )
    return result
