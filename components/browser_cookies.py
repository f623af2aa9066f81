"""Cookies the app asks the browser to keep: the login token, the dataset last worked on.

Streamlit hands the browser's cookies over as ``st.context.cookies`` when the browser connects (a
reload, a new tab), but cannot set one itself. A tiny component (``session_cookie.js``) writes the
cookie in the page and reports back which write it carried out; until it has, the next runs keep asking
it to, so a write is never lost to a rerun that came first.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

_JS = Path(__file__).with_name("session_cookie.js")


@cache
def _component(component: str) -> Callable[..., Any]:
    return st.components.v2.component(component, js=_JS.read_text(encoding="utf-8"))


def _confirmed() -> None:
    """The component's report arrives as a widget change; the run it starts forgets the write."""


class BrowserCookie:
    """One cookie (``Path=/``, ``SameSite=Strict``), written through its own component."""

    def __init__(self, name: str, *, component: str, max_age: int) -> None:
        self.name = name
        self.max_age = max_age
        self._component = component
        self._pending = f"spanlight_cookie_write:{name}"  # the write the browser has not confirmed
        self._writer = f"spanlight_cookie_writer:{name}"  # the component's key (its state: write done)
        self._kept = f"spanlight_cookie_kept:{name}"  # the last value the browser confirmed keeping
        _component(component)  # components are registered before any page draws one

    def read(self) -> str | None:
        """The value the browser sent when it connected (a non-empty string, or None)."""
        value = st.context.cookies.get(self.name)
        return value if isinstance(value, str) and value else None

    def pending(self) -> str | None:
        """The value asked for and not yet confirmed by the browser, if any."""
        wanted = st.session_state.get(self._pending)
        return str(wanted["value"]) if isinstance(wanted, Mapping) else None

    def kept(self) -> str | None:
        """What the browser keeps now as far as this session knows: the value asked for, else the last
        one it confirmed writing, else what it sent when it connected. (``st.context.cookies`` stays
        as it was at connection, so comparing with it alone would ask for the same write on every run,
        and each write's confirmation costs the page one more run.)"""
        pending = self.pending()
        if pending is not None:
            return pending
        confirmed = st.session_state.get(self._kept)
        return str(confirmed) if confirmed is not None else self.read()

    def ask(self, value: str) -> None:
        """Have the browser keep ``value`` ("" deletes the cookie), from the next :meth:`draw` on."""
        st.session_state[self._pending] = {"write": secrets.token_hex(8), "value": value}

    def draw(self) -> None:
        """Draw the component while a write is unconfirmed; forget the write once confirmed."""
        wanted = st.session_state.get(self._pending)
        if not isinstance(wanted, Mapping):
            return
        done = st.session_state.get(self._writer)
        if isinstance(done, Mapping) and done.get("written") == wanted["write"]:
            st.session_state[self._kept] = str(wanted["value"])
            del st.session_state[self._pending]
            return
        _component(self._component)(
            key=self._writer,
            data={
                "name": self.name,
                "value": wanted["value"],
                "maxAge": self.max_age,
                "write": wanted["write"],
            },
            on_written_change=_confirmed,
        )
