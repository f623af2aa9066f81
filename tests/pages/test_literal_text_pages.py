"""Every page shows names, ids, notes and detector output from the store literally, never as Markdown.

The store's dataset name, description, item id, subset, source model, detector name and version, parse
error, rating-task name, annotator name and status note are all hostile Markdown (bold, a link, an image
from an outside address). On every page, no element that Streamlit renders as Markdown may hold a live
link or image, and the text must be there to read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from formats.problems import quoted
from tests.hostile_store import ANNOTATOR, DATASET, DETECTOR, HOSTILE, ITEM, NOTE, TASK, load_hostile, shown
from tests.pages.conftest import add_small_dataset

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 30
# Elements whose text Streamlit shows as it is (HTML is sanitised and escaped by the renderers; tables,
# text, code and selection options are plain text).
PLAIN = {"html", "text", "code", "arrow_data_frame", "json", "text_input", "text_area"}
PAGES = [
    "app_pages/home.py",
    "app_pages/browse.py",
    "app_pages/item.py",
    "app_pages/import_data.py",
    "app_pages/export_data.py",
    "app_pages/spans.py",
    "app_pages/sentences.py",
    "app_pages/claims.py",
    "app_pages/triplets.py",
    "app_pages/score_responses.py",
    "app_pages/rate.py",
    "app_pages/rating_tasks.py",
    "app_pages/adjudicate.py",
    "app_pages/overrides.py",
    "app_pages/compare.py",
    "app_pages/failures.py",
    "app_pages/paper_metrics.py",
    "app_pages/correlation.py",
    "app_pages/agreement.py",
    "app_pages/presenter.py",
    "app_pages/run_detector.py",
    "app_pages/team.py",
]


@pytest.fixture
def hostile_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    engine = make_engine(sqlite_url)
    load_hostile(engine)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return sqlite_url


def markdown_sources(at: AppTest) -> list[str]:
    """The Markdown source of every element and label Streamlit renders as Markdown."""
    found: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and getattr(node, "type", None) not in PLAIN:
            fields = proto.DESCRIPTOR.fields_by_name
            for name in ("body", "label", "help", "text"):
                value = getattr(proto, name) if name in fields else None
                if isinstance(value, str) and value:
                    found.append(value)
            for block in ("expandable", "tab"):
                if block in fields and proto.HasField(block):
                    found.append(getattr(proto, block).label)
            if node.type in ("radio", "button_group"):
                found.extend(str(option) for option in getattr(node, "options", []))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def _open(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": DATASET, "user": ANNOTATOR, **query})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _assert_literal(at: AppTest, *expected: str) -> list[str]:
    sources = markdown_sources(at)
    for source in sources:
        assert "](https://" not in source and "https://evil" not in source, source
        assert "<img" not in source and "<a " not in source, source
    texts = [shown(s) for s in sources]
    for text in expected:
        assert any(text in t for t in texts), (text, texts)
    return texts


@pytest.mark.parametrize("page", PAGES)
def test_every_page_keeps_hostile_text_literal(hostile_db: str, page: str) -> None:
    at = _open(page, item=ITEM, task="1")
    _assert_literal(at)


def test_home_shows_name_format_and_description(hostile_db: str) -> None:
    at = _open("app_pages/home.py")
    _assert_literal(at, DATASET, f"description {HOSTILE}")


def test_item_page_shows_id_subset_model_and_parse_error(hostile_db: str) -> None:
    at = _open("app_pages/item.py", item=ITEM)
    at.selectbox(key="item_label_set").set_value(f"Detector · {DETECTOR} v {HOSTILE}").run()
    _assert_literal(
        at,
        ITEM,
        f"subset {HOSTILE}",
        f"model {HOSTILE}",
        f"error {HOSTILE}",
        f"{DETECTOR} v {HOSTILE}",
    )


def test_unknown_item_and_dataset_in_the_address_are_literal(hostile_db: str) -> None:
    at = _open("app_pages/item.py", item=f"missing {HOSTILE}")
    _assert_literal(at, quoted(f"missing {HOSTILE}"), quoted(DATASET))
    at = _open("app_pages/browse.py", dataset=f"other {HOSTILE}")
    _assert_literal(at, quoted(f"other {HOSTILE}"))


# Names with what ``repr`` escapes: a backslash (doubled by it) and both kinds of quote.
BACKSLASHED = "back\\slash"
ITEM_ID = 'C:\\data\\it\'s "x"'


def test_names_with_backslashes_and_quotes_are_quoted_as_written(hostile_db: str) -> None:
    """A dataset and an item id with a backslash or a quote are named in a message as written, not with
    the backslash doubled and the quote escaped, as ``repr`` writes them."""
    add_small_dataset(hostile_db, BACKSLASHED)
    at = _open("app_pages/item.py", dataset=BACKSLASHED, item=ITEM_ID)
    said = "Dataset 'back\\slash' has no item with id 'C:\\data\\it's \"x\"'"
    assert any(shown(w.value).startswith(said + ": ") for w in at.warning), [w.value for w in at.warning]
    at = _open("app_pages/compare.py", dataset=BACKSLASHED, item=ITEM_ID)
    assert shown(at.warning[0].value).startswith(said + "; showing its first item instead.")
    at = _open("app_pages/browse.py", dataset="gone\\it's")
    assert shown(at.warning[0].value).startswith('There is no dataset named "gone\\it\'s"')


def test_compare_shows_detector_name_and_parse_error(hostile_db: str) -> None:
    at = _open("app_pages/compare.py", item=ITEM, detectors=DETECTOR)
    _assert_literal(at, DETECTOR, f"error {HOSTILE}", ITEM)


def test_spans_page_shows_annotator_and_status_note(hostile_db: str) -> None:
    at = _open("app_pages/spans.py", item=ITEM)
    _assert_literal(at, ANNOTATOR, NOTE, ITEM)


def test_rating_pages_show_task_and_detector(hostile_db: str) -> None:
    at = _open("app_pages/rating_tasks.py")
    _assert_literal(at, DETECTOR)
    at = _open("app_pages/rate.py", task="1", item=ITEM)
    _assert_literal(at, TASK, DETECTOR)


def test_run_detector_page_shows_a_runs_names_and_refusal_literally(hostile_db: str) -> None:
    from components.run_registry import run_registry
    from detectors.runner import RunRefused, RunSpec

    def refused(run_id: str, cancel: Any, progress: Any) -> Any:
        raise RunRefused(f"refused {HOSTILE}")

    spec = RunSpec(DATASET, f"live {HOSTILE}", "mhalo-vanilla", "http://127.0.0.1:9/v1", f"model {HOSTILE}")
    # Not waited for (a refusal within the wait is the form's to show): it is listed with its refusal.
    run = run_registry().start(spec, ANNOTATOR, refused, settle_s=0)
    assert run.thread is not None
    run.thread.join(10)
    at = _open("app_pages/run_detector.py")
    _assert_literal(at, f"live {HOSTILE}", f"model {HOSTILE}", f"refused {HOSTILE}")
