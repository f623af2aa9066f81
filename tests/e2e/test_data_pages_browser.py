"""A person opening the app: every page on a fresh server, the demo, deep links, inert model text."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from page_table import pages
from tests.e2e.app_server import RunningApp, running_app
from tests.e2e.browser import AppTab, wait_images_settled

DEMO = "Spanlight demo (synthetic)"
# Every page the navigation lists: (url path, title). The default page is also served at "/".
PAGES = [(spec.url_path or Path(spec.path).stem, spec.title) for spec in pages()]
# What a page draws once its first run is over, beyond the shared setup, where that takes a while.
CONTENT = {"compare": ".hs-track", "failures": '[data-testid="stDataFrame"]'}


def test_navigation_lists_pages() -> None:
    assert ("home", "Datasets") in PAGES and len(PAGES) >= 3
    assert ("sentences", "Label sentences") in PAGES and ("metrics", "Metrics") in PAGES


@pytest.mark.parametrize(("path", "title"), PAGES, ids=[p for p, _ in PAGES])
def test_first_request_to_any_page_runs_the_shared_setup(
    path: str, title: str, demo_store: tuple[Path, str], tab: AppTab, artifacts: Path
) -> None:
    """A first request to /<page> on a fresh server gets the app's navigation and the shared setup."""
    data_dir, database_url = demo_store
    page = tab.page
    with running_app(data_dir, database_url) as fresh:
        tab.goto(f"{fresh.url}/{'' if path == 'home' else path}")
        # (Presenter mode hides the sidebar, so these look at the page whether shown or not.)
        expect(page.get_by_role("textbox", name="Working as", include_hidden=True)).to_have_value("annotator")
        assert page.title().endswith("· Spanlight"), page.title()
        expect(page).to_have_title(f"{title} · Spanlight")
        # The app's own navigation, never Streamlit's legacy list of page files (which names "app").
        nav = page.locator('[data-testid="stSidebarNav"]')
        expect(nav.get_by_text("Annotate", exact=True)).to_have_count(1)
        expect(nav.get_by_text("app", exact=True)).to_have_count(0)
        expect(nav.locator('a[aria-current="page"]')).to_contain_text(title)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        if path in CONTENT:
            expect(page.locator(CONTENT[path]).first).to_be_attached()
        page.screenshot(path=str(artifacts / f"first-request-{path}.png"), full_page=True)


def test_home_shows_the_demo(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    tab.goto(app.url)
    expect(page.get_by_role("heading", name=DEMO)).to_be_visible()
    expect(page.get_by_text("Synthetic demo", exact=False).first).to_be_visible()
    page.screenshot(path=str(artifacts / "home.png"), full_page=True)


def test_browse_lists_items(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    tab.goto(f"{app.url}/browse?{urlencode({'dataset': DEMO})}")
    expect(page.get_by_text("matching items")).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]')).to_be_visible()
    page.screenshot(path=str(artifacts / "browse.png"), full_page=True)


def test_item_view_shows_spans_and_image(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    tab.goto(f"{app.url}/item?{urlencode({'dataset': DEMO})}")
    expect(page.locator("mark").first).to_be_visible()
    expect(page.locator('[data-testid="stImage"] img')).to_be_visible()
    page.screenshot(path=str(artifacts / "item.png"), full_page=True)


def test_model_text_with_markup_renders_inert(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(f"{app.url}/?{urlencode({'dataset': DEMO, 'item': 'demo-xss'})}")
    expect(page.locator("mark", has_text="<script>alert(1)</script>")).to_be_visible()
    expect(page.locator(".hs-sentence", has_text="<img src=x onerror=alert(1)>")).to_be_visible()
    expect(page.locator(".hs-sentence", has_text="**bold**")).to_be_visible()
    wait_images_settled(page)
    assert dialogs == []
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("mark script, mark img, [data-testid='stHtml'] script").count() == 0
    page.screenshot(path=str(artifacts / "item-xss.png"), full_page=True)
