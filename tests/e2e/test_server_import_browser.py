"""A researcher imports an AlignBench CSV from the server's import folder on the Import page (read from
disk as it is imported), then finds a caption by searching on Browse. On a store of its own, so the
shared store's datasets stay as other tests expect them."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import expect

from bench.make_import_files import write_alignbench
from db.engine import make_engine
from db.repositories.datasets import get_dataset
from db.repositories.items import ItemFilter, count_items
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab
from tests.e2e.import_page import import_folder, open_server_path_mode

VIEWPORT = {"width": 1440, "height": 900}
ROWS = 3_000  # 500 captions


def test_a_server_file_imports_from_disk_and_its_captions_are_found(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    write_alignbench(import_folder(private_app) / "captions.csv", ROWS)

    open_server_path_mode(tab, private_app)
    path_box = page.locator(".st-key-import_path input")
    path_box.fill("captions.csv")
    tab.after_run(lambda: path_box.press("Enter"))
    expect(page.get_by_text("Recognised as")).to_be_visible()
    tab.after_run(page.get_by_role("button", name="Import", exact=True).click)
    expect(page.get_by_text("500 new items", exact=False)).to_be_visible()
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "100")
    tab.screenshot(artifacts / "import-server-file.png", VIEWPORT["width"], VIEWPORT["height"])

    engine = make_engine(private_app.database_url)
    try:
        dataset = get_dataset(engine, "captions")
        assert dataset is not None
        expected = count_items(engine, dataset.id, ItemFilter(text="WOODEN chair"))
    finally:
        engine.dispose()
    assert expected > 0

    tab.goto(f"{private_app.url}/browse?{urlencode({'dataset': 'captions'})}")
    search = page.locator(".st-key-browse_q input")
    search.fill("WOODEN chair")
    tab.after_run(lambda: search.press("Enter"))
    expect(page.get_by_text(f"{expected:,} matching items", exact=False)).to_be_visible()
    tab.screenshot(artifacts / "browse-search.png", VIEWPORT["width"], VIEWPORT["height"])


def test_the_bar_of_a_long_import_follows_how_much_of_the_file_is_read(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    """It stood at half way for the half minute a million rows take; it now moves with the file."""
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    write_alignbench(import_folder(private_app) / "long.csv", 120_000)  # 24 batches

    open_server_path_mode(tab, private_app)
    path_box = page.locator(".st-key-import_path input")
    path_box.fill("long.csv")
    tab.after_run(lambda: path_box.press("Enter"))
    expect(page.get_by_text("Recognised as")).to_be_visible()
    page.get_by_role("button", name="Import", exact=True).click()
    bar = page.get_by_role("progressbar")
    # Between its start (10) and its end (95, then 100), with the share read beside it: one condition, so
    # that the import cannot end between two looks.
    page.wait_for_function(
        """() => {
            const now = Number(document.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow'));
            return now > 10 && now < 95
                && /Checking and writing items \\([\\d,]+ read, \\d+% of the file\\)/.test(document.body.innerText);
        }""",
        timeout=120_000,
    )
    bar.scroll_into_view_if_needed()  # what is on the screen now: the page runs on, never idle yet
    page.screenshot(path=str(artifacts / "import-long-file-partway.png"))
    expect(page.get_by_text("20000 new items", exact=False)).to_be_visible(timeout=180_000)
    expect(bar).to_have_attribute("aria-valuenow", "100")
