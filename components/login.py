"""Team mode's sign-in: who this browser session is, the login form, and logging out.

Identity comes only from a login session (:mod:`db.repositories.accounts`), checked on every script
run, so an expired or idle session, a disabled account or a changed role (which ends the sessions)
takes effect on the next click. The session's token is kept in this Streamlit session's state and in
the ``spanlight_session`` cookie (``SameSite=Strict``, ``Path=/``, as long as a session may last), so a
reload or a second tab of the same browser stays signed in: Streamlit hands the cookie over as
``st.context.cookies`` when the browser connects. Streamlit cannot set a cookie itself; a tiny
component (``session_cookie.js``) writes it in the page and reports back, and until it has, the next
runs keep asking it to. The token never appears in the page's HTML, only in the cookie; the store
keeps only its hash.

With Streamlit's own authentication configured (an ``[auth]`` section in ``secrets.toml``) the login
form also offers "Log in with SSO": the identity provider's e-mail is mapped onto the enabled account
holding that e-mail, and then a login session is started just as after a password login.
"""

from __future__ import annotations

from typing import NoReturn

import streamlit as st
from sqlalchemy import Engine

from components.browser_cookies import BrowserCookie
from db.login_sessions import SESSION_LIMIT
from db.repositories.accounts import (
    LoginRefused,
    UserView,
    authenticate,
    end_session,
    session_user,
    start_session,
    user_for_email,
)
from render.literal_text import literal

COOKIE = "spanlight_session"
_TOKEN = "spanlight_session_token"
_REFUSED = "spanlight_login_refused"
_DRAWN_FOR = "spanlight_page_user"  # the account id the page on screen was drawn for
_AT_LOGIN = "spanlight_login_note"  # what the login form says first (why an action was not saved)
_COOKIE = BrowserCookie(
    COOKIE, component="spanlight_session_cookie", max_age=int(SESSION_LIMIT.total_seconds())
)


def sso_configured() -> bool:
    """Whether Streamlit's OIDC login is set up (``[auth]`` in the secrets; no secrets file: no)."""
    try:
        return "auth" in st.secrets
    except FileNotFoundError:  # Streamlit's "no secrets file" error is one
        return False


def signed_in_user(engine: Engine) -> UserView | None:
    """The user this browser session is signed in as, checked against the store now; None if nobody.

    Looks at the session's token, then at the cookie the browser sent, then (when configured) at
    the identity provider's login.
    """
    token = st.session_state.get(_TOKEN)
    user = session_user(engine, token) if token else None
    if user is None:
        st.session_state.pop(_TOKEN, None)
        cookie = _cookie()
        if cookie and cookie != token:
            user = session_user(engine, cookie)
            if user is not None:
                st.session_state[_TOKEN] = cookie
    if user is None and sso_configured():
        user = _sso_user(engine)
    return user


def drawn_for(user: UserView) -> None:
    """Remember that the page now drawn acts for ``user`` (see :func:`still_signed_in`)."""
    st.session_state[_DRAWN_FOR] = user.id


def still_signed_in(engine: Engine) -> bool:
    """Whether this browser session is still signed in as the user its page was drawn for.

    A click on a part of the page that reruns alone (an annotation unit) does not pass the login check
    at the top of the page, and its callback runs before any page code: without this, a tab left open
    after a logout in another tab (or after the login ended) would go on saving as that user."""
    user = signed_in_user(engine)
    return user is not None and user.id == st.session_state.get(_DRAWN_FOR)


def say_at_login(note: str) -> None:
    """Have the login form, drawn in place of the page, say ``note`` (an action refused because the
    login had ended: without it, the click's work vanished without a word)."""
    st.session_state[_AT_LOGIN] = note


def _cookie() -> str | None:
    """The login cookie the browser sent when it connected (a string or nothing, whatever it sent)."""
    return _COOKIE.read()


