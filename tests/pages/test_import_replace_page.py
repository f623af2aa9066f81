"""The Import page refuses a file that would wipe stored annotations, applies it when replacing is
ticked, and takes it back with Undo in Recent imports (AppTest on a real SQLite store)."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import export_bundle
from db.import_undo import recent_imports
from db.transfer import import_file
from tests.db.import_samples import HOSTILE, canonical, gold_bundle

ROOT = Path(__file__).resolve().parents[2]
IMPORT_PAGE = str(ROOT / "app_pages" / "import_data.py")


@pytest.fixture
def store(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    st.cache_resource.clear()
    st.cache_data.clear()
    engine = make_engine(sqlite_url)
    try:
        assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    finally:
        engine.dispose()
    return sqlite_url


def _gold(url: str) -> tuple[int, int]:
    engine = make_engine(url)
    try:
        (gold,) = [
            ls for ls in export_bundle(engine, "shapes", actor=OPERATOR).label_sets if ls.name == "gold"
        ]
    finally:
        engine.dispose()
    return sum(len(a.spans) for a in gold.annotations), sum(len(a.sentence_labels) for a in gold.annotations)


def test_refusal_report_replace_checkbox_and_undo(store: str, tmp_path: Path) -> None:
    imports = tmp_path / "data" / "imports"  # server paths are read from the import folder only
    imports.mkdir(parents=True)
    path = imports / "visitor.jsonl"
    path.write_bytes(HOSTILE)
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=30).run()
    at.radio(key="import_mode").set_value("Path on the server").run()
    at.text_input(key="import_path").input(str(path)).run()
    at.text_input(key="import_dataset").input("shapes").run()
    assert not at.exception and not at.button(key="import_go").disabled

    at.button(key="import_go").click().run()

    assert not at.exception
    assert "Nothing was imported" in at.error[0].value and not at.success
    (report,) = [d.value for d in at.dataframe if "table" in d.value.columns]
    assert report.to_dict("records") == [
        {"label set": "gold:gold", "table": "spans", "removed": 5, "changed": 0, "added": 0},
        {"label set": "gold:gold", "table": "sentence_labels", "removed": 16, "changed": 0, "added": 0},
    ]
    assert "items affected (3): a, b, c" in [t.value for t in at.text]
    assert _gold(store) == (5, 16)

    at.checkbox(key="import_replace").check().run()
    at.button(key="import_go").click().run()

    assert not at.exception and at.success and _gold(store) == (0, 0)
    engine = make_engine(store)
    try:
        log_id = recent_imports(engine)[0].log_id
    finally:
        engine.dispose()
    at.run()
    assert any(f"#{log_id} · " in t.value and "visitor.jsonl" in t.value for t in at.text)

    at.button(key=f"import_undo_{log_id}").click().run()

    assert not at.exception and at.success[0].value == "Undone."
    assert any("restored 16 sentence_labels, 5 spans" in t.value for t in at.text)
    assert _gold(store) == (5, 16)
    assert f"import_undo_{log_id}" not in [b.key for b in at.button]
