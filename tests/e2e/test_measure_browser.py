"""The Measure pages in headless Chromium: every figure, and live numbers.

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
from tests.e2e.browser import AppTab, still_box

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def measure_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    data_dir = tmp_path_factory.mktemp("measure-e2e")
    with running_app(data_dir, prepare_store(data_dir)) as running:
        yield running


def _open(tab: AppTab, app: RunningApp, path: str, **query: str) -> None:
    tab.page.set_viewport_size(VIEWPORT)
    tab.goto(f"{app.url}/{path}?{urlencode({'dataset': DEMO, **query})}")


def _charts(page: Page, expected: int) -> list:
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(expected)
    for k in range(expected):
        expect(charts.nth(k).locator(".main-svg").first).to_be_attached()
    return [charts.nth(k) for k in range(expected)]


def _page_shot(tab: AppTab, path: Path) -> None:
    tab.screenshot(path, VIEWPORT["width"], VIEWPORT["height"])


def _shoot(charts: list, artifacts: Path, name: str) -> None:
    for k, chart in enumerate(charts, start=1):
        chart.scroll_into_view_if_needed()
        chart.screenshot(path=str(artifacts / f"measure-{name}-{k}.png"))


@pytest.mark.parametrize(
    ("view", "n_figures"), [("MHALO", 4), ("AlignBench", 5), ("MHaluBench", 1), ("Tri-HE", 1), ("HalLoc", 2)]
)
def test_every_paper_figure(
    measure_app: RunningApp, tab: AppTab, artifacts: Path, view: str, n_figures: int
) -> None:
    page = tab.page
    _open(tab, measure_app, "metrics", view=view)
    _shoot(_charts(page, n_figures), artifacts, view.lower().replace("-", ""))
    expect(page.get_by_text("Computed from").first).to_be_visible()
    assert page.get_by_role("button", name="CSV").count() >= 1
    _page_shot(tab, artifacts / f"measure-{view.lower().replace('-', '')}-page.png")


def test_correlation_and_agreement_figures(measure_app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    _open(tab, measure_app, "correlation")
    charts = _charts(page, 2)
    _shoot(charts, artifacts, "correlation")
    expect(page.locator('[data-testid="stMetric"]').first).to_contain_text("Pearson r")
    # A point of the scatter leads to its item.
    charts[0].scroll_into_view_if_needed()
    point = charts[0].locator("path.point").first
    box = still_box(point)
    tab.after_run(lambda: page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2))
    link = page.locator('[data-testid="stPageLink"] a')
    expect(link).to_contain_text("Open item demo-")
    assert "item=demo-" in (link.get_attribute("href") or "")
    _page_shot(tab, artifacts / "measure-correlation-page.png")
    for kind in ("Spans (per token)", "Sentence labels", "Ratings"):
        _open(tab, measure_app, "agreement", kind=kind)
        _shoot(_charts(page, 2), artifacts, "agreement-" + kind.split()[0].lower())
    _page_shot(tab, artifacts / "measure-agreement-page.png")


def test_presenter_mode(measure_app: RunningApp, tab: AppTab, artifacts: Path) -> None:
    page = tab.page
    _open(tab, measure_app, "presenter", slide="2")
    (chart,) = _charts(page, 1)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    heading = page.locator("h2").first.inner_text()
    page.screenshot(path=str(artifacts / "measure-presenter.png"))
    expect(page.get_by_text(re.compile(r"^Slide 2 of \d+ "))).to_be_visible()
    page.get_by_role("button", name="Next ▶").click()
    page.wait_for_function(f"() => document.querySelector('h2')?.innerText !== {heading!r}")
    assert "slide=3" in page.url


def _fleiss(page: Page) -> float:
    metric = page.locator('[data-testid="stMetric"]', has_text="Fleiss' kappa")
    return float(metric.locator('[data-testid="stMetricValue"]').inner_text())


def test_a_label_saved_on_one_page_changes_the_dashboard(measure_app: RunningApp, tab: AppTab) -> None:
    """Alice relabels a sentence on the labeling page; the agreement page shows the new kappa."""
    page = tab.page
    _open(tab, measure_app, "agreement", kind="Sentence labels")
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

    _open(tab, measure_app, "sentences", user="alice", item=external)
    button = page.locator(f".st-key-label_{item_id}_{index}_unknown button")
    tab.after_run(button.click)
    expect(button).to_have_attribute("kind", re.compile("primary"))
    saved = ev.sentence_labels(engine, dataset.id, [sets["alice"]])
    mine = dict(zip(saved["sentence_id"], saved["label"], strict=True))
    assert mine[rows["sentence_id"][target]] == "unknown"
    engine.dispose()

    _open(tab, measure_app, "agreement", kind="Sentence labels")
    after = _fleiss(page)
    assert after < before


# Each data grid of the page: its width and the width of what it holds (wider: a horizontal scroll).
GRID_WIDTHS_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')]
  .map((s) => ({holds: s.scrollWidth, shows: s.clientWidth}))"""


