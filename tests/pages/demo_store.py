"""A fixture-free helper: a temp SQLite store holding the synthetic demo, for page tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

from db.access import OPERATOR
from db.engine import make_engine
from demo.load import load_demo

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DEMO = "Spanlight demo (synthetic)"


def demo_store(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Load the demo into ``sqlite_url`` and point the app at it (DATABASE_URL, data folder)."""
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    engine = make_engine(sqlite_url)
    load_demo(engine, actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return sqlite_url
