"""A missing image says where its image root is set: below it on the Item page (for whoever may set
it), on the Item page everywhere else — never "below" on a page without that setting."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db.access import OPERATOR
from db.engine import make_engine
from db.importer import import_bundle
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord
from tests.pages.demo_store import APP


@pytest.fixture
def store(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    engine = make_engine(sqlite_url)
    item = ItemRecord(external_id="a", response="A red cube.", image_ref="cube.jpg")
    gold = LabelSetRecord(kind="gold", name="gold", annotations=[Annotations("a", spans=[SpanRecord(2, 5)])])
    run = LabelSetRecord(
        kind="detector", name="det", annotations=[Annotations("a", spans=[SpanRecord(2, 5)])]
    )
    dataset = DatasetRecord(name="cubes", source_format="canonical", label_kinds=["span"])
    import_bundle(engine, Bundle(dataset, items=[item], label_sets=[gold, run]), actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    return sqlite_url


@pytest.mark.parametrize(
    ("page", "hint"),
    [
        ("item", "Set the image root below (Image settings)"),
        ("compare", "The image root is set on the Item page (Image settings)"),
        ("spans", "The image root is set on the Item page (Image settings)"),
    ],
)
def test_the_missing_image_hint_points_at_a_setting_that_is_there(store: str, page: str, hint: str) -> None:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": "cubes", "item": "a"})
    at.run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    [warning] = [w.value for w in at.warning if "cube" in w.value]
    assert "no image root set" in warning and hint in warning
    assert bool([e for e in at.expander if e.label == "Image settings"]) is (page == "item")
