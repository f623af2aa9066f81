"""Team mode's login, driven through AppTest on a real store: the form, refusals and lockout, who is
signed in, logout, sessions that expire or end, identity from the login only, and optional SSO."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from streamlit.testing.v1 import AppTest

from components.login import COOKIE
from components.span_selector.apptest import simulate_action
from db import login_sessions
from db import models as m
from db.access import OPERATOR
from db.engine import make_engine, read_session, store_revision, write_session
from db.repositories import accounts, labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import find_annotator
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from tests.pages.demo_store import DEMO, demo_store
from tests.pages.team_store import PASSWORD, assign, fresh_app, is_login_form, log_in, signed_in

TOKEN_KEY = "spanlight_session_token"  # where the login keeps its token in session state
SSO_SECRETS = {
    "auth": {
        "redirect_uri": "http://localhost:8501/oauth2callback",
        "cookie_secret": "a cookie secret for the tests",
        "client_id": "spanlight",
        "client_secret": "not a real secret",
        "server_metadata_url": "https://login.example.invalid/.well-known/openid-configuration",
    }
}


@pytest.fixture
def store(team_db: str) -> str:
    return team_db


def _cookie_writes(at: AppTest) -> list[dict[str, Any]]:
    """What the cookie component was asked to write on the last run."""
    return [
        json.loads(e.proto.json)
        for e in at.get("bidi_component")
        if e.proto.component_name == "spanlight_session_cookie"
    ]


def _signed_in_as(at: AppTest) -> list[str]:
    return [md.value for md in at.sidebar.markdown if md.value.startswith("Signed in as")]


def test_wrong_password_and_unknown_name_are_refused_alike(store: str) -> None:
    at = fresh_app().run()
    assert is_login_form(at)
    log_in(at, "alice", "not the password")
    assert [e.value for e in at.error] == ["Wrong name or password."]
    log_in(at, "nobody at all", PASSWORD)
    assert [e.value for e in at.error] == ["Wrong name or password."]
    assert is_login_form(at) and not _signed_in_as(at)


@pytest.mark.parametrize(
    ("name", "password"),
    [("ali\x00ce", PASSWORD), ("alice", "pass\x00word")],
)
def test_a_name_or_password_no_store_can_hold_is_refused_like_a_wrong_one(
    store: str, name: str, password: str
) -> None:
    """Anyone can type at the login form: the page gives the login's own answer. (This store is SQLite;
    on PostgreSQL a NUL failed the query: tests/db/test_unstorable_names.py holds both stores to it.
    Broken Unicode cannot come from a browser, whose strings reach the app as UTF-8.)"""
    at = fresh_app().run()
    log_in(at, name, password)
    assert [e.value for e in at.error] == ["Wrong name or password."]
    assert is_login_form(at) and not _signed_in_as(at)
    log_in(at, "alice", PASSWORD)  # and the failure counted against nobody's right password
    assert _signed_in_as(at)


def test_five_failures_lock_the_account_even_against_the_right_password(store: str) -> None:
    at = fresh_app().run()
    for _ in range(accounts.MAX_FAILURES):
        log_in(at, "alice", "wrong password!")
    log_in(at, "alice", PASSWORD)
    assert [e.value for e in at.error] == [
        "Too many failed logins: this account is locked for 15 more minute(s)."
    ]
    assert is_login_form(at)
    assert signed_in("bob").error == []  # other accounts are not affected


def test_login_shows_who_and_keeps_no_password(store: str) -> None:
    at = signed_in("alice")
    assert _signed_in_as(at) == ["Signed in as alice (annotator)"]
    assert not is_login_form(at)
    assert "Working as" not in [t.label for t in at.text_input]
    assert at.session_state["login_password"] == ""
    token = at.session_state[TOKEN_KEY]
    # The browser is asked to keep the token as the login cookie, as long as a login may last …
    [write] = _cookie_writes(at)
    assert write["name"] == COOKIE and write["value"] == token
    assert write["maxAge"] == int(accounts.SESSION_LIMIT.total_seconds())
    # … and it appears nowhere else on the page.
    others = [
        str(e.proto) for e in at.get("bidi_component") if e.proto.component_name != "spanlight_session_cookie"
    ]
    texts = [str(getattr(e, "value", "")) for e in (*at.markdown, *at.caption, *at.text, *at.error)]
    assert not any(token in t for t in others + texts)
    assert accounts.session_user(make_engine(store), token).name == "alice"


def test_logout_ends_the_session_and_deletes_the_cookie(store: str) -> None:
    at = signed_in("rev")
    token = at.session_state[TOKEN_KEY]
    next(b for b in at.sidebar.button if b.label == "Log out").click().run()
    assert is_login_form(at) and not _signed_in_as(at)
    assert accounts.session_user(make_engine(store), token) is None
    assert [w["value"] for w in _cookie_writes(at)] == [""]  # the browser is asked to drop the cookie
    at.switch_page("app_pages/browse.py").run()
    assert is_login_form(at)


def _expire(url: str, **values: Any) -> None:
    with write_session(make_engine(url)) as session:
        session.execute(update(m.LoginSession).values(**values))


@pytest.mark.parametrize(
    "change",
    ["expired", "idle too long", "account disabled", "role changed", "password changed"],
)
def test_a_login_that_ends_in_the_store_shows_the_form_at_the_next_click(store: str, change: str) -> None:
    at = signed_in("alice")
    at.switch_page("app_pages/browse.py").run()
    assert _signed_in_as(at) == ["Signed in as alice (annotator)"]
    engine = make_engine(store)
    now = m.utcnow()
    if change == "expired":
        _expire(store, expires_at=now - timedelta(seconds=1))
    elif change == "idle too long":
        _expire(store, last_seen=now - login_sessions.IDLE_LIMIT - timedelta(minutes=1))
    elif change == "account disabled":
        accounts.set_disabled(engine, "alice", True, actor=OPERATOR)
    elif change == "role changed":
        accounts.set_role(engine, "alice", "viewer", actor=OPERATOR)
    else:
        accounts.set_password(engine, "alice", "another long password", actor=OPERATOR)
    at.run()
    assert is_login_form(at) and not _signed_in_as(at)
    assert not at.sidebar.selectbox  # no page behind the form


def test_identity_comes_from_the_login_not_the_address(store: str) -> None:
    at = signed_in("rev", user="bob", item="demo-004")
    assert "user" not in at.query_params
    at.switch_page("app_pages/spans.py").run()
    assert not at.exception, at.exception
    assert "user" not in at.query_params
    item = get_item(make_engine(store), 1, "demo-004")
    first_word = len(item.response.split()[0])  # a whole word: a partial one would be widened
    simulate_action(at, f"span_selector_{item.id}", "add", {"start": 0, "end": first_word, "type": "Object"})
    assert not at.exception, at.exception
    engine = make_engine(store)
    [rev_set] = [ls for ls in list_label_sets(engine, 1, kind="human") if ls.annotator == "rev"]
    assert [(s.start, s.end) for s in item_annotations(engine, item.id, [rev_set.id])[rev_set.id].spans] == [
        (0, first_word)
    ]
    bob_set = next(ls for ls in list_label_sets(engine, 1, kind="human") if ls.annotator == "bob")
    assert all(
        s.start != 0 or s.end != 3 for s in item_annotations(engine, item.id, [bob_set.id])[bob_set.id].spans
    )


def test_local_mode_has_no_login(sqlite_url, tmp_path, monkeypatch) -> None:
    demo_store(sqlite_url, tmp_path, monkeypatch)
    monkeypatch.delenv("SPANLIGHT_MODE", raising=False)
    at = fresh_app(dataset=DEMO, user="carol").run()
    assert not is_login_form(at)
    assert "Working as" in [t.label for t in at.sidebar.text_input]
    assert at.query_params["user"] == ["carol"] or at.query_params["user"] == "carol"
    assert not _signed_in_as(at)


def test_no_sso_button_without_auth_settings(store: str) -> None:
    at = fresh_app().run()
    assert not [b for b in at.button if "SSO" in b.label]


def _sso_app(**user: Any) -> AppTest:
    at = fresh_app()
    at.secrets = SSO_SECRETS
    at.user = user
    return at.run()


def test_sso_offers_its_button_and_signs_in_the_account_with_that_email(store: str) -> None:
    accounts.add_user(
        make_engine(store), "sso person", "reviewer", PASSWORD, email="sso@example.org", actor=OPERATOR
    )
    at = _sso_app(is_logged_in=False)
    assert is_login_form(at)
    assert [b.label for b in at.button if "SSO" in b.label] == ["Log in with SSO"]
    at = _sso_app(is_logged_in=True, email="sso@example.org", email_verified=True)
    assert not at.exception, at.exception
    assert _signed_in_as(at) == ["Signed in as sso person (reviewer)"]
    assert accounts.session_user(make_engine(store), at.session_state[TOKEN_KEY]).name == "sso person"
    next(b for b in at.sidebar.button if b.label == "Log out").click().run()
    assert is_login_form(at)  # logged out of the provider too, so not signed straight back in


@pytest.mark.parametrize("who", ["unknown", "disabled", "unverified"])
def test_sso_refuses_an_email_without_an_enabled_account(store: str, who: str) -> None:
    engine = make_engine(store)
    accounts.add_user(engine, "sso person", "reviewer", PASSWORD, email="sso@example.org", actor=OPERATOR)
    if who == "disabled":
        accounts.set_disabled(engine, "sso person", True, actor=OPERATOR)
    email = "stranger@example.org" if who == "unknown" else "sso@example.org"
    at = _sso_app(is_logged_in=True, email=email, email_verified=who != "unverified")
    assert is_login_form(at) and not _signed_in_as(at)
    if who == "unverified":
        assert [e.value for e in at.error] == [
            "Your SSO login gave no verified e-mail address, so it matches no account."
        ]
    else:
        assert len(at.error) == 1 and at.error[0].value.startswith("No enabled account has the e")
    assert [b.label for b in at.button if "SSO" in b.label] == ["Log out of SSO"]


def test_refreshing_a_logins_last_seen_leaves_the_store_revision_and_caches_alone(store: str) -> None:
    engine = make_engine(store)
    token = accounts.start_session(engine, accounts.authenticate(engine, "alice", PASSWORD).id)
    _expire(store, last_seen=m.utcnow() - timedelta(minutes=30))  # due for a refresh
    before = store_revision(engine)
    assert accounts.session_user(engine, token) is not None
    with read_session(engine) as session:
        seen = session.scalar(select(m.LoginSession.last_seen))
    assert seen is not None and login_sessions.aware(seen) > m.utcnow() - timedelta(minutes=1)  # refreshed
    assert store_revision(engine) == before


def _sentence_labels(url: str, name: str, external_id: str) -> dict[int, str]:
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    assert item is not None
    [mine] = [v.id for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == name]
    return {i: v.label for i, v in item_annotations(engine, item.id, [mine])[mine].sentence_labels.items()}


def test_a_tab_left_open_after_logging_out_elsewhere_saves_nothing(store: str) -> None:
    """A label click runs its callback before any page code (and in a unit that reruns alone, the page's
    login check does not run at all): the action itself checks that the login still stands."""
    assign(store, "alice", "sentences", "demo-001")
    tab = signed_in("alice", item="demo-001")
    tab.switch_page("app_pages/sentences.py").run()
    assert not tab.exception and not is_login_form(tab)
    before = _sentence_labels(store, "alice", "demo-001")
    button = "sentence_now_unknown" if before.get(0) != "unknown" else "sentence_now_incorrect"
    accounts.end_session(make_engine(store), tab.session_state[TOKEN_KEY])  # "Log out" in another tab
    next(b for b in tab.button if b.key == button).click().run()
    assert is_login_form(tab)
    assert _sentence_labels(store, "alice", "demo-001") == before
    # The login form says why the click's work is not there (it vanished without a word before).
    assert len(tab.warning) == 1 and "nothing was saved" in tab.warning[0].value


def test_an_admin_tab_left_open_after_logging_out_elsewhere_changes_no_account(store: str) -> None:
    """The Team page's buttons write from callbacks, which run before the page's login check: the
    store's write itself refuses an actor whose login session has ended."""
    tab = signed_in("adm")
    tab.switch_page("app_pages/team.py").run()
    assert not tab.exception and not is_login_form(tab)
    tab.text_input(key="team_new_name").input("carol")
    tab.text_input(key="team_new_password").input("long enough secret")
    accounts.end_session(make_engine(store), tab.session_state[TOKEN_KEY])  # "Log out" in another tab
    next(b for b in tab.button if b.label == "Create user").click().run()
    assert is_login_form(tab)
    assert "carol" not in [u.name for u in accounts.list_users(make_engine(store))]


