"""A person comparing detectors in the browser: deep links, stepping through failures, the colours of
the matching checked against the metrics library, track arrangement, exports and inert model text."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from playwright.sync_api import Page, expect

from db.engine import make_engine
from db.repositories.datasets import get_dataset
from db.repositories.label_sets import list_label_sets
from db.repositories.report_inputs import item_index, spans_by_label_set
from metrics import f1_iou, token_spans
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab, wait_images_settled

DEMO = "Spanlight demo (synthetic)"
DETECTORS = ("cautious", "eager", "sloppy")
MATCHED_RGB = "rgb(34, 136, 51)"  # #228833
FALSE_POSITIVE_RGB = "rgb(238, 102, 119)"  # #EE6677
VIEWPORT = {"width": 1400, "height": 1000}


def _shot(tab: AppTab, path: Path) -> None:
    tab.screenshot(path, VIEWPORT["width"], VIEWPORT["height"])


def _wait_tracks(tab: AppTab, count: int = 4) -> None:
    """The comparison shows the gold track and one per detector shown; wait for them and the run's end."""
    expect(tab.page.locator(".hs-track")).to_have_count(count)
    tab.idle()


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


class Store:
    """Spans and token-level F1_IoU counts of the demo, read straight from the store."""

    def __init__(self, url: str) -> None:
        engine = make_engine(url)
        dataset = get_dataset(engine, DEMO)
        assert dataset is not None
        index = item_index(engine, dataset.id)
        sets = {ls.name: ls.id for ls in list_label_sets(engine, dataset.id)}
        spans = spans_by_label_set(engine, dataset.id)
        engine.dispose()
        self.ids = index.external_ids
        self.text = dict(zip(index.external_ids, index.responses, strict=True))
        by_item = dict(zip(index.ids, index.external_ids, strict=True))
        self.spans = {
            name: {by_item[i]: s for i, s in spans.get(ls_id, {}).items()} for name, ls_id in sets.items()
        }

    def tokens(self, name: str, item: str) -> list[tuple[int, int]]:
        return token_spans(self.text[item], [(s, e) for s, e, _ in self.spans[name].get(item, [])])

    def matched(self, detector: str, item: str) -> tuple[int, int]:
        """(M, |pred|) for ``detector`` on ``item``: M recovered from metrics.f1_iou = 2M/(|p|+|g|)."""
        pred, gold = self.tokens(detector, item), self.tokens("gold", item)
        score = f1_iou(pred, gold)
        return (round(score * (len(pred) + len(gold)) / 2) if pred and gold else 0), len(pred)

    @property
    def clean(self) -> list[str]:
        return [i for i in self.ids if not self.spans["gold"].get(i)]


@pytest.fixture(scope="module")
def store(app: RunningApp) -> Store:
    return Store(app.database_url)


