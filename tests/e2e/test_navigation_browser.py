"""Moving between pages as a person does: the chosen dataset stays until they change it (menu, home
card, links, reloads, a new tab), a first visit opens the demo, dataset and threshold sit in view at
the top of the sidebar, and the home page says where to start."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlencode, urlparse

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, expect

from db.engine import make_engine
from db.repositories.datasets import get_dataset
from page_table import pages
from tests.e2e.app_server import RunningApp, prepare_store, running_app
from tests.e2e.browser import AppTab, still_box
from tests.pages.conftest import add_small_dataset

DEMO = "Spanlight demo (synthetic)"
PICKED = "processed_test"
# Sorts before every other name, and is markup: never the default, always shown as its characters.
HOSTILE = '<img src=x onerror="window.__xss=1"> **bold**'
SIZES = {"1440x900": (1440, 900), "1920x1080": (1920, 1080)}


@pytest.fixture(scope="module")
def nav_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """The demo plus a dataset named :data:`PICKED` and one named :data:`HOSTILE`."""
    data_dir = tmp_path_factory.mktemp("nav-data")
    database_url = prepare_store(data_dir)
    add_small_dataset(database_url, PICKED)
    add_small_dataset(database_url, HOSTILE)
    with running_app(data_dir, database_url) as running:
        yield running


def _menu(tab: AppTab, title: str) -> None:
    """Click a page in the sidebar's menu and wait for it to be drawn."""
    link = tab.page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title)
    tab.after_run(link.first.click)
    expect(tab.page.locator('[data-testid="stSidebarNav"] a[aria-current="page"]')).to_contain_text(title)
    tab.idle()


def _picker(page: Page) -> Locator:
    return page.get_by_role("combobox", name="Dataset")


def _choose(tab: AppTab, option: str) -> None:
    typed = _picker(tab.page)
    typed.click()
    typed.fill(option)
    tab.after_run(tab.page.get_by_role("option", name=option, exact=True).click)


def _address_dataset(page: Page) -> str | None:
    return parse_qs(urlparse(page.url).query).get("dataset", [None])[0]


def _shows(tab: AppTab, heading: str, dataset: str) -> None:
    """The page's title names ``dataset``, its picker and its address too."""
    expect(tab.page.get_by_role("heading", name=f"{heading} · {dataset}")).to_be_visible()
    expect(_picker(tab.page)).to_have_value(dataset)
    assert _address_dataset(tab.page) == dataset, tab.page.url


def test_the_chosen_dataset_stays_across_pages_reloads_and_tabs(
    nav_app: RunningApp, context: BrowserContext, tab: AppTab
) -> None:
    page = tab.page
    tab.goto(nav_app.url)
    # A first visit opens the demo, not the dataset whose name sorts first.
    _menu(tab, "Browse items")
    _shows(tab, "Browse", DEMO)
    # The steps of the report: pick it in the sidebar, then click Metrics.
    _choose(tab, PICKED)
    _shows(tab, "Browse", PICKED)
    _menu(tab, "Metrics")
    _shows(tab, "Metrics", PICKED)
    _menu(tab, "Compare detectors")
    expect(_picker(page)).to_have_value(PICKED)
    assert _address_dataset(page) == PICKED
    tab.reload()
    expect(_picker(page)).to_have_value(PICKED)
    # A new tab of the same browser, opened on a bare page address, still works on it.
    other = AppTab(context.new_page())
    other.goto(f"{nav_app.url}/metrics")
    _shows(other, "Metrics", PICKED)
    other.page.close()
    # The home card's "Browse items" of the demo, then the menu: the demo stays.
    _menu(tab, "Datasets")
    demo = get_dataset(make_engine(nav_app.database_url), DEMO)
    assert demo is not None
    tab.after_run(page.locator(f".st-key-browse-{demo.id} button").click)
    _shows(tab, "Browse", DEMO)
    _menu(tab, "Metrics")
    _shows(tab, "Metrics", DEMO)
    # A ?dataset= link, then the menu.
    tab.goto(f"{nav_app.url}/browse?{urlencode({'dataset': PICKED})}")
    _menu(tab, "Metrics")
    _shows(tab, "Metrics", PICKED)


