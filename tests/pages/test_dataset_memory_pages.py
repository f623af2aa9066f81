"""The dataset a user works on: kept across pages, a safe default on a first visit, per user in team
mode; missing items and datasets that lead somewhere; the home page's guided start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import add_small_dataset
from tests.pages.demo_store import APP, DEMO, demo_store
from tests.pages.team_store import fresh_app, log_in

TIMEOUT = 60
# A name that sorts before every other and is HTML and Markdown: it must never become the default, and
# it shows literally where it is shown.
HOSTILE = '<img src=x onerror="window.__xss=1"> **bold**'


@pytest.fixture
def two_datasets(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The demo, then a second dataset "processed_test" and one named :data:`HOSTILE`."""
    demo_store(sqlite_url, tmp_path, monkeypatch)
    add_small_dataset(sqlite_url, "processed_test")
    add_small_dataset(sqlite_url, HOSTILE)
    return sqlite_url


def _app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at


def _menu_click(at: AppTest, page: str) -> AppTest:
    """What the sidebar menu does: another page, and an address without the previous page's params."""
    at.query_params.clear()
    return at.switch_page(page).run()


def _dataset(at: AppTest) -> Any:
    assert not at.exception, at.exception
    return at.selectbox(key="dataset_picker").value


def test_chosen_dataset_stays_on_every_page(two_datasets: str) -> None:
    at = _app().run()
    at.switch_page("app_pages/browse.py").run()
    at.selectbox(key="dataset_picker").set_value("processed_test").run()
    assert at.query_params["dataset"] == "processed_test"
    for page in (
        "app_pages/paper_metrics.py",
        "app_pages/compare.py",
        "app_pages/item.py",
        "app_pages/home.py",
    ):
        _menu_click(at, page)
        assert not at.exception, (page, at.exception)
        if page != "app_pages/home.py":
            assert _dataset(at) == "processed_test", page
        assert at.query_params["dataset"] == "processed_test", page


def test_a_dataset_link_is_remembered(two_datasets: str) -> None:
    at = _app(dataset="processed_test").run()  # the home page, opened from a link
    _menu_click(at, "app_pages/failures.py")
    assert _dataset(at) == "processed_test"


def test_a_first_visit_opens_the_demo_never_the_first_name(two_datasets: str) -> None:
    at = _app().run()
    _menu_click(at, "app_pages/browse.py")
    assert _dataset(at) == DEMO
    assert sorted(at.selectbox(key="dataset_picker").options)[0] == HOSTILE
    # The hostile name is listed on the home page as its characters.
    _menu_click(at, "app_pages/home.py")
    assert HOSTILE in [s.value.replace("\\", "") for s in at.subheader]
    assert not at.get("html") or all("<img" not in h.proto.body for h in at.get("html"))


def test_without_a_demo_a_first_visit_opens_the_dataset_imported_last(app_db: str) -> None:
    add_small_dataset(app_db, HOSTILE)
    add_small_dataset(app_db, "newest")
    at = _app().run()
    _menu_click(at, "app_pages/browse.py")
    assert _dataset(at) == "newest"


def test_a_missing_dataset_says_so_and_shows_the_remembered_one(two_datasets: str) -> None:
    at = _app(dataset="processed_test").run()
    at.query_params.clear()
    at.query_params["dataset"] = "gone"
    at.switch_page("app_pages/browse.py").run()
    assert "There is no dataset named 'gone'" in at.warning[0].value
    assert _dataset(at) == "processed_test"
    assert "" in [link.proto.page for link in at.get("page_link")]  # the Datasets page, at the root


@pytest.mark.parametrize("page", ["item", "spans", "sentences"])
def test_a_missing_item_offers_a_way_on(two_datasets: str, page: str) -> None:
    at = _app(dataset=DEMO, item="nope").run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception and not at.error
    assert f"Dataset '{DEMO}' has no item with id 'nope'" in at.warning[0].value.replace("\\", "")
    links = {link.proto.page: link.proto for link in at.get("page_link")}
    assert {page, "browse", ""} <= set(links)  # this page's next item, Browse, the Datasets page
    assert links["browse"].query_string == "dataset=Spanlight+demo+%28synthetic%29"


def test_home_starts_with_the_four_steps_on_the_demo(two_datasets: str) -> None:
    at = _app().run()
    assert not at.exception
    links = {link.proto.page: link.proto for link in at.get("page_link")}
    assert {"import_data", "spans", "compare", "metrics"} <= set(links)
    for page in ["spans", "compare", "metrics"]:
        assert links[page].query_string == "dataset=Spanlight+demo+%28synthetic%29", page


