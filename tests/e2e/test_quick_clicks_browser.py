"""Mouse clicks on the label buttons faster than the page answers, in headless Chromium.

The current unit's buttons act on the unit that is current when their click reaches the server (so a
key pressed before the redraw is for the unit the cursor moved to). A second click on the same button
before the page was drawn anew, as a quick double-click makes, therefore labeled the next unit, one
the annotator never clicked. Each test holds the store's write turn while it clicks, so the first save
surely still waits when the second click comes, however fast or slow the machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import Engine

from db.engine import make_engine, write_session
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.rating_tasks import detector_segments, list_rating_tasks, my_ratings
from tests.e2e.app_server import RunningApp
from tests.e2e.test_annotation_browser import DEMO, QUIET_JS, VIEWPORT, Annotator, mine, sentence_row


@pytest.fixture(scope="module")
def store(app: RunningApp) -> Iterator[Engine]:
    engine = make_engine(app.database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def annotator(app: RunningApp, page: Page) -> Annotator:
    page.set_viewport_size({"width": VIEWPORT["width"], "height": VIEWPORT["height"]})
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


def test_a_quick_second_score_on_a_segment_scores_that_segment(annotator: Annotator, store: Engine) -> None:
    """3 then at once 4 clicked on segment 1 (a change of mind) before the page answered: segment 1 is
    scored 4 and segment 2 is left alone (it was scored 4). A current segment's score button reads its
    key alone, so the held click finds its button by that key."""
    me, page = annotator, annotator.page
    rater = "e2e-quick-score"
    task = next(t for t in list_rating_tasks(store, 1) if t.name == "MHALO segment ratings")
    external_id, segments = next((e, s) for e, s in detector_segments(store, task).items() if len(s) >= 3)
    me.goto(
        f"{me.app.url}/rate?{urlencode({'dataset': DEMO, 'task': task.id, 'item': external_id, 'user': rater})}"
    )
    buttons = page.locator(".st-key-rate_row_0").get_by_role("button")
    three, four = (buttons.nth(task.points.index(p)).bounding_box() for p in (3, 4))
    assert three is not None and four is not None

    def click_three_then_four() -> None:
        with write_session(store, bookkeeping=True):  # the app's save of the first click waits
            page.mouse.click(three["x"] + three["width"] / 2, three["y"] + three["height"] / 2)
            expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "running")
            page.mouse.click(four["x"] + four["width"] / 2, four["y"] + four["height"] / 2)

    me.after_run(click_three_then_four)
    page.wait_for_function(QUIET_JS)
    me.idle()
    expect(page.get_by_text(f"1 / {len(segments)} segments rated")).to_be_visible()
    item = get_item(store, 1, external_id)
    assert item is not None
    scored = my_ratings(store, task.id, item.id, get_or_create_annotator(store, rater).id)
    assert {segment: rating.score for segment, rating in scored.items()} == {segments[0]: 4}