def test_a_first_visit_opens_the_demo_and_shows_names_literally(
    nav_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    page = tab.page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(nav_app.url)
    expect(page.get_by_text("Start here")).to_be_visible()
    expect(page.get_by_role("heading", name=HOSTILE, exact=True)).to_be_visible()
    for label in ("Import a file", "Mark spans", "Compare detectors", "Metrics"):
        expect(page.locator('[data-testid="stMain"]').get_by_role("link", name=label)).to_be_visible()
    _menu(tab, "Failure cases")
    expect(_picker(page)).to_have_value(DEMO)
    assert page.evaluate("() => window.__xss") is None and not dialogs
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        tab.goto(nav_app.url)
        page.screenshot(path=str(artifacts / f"nav-home-{size}.png"))


@pytest.mark.parametrize(
    ("path", "query"), [("compare", {}), ("failures", {}), ("metrics", {"view": "MHALO"})]
)
def test_dataset_and_threshold_are_in_view_without_scrolling(
    nav_app: RunningApp, tab: AppTab, artifacts: Path, path: str, query: dict[str, str]
) -> None:
    page = tab.page
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        tab.goto(f"{nav_app.url}/{path}?{urlencode({'dataset': DEMO, **query})}")
        threshold = page.get_by_role("slider", name="IoU threshold")
        for control in (_picker(page), threshold):
            expect(control).to_be_visible()
            box = control.bounding_box()
            assert box is not None
            assert box["y"] >= 0 and box["y"] + box["height"] <= height, (path, size, box)
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (path, size, box)
        # Both in the one place: the sidebar's controls, above the rest of its content.
        controls = page.locator(".st-key-page_controls")
        expect(controls.get_by_role("combobox", name="Dataset")).to_be_visible()
        expect(controls.get_by_role("slider", name="IoU threshold")).to_be_visible()
        page.screenshot(path=str(artifacts / f"nav-{path}-{size}.png"))


def test_an_address_that_names_no_page_says_so_and_leads_on(
    demo_store: tuple[Path, str], tab: AppTab, artifacts: Path
) -> None:
    """A mistyped or old address, the first request of a fresh server: the page says the address names
    no page, shown as its characters, keeps it through a reload, and leads to every page (it showed the
    Datasets page under a dialog that named nothing and, once closed, left it as if nothing were wrong)."""
    page = tab.page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    address = HOSTILE.replace("<img", "<img id=planted")  # markup: shown, never made an element
    with running_app(*demo_store) as fresh:
        tab.goto(f"{fresh.url}/{quote(address)}")
        expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
        alert = page.locator('[data-testid="stAlert"]')
        expect(alert).to_contain_text(f"There is no page at /{address}: the address may be mistyped")
        expect(page).to_have_title("Page not found · Spanlight")
        # The shared setup ran (the first request a fresh server serves), and no dialog hides the page.
        expect(page.get_by_role("textbox", name="Working as")).to_have_value("annotator")
        expect(page.get_by_role("dialog")).to_have_count(0)
        assert page.evaluate("() => window.__xss") is None and not dialogs
        expect(page.locator("#planted")).to_have_count(0)
        assert unquote(urlparse(page.url).path) == f"/{address}"  # the address stays
        page.screenshot(path=str(artifacts / "nav-page-not-found.png"))
        tab.reload()
        expect(alert).to_contain_text(f"There is no page at /{address}")
        main = page.locator('[data-testid="stMain"]')
        for title in ("Datasets", "Label sentences", "Compare detectors", "Metrics", "Team"):
            expect(main.get_by_role("link", name=title)).to_be_visible()
        tab.after_run(main.get_by_role("link", name="Label sentences").click)
        expect(page).to_have_title("Label sentences · Spanlight")
        # A near miss is offered first.
        tab.goto(f"{fresh.url}/Claims")
        expect(main).to_contain_text("Did you mean")
        tab.after_run(main.get_by_role("link", name="Judge claims").first.click)
        expect(page).to_have_title("Judge claims · Spanlight")
        assert urlparse(page.url).path == "/claims"


def test_a_nested_address_says_there_is_no_page_there(
    nav_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    """An address of two or more segments (``/a/b``, an old ``/metrics/…`` link): a page that says there
    is no page there, the address as its characters, with links on (it was blank for good: the app's
    scripts were asked for under the nested path and the server answered with its page again)."""
    page = tab.page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    address = f"/{HOSTILE}/old".replace("<img", "<img id=planted")
    answer = page.goto(f"{nav_app.url}{quote(address)}")
    assert answer is not None and answer.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    expect(page.locator("code")).to_have_text(address)
    expect(page).to_have_title("Page not found · Spanlight")
    assert page.evaluate("() => window.__xss") is None and not dialogs
    expect(page.locator("#planted")).to_have_count(0)
    page.screenshot(path=str(artifacts / "nav-nested-not-found.png"))
    # A nested address under a page's own name links to that page as well.
    page.goto(f"{nav_app.url}/metrics/old?{urlencode({'dataset': PICKED})}")
    expect(page.get_by_role("link", name="the Datasets page")).to_be_visible()
    page.get_by_role("link", name="Metrics").click()
    expect(page).to_have_title("Metrics · Spanlight")
    tab.idle()
    assert urlparse(page.url).path == "/metrics"


def test_the_start_page_by_its_name_opens_it_without_a_dialog(nav_app: RunningApp, tab: AppTab) -> None:
    """``/home``, the start page's own name, opens the start page, the link's query kept (it ran it
    under Streamlit's "page not found" dialog)."""
    page = tab.page
    tab.goto(f"{nav_app.url}/home?{urlencode({'dataset': PICKED})}")
    expect(page.get_by_text("Start here")).to_be_visible()
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert urlparse(page.url).path == "/" and _address_dataset(page) == PICKED, page.url


def test_what_the_server_itself_serves_is_unchanged(nav_app: RunningApp, tab: AppTab) -> None:
    """The answer to nested addresses leaves the app's own files, its API and unknown single-segment
    addresses (the app's "Page not found" view) as they were."""
    request = tab.page.request
    start = request.get(nav_app.url)
    assert start.status == 200 and "text/html" in start.headers["content-type"]
    scripts = re.findall(r'src="\./(static/js/[^"]+\.js)"', start.text())
    assert scripts, start.text()[:500]
    script = request.get(f"{nav_app.url}/{scripts[0]}")
    assert script.status == 200 and "javascript" in script.headers["content-type"]
    assert request.get(f"{nav_app.url}/_stcore/health").text() == "ok"
    single = request.get(f"{nav_app.url}/no-such-page")
    assert single.status == 200 and "text/html" in single.headers["content-type"]
    nested = request.head(f"{nav_app.url}/no/such-page")
    assert nested.status == 404
    assert request.get(f"{nav_app.url}/api/download/unknown-ticket").status == 404


def test_every_page_of_the_menu_is_in_view_with_the_controls_at_1400x1000(
    nav_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    """At 1400×1000 the menu (twenty pages) was held to 584 px for the controls under it and hid the
    five pages after the "Inspect" heading in a scroll area whose scroll bar a headless browser does
    not draw. Now every page of the menu and the dataset and threshold controls are in view at once."""
    page = tab.page
    width, height = 1400, 1000
    page.set_viewport_size({"width": width, "height": height})
    tab.goto(f"{nav_app.url}/compare?{urlencode({'dataset': DEMO})}")
    nav = page.locator('[data-testid="stSidebarNav"]')
    links = nav.locator('[data-testid="stSidebarNavLink"]')
    expect(links).to_have_count(len(pages()))  # local mode: every page is listed
    assert [text.split("\n")[-1] for text in links.all_inner_texts()] == [spec.title for spec in pages()]
    menu = still_box(nav)
    assert nav.evaluate("(menu) => menu.scrollHeight <= menu.clientHeight"), "the menu scrolls"
    for link in links.all():
        box = link.bounding_box()
        assert box is not None
        assert menu["y"] <= box["y"] and box["y"] + box["height"] <= menu["y"] + menu["height"], box
        assert box["y"] + box["height"] <= height, box
    for control in (_picker(page), page.get_by_role("slider", name="IoU threshold")):
        expect(control).to_be_visible()
        box = control.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, box
    page.screenshot(path=str(artifacts / "nav-every-page-1400x1000.png"))
