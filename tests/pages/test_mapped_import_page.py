"""The Import page's "Map fields" mode, driven through Streamlit's AppTest on a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import export_bundle
from db.repositories.datasets import import_mapping
from tests.pages.conftest import problem_report

ROOT = Path(__file__).resolve().parents[2]
IMPORT_PAGE = str(ROOT / "app_pages" / "import_data.py")
TIMEOUT = 60
XSS = "Look: <script>window.__xss=1</script> a red <b>cube</b>."

RECORDS = [
    {
        "qid": "x1",
        "meta": {"question": "**What?**"},
        "answer": XSS,
        "spans": [{"start": 40, "end": 43, "text": "red"}],
    },
    # Offsets one character off: an error, until "locate by text" places the span by its text.
    {
        "qid": "x2",
        "meta": {"question": "Count."},
        "answer": "Two red cars.",
        "spans": [{"start": 5, "end": 8, "text": "red"}],
    },
]


@pytest.fixture
def store(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    st.cache_resource.clear()
    st.cache_data.clear()
    return sqlite_url


def _imports(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "imports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _map_page(path: Path) -> AppTest:
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.radio(key="import_kind").set_value("Map fields").run()
    at.radio(key="map_mode").set_value("Path on the server").run()
    at.text_input(key="map_path").input(str(path)).run()
    return at


def _html(at: AppTest) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def _table(at: AppTest, column: str) -> Any:
    """The first table on the page with ``column`` (the field list has "sample values"); "reason": the
    validation report."""
    if column == "reason":
        return problem_report(at)
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_mapping_fields_previews_spans_and_imports(store: str, tmp_path: Path) -> None:
    path = _imports(tmp_path) / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    at = _map_page(path)
    assert not at.exception
    columns = _table(at, "sample values")
    assert list(columns["field"]) == ["qid", "meta", "meta.question", "answer", "spans"]
    assert "**What?**" in columns["sample values"][2]
    # Roles are guessed from common names where they can be; the rest is chosen.
    assert at.selectbox(key="map_role_response").value == "answer"
    at.selectbox(key="map_role_id").set_value("qid").run()
    at.selectbox(key="map_role_prompt").set_value("meta.question").run()
    at.selectbox(key="map_shape").set_value("offsets").run()
    assert at.warning and "not complete" in at.warning[0].value  # no spans field chosen yet
    at.selectbox(key="map_gold_field").set_value("spans").run()
    assert not at.exception
    assert _metrics(at) == {"Items": "1", "Errors": "1", "Warnings": "0"}
    body = _html(at)
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body and "<script>" not in body
    assert "<mark" in body  # the span is drawn before anything is written
    report = _table(at, "reason")
    assert list(report["record"]) == ["#1 (id=x2)"] and list(report["field"]) == ["spans[0].text"]
    assert at.button(key="map_go").disabled
    at.checkbox(key="map_locate").check().run()
    assert _metrics(at) == {"Items": "2", "Errors": "0", "Warnings": "1"}
    (download,) = at.get("download_button")
    assert "mapping" in download.label.lower()
    at.text_input(key="map_dataset").input("qa-set").run()
    at.button(key="map_go").click().run()
    assert not at.exception
    assert "2 new items" in at.success[-1].value
    engine = make_engine(store)
    try:
        bundle = export_bundle(engine, "qa-set", actor=OPERATOR)
        saved = import_mapping(engine, "qa-set")
    finally:
        engine.dispose()
    assert [(i.external_id, i.prompt) for i in bundle.items] == [("x1", "**What?**"), ("x2", "Count.")]
    spans = {a.item: [(s.start, s.end) for s in a.spans] for a in bundle.label_sets[0].annotations}
    assert spans == {"x1": [(40, 43)], "x2": [(4, 7)]}
    assert saved == {
        "version": 1,
        "fields": {"id": "qid", "prompt": "meta.question", "response": "answer"},
        "gold": {"shape": "offsets", "field": "spans", "locate_by_text": True},
    }


def test_a_stored_mapping_is_reused_with_its_value_mapping(store: str, tmp_path: Path) -> None:
    first = _imports(tmp_path) / "part1.jsonl"
    rows = [{"id": "a", "text": "A cat. A dog.", "verdicts": [1, 0]}]
    first.write_text("".join(json.dumps(r) + "\n" for r in rows))
    at = _map_page(first)
    at.selectbox(key="map_role_response").set_value("text").run()
    at.selectbox(key="map_shape").set_value("sentence_labels").run()
    at.selectbox(key="map_gold_field").set_value("verdicts").run()
    # Without a value mapping 0 and 1 are not labels Spanlight knows: a clear error per record.
    assert "say what it means in the value mapping" in _table(at, "reason")["reason"][0]
    at.checkbox(key="map_use_values").check().run()
    # The editor lists the values seen, none answered yet: each record stays an error until they are.
    assert not at.exception
    assert "say what it means in the value mapping" in _table(at, "reason")["reason"][0]

    engine = make_engine(store)
    try:
        from db.transfer import import_table
        from formats.mapping import ImportMapping, open_file

        spec = ImportMapping.from_dict(
            {
                "version": 1,
                "fields": {"id": "id", "response": "text"},
                "gold": {
                    "shape": "sentence_labels",
                    "field": "verdicts",
                    "values": {"1": "correct", "0": "incorrect"},
                },
            }
        )
        assert import_table(
            engine, open_file(first.read_bytes(), "part1.jsonl"), mapping=spec, actor=OPERATOR
        ).ok
    finally:
        engine.dispose()
    second = _imports(tmp_path) / "part2.jsonl"
    second.write_text(json.dumps({"id": "b", "text": "One. Two. Three.", "verdicts": [0, 1, 1]}) + "\n")
    at = _map_page(second)
    at.selectbox(key="map_reuse_dataset").set_value("part1").run()
    assert not at.exception
    assert at.selectbox(key="map_role_id").value == "id"
    assert at.selectbox(key="map_shape").value == "sentence_labels"
    assert at.checkbox(key="map_use_values").value is True
    assert _metrics(at) == {"Items": "1", "Errors": "0", "Warnings": "0"}
    body = _html(at)
    assert "incorrect" in body and "<mark" in body  # the incorrect sentence is drawn
    at.text_input(key="map_dataset").input("part1").run()
    at.button(key="map_go").click().run()
    assert "1 new items" in at.success[-1].value
    engine = make_engine(store)
    try:
        labels = {
            a.item: [lab.label for lab in a.sentence_labels]
            for a in export_bundle(engine, "part1", actor=OPERATOR).label_sets[0].annotations
        }
    finally:
        engine.dispose()
    assert labels == {"a": ["correct", "incorrect"], "b": ["incorrect", "correct", "correct"]}


def test_a_dataset_folder_is_listed_and_a_recognised_one_imports_as_it_is(store: str, tmp_path: Path) -> None:
    folder = _imports(tmp_path) / "mhal-hf"
    (folder / "data").mkdir(parents=True)
    segments = [
        {
            "id": f"r{k}",
            "question": "Describe.",
            "response": "A cat. It is red.",
            "image": {"bytes": b"\x89PNG", "path": None},
            "annotations": [
                {"start": 0, "end": 6, "text": "A cat.", "label": "ACCURATE"},
                {"start": 7, "end": 17, "text": "It is red.", "label": "INACCURATE"},
            ],
        }
        for k in range(2)
    ]
    pq.write_table(pa.Table.from_pylist(segments[:1]), folder / "data" / "train-00000-of-00002.parquet")
    pq.write_table(pa.Table.from_pylist(segments[1:]), folder / "data" / "train-00001-of-00002.parquet")
    (folder / "README.md").write_text(
        "---\npretty_name: M-HalDetect sample\n---\n\nTwo responses <b>only</b>.\n"
    )
    at = _map_page(folder)
    assert not at.exception
    assert any("M-HalDetect sample" in t.value for t in at.text)
    columns = _table(at, "sample values")
    assert "image.bytes" in list(columns["field"]) and "<4 bytes>" in " ".join(columns["sample values"])
    assert "Recognised as M-HalDetect" in at.success[0].value
    # The image column holds the image itself, not a path: imported without an image reference, warned.
    assert _metrics(at) == {"Items": "2", "Errors": "0", "Warnings": "2"}
    at.button(key="map_go").click().run()
    assert not at.exception and "2 new items" in at.success[-1].value
    # Mapping it by hand instead: the image column holds bytes, not a path, and is reported as such.
    at.checkbox(key="map_override").check().run()
    at.selectbox(key="map_role_image").set_value("image").run()
    at.selectbox(key="map_shape").set_value("offsets").run()
    at.selectbox(key="map_gold_field").set_value("annotations").run()
    report = _table(at, "reason")
    assert set(report["field"]) == {"image"} and set(report["severity"]) == {"warning"}
    assert list(report["file"]) == [
        "mhal-hf/data/train-00000-of-00002.parquet",
        "mhal-hf/data/train-00001-of-00002.parquet",
    ]


def test_a_folder_outside_the_import_folder_is_refused(store: str, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    pq.write_table(pa.Table.from_pylist([{"a": 1}]), outside / "x.parquet")
    _imports(tmp_path)
    at = _map_page(outside)
    assert not at.exception
    assert "outside" in at.error[0].value and not at.metric
