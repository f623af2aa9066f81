"""The comparison page on a dataset with detector runs and no gold label set.

It once drew a "Gold · 0 gold span(s)" track and scored each run against it (F1_IoU 0.00, every span a
red false positive) without a word; now it says there is no gold, as the failure finder does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord
from tests.pages.conftest import serve

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DATASET = "runs only"


@pytest.fixture
def no_gold_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    bundle = Bundle(
        dataset=DatasetRecord(DATASET, "canonical", label_kinds=["span"]),
        items=[ItemRecord(external_id="a", response="A red cube sits on a table.", prompt="What is shown?")],
        label_sets=[
            LabelSetRecord(
                kind="detector", name="d1", annotations=[Annotations(item="a", spans=[SpanRecord(2, 5)])]
            )
        ],
    )
    return serve(sqlite_url, bundle, monkeypatch)


def test_compare_says_the_dataset_has_no_gold(no_gold_db: str) -> None:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["dataset"] = DATASET
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    said = [w.value for w in at.warning]
    assert any("no gold label set" in w for w in said), said
