"""Cookies the app asks the browser to keep: the login token, the dataset last worked on.

Streamlit hands the browser's cookies over as ``st.context.cookies`` when the browser connects (a
reload, a new tab), but cannot set one itself. A tiny component (``session_cookie.js``) writes the
cookie in the page. Once a session has asked for a value, every run draws the component with it, so a
write is never lost to a run that came first; the component writes only when the page's cookie differs
and never reports back. (It once confirmed each write, which cost a second run right after the first:
a key pressed in that moment started a run the confirmation's run took over, and the key was lost.)"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

_JS = Path(__file__).with_name("session_cookie.js")


@cache
def _component(component: str) -> Callable[..., Any]:
    return st.components.v2.component(component, js=_JS.read_text(encoding="utf-8"))


class BrowserCookie:
    """One cookie (``Path=/``, ``SameSite=Strict``), written through its own component."""

    def __init__(self, name: str, *, component: str, max_age: int) -> None:
        self.name = name
        self.max_age = max_age
        self._component = component
        self._wanted = f"spanlight_cookie_wanted:{name}"  # the value this session asked the browser for
        self._writer = f"spanlight_cookie_writer:{name}"  # the component's key
        _component(component)  # components are registered before any page draws one

    def read(self) -> str | None:
        """The value the browser sent when it connected (a non-empty string, or None)."""
        value = st.context.cookies.get(self.name)
        return value if isinstance(value, str) and value else None

    def kept(self) -> str | None:
        """What the browser keeps now as far as this session knows: the value asked for, else what it
        sent when it connected (``st.context.cookies`` stays as it was at connection)."""
        wanted = st.session_state.get(self._wanted)
        return str(wanted) if wanted is not None else self.read()

    def ask(self, value: str) -> None:
        """Have the browser keep ``value`` ("" deletes the cookie), from the next :meth:`draw` on."""
        st.session_state[self._wanted] = value

    def draw(self) -> None:
        """Draw the writer once this session has asked for a value (on every run from then on)."""
        wanted = st.session_state.get(self._wanted)
        if wanted is None:
            return
        _component(self._component)(
            key=self._writer,
            data={"name": self.name, "value": str(wanted), "maxAge": self.max_age},
        )