def test_deep_link_then_step_through_failures(
    app: RunningApp, store: Store, tab: AppTab, artifacts: Path
) -> None:
    expected = store.clean[2:]  # the clean items eager flags
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    tab.goto(
        f"{app.url}/failures?{urlencode({'dataset': DEMO, 'preset': 'clean-flagged', 'detector': 'eager'})}"
    )
    expect(page.get_by_text(f"{len(expected)} of {len(store.ids)} items")).to_be_visible()
    grid = page.locator('[data-testid="stDataFrame"]')
    expect(grid).to_be_visible()
    _shot(tab, artifacts / "compare-failures.png")

    # Click the selection cell of the first row (the grid is a canvas: header 35 px, rows 35 px).
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    tab.after_run(lambda: page.mouse.click(box["x"] + 14, box["y"] + 35 + 17))
    _wait_tracks(tab)
    expect(page).to_have_title("Compare detectors · Spanlight")
    expect(page.get_by_text(f"Failure 1 of {len(expected)}")).to_be_visible()
    query = _query(page)
    assert query["item"] == [expected[0]] and query["from"] == ["failures"]
    assert query["preset"] == ["clean-flagged"] and query["detectors"][0].startswith("eager")

    tab.after_run(page.locator(".st-key-compare_next button").click)
    expect(page.get_by_text(f"Failure 2 of {len(expected)}")).to_be_visible()
    assert _query(page)["item"] == [expected[1]]
    tab.after_run(page.locator(".st-key-compare_next button").click)
    expect(page.get_by_text(f"Failure 3 of {len(expected)}")).to_be_visible()
    tab.after_run(page.locator(".st-key-compare_prev button").click)
    expect(page.get_by_text(f"Failure 2 of {len(expected)}")).to_be_visible()
    assert _query(page)["item"] == [expected[1]]
    _shot(tab, artifacts / "compare-stepping.png")

    # The address is the shareable link: a new visitor steps through the same list from it.
    shared = page.url
    visitor = AppTab(page.context.new_page())
    other = visitor.page
    visitor.goto(shared)
    expect(other.get_by_text(f"Failure 2 of {len(expected)}")).to_be_visible()
    visitor.after_run(other.locator(".st-key-compare_prev button").click)
    expect(other.get_by_text(f"Failure 1 of {len(expected)}")).to_be_visible()
    assert _query(other)["item"] == [expected[0]]
    expect(other.locator(".st-key-compare_prev button")).to_be_disabled()
    other.close()

    tab.after_run(page.get_by_role("link", name="Back to the failure list").click)
    expect(page.get_by_text(f"{len(expected)} of {len(store.ids)} items")).to_be_visible()


def _fates(page: Page, track: str) -> dict[str, list[tuple[str, str]]]:
    """Per fate, the distinct predicted spans of a track: (span number, underline colour)."""
    found = page.evaluate(
        """(track) => {
            const out = {};
            for (const mark of document.querySelectorAll(`.hs-track[data-track="${track}"] mark.hs-pred`)) {
                const fate = [...mark.classList].find(c => c.startsWith('hs-fate-')).slice(8);
                const colour = getComputedStyle(mark).borderBottomColor;
                out[fate] = out[fate] || {};
                out[fate][mark.dataset.span] = colour;
            }
            return out;
        }""",
        track,
    )
    return {fate: sorted(spans.items()) for fate, spans in found.items()}


def test_fate_colours_agree_with_the_metrics_library(
    app: RunningApp, store: Store, tab: AppTab, artifacts: Path
) -> None:
    page = tab.page
    # A known item: one where eager has both a matched span and a false positive, and sloppy flags too.
    item = next(
        i
        for i in store.ids
        if 0 < store.matched("eager", i)[0] < store.matched("eager", i)[1] and store.matched("sloppy", i)[1]
    )
    page.set_viewport_size(VIEWPORT)
    tab.goto(
        f"{app.url}/compare?{urlencode({'dataset': DEMO, 'item': item, 'detectors': ','.join(DETECTORS)})}"
    )
    _wait_tracks(tab)
    for detector in DETECTORS:
        m, n = store.matched(detector, item)
        fates = _fates(page, detector)
        assert len(fates.get("matched", [])) == m, detector
        assert len(fates.get("false-positive", [])) == n - m, detector
        assert {colour for _, colour in fates.get("matched", [])} <= {MATCHED_RGB}
        assert {colour for _, colour in fates.get("false-positive", [])} <= {FALSE_POSITIVE_RGB}
    _shot(tab, artifacts / "compare-known-item.png")

    # Hover names the span; a click pins the explanation under it.
    eager = page.locator('.hs-track[data-track="eager"]')
    matched = eager.locator("mark.hs-fate-matched").first
    title = matched.get_attribute("title") or ""
    assert (
        "eager · pred #" in title and "matched gold #" in title and re.search(r"IoU \d\.\d\d ≥ 0\.50", title)
    )
    false_positive = eager.locator("mark.hs-fate-false-positive").first
    assert "false positive" in (false_positive.get_attribute("title") or "")
    matched.click()
    assert page.evaluate("() => document.activeElement.getAttribute('title')") == title
    popover = page.evaluate("() => getComputedStyle(document.activeElement, '::after').content")
    assert "matched gold #" in popover
    page.locator(".st-key-compare_track_2").screenshot(path=str(artifacts / "compare-span-popover.png"))