def test_restoring_an_earlier_state_in_a_tab_logged_out_elsewhere_changes_nothing(store: str) -> None:
    """The Item page's "Restore this state" writes from a callback, by the annotator's id."""
    assign(store, "alice", "spans", "demo-001")
    engine = make_engine(store)
    who = find_annotator(engine, "alice")
    item = get_item(engine, 1, "demo-001")
    assert who is not None and item is not None
    mine = human_label_set(engine, 1, who.id).id
    first = labeling.add_span(engine, mine, item.id, 0, 3, None, who.id)
    labeling.add_span(engine, mine, item.id, 5, 9, None, who.id)
    before = [(s.start, s.end) for s in item_annotations(engine, item.id, [mine])[mine].spans]
    tab = signed_in("alice", item="demo-001")
    tab.switch_page("app_pages/item.py").run()
    assert not tab.exception and not is_login_form(tab)
    accounts.end_session(engine, tab.session_state[TOKEN_KEY])  # "Log out" in another tab
    tab.button(key=f"item_history_restore_{first.log_id}_{mine}").click().run()
    assert is_login_form(tab)
    assert [(s.start, s.end) for s in item_annotations(engine, item.id, [mine])[mine].spans] == before


def test_a_first_label_in_a_tab_logged_out_elsewhere_makes_no_label_set(store: str) -> None:
    """The label set is made by the first save, as an argument of the action, before its login check."""
    engine = make_engine(store)
    tab = signed_in("rev", item="demo-001")
    tab.switch_page("app_pages/sentences.py").run()
    assert not tab.exception and not is_login_form(tab)
    accounts.end_session(engine, tab.session_state[TOKEN_KEY])  # "Log out" in another tab
    next(b for b in tab.button if b.key == "sentence_now_unknown").click().run()
    assert is_login_form(tab)
    assert not [v for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == "rev"]
