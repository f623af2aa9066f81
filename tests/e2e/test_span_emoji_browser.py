"""Double-clicking words at the edges of what a browser calls a word, on the span page in Chromium.

The selector marks what the browser's own word selection picks on a double-click. On an emoji with a
skin-tone modifier Chromium picks the space after it, so a double-click on "👍🏽" marked nothing and
said nothing. The response here opens with such an emoji and ends with another, the places a
selection most easily goes astray.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import Engine

from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from tests.e2e.app_server import ROOT, RunningApp, prepare_store, running_app
from tests.e2e.browser import AppTab
from tests.e2e.test_annotation_browser import SpanText

DATASET = "Emoji edges"
ITEM = "thumbs"
RESPONSE = "👍🏽 The dog waves. It holds a sign 👋🏿"


@pytest.fixture(scope="module")
def emoji_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """An app whose store holds one item with emoji at both ends of its response, imported by the CLI."""
    data_dir = tmp_path_factory.mktemp("e2e-emoji")
    database_url = prepare_store(data_dir)
    records = [
        {
            "record": "dataset",
            "format_version": 1,
            "source_format": "canonical",
            "name": DATASET,
            "taxonomy": ["Object"],
            "label_kinds": ["span"],
        },
        {"record": "item", "external_id": ITEM, "response": RESPONSE, "prompt": "What is shown?"},
    ]
    source = data_dir / "emoji.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    subprocess.run(
        [sys.executable, "cli.py", "import", "--format", "canonical", str(source)],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url},
        check=True,
        timeout=600,
    )
    with running_app(data_dir, database_url) as running:
        yield running


@pytest.fixture
def store(emoji_app: RunningApp) -> Iterator[Engine]:
    engine = make_engine(emoji_app.database_url)
    yield engine
    engine.dispose()


def marked(engine: Engine, user: str) -> list[str]:
    """The texts of ``user``'s spans on the item, in the store."""
    dataset = get_dataset(engine, DATASET)
    assert dataset is not None
    item = get_item(engine, dataset.id, ITEM)
    assert item is not None
    own = next(ls for ls in list_label_sets(engine, dataset.id, kind="human") if ls.name == user)
    return [RESPONSE[s.start : s.end] for s in item_annotations(engine, item.id, [own.id])[own.id].spans]


def test_a_double_click_on_an_emoji_with_a_skin_tone_marks_it(
    emoji_app: RunningApp, page: Page, store: Engine
) -> None:
    user = "e2e-emoji"
    tab = AppTab(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    tab.goto(f"{emoji_app.url}/spans?{urlencode({'dataset': DATASET, 'item': ITEM, 'user': user})}")
    text = SpanText(page)

    tab.after_run(lambda: text.click("👍🏽", double=True))
    assert marked(store, user) == ["👍🏽"]
    expect(page.locator(".hs-seg.hs-marked")).to_have_count(1)
    expect(page.locator(".hs-seg.hs-marked")).to_have_attribute("title", "Object · 0–2")

    tab.after_run(lambda: text.click("👋🏿", double=True))
    assert marked(store, user) == ["👍🏽", "👋🏿"]
    end = len(RESPONSE)
    expect(page.locator(".hs-seg.hs-marked").last).to_have_attribute("title", f"Object · {end - 2}–{end}")
