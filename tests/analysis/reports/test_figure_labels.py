"""Every figure draws names from files as their characters: plotly reads HTML tags and entities in
labels, so a detector named ``<a href=…>`` must not become a link, nor ``<b>`` bold text."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis.reports import RESAMPLED, SECTIONS
from analysis.reports.base import Report
from analysis.reports.data import ReportFilter
from analysis.reports.provenance import Provenance
from render import figures
from render.literal_text import LINE_BREAK, plotly_literal

HOSTILE = "<a href=https://evil.example/>R&D</a> <b>bold</b> &lt;"


def _renamed(report: Report) -> Report:
    """The report with every string cell of every table replaced by a hostile name."""
    tables = {}
    for key, table in report.tables.items():
        frame = table.frame.copy()
        for column in frame.columns:
            if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
                frame[column] = [
                    f"{HOSTILE} {k}" if isinstance(v, str) else v for k, v in enumerate(frame[column])
                ]
        tables[key] = dataclasses.replace(table, frame=frame)
    provenance = dataclasses.replace(report.provenance, dataset=HOSTILE)
    return dataclasses.replace(report, tables=tables, provenance=provenance)


def _drawn_text(fig: go.Figure) -> str:
    return json.dumps(json.loads(fig.to_json())["data"]) + json.dumps(fig.layout.to_plotly_json())


@pytest.fixture(scope="module")
def reports(demo_engine, demo_id) -> list[Report]:
    built = []
    for key, section in SECTIONS.items():
        inputs = section.load(demo_engine, demo_id)
        if section.available(inputs):
            options = {"n_resamples": 50} if key in RESAMPLED else {}
            built.append(section.build(inputs, ReportFilter(), **options))
    return built


def test_every_figure_shows_hostile_names_as_text(reports: list[Report]) -> None:
    drawn = 0
    for report in reports:
        hostile = _renamed(report)
        for spec in figures.figures_for(hostile):
            text = _drawn_text(spec.make(hostile))
            assert "<a href" not in text and "<b>bold" not in text, spec.key
            assert plotly_literal(HOSTILE) in text, spec.key  # shown, escaped exactly once
            drawn += 1
    assert drawn >= 8


def test_our_own_line_breaks_survive_the_escaping() -> None:
    label = figures.wrap("a rather long category name")
    assert LINE_BREAK in label and "<br>" not in label
    assert plotly_literal(label) == "a rather long<br>category name"
    assert plotly_literal("x < y & <b>") == "x &lt; y &amp; &lt;b&gt;"


def test_numbers_and_series_are_left_as_they_are() -> None:
    fig = go.Figure(go.Bar(x=pd.Series(["<i>a</i>", "b"]), y=pd.Series([1.5, 2.0]), name="<i>n</i>"))
    provenance = Provenance(dataset="d", label_sets=(), n_items=2, digest="0" * 8)
    done = figures.finish(fig, "t", provenance)
    assert list(done.data[0].x) == ["&lt;i&gt;a&lt;/i&gt;", "b"]
    assert list(done.data[0].y) == [1.5, 2.0] and done.data[0].name == "&lt;i&gt;n&lt;/i&gt;"


def test_long_category_names_are_shortened_on_the_axis_and_whole_in_the_hover(reports: list[Report]) -> None:
    """A subset or type name of any length from a file ran over the footer and out of the window."""
    long = "<b>A subset named at great length</b> by its file"
    fig = go.Figure()
    fig.add_bar(name="run", x=[long, "short"], y=[50.0, 60.0], text=["50", "60"])
    fig = figures.finish(fig, "t", reports[0].provenance)
    axis = fig.layout.xaxis
    assert list(axis.tickvals) == [plotly_literal(long), "short"]  # the bars' own (escaped) categories
    assert list(axis.ticktext) == [plotly_literal(long[: figures.TICK_CHARS - 1] + "…"), "short"]
    assert list(fig.data[0].x)[0] == plotly_literal(long)  # the hover's %{x}: the whole name
    assert fig.layout.uniformtext.mode == "hide"
    # A short figure keeps plotly's own ticks.
    plain = go.Figure()
    plain.add_bar(name="run", x=["a", "b"], y=[1.0, 2.0])
    assert figures.finish(plain, "t", reports[0].provenance).layout.xaxis.ticktext is None
