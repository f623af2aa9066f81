"""AlignBench's AUROC figure when no captioner has an AUROC (its gold marks no sentence incorrect).

The Metrics page and the first presenter slide drew an empty chart, axes and a "chance" line and no
point, without a word; the figure now says why there is nothing to draw, as Figure 8 does.
"""

from __future__ import annotations

from sqlalchemy import Engine

from analysis.reports import SECTIONS
from analysis.reports.data import ReportFilter
from render import figures
from tests.alignbench_store import alignbench_dataset


def _all_correct(engine: Engine) -> int:
    return alignbench_dataset(
        engine, "all_ok", captions=2, sentences=2, label=lambda s: "correct", runs={"s1": lambda s: 80}
    )


def test_auroc_figure_without_any_auroc_says_why(engine: Engine) -> None:
    section = SECTIONS["alignbench"]
    report = section.build(section.load(engine, _all_correct(engine)), ReportFilter(), n_resamples=20)
    fig = figures.alignbench_auroc(report)
    shown = [a.text for a in fig.layout.annotations]
    assert any("No AUROC" in text and "incorrect" in text for text in shown), shown
    assert not [trace for trace in fig.data if trace.type == "scatter"]


def test_positional_figure_with_every_point_too_small_says_so(engine: Engine) -> None:
    """Two captions of two sentences: no position has three sentences of a label, so no point is drawn;
    the figure once showed empty axes, the count of hidden points only in an axis title."""
    section = SECTIONS["alignbench"]
    report = section.build(section.load(engine, _all_correct(engine)), ReportFilter(), n_resamples=20)
    fig = figures.alignbench_positional(report)
    shown = [a.text for a in fig.layout.annotations]
    assert any("fewer than 3 sentences" in text for text in shown), shown
    assert not [trace for trace in fig.data if trace.type == "scatter"]