@pytest.mark.parametrize(("path", "view"), [("metrics", "MHALO"), ("metrics", "Tri-HE"), ("correlation", "")])
def test_report_tables_fit_a_laptop_screen(
    measure_app: RunningApp, tab: AppTab, path: str, view: str
) -> None:
    """At 1440×900 no report table hides columns (MHALO's Average, Tri-HE's Relation) behind a scroll."""
    page = tab.page
    query = {"view": view} if view else {}
    tab.goto(f"{measure_app.url}/{path}?{urlencode({'dataset': DEMO, **query})}")
    page.set_viewport_size({"width": 1440, "height": 900})
    tab.idle()
    grids = page.locator('[data-testid="stDataFrame"] .dvn-scroller')
    expect(grids.first).to_be_attached()
    for k in range(grids.count()):
        still_box(grids.nth(k))  # laid out
    widths = page.evaluate(GRID_WIDTHS_JS)
    assert widths and all(w["holds"] <= w["shows"] for w in widths), widths


def test_back_and_forward_step_through_the_labels_chosen(measure_app: RunningApp, tab: AppTab) -> None:
    """The labels chosen on Agreement are kept in the address as the page shows them; the browser's back
    button goes to the address before the last choice, and the page opens on it again (forward too)."""
    page = tab.page
    _open(tab, measure_app, "agreement", kind="Sentence labels")
    labels = page.locator(".st-key-kind")
    chosen = labels.get_by_role("radio", checked=True)
    expect(chosen).to_have_text("Sentence labels")
    tab.after_run(lambda: labels.get_by_role("radio", name="Ratings").click())
    expect(page).to_have_url(re.compile(r"kind=Ratings"))
    expect(chosen).to_have_text("Ratings")
    page.go_back()
    expect(page).to_have_url(re.compile(r"/agreement\?.*kind=Sentence\+labels"))
    expect(chosen).to_have_text("Sentence labels")
    page.go_forward()
    expect(page).to_have_url(re.compile(r"/agreement\?.*kind=Ratings"))
    expect(chosen).to_have_text("Ratings")


# Every download button's label, and whether it is drawn whole: its text box holds all it has to show.
_DOWNLOAD_LABELS_JS = """() => [...document.querySelectorAll(
  '[data-testid="stMain"] [data-testid="stDownloadButton"] button [data-testid="stMarkdownContainer"]'
)].map((label) => [label.textContent, label.scrollWidth <= label.clientWidth && label.clientWidth > 0])"""


def test_the_agreement_pages_download_buttons_show_their_whole_labels(
    measure_app: RunningApp, tab: AppTab
) -> None:
    """The CSV and HTML buttons under the tables and figures (two to a row, half the page wide) each got
    a sixth of their row, and read "C…" for "CSV"; each now takes the width of its label."""
    _open(tab, measure_app, "agreement")
    expect(tab.page.locator('[data-testid="stDownloadButton"]').first).to_be_visible()
    labels = tab.page.evaluate(_DOWNLOAD_LABELS_JS)
    assert {text for text, _ in labels} >= {"CSV", "HTML"}, labels
    assert all(whole for _, whole in labels), labels