def test_threshold_is_one_control_that_carries_over(two_datasets: str) -> None:
    at = _app(dataset=DEMO).run()
    at.switch_page("app_pages/compare.py").run()
    assert [s.key for s in at.sidebar.slider] == ["iou_threshold"]
    at.slider(key="iou_threshold").set_value(0.3).run()
    assert at.query_params["iou"] == "0.3"
    for page in ("app_pages/failures.py", "app_pages/paper_metrics.py"):
        _menu_click(at, page)
        assert not at.exception, at.exception
        assert at.sidebar.slider(key="iou_threshold").value == pytest.approx(0.3), page
        assert at.query_params["iou"] == "0.3", page


def test_a_viewer_is_not_offered_the_import_step(team_db: str) -> None:
    at = log_in(fresh_app().run(), "vic")
    _menu_click(at, "app_pages/home.py")
    links = {link.proto.page for link in at.get("page_link")}
    assert {"compare", "metrics"} <= links and not {"import_data", "spans"} & links
    assert "Your role does not open this page." in [c.value for c in at.caption]


def test_team_memory_is_per_user(team_db: str) -> None:
    add_small_dataset(team_db, "processed_test")
    at = log_in(fresh_app().run(), "rev")
    _menu_click(at, "app_pages/browse.py")
    at.selectbox(key="dataset_picker").set_value("processed_test").run()
    _menu_click(at, "app_pages/compare.py")
    assert _dataset(at) == "processed_test"
    # Someone else signs in on the same browser session: their own default, not the reviewer's choice.
    next(b for b in at.sidebar.button if b.label == "Log out").click().run()
    log_in(at, "vic")
    _menu_click(at, "app_pages/compare.py")
    assert _dataset(at) == DEMO
    assert at.query_params["dataset"] == DEMO


def test_a_dataset_chosen_survives_an_older_address(two_datasets: str) -> None:
    """A live page's watcher run can bring the address from before the last choice back (it is asked for
    with the address the browser showed when it asked). The next run showed the dataset from before
    again, as if the choice had not been made; it keeps the one chosen and puts it back in the address."""
    at = _app(dataset=DEMO).run()
    at.switch_page("app_pages/paper_metrics.py").run()
    assert _dataset(at) == DEMO
    at.selectbox(key="dataset_picker").set_value("processed_test").run()
    assert _dataset(at) == "processed_test"
    at.query_params["dataset"] = DEMO  # what such a watcher run leaves in the address
    at.run()
    assert _dataset(at) == "processed_test"
    assert at.query_params["dataset"] == "processed_test"


def test_a_page_opened_again_follows_its_address(two_datasets: str) -> None:
    at = _app(dataset=DEMO).run()
    at.switch_page("app_pages/paper_metrics.py").run()
    at.selectbox(key="dataset_picker").set_value("processed_test").run()
    at.switch_page("app_pages/browse.py")
    at.query_params["dataset"] = DEMO  # a link to another page, with a dataset
    at.run()
    assert _dataset(at) == DEMO
    at.switch_page("app_pages/paper_metrics.py").run()
    assert _dataset(at) == DEMO


def test_a_threshold_chosen_survives_an_older_address(two_datasets: str) -> None:
    at = _app(dataset=DEMO).run()
    at.switch_page("app_pages/compare.py").run()
    at.slider(key="iou_threshold").set_value(0.7).run()
    assert at.query_params["iou"] == "0.7"
    at.query_params["iou"] = "0.3"  # an older address, brought back by a watcher run
    at.run()
    assert at.sidebar.slider(key="iou_threshold").value == pytest.approx(0.7)
    assert at.query_params["iou"] == "0.7"
    at.slider(key="iou_threshold").set_value(0.5).run()  # the default: left out of the address
    at.query_params["iou"] = "0.7"
    at.run()
    assert at.sidebar.slider(key="iou_threshold").value == pytest.approx(0.5)
    assert "iou" not in at.query_params


def test_presenter_mode_leaves_for_the_page_as_it_was_shown(two_datasets: str) -> None:
    """A run asked for with an older address (a live page's watcher run) kept the page as it was, but
    presenter mode, opened next, took that older address for the page's: Esc went back to Compare on the
    item, threshold and tracks from before."""
    at = _app(dataset=DEMO).run()
    at.switch_page("app_pages/compare.py").run()
    at.slider(key="iou_threshold").set_value(0.3).run()
    older = dict(at.query_params)
    at.slider(key="iou_threshold").set_value(0.7).run()
    at.button(key="compare_next").click().run()
    at.button(key="compare_down_cautious").click().run()
    shown = dict(at.query_params)
    assert {k: shown[k] for k in ("iou", "detectors")} == {"iou": "0.7", "detectors": "eager,cautious,sloppy"}
    at.query_params.clear()
    at.query_params.update(older)  # what such a watcher run leaves in the address
    at.run()
    assert dict(at.query_params) == shown
    at.switch_page("app_pages/presenter.py").run()
    at.button(key="presenter-leave").click().run()
    assert not at.exception, at.exception
    assert at.sidebar.slider(key="iou_threshold").value == pytest.approx(0.7)
    assert dict(at.query_params) == shown
