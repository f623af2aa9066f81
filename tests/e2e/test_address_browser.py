"""A page's address in the browser: a stale link's value that names no option is said, and the back and
forward buttons step through the choices a page keeps in its address (see components.page_address).

Screenshots go to the test's temporary folder (``address-*.png``)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

from playwright.sync_api import Locator, Page, expect

from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1400, "height": 1000}


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def _notices(page: Page) -> Locator:
    """The text of the page's notices of its address's values (without the icon's name)."""
    alerts = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="The link asked for")
    return alerts.locator('[data-testid="stMarkdownContainer"]')


def test_a_stale_link_says_what_it_cannot_show(app: RunningApp, tab: AppTab, tmp_path: Path) -> None:
    """Metrics opened by a link naming a paper and a detector the dataset lacks: both are said, in the
    page's words and literally, they stay said through the runs that follow the first (a first visit's
    cookie confirmation), and the paper's notice goes once the reader picks a paper."""
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    link = {"dataset": DEMO, "view": "nonsense", "detector": ["eager", "*ghost*"]}
    tab.goto(f"{app.url}/metrics?{urlencode(link, doseq=True)}")
    notices = _notices(page)
    expect(notices).to_have_count(2)
    expect(notices.nth(0)).to_contain_text("The link asked for paper 'nonsense', which is not one of 'MHALO'")
    expect(notices.nth(0)).to_contain_text("; showing 'MHALO' instead.")
    expect(notices.nth(1)).to_have_text(
        "The link asked for detector '*ghost*', which is not one of 'cautious', 'eager', 'sloppy'; "
        "it is left out."
    )
    expect(page.locator(".st-key-view").get_by_role("radio", checked=True)).to_have_text("MHALO")
    expect(page).to_have_url(re.compile(r"detector=eager"))
    assert "view" not in _query(page) and _query(page)["detector"] == ["eager"], page.url
    tab.screenshot(tmp_path / "address-stale-link.png", VIEWPORT["width"], VIEWPORT["height"])
    tab.reload()  # a reload opens the address the page wrote: nothing to say any more
    expect(page.locator(".st-key-view").get_by_role("radio", checked=True)).to_have_text("MHALO")
    expect(_notices(page)).to_have_count(0)
    tab.goto(f"{app.url}/metrics?{urlencode(link, doseq=True)}")
    expect(_notices(page)).to_have_count(2)
    tab.after_run(lambda: page.locator(".st-key-view").get_by_role("radio", name="AlignBench").click())
    expect(page.locator(".st-key-view").get_by_role("radio", checked=True)).to_have_text("AlignBench")
    expect(_notices(page)).to_have_count(1)
    expect(_notices(page)).to_contain_text("detector '*ghost*'")


def _choose(tab: AppTab, label: str, option: str) -> None:
    box = tab.page.get_by_role("combobox", name=label)
    box.click()
    tab.after_run(tab.page.get_by_role("option", name=option, exact=True).click)
    expect(box).to_have_value(option)


def test_back_and_forward_step_through_the_finders_choices(
    app: RunningApp, tab: AppTab, tmp_path: Path
) -> None:
    """The failure finder keeps its preset and filters in the address from what it shows; the browser's
    back button opens the address before the last choice again, and forward the one after."""
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    tab.goto(f"{app.url}/failures?{urlencode({'dataset': DEMO, 'preset': 'format'})}")
    preset = page.get_by_role("combobox", name="Preset")
    expect(preset).to_have_value("Format failures")
    _choose(tab, "Preset", "Clean responses flagged")
    expect(page).to_have_url(re.compile(r"preset=clean-flagged"))
    _choose(tab, "Detector", "eager")
    expect(page).to_have_url(re.compile(r"preset=clean-flagged.*detector=eager|detector=eager.*preset=clean"))
    count = page.get_by_text(re.compile(r"^\d+ of \d+ items · Clean responses flagged · detector eager$"))
    expect(count).to_be_visible()
    tab.screenshot(tmp_path / "address-finder-chosen.png", VIEWPORT["width"], VIEWPORT["height"])

    page.go_back()
    expect(page.get_by_role("combobox", name="Detector")).to_have_value("any detector")
    expect(page).to_have_url(re.compile(r"preset=clean-flagged"))
    assert "detector" not in _query(page), page.url
    page.go_back()
    expect(page).to_have_url(re.compile(r"preset=format"))
    expect(preset).to_have_value("Format failures")
    tab.idle()
    tab.screenshot(tmp_path / "address-finder-back.png", VIEWPORT["width"], VIEWPORT["height"])
    page.go_forward()
    page.go_forward()
    expect(page).to_have_url(re.compile(r"detector=eager"))
    expect(preset).to_have_value("Clean responses flagged")
    expect(page.get_by_role("combobox", name="Detector")).to_have_value("eager")
    expect(count).to_be_visible()
