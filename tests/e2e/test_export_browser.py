"""A researcher prepares an export on the Export page and downloads it: the file is streamed from the
server's disk by the download route, and is the same file the command line writes."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from db.access import OPERATOR
from db.engine import make_engine
from db.export_files import export_file
from db.repositories.datasets import get_dataset
from formats.registry import formats
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1440, "height": 900}


def test_a_prepared_export_downloads_from_the_server(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    tab.goto(f"{app.url}/export_data?{urlencode({'dataset': DEMO})}")
    tab.after_run(page.get_by_role("button", name="Prepare file").click)
    link = page.get_by_role("link", name="Download")
    expect(link).to_be_visible()
    tab.screenshot(artifacts / "export-prepared.png", VIEWPORT["width"], VIEWPORT["height"])
    href = link.get_attribute("href")
    assert href is not None and href.startswith("/api/download/")

    with page.expect_download() as downloading:
        link.click()
    download = downloading.value
    saved = artifacts / "export-download.jsonl"
    download.save_as(saved)

    engine = make_engine(app.database_url)
    try:
        dataset = get_dataset(engine, DEMO)
        assert dataset is not None
        # The page starts from the format the dataset came in, else the first it writes.
        writable = [f.name for f in formats(writable=True)]
        chosen = dataset.source_format if dataset.source_format in writable else writable[0]
        expected = export_file(engine, DEMO, chosen, actor=OPERATOR, filename=download.suggested_filename)
    finally:
        engine.dispose()
    assert saved.read_bytes() == expected

    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{app.url}/api/download/{'x' * 32}")
    assert missing.value.code == 404
    assert b"Prepare the file again" in missing.value.read()
