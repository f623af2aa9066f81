"""A rater in the browser: rate every predicted segment of an item by keyboard, see it saved and done;
both rating pages get the shared setup on a fresh server's first request."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from db.engine import make_engine
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.rating_tasks import detector_segments, list_rating_tasks, my_ratings
from tests.e2e.app_server import RunningApp, running_app

DEMO = "Spanlight demo (synthetic)"
RATER = "keyboard-rater"


def _wait_ready(page: Page) -> None:
    page.wait_for_selector('[data-testid="stSidebar"]', timeout=30_000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000
    )


@pytest.mark.parametrize(
    ("path", "title"), [("rate", "Rate detector outputs"), ("rating_tasks", "Rating tasks")]
)
def test_first_request_to_a_rating_page_runs_the_shared_setup(
    path: str, title: str, demo_store: tuple[Path, str], page: Page
) -> None:
    data_dir, database_url = demo_store
    with running_app(data_dir, database_url) as fresh:
        page.goto(f"{fresh.url}/{path}")
        _wait_ready(page)
        # a fresh server imports the metrics stack on this first run: allow it time
        expect(page.get_by_role("textbox", name="Working as")).to_have_value("annotator", timeout=30_000)
        expect(page).to_have_title(f"{title} · Spanlight")


def test_rate_an_item_by_keyboard(app: RunningApp, page: Page, artifacts: Path) -> None:
    engine = make_engine(app.database_url)
    task = next(t for t in list_rating_tasks(engine, 1) if t.name == "MHALO segment ratings")
    external_id = next(e for e, s in detector_segments(engine, task).items() if len(s) >= 3)
    segments = detector_segments(engine, task)[external_id]
    item = get_item(engine, 1, external_id)

    page.set_viewport_size({"width": 1400, "height": 2200})  # the main area scrolls: show it all
    query = urlencode({"dataset": DEMO, "task": task.id, "item": external_id, "user": RATER})
    page.goto(f"{app.url}/rate?{query}")
    _wait_ready(page)
    counter = page.get_by_text(re.compile(r"\d+ / \d+ segments rated"))
    expect(counter).to_contain_text(f"0 / {len(segments)} segments rated", timeout=30_000)
    expect(page.locator("mark.hs-current")).to_have_count(1)
    expect(page.get_by_role("switch", name="Show gold spans")).to_be_disabled()

    page.keyboard.press("j")  # to segment 2 and back with k
    expect(page.get_by_text(f"▶ Segment 2 of {len(segments)}")).to_be_visible()
    page.keyboard.press("k")
    expect(page.get_by_text(f"▶ Segment 1 of {len(segments)}")).to_be_visible()
    scores = [4, 3, 1, 2, 4, 3][: len(segments)]
    for done, score in enumerate(scores, start=1):
        page.keyboard.press(str(score))  # scores the current segment, then moves on
        expect(counter).to_contain_text(f"{done} / {len(segments)} segments rated")
    expect(page.get_by_text("Everything on this item is rated")).to_be_visible()
    expect(page.get_by_text("✓ Saved")).to_be_visible()
    expect(page.get_by_role("switch", name="Show gold spans")).to_be_enabled()
    page.wait_for_timeout(300)
    _wait_ready(page)
    page.screenshot(path=str(artifacts / "rating-keyboard.png"), full_page=True)

    rater = get_or_create_annotator(engine, RATER)
    mine = my_ratings(engine, task.id, item.id, rater.id)
    assert {k: v.score for k, v in mine.items()} == {
        s: float(x) for s, x in zip(segments, scores, strict=True)
    }

    page.keyboard.press("u")  # undo the last score: the item is open again
    expect(counter).to_contain_text(f"{len(segments) - 1} / {len(segments)} segments rated")
    expect(page.get_by_text("0 / 60 done")).to_be_visible()
    assert len(my_ratings(engine, task.id, item.id, rater.id)) == len(segments) - 1
    expect(page.get_by_role("switch", name="Show gold spans")).to_be_disabled()
    page.wait_for_timeout(300)
    _wait_ready(page)  # the run has finished: no element of the run before is left on screen
    expect(page.get_by_text("✓ Saved")).to_have_count(1)
    page.screenshot(path=str(artifacts / "rating-after-undo.png"), full_page=True)


def test_task_summary_page(app: RunningApp, page: Page, artifacts: Path) -> None:
    page.set_viewport_size({"width": 1400, "height": 1800})
    page.goto(f"{app.url}/rating_tasks?{urlencode({'dataset': DEMO})}")
    _wait_ready(page)
    expect(page.get_by_text("Krippendorff's α (interval)")).to_be_visible(timeout=30_000)  # cold imports
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    page.screenshot(path=str(artifacts / "rating-tasks-summary.png"), full_page=True)
    page.get_by_role("tab", name="Settings").click()
    expect(page.get_by_text("Completely accurate and fine-grained labeling").first).to_be_visible()
    page.screenshot(path=str(artifacts / "rating-tasks-settings.png"), full_page=True)