def test_tracks_reorder_and_collapse(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    tab.goto(
        f"{app.url}/compare?{urlencode({'dataset': DEMO, 'item': 'demo-011', 'detectors': 'cautious,eager,sloppy'})}"
    )
    _wait_tracks(tab)

    def order() -> list[str]:
        return page.eval_on_selector_all(".hs-track", "els => els.map(e => e.dataset.track)")

    assert order() == ["Gold", "cautious", "eager", "sloppy"]
    tab.after_run(page.locator(".st-key-compare_up_sloppy button").first.click)
    page.wait_for_function("() => document.querySelectorAll('.hs-track')[2]?.dataset.track === 'sloppy'")
    assert order() == ["Gold", "cautious", "sloppy", "eager"]
    assert _query(page)["detectors"] == ["cautious,sloppy,eager"]

    tab.after_run(page.locator(".st-key-compare_fold_detector-eager button").first.click)
    page.wait_for_function("() => document.querySelectorAll('.hs-track').length === 3")
    assert order() == ["Gold", "cautious", "sloppy"]
    page.get_by_role("button", name="Arrange tracks").click()
    tab.after_run(page.get_by_role("button", name="Collapse all").click)
    page.wait_for_function("() => document.querySelectorAll('.hs-track').length === 0")
    page.keyboard.press("Escape")
    _shot(tab, artifacts / "compare-collapsed.png")
    page.get_by_role("button", name="Arrange tracks").click()
    tab.after_run(page.get_by_role("button", name="Expand all").click)
    page.wait_for_function("() => document.querySelectorAll('.hs-track').length === 4")


def test_exports_download(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    tab.goto(f"{app.url}/compare?{urlencode({'dataset': DEMO, 'item': 'demo-xss'})}")
    _wait_tracks(tab)
    with page.expect_download() as download:
        page.get_by_role("button", name="HTML snippet").click()
    html_path = artifacts / "compare-export.html"
    download.value.save_as(html_path)
    document = html_path.read_text(encoding="utf-8")
    assert document.startswith("<!DOCTYPE html>") and "data:image/png;base64," in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document and "<script>" not in document
    with page.expect_download() as download:
        page.get_by_role("button", name="PNG for slides").click()
    png_path = artifacts / "compare-export.png"
    download.value.save_as(png_path)
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    tab.goto(f"{app.url}/failures?{urlencode({'dataset': DEMO, 'preset': 'format'})}")
    with page.expect_download() as download:
        page.get_by_role("button", name="CSV", exact=True).click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").strip().splitlines()
    assert lines[0].startswith("item,gold spans,disagreement") and len(lines) == 3


def test_model_text_stays_inert_on_the_comparison(app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(f"{app.url}/compare?{urlencode({'dataset': DEMO, 'item': 'demo-xss'})}")
    _wait_tracks(tab)
    expect(page.locator(".hs-track mark", has_text="<script>alert(1)</script>").first).to_be_visible()
    page.locator(".hs-track mark").first.click()
    wait_images_settled(page)
    assert dialogs == []
    assert page.evaluate("() => window.__xss") is None
    assert page.locator(".hs-track script, .hs-track img").count() == 0
    # Every span keeps its explanation, including those that quote markup-like model text.
    titles = page.eval_on_selector_all(".hs-track mark", "marks => marks.map(m => m.getAttribute('title'))")
    assert titles and all(titles), titles
    assert any("«‹script›alert(1)‹/script›»" in title for title in titles)
    _shot(tab, artifacts / "compare-xss.png")
