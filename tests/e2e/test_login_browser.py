"""Team mode in a real browser: the login gate on every page URL of a fresh server, logging in through
the form, staying logged in across a reload and a new tab (the cookie), the role's menu, logging out —
and the page's HTML never holding the password, its hash, the login token or the token's hash."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect
from sqlalchemy import select

from components.login import COOKIE
from db import models as m
from db.engine import make_engine, read_session
from db.login_sessions import SESSION_LIMIT
from db.repositories.accounts import session_user
from page_table import pages
from tests.e2e.app_server import ROOT, RunningApp, prepare_store, running_app
from tests.e2e.browser import AppTab

NAME, PASSWORD = "tess", "a long password for tess"
TEAM = {"SPANLIGHT_MODE": "team"}
# Every page's address: the default page also answers at "/".
URLS = ["", *((spec.url_path or Path(spec.path).stem) for spec in pages())]


@pytest.fixture(scope="module")
def team_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo store with an annotator account, made the documented way: `cli.py init`, `cli.py user add`."""
    data_dir = tmp_path_factory.mktemp("e2e-team")
    database_url = prepare_store(data_dir)
    subprocess.run(
        [sys.executable, "cli.py", "user", "add", NAME, "--role", "annotator", "--db", database_url],
        cwd=ROOT,
        input=PASSWORD + "\n",
        text=True,
        check=True,
        timeout=600,
    )
    return data_dir, database_url


@pytest.fixture(scope="module")
def team_app(team_store: tuple[Path, str]) -> Iterator[RunningApp]:
    with running_app(*team_store, env=TEAM) as running:
        yield running


def _login_form(page: Page) -> None:
    """Wait until the login form is what the page shows."""
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(page.get_by_role("textbox", name="Password", exact=True)).to_be_visible()


def _cookie(context: BrowserContext) -> dict | None:
    return next((c for c in context.cookies() if c["name"] == COOKIE), None)


def _secrets(database_url: str, token: str) -> list[str]:
    """What must never be in the page: the password, its stored hash, the token and the token's hash."""
    with read_session(make_engine(database_url)) as session:
        password_hash = session.scalar(select(m.Annotator.password_hash).where(m.Annotator.name == NAME))
    assert password_hash and password_hash.startswith("$argon2id$")
    return [PASSWORD, password_hash, token, hashlib.sha256(token.encode()).hexdigest()]


def _assert_nothing_secret(page: Page, secrets: list[str]) -> None:
    html = page.content()
    leaked = [s[:12] for s in secrets if s in html]
    assert not leaked, f"the page's HTML holds {leaked}"


def test_first_request_to_every_page_of_a_fresh_server_gets_the_login_gate(
    team_store: tuple[Path, str], context: BrowserContext, artifacts: Path
) -> None:
    with running_app(*team_store, env=TEAM) as fresh:
        # Pages other than the default first: the first request the new server serves is to a page URL.
        for path in [*URLS[2:], *URLS[:2]]:
            page = context.new_page()
            tab = AppTab(page)
            tab.goto(f"{fresh.url}/{path}")
            _login_form(page)
            expect(page.locator('[data-testid="stSidebarNav"]')).to_have_count(0)  # no menu before login
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)
            expect(page.get_by_text("Signed in as")).to_have_count(0)
            if path == "spans":
                page.screenshot(path=str(artifacts / "login-gate-spans.png"), full_page=True)
            page.close()


