"""An annotator starts from a detector on the span and sentence pages, and the Agreement page shows how
much of the draft they kept. On a store of its own (the demo loaded by the command line), so the
shared store's agreement numbers stay as other tests expect them."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import expect

from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab

DEMO = "Spanlight demo (synthetic)"
ITEM = "demo-004"
USER = "e2e-draft"
VIEWPORT = {"width": 1440, "height": 900}


def _start(tab: AppTab, url: str, task: str) -> None:
    """Open the task's page on the item and start it from detector eager."""
    page = tab.page
    page_name = task
    tab.goto(f"{url}/{page_name}?{urlencode({'dataset': DEMO, 'item': ITEM, 'user': USER})}")
    page.get_by_role("button", name="Start from detector").click()
    popover = page.locator('[data-testid="stPopoverBody"]')
    expect(popover.get_by_text("Copies Detector")).to_be_visible()
    popover.locator(f".st-key-preannotate_source_{task}").click()
    tab.after_run(page.get_by_role("option", name="Detector · eager simulated-1").click)
    tab.after_run(page.locator(f".st-key-preannotate_item_{task} button").click)
    expect(page.get_by_text("Started from detector eager")).to_be_visible()


def test_start_from_a_detector_then_see_the_anchoring(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    engine = make_engine(private_app.database_url)
    dataset = get_dataset(engine, DEMO)
    assert dataset is not None
    item = get_item(engine, dataset.id, ITEM)
    assert item is not None
    sets = {(ls.kind, ls.name): ls.id for ls in list_label_sets(engine, dataset.id)}
    eager = item_annotations(engine, item.id, [sets[("detector", "eager")]])[sets[("detector", "eager")]]

    _start(tab, private_app.url, "spans")
    expect(page.get_by_text(f"{len(eager.spans)} span(s) marked by you")).to_be_visible()
    tab.screenshot(artifacts / "preannotation-spans.png", VIEWPORT["width"], VIEWPORT["height"])
    page.get_by_role("button", name="Start from detector").click()
    expect(page.get_by_text("replaces them")).to_be_visible()  # labels there now: it asks first
    expect(page.locator(".st-key-preannotate_item_spans button")).to_be_disabled()
    tab.screenshot(artifacts / "preannotation-spans-confirm.png", VIEWPORT["width"], VIEWPORT["height"])
    page.keyboard.press("Escape")

    _start(tab, private_app.url, "sentences")
    expect(
        page.get_by_text(f"{len(item.sentences)} / {len(item.sentences)} sentences labeled")
    ).to_be_visible()
    tab.screenshot(artifacts / "preannotation-sentences.png", VIEWPORT["width"], VIEWPORT["height"])

    own = next(ls.id for ls in list_label_sets(engine, dataset.id) if ls.kind == "human" and ls.name == USER)
    mine = item_annotations(engine, item.id, [own])[own]
    assert [(s.start, s.end, s.type) for s in mine.spans] == [(s.start, s.end, s.type) for s in eager.spans]
    assert len(mine.sentence_labels) == len(item.sentences)
    engine.dispose()

    tab.goto(f"{private_app.url}/agreement?{urlencode({'dataset': DEMO})}")
    heading = page.get_by_role("heading", name="Anchoring on detector drafts")
    expect(heading).to_be_visible()
    expect(page.get_by_text("Spans kept from the detector's draft")).to_be_visible()
    expect(page.get_by_text("Sentence labels kept from the detector's draft")).to_be_visible()
    heading.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "preannotation-agreement-anchoring.png"))
    tab.screenshot(artifacts / "preannotation-agreement.png", VIEWPORT["width"], VIEWPORT["height"])
