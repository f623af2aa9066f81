"""Presenter mode offers only slides whose figure draws something.

On an AlignBench dataset whose captions are short, every point of Figure 7 averages fewer than three
sentences: the Metrics page says so under the figure and shows its data, but presenter slide 5 was that
sentence alone, pointing to data presenter mode cannot show. Such a figure is no slide now; the slides
are numbered over those offered, so ``?slide=`` still picks the slide the list names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from analysis.reports import SECTIONS
from analysis.reports.data import ReportFilter
from render import figures
from tests.alignbench_store import alignbench_dataset

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def short_captions(
    engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[Engine, int]:
    """Two captions of two sentences, the second incorrect, scored by one run (dataset "short"): each
    point of Figure 7 averages two sentences, but Table 3 has an AUROC to draw."""
    dataset_id = alignbench_dataset(
        engine,
        "short",
        captions=2,
        sentences=2,
        label=lambda s: "incorrect" if s[1] else "correct",
        runs={"s1": lambda s: 20 if s[1] else 80},
    )
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", db_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return engine, dataset_id


def test_a_figure_that_draws_nothing_is_no_slide(short_captions: tuple[Engine, int]) -> None:
    engine, dataset_id = short_captions
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"dataset": "short"})
    at.run()
    at.switch_page("app_pages/presenter.py")
    at.run()
    assert not at.exception, at.exception
    options = at.selectbox(key="presenter-jump").options
    assert any("AUROC" in o for o in options) and not any("positional" in o for o in options), options
    for number in range(1, len(options) + 1):  # no slide is a sentence pointing to the figure's data
        at.selectbox(key="presenter-jump").set_value(number).run()
        assert not at.exception, at.exception
        assert at.markdown[0].value == "## " + options[number - 1].split(" · ", 1)[1]
        shown = at.get("plotly_chart")[0].proto.spec
        assert "fewer than 3 sentences" not in shown and "see the figure" not in shown, (number, options)

    # The Metrics page still draws that figure: it says why it is empty, beside the figure's data.
    section = SECTIONS["alignbench"]
    report = section.build(section.load(engine, dataset_id), ReportFilter(), n_resamples=20)
    on_page = [spec.key for spec in figures.figures_for(report)]
    assert "alignbench-positional" in on_page
    slides = [spec.key for spec in figures.slides_for(report)]
    assert "alignbench-positional" not in slides and "alignbench-auroc" in slides