def test_an_address_that_names_no_page_gets_the_login_gate_then_says_so(
    team_store: tuple[Path, str], context: BrowserContext, artifacts: Path
) -> None:
    """The first request a fresh server serves names no page: the login form comes first (no menu, no
    word of the pages), and once logged in the page says the address names none and lists the pages
    the role may open (it showed the Datasets page as if nothing were wrong)."""
    with running_app(*team_store, env=TEAM) as fresh:
        page = context.new_page()
        tab = AppTab(page)
        tab.goto(f"{fresh.url}/old_bookmark")
        _login_form(page)
        expect(page.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
        expect(page.get_by_text("There is no page")).to_have_count(0)
        page.get_by_role("textbox", name="Name", exact=True).fill(NAME)
        page.get_by_role("textbox", name="Password", exact=True).fill(PASSWORD)
        page.get_by_role("button", name="Log in", exact=True).click()
        expect(page.get_by_text("There is no page at /old_bookmark")).to_be_visible()
        expect(page.get_by_text(f"Signed in as {NAME} (annotator)")).to_be_visible()
        assert page.url.split("?")[0] == f"{fresh.url}/old_bookmark"
        main = page.locator('[data-testid="stMain"]')
        expect(main.get_by_role("link", name="Label sentences")).to_be_visible()
        expect(main.get_by_role("link", name="Import")).to_have_count(0)  # not the annotator's
        expect(main.get_by_role("link", name="Metrics")).to_have_count(0)
        tab.idle()
        page.screenshot(path=str(artifacts / "login-page-not-found.png"), full_page=True)
        page.close()


def test_log_in_reload_new_tab_and_log_out(
    team_app: RunningApp, team_store: tuple[Path, str], context: BrowserContext, tab: AppTab, artifacts: Path
) -> None:
    page = tab.page
    tab.goto(team_app.url)
    _login_form(page)
    page.screenshot(path=str(artifacts / "login-form.png"), full_page=True)

    page.get_by_role("textbox", name="Name", exact=True).fill(NAME)
    page.get_by_role("textbox", name="Password", exact=True).fill("not the password")
    page.get_by_role("button", name="Log in", exact=True).click()
    expect(page.get_by_text("Wrong name or password.")).to_be_visible()
    page.screenshot(path=str(artifacts / "login-refused.png"), full_page=True)

    page.get_by_role("textbox", name="Name", exact=True).fill(NAME)
    page.get_by_role("textbox", name="Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in", exact=True).click()
    expect(page.get_by_text(f"Signed in as {NAME} (annotator)")).to_be_visible()
    # The cookie is written by the page once it is drawn; wait for it, then check how it is set.
    page.wait_for_function(f"() => document.cookie.includes('{COOKIE}=')")
    cookie = _cookie(context)
    assert cookie is not None and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
    token = cookie["value"]
    user = session_user(make_engine(team_app.database_url), token)
    assert user is not None and user.name == NAME
    # A lasting cookie, kept as long as a login may last (the store ends the login sooner when idle).
    assert abs(cookie["expires"] - (time.time() + SESSION_LIMIT.total_seconds())) < 600
    tab.idle()
    secrets = _secrets(team_app.database_url, token)
    _assert_nothing_secret(page, secrets)
    page.screenshot(path=str(artifacts / "login-signed-in.png"), full_page=True)

    # The annotator's menu: labeling pages, not the admin's or the dashboards.
    nav = page.locator('[data-testid="stSidebarNav"]')
    expect(nav.get_by_text("Mark spans", exact=True)).to_be_visible()
    expect(nav.get_by_text("Import", exact=True)).to_have_count(0)
    expect(nav.get_by_text("Metrics", exact=True)).to_have_count(0)
    expect(page.get_by_role("textbox", name="Working as", include_hidden=True)).to_have_count(0)

    # A reload is a new connection: the cookie keeps the login.
    tab.reload()
    expect(page.get_by_text(f"Signed in as {NAME} (annotator)")).to_be_visible()
    expect(page.get_by_role("heading", name="Log in")).to_have_count(0)
    _assert_nothing_secret(page, secrets)

    # A deep link to a page the role may not open shows the refusal, not the page.
    tab.goto(f"{team_app.url}/import_data")
    expect(
        page.get_by_text("The annotator role cannot import, delete or change datasets; ask an admin.")
    ).to_be_visible()
    expect(page.get_by_text("Signed in as", exact=False)).to_be_visible()
    page.screenshot(path=str(artifacts / "login-refused-page.png"), full_page=True)

    other = AppTab(context.new_page())
    other.goto(f"{team_app.url}/browse")
    expect(other.page.get_by_text(f"Signed in as {NAME} (annotator)")).to_be_visible()
    other.page.close()

    tab.after_run(lambda: page.get_by_role("button", name="Log out").click())
    _login_form(page)
    page.wait_for_function(f"() => !document.cookie.includes('{COOKIE}=')")
    assert _cookie(context) is None
    assert session_user(make_engine(team_app.database_url), token) is None
    tab.reload()
    _login_form(page)
    expect(page.get_by_text("Signed in as")).to_have_count(0)
    _assert_nothing_secret(page, secrets)
