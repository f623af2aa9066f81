"""A rater in the browser: rate every predicted segment of an item by keyboard, see it saved and done;
the summary of the rating tasks."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import expect

from db.engine import make_engine
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.rating_tasks import detector_segments, list_rating_tasks, my_ratings
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab

DEMO = "Spanlight demo (synthetic)"
RATER = "keyboard-rater"


def test_rate_an_item_by_keyboard(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    engine = make_engine(app.database_url)
    task = next(t for t in list_rating_tasks(engine, 1) if t.name == "MHALO segment ratings")
    external_id = next(e for e, s in detector_segments(engine, task).items() if len(s) >= 3)
    segments = detector_segments(engine, task)[external_id]
    item = get_item(engine, 1, external_id)

    page.set_viewport_size({"width": 1400, "height": 2200})  # the main area scrolls: show it all
    query = urlencode({"dataset": DEMO, "task": task.id, "item": external_id, "user": RATER})
    tab.goto(f"{app.url}/rate?{query}")
    counter = page.get_by_text(re.compile(r"\d+ / \d+ segments rated"))
    expect(counter).to_contain_text(f"0 / {len(segments)} segments rated")
    # Each score button reads its score once (the key is the label), not "1 1", "2 2".
    buttons = page.locator(".st-key-rate_row_0").get_by_role("button")
    assert [" ".join(t.split()) for t in buttons.all_inner_texts()] == [str(p) for p in task.points]
    expect(page.locator("mark.hs-current")).to_have_count(1)
    expect(page.get_by_role("switch", name="Show gold spans")).to_be_disabled()

    tab.press("j")  # to segment 2 and back with k
    expect(page.get_by_text(f"▶ Segment 2 of {len(segments)}")).to_be_visible()
    tab.press("k")
    expect(page.get_by_text(f"▶ Segment 1 of {len(segments)}")).to_be_visible()
    scores = [4, 3, 1, 2, 4, 3][: len(segments)]
    for done, score in enumerate(scores, start=1):
        tab.press(str(score))  # scores the current segment, then moves on
        expect(counter).to_contain_text(f"{done} / {len(segments)} segments rated")
    expect(page.get_by_text("Everything on this item is rated")).to_be_visible()
    expect(page.get_by_text("✓ Saved")).to_be_visible()
    expect(page.get_by_role("switch", name="Show gold spans")).to_be_enabled()
    page.screenshot(path=str(artifacts / "rating-keyboard.png"), full_page=True)

    rater = get_or_create_annotator(engine, RATER)
    mine = my_ratings(engine, task.id, item.id, rater.id)
    assert {k: v.score for k, v in mine.items()} == {
        s: float(x) for s, x in zip(segments, scores, strict=True)
    }

    tab.press("u")  # undo the last score: the item is open again
    expect(counter).to_contain_text(f"{len(segments) - 1} / {len(segments)} segments rated")
    expect(page.get_by_text("0 / 60 done")).to_be_visible()
    assert len(my_ratings(engine, task.id, item.id, rater.id)) == len(segments) - 1
    expect(page.get_by_role("switch", name="Show gold spans")).to_be_disabled()
    tab.idle()  # the run has finished: no element of the run before is left on screen
    expect(page.get_by_text("✓ Saved")).to_have_count(1)
    page.screenshot(path=str(artifacts / "rating-after-undo.png"), full_page=True)


def test_task_summary_page(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    page.set_viewport_size({"width": 1400, "height": 1800})
    tab.goto(f"{app.url}/rating_tasks?{urlencode({'dataset': DEMO})}")
    expect(page.get_by_text("Krippendorff's α (interval)")).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    page.screenshot(path=str(artifacts / "rating-tasks-summary.png"), full_page=True)
    page.get_by_role("tab", name="Settings").click()
    expect(page.get_by_text("Completely accurate and fine-grained labeling").first).to_be_visible()
    page.screenshot(path=str(artifacts / "rating-tasks-settings.png"), full_page=True)
