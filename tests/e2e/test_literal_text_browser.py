"""In the browser: names, ids and notes that are hostile Markdown show as text, with no outside link or
image anywhere on the Datasets, Browse and Item pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, Request, expect

from db.engine import make_engine
from tests.e2e.app_server import RunningApp, prepare_store, running_app
from tests.e2e.browser import AppTab, wait_images_settled
from tests.hostile_store import ANNOTATOR, DATASET, ITEM, load_hostile

EVIL = "https://evil.example"


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    data_dir = tmp_path_factory.mktemp("e2e-hostile")
    database_url = prepare_store(data_dir)
    engine = make_engine(database_url)
    load_hostile(engine)
    engine.dispose()
    with running_app(data_dir, database_url) as running:
        yield running


@pytest.mark.parametrize(
    ("name", "path", "query"),
    [
        ("datasets", "", {}),
        ("browse", "browse", {"dataset": DATASET}),
        ("item", "item", {"dataset": DATASET, "item": ITEM}),
    ],
)
def test_hostile_markdown_stays_text(
    hostile_app: RunningApp,
    page: Page,
    tab: AppTab,
    artifacts: Path,
    name: str,
    path: str,
    query: dict[str, str],
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1400})  # the whole page in one shot
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if isinstance(request, Request) else None)
    tab.goto(f"{hostile_app.url}/{path}?{urlencode({**query, 'user': ANNOTATOR})}")
    wait_images_settled(page)  # any image the page asked for has loaded or failed by now
    expect(page.get_by_text("**bold**").first).to_be_visible()
    html = page.content()
    assert f'<a href="{EVIL}' not in html
    assert f'<img src="{EVIL}' not in html
    assert page.locator(f'a[href^="{EVIL}"], img[src^="{EVIL}"]').count() == 0
    assert not [url for url in asked if url.startswith(EVIL)]
    page.screenshot(path=str(artifacts / f"literal-text-{name}.png"))


def test_copied_text_is_the_text_shown(hostile_app: RunningApp, page: Page, tab: AppTab) -> None:
    """An item id copied from the Item page's header is the id itself: the word joiners the page puts
    inside "https://" (so the renderer makes no link of it) stay out of the copy, which a jump or
    search box would otherwise never match."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab.goto(f"{hostile_app.url}/item?{urlencode({'dataset': DATASET, 'item': ITEM, 'user': ANNOTATOR})}")
    shown = page.get_by_text("id **bold**").first
    expect(shown).to_be_visible()
    assert "\u2060" in shown.evaluate("(element) => element.textContent")  # what the copy must leave out
    shown.evaluate(
        """(element) => {
          const range = document.createRange();
          range.selectNodeContents(element);
          const selection = document.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
        }"""
    )
    page.keyboard.press("Control+C")
    copied = page.wait_for_function("() => navigator.clipboard.readText().then((t) => t || false)")
    assert copied.json_value() == ITEM
