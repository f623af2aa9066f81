"""A label the page confirmed is still there after the server is killed without warning.

An annotator labels sentences by keyboard; each key's "✓ Saved" receipt is the page's promise. The
server then dies by ``kill -9`` (no shutdown, no flush), a new server starts on the same store, and
every confirmed label must be there: in the store and on the page after a reload.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import Page, expect

from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from tests.e2e.app_server import prepare_store, running_app
from tests.e2e.browser import AppTab

DEMO = "Spanlight demo (synthetic)"
USER, ITEM = "e2e-durable", "demo-004"
BADGES = {"correct": "✓ Correct", "incorrect": "✗ Incorrect", "unknown": "? Unknown"}
KEYS = {"1": "correct", "2": "incorrect", "3": "unknown"}


def _stored_labels(database_url: str) -> dict[int, str]:
    engine = make_engine(database_url)
    try:
        dataset = get_dataset(engine, DEMO)
        assert dataset is not None
        item = get_item(engine, dataset.id, ITEM)
        assert item is not None
        own = [ls for ls in list_label_sets(engine, dataset.id, kind="human") if ls.name == USER]
        if not own:
            return {}
        saved = item_annotations(engine, item.id, [own[0].id])[own[0].id].sentence_labels
        return {index: value.label for index, value in saved.items()}
    finally:
        engine.dispose()


def test_confirmed_labels_survive_kill_9(page: Page, tmp_path: Path, artifacts: Path) -> None:
    data_dir = tmp_path / "store"
    data_dir.mkdir()
    database_url = prepare_store(data_dir)
    address = f"sentences?{urlencode({'dataset': DEMO, 'item': ITEM, 'user': USER})}"
    row = lambda i: page.locator(f".st-key-sentence_row_{i}")  # noqa: E731
    confirmed: dict[int, str] = {}

    with running_app(data_dir, database_url) as first:
        tab = AppTab(page)
        tab.goto(f"{first.url}/{address}")
        count = page.locator('[class*="st-key-sentence_row_"]').count()
        assert count >= 3
        for index in range(count):
            key = "123"[index % 3]
            tab.press(key)
            # The receipt is the promise: only what the page confirmed counts as confirmed.
            expect(row(index)).to_contain_text(f"Sentence {index + 1} · {BADGES[KEYS[key]]}")
            expect(page.get_by_text("✓ Saved", exact=False).first).to_be_visible()
            confirmed[index] = KEYS[key]
        os.kill(first.pid, signal.SIGKILL)

    assert _stored_labels(database_url) == confirmed

    with running_app(data_dir, database_url) as second:
        tab = AppTab(page)
        tab.goto(f"{second.url}/{address}")
        for index, value in confirmed.items():
            expect(row(index)).to_contain_text(f"Sentence {index + 1} · {BADGES[value]}")
        tab.screenshot(artifacts / "durability-after-kill-9.png", 1280, 900)
    assert _stored_labels(database_url) == confirmed