def _sso_user(engine: Engine) -> UserView | None:
    """The account the identity provider's login maps onto, signed in; None (and why) otherwise."""
    if st.user.get("is_logged_in") is not True:
        return None
    email = st.user.get("email")
    if not isinstance(email, str) or not email or st.user.get("email_verified") is False:
        st.session_state[_REFUSED] = (
            "Your SSO login gave no verified e-mail address, so it matches no account."
        )
        return None
    user = user_for_email(engine, email)
    if user is None:
        st.session_state[_REFUSED] = f"No enabled account has the e-mail {email}; ask an admin to add it."
        return None
    # As read through the new login session, so this run's writes are bound to it too.
    return session_user(engine, _signed_in(engine, user))


def _forget_the_last_person() -> None:
    """Drop everything this browser session holds: a tab is shared in turn (a lab's workstation), and
    what it kept for the person before (the receipt of their last label, their cursors, filters and
    choices) would show the next one their work, a reviewer's labels to a blind annotator."""
    st.session_state.clear()


def _signed_in(engine: Engine, user: UserView) -> str:
    """Start a login session for ``user``, keep its token here and in the cookie; the token. A tab whose
    page was last drawn for someone else (their login ended without a logout) starts afresh."""
    if st.session_state.get(_DRAWN_FOR, user.id) != user.id:
        _forget_the_last_person()
    token = start_session(engine, user.id)
    st.session_state[_TOKEN] = token
    _ask_cookie(token)
    return token


def _ask_cookie(token: str) -> None:
    """Have the browser keep ``token`` in the cookie ("" deletes it), from the next drawn run on."""
    _COOKIE.ask(token)


def _log_in(engine: Engine) -> None:
    """The login form's submit: check name and password, start a session, or say why not."""
    name = str(st.session_state.get("login_name", ""))
    password = str(st.session_state.get("login_password", ""))
    st.session_state["login_password"] = ""
    try:
        user = authenticate(engine, name, password)
    except LoginRefused as refused:
        st.session_state[_REFUSED] = str(refused)
        return
    _signed_in(engine, user)


def _log_out(engine: Engine) -> None:
    """End the login session in the store (its token stops working everywhere) and drop the cookie."""
    for token in {st.session_state.pop(_TOKEN, None), _cookie()}:
        end_session(engine, token)
    _forget_the_last_person()
    _ask_cookie("")
    # The address names what this user worked on (``?dataset=``…): the next person starts afresh.
    st.query_params.clear()
    if st.user.get("is_logged_in") is True:
        st.logout()  # else the identity provider's login would sign this browser in again at once


def login_gate(engine: Engine) -> NoReturn:
    """The login form, in place of the page, then stop the run."""
    st.title("Spanlight", anchor=False)
    st.subheader("Log in", anchor=False)
    with st.form("login", clear_on_submit=True, width=420):
        st.text_input("Name", key="login_name", autocomplete="username")
        st.text_input("Password", type="password", key="login_password", autocomplete="current-password")
        st.form_submit_button("Log in", type="primary", on_click=_log_in, args=(engine,))
    refused = st.session_state.pop(_REFUSED, None)
    if refused:
        st.error(literal(refused))
    note = st.session_state.pop(_AT_LOGIN, None)
    if note:
        st.warning(literal(note))
    if sso_configured():
        if st.user.get("is_logged_in") is True:
            if st.button("Log out of SSO", help="Then log in with another SSO account."):
                st.logout()
        elif st.button("Log in with SSO", icon=":material/key:"):
            st.login()
    _COOKIE.draw()
    st.stop()


def signed_in_panel(engine: Engine, user: UserView) -> None:
    """The sidebar's "Signed in as NAME (role)" and the logout button."""
    with st.sidebar:
        st.markdown(literal(f"Signed in as {user.name} ({user.role})"))
        st.button("Log out", key="logout", icon=":material/logout:", on_click=_log_out, args=(engine,))
        _COOKIE.draw()
