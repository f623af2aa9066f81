"""The Measure pages in headless Chromium: setup on first request, every figure, and live numbers.

These tests run their own server on their own copy of the demo, so labels saved here never reach the
other browser tests (and theirs never change the agreement numbers read here). Screenshots of every
figure go to ``test-artifacts/e2e/measure-*.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from db.engine import make_engine
from db.repositories import report_inputs as ev
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from tests.e2e.app_server import RunningApp, prepare_store, running_app

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1400, "height": 1000}
PAGES = {
    "metrics": "Metrics",
    "correlation": "Correlation",
    "agreement": "Agreement",
    "presenter": "Presenter mode",
}
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app !== null && app.dataset.testScriptState === "notRunning"
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-stale="true"]');
}"""


@pytest.fixture(scope="module")
def measure_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    data_dir = tmp_path_factory.mktemp("measure-e2e")
    with running_app(data_dir, prepare_store(data_dir)) as running:
        yield running


def _open(page: Page, app: RunningApp, path: str, **query: str) -> None:
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{app.url}/{path}?{urlencode({'dataset': DEMO, **query})}")
    _idle(page)


def _idle(page: Page) -> None:
    page.wait_for_selector('[data-testid="stSidebar"], [data-testid="stMain"]', timeout=30_000)
    page.wait_for_function(IDLE_JS, timeout=60_000)


def _charts(page: Page, expected: int) -> list:
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(expected, timeout=30_000)
    for k in range(expected):
        expect(charts.nth(k).locator(".main-svg").first).to_be_attached(timeout=30_000)
    return [charts.nth(k) for k in range(expected)]


def _page_shot(page: Page, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main block, so grow the viewport to fit it first."""
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 40, 12_000)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)


def _shoot(charts: list, artifacts: Path, name: str) -> None:
    for k, chart in enumerate(charts, start=1):
        chart.scroll_into_view_if_needed()
        chart.screenshot(path=str(artifacts / f"measure-{name}-{k}.png"))


def test_first_request_to_each_measure_page_runs_the_setup(measure_app: RunningApp, page: Page) -> None:
    # The module's server is fresh: each page below is the first request to its URL.
    for path, title in PAGES.items():
        _open(page, measure_app, path)
        expect(page).to_have_title(f"{title} · Spanlight")
        assert page.locator('[data-testid="stException"]').count() == 0
        if path != "presenter":  # presenter mode hides the sidebar, setup still ran (its title is set)
            expect(page.get_by_role("textbox", name="Working as")).to_have_value("annotator")


@pytest.mark.parametrize(
    ("view", "n_figures"), [("MHALO", 4), ("AlignBench", 5), ("MHaluBench", 1), ("Tri-HE", 1), ("HalLoc", 2)]
)
def test_every_paper_figure(
    measure_app: RunningApp, page: Page, artifacts: Path, view: str, n_figures: int
) -> None:
    _open(page, measure_app, "metrics", view=view)
    _shoot(_charts(page, n_figures), artifacts, view.lower().replace("-", ""))
    expect(page.get_by_text("Computed from").first).to_be_visible()
    assert page.get_by_role("button", name="CSV").count() >= 1
    _page_shot(page, artifacts / f"measure-{view.lower().replace('-', '')}-page.png")


def test_correlation_and_agreement_figures(measure_app: RunningApp, page: Page, artifacts: Path) -> None:
    _open(page, measure_app, "correlation")
    charts = _charts(page, 2)
    _shoot(charts, artifacts, "correlation")
    expect(page.locator('[data-testid="stMetric"]').first).to_contain_text("Pearson r")
    # A point of the scatter leads to its item.
    charts[0].scroll_into_view_if_needed()
    point = charts[0].locator("path.point").first
    page.wait_for_timeout(500)
    box = point.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    link = page.locator('[data-testid="stPageLink"] a')
    expect(link).to_contain_text("Open item demo-", timeout=30_000)
    assert "item=demo-" in (link.get_attribute("href") or "")
    _page_shot(page, artifacts / "measure-correlation-page.png")
    for kind in ("Spans (per token)", "Sentence labels", "Ratings"):
        _open(page, measure_app, "agreement", kind=kind)
        _shoot(_charts(page, 2), artifacts, "agreement-" + kind.split()[0].lower())
    _page_shot(page, artifacts / "measure-agreement-page.png")


def test_presenter_mode(measure_app: RunningApp, page: Page, artifacts: Path) -> None:
    _open(page, measure_app, "presenter", slide="2", refresh="2")
    (chart,) = _charts(page, 1)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    heading = page.locator("h2").first.inner_text()
    page.screenshot(path=str(artifacts / "measure-presenter.png"))
    status = page.get_by_text(re.compile(r"^Slide 2 of \d+ .* refreshed"))
    first = status.inner_text()
    expect(status).not_to_have_text(first, timeout=20_000)  # the slide refreshes itself
    page.get_by_role("button", name="Next ▶").click()
    page.wait_for_function(f"() => document.querySelector('h2')?.innerText !== {heading!r}", timeout=30_000)
    assert "slide=3" in page.url


def _fleiss(page: Page) -> float:
    metric = page.locator('[data-testid="stMetric"]', has_text="Fleiss' kappa")
    return float(metric.locator('[data-testid="stMetricValue"]').inner_text())


def test_a_label_saved_on_one_page_changes_the_dashboard(measure_app: RunningApp, page: Page) -> None:
    """Alice relabels a sentence on the labeling page; the agreement page shows the new kappa."""
    _open(page, measure_app, "agreement", kind="Sentence labels")
    before = _fleiss(page)

    # A sentence alice and bob both labelled correct: alice now says unknown.
    engine = make_engine(measure_app.database_url)
    dataset = get_dataset(engine, DEMO)
    sets = {v.name: v.id for v in list_label_sets(engine, dataset.id)}
    labels = ev.sentence_labels(engine, dataset.id, [sets["alice"], sets["bob"]])
    by_sentence: dict[int, dict[int, str]] = {}
    for ls, sentence, label in zip(
        labels["label_set_id"], labels["sentence_id"], labels["label"], strict=True
    ):
        by_sentence.setdefault(sentence, {})[ls] = label
    rows = ev.sentence_rows(engine, dataset.id)
    target = next(
        k
        for k, sentence in enumerate(rows["sentence_id"])
        if by_sentence.get(sentence) == {sets["alice"]: "correct", sets["bob"]: "correct"}
    )
    item_id, index = rows["item_id"][target], rows["index"][target]
    external = next(
        i
        for i, pid in zip(
            ev.item_index(engine, dataset.id).external_ids, ev.item_index(engine, dataset.id).ids, strict=True
        )
        if pid == item_id
    )
    assert get_item(engine, dataset.id, external) is not None

    _open(page, measure_app, "sentences", user="alice", item=external)
    button = page.locator(f".st-key-label_{item_id}_{index}_unknown button")
    button.click()
    _idle(page)
    expect(button).to_have_attribute("kind", re.compile("primary"), timeout=15_000)
    saved = ev.sentence_labels(engine, dataset.id, [sets["alice"]])
    mine = dict(zip(saved["sentence_id"], saved["label"], strict=True))
    assert mine[rows["sentence_id"][target]] == "unknown"
    engine.dispose()

    _open(page, measure_app, "agreement", kind="Sentence labels")
    after = _fleiss(page)
    assert after < before
