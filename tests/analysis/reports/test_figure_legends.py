"""A figure of one detector (a dataset with one run, or the Detector filter set to one) names it.

Plotly draws no legend for a figure with a single trace, so a slide of one detector's scores never said
whose they were; every figure whose traces carry names now shows them, however many there are.
"""

from __future__ import annotations

import plotly.graph_objects as go

from analysis.reports import RESAMPLED, SECTIONS
from analysis.reports.data import ReportFilter
from render import figures

ONE = "eager"  # one of the demo's detector runs


def _legend_names(fig: go.Figure) -> list[str]:
    """The names plotly would list in the figure's legend, if it draws one."""
    return [
        trace.name
        for trace in fig.data
        if trace.name and trace.showlegend is not False and trace.type not in ("heatmap", "table")
    ]


def test_a_figure_of_one_detector_names_it(demo_engine, demo_id) -> None:
    checked = 0
    for key, section in SECTIONS.items():
        inputs = section.load(demo_engine, demo_id)
        if not section.available(inputs):
            continue
        options = {"n_resamples": 20} if key in RESAMPLED else {}
        report = section.build(inputs, ReportFilter(detectors=(ONE,)), **options)
        for spec in figures.figures_for(report):
            fig = spec.make(report)
            names = _legend_names(fig)
            if len(names) == 1:
                assert fig.layout.showlegend is True, (spec.key, names)
                checked += 1
    assert checked >= 3
