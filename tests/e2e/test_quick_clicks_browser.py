"""Mouse clicks on the label buttons faster than the page answers, in headless Chromium.

The current unit's buttons act on the unit that is current when their click reaches the server (so a
key pressed before the redraw is for the unit the cursor moved to). A second click on the same button
before the page was drawn anew, as a quick double-click makes, therefore labeled the next unit, one
the annotator never clicked. Each test holds the store's write turn while it clicks, so the first save
surely still waits when the second click comes, however fast or slow the machine.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import Engine

from db.engine import make_engine, write_session
from tests.e2e.app_server import RunningApp
from tests.e2e.test_annotation_browser import VIEWPORT, Annotator, mine, sentence_row

# No click or key waits in the page's queue, and none let through waits for its answer.
QUIET_JS = "() => !window.spanlightKeyQueue?.keys.length && !window.spanlightKeyQueue?.awaiting"


@pytest.fixture(scope="module")
def store(app: RunningApp) -> Iterator[Engine]:
    engine = make_engine(app.database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def annotator(app: RunningApp, page: Page) -> Annotator:
    page.set_viewport_size(VIEWPORT)
    return Annotator(page, app)


def test_a_quick_second_click_on_a_sentence_label_stays_on_that_sentence(
    annotator: Annotator, store: Engine
) -> None:
    """Correct clicked twice on sentence 1 before the page answered: sentence 1 is correct and
    sentence 2 is left alone (it was labeled correct too)."""
    user, item_id = "e2e-double-click", "demo-006"
    me, page = annotator, annotator.page
    me.open("sentences", user, item_id)
    correct = sentence_row(page, 0).get_by_role("button", name="Correct Shortcut 1")
    box = correct.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def click_twice() -> None:
        with write_session(store, bookkeeping=True):  # the app's save of the first click waits
            page.mouse.click(x, y)
            expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "running")
            page.mouse.click(x, y)

    me.after_run(click_twice)
    page.wait_for_function(QUIET_JS)
    me.idle()
    expect(sentence_row(page, 1)).to_contain_text("▶ Sentence 2 · —")
    labels = mine(store, user, item_id)[1].sentence_labels
    assert {i: v.label for i, v in labels.items()} == {0: "correct"}
    expect(sentence_row(page, 0)).to_contain_text("Sentence 1 · ✓ Correct")
