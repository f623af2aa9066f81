"""The Metrics page and presenter mode on a span dataset whose gold marks no span (every response clean).

They said there was nothing to measure; MHALO's Table 3, curve and Figure 6 are exactly what such a
dataset measures (the numbers themselves: tests/analysis/reports/test_mhalo_all_clean.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from tests.analysis.reports.test_mhalo_all_clean import all_clean_store, sentence_store

TIMEOUT = 60
APP = str(Path(__file__).resolve().parents[2] / "app.py")
TABLE3 = "**Table 3 · F1_M, F1_IoU and IF per subset (%)**"


def _serve(url: str, fill: Callable[[Engine], int], monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(url)
    fill(engine)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()


def _page(path: str, dataset: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": dataset})
    at.run()
    at.switch_page(path)
    at.run()
    assert not at.exception, at.exception
    return at


def test_metrics_offers_mhalo_on_all_clean_gold(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(sqlite_url, all_clean_store, monkeypatch)
    at = _page("app_pages/paper_metrics.py", "all clean")
    assert not [i.value for i in at.info if "nothing to measure" in i.value]
    assert at.button_group[0].options == ["MHALO"]
    titles = [m.value for m in at.markdown if m.value.startswith("**")]
    assert TABLE3 in titles
    table3 = at.dataframe[titles.index(TABLE3)].value
    assert sorted(table3["detector"].unique()) == ["broken", "eager", "quiet"]
    assert [i.value for i in at.info if "Figure 5" in i.value] == [
        "No Figure 5 (gold hallucinations detected, per type): gold marks no span on these items."
    ]
    assert len(at.get("plotly_chart")) == 3  # Table 3, the curve and Figure 6


def test_presenter_has_slides_on_all_clean_gold(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(sqlite_url, all_clean_store, monkeypatch)
    at = _page("app_pages/presenter.py", "all clean")
    assert not [i.value for i in at.info if i.value.startswith("Nothing to present")]
    assert at.markdown[0].value.startswith("## MHALO")


def test_metrics_offers_no_mhalo_on_sentence_gold(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(sqlite_url, sentence_store, monkeypatch)
    at = _page("app_pages/paper_metrics.py", "sentences")
    assert [i.value for i in at.info if "nothing to measure" in i.value]
    assert not at.button_group
