"""The Import page's Format box in the browser follows the file now chosen: after a recognised file, a
file no format recognises showed the last file's format in the box, though nothing was read as it."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab
from tests.e2e.import_page import import_folder, open_server_path_mode

VIEWPORT = {"width": 1440, "height": 1400}
MHALO = [
    {
        "id": "a",
        "test_solution": "A red cat.",
        "hallucinated_solution": "A <hallucination>red</hallucination> cat.",
    }
]


def test_an_unrecognised_file_after_a_recognised_one_leaves_the_format_to_choose(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    folder = import_folder(private_app)
    (folder / "cats.json").write_text(json.dumps(MHALO))
    (folder / "wrongcols.json").write_text(json.dumps([{"foo": 1, "bar": "x"}]))

    open_server_path_mode(tab, private_app)
    path_box = page.locator(".st-key-import_path input")
    box = page.get_by_role("combobox", name="Format")
    path_box.fill("cats.json")
    tab.after_run(lambda: path_box.press("Enter"))
    expect(box).to_have_value("MHALO (tagged JSON)")

    path_box.fill("wrongcols.json")
    tab.after_run(lambda: path_box.press("Enter"))
    expect(page.get_by_text("The format of wrongcols.json was not recognised", exact=False)).to_be_visible()
    expect(box).to_have_value("")
    expect(box).to_have_attribute("placeholder", "Choose the file's format")
    expect(page.get_by_role("button", name="Import", exact=True)).to_have_count(0)
    tab.screenshot(
        artifacts / "import-unrecognised-after-recognised.png", VIEWPORT["width"], VIEWPORT["height"]
    )

    path_box.fill("cats.json")
    tab.after_run(lambda: path_box.press("Enter"))
    expect(box).to_have_value("MHALO (tagged JSON)")
    expect(page.get_by_role("button", name="Import", exact=True)).to_be_visible()
