"""A rater who never flags anything is in the label distribution, with zero.

The figure leaves the tokens outside every span out (they dwarf the rest), so a span annotator or run
that flagged nothing had no bar left and was not drawn at all: the figure read as if only the raters
who flagged were compared, where "never flags" is what a researcher looks for in it. Every rater of
the report (a label set holding spans, or items marked done on the spans page) is a row of the table,
a label they never gave counted 0, and a bar of zero in the figure.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from analysis.reports import agreement
from analysis.reports.base import Report
from analysis.reports.data import ReportFilter
from render import figures
from tests.analysis.reports.test_partial_runs import RED, _dataset, _run


@pytest.fixture
def report(engine: Engine) -> Report:
    """Runs: "found" flags red on a and b, "half" on a alone; "quiet" is given c and d, flags nothing."""
    dataset_id = _dataset(engine)
    _run(engine, "found", {"a": [RED], "b": [RED], "c": [], "d": []})
    _run(engine, "half", {"a": [RED], "b": [], "c": [], "d": []})
    _run(engine, "quiet", {"c": [], "d": []})
    inputs = agreement.load(engine, dataset_id)
    return agreement.build(inputs, ReportFilter(), "spans", ("found", "half", "quiet"))


def test_the_table_counts_a_label_never_given_as_zero(report: Report) -> None:
    frame = report.tables["distribution"].frame
    assert sorted(frame["rater"].unique()) == ["found", "half", "quiet"]
    quiet = frame[frame["rater"] == "quiet"].set_index("label")
    flagged = [label for label in quiet.index if label != agreement.OUTSIDE]
    assert flagged, quiet
    assert (quiet.loc[flagged, "units"] == 0).all() and (quiet.loc[flagged, "share"] == 0).all()
    assert quiet.at[agreement.OUTSIDE, "share"] == pytest.approx(100)
    for _, shares in frame.groupby("rater")["share"]:
        assert shares.sum() == pytest.approx(100)


def test_the_figure_draws_the_rater_who_never_flags(report: Report) -> None:
    fig = figures.agreement_distribution(report)
    assert "tokens outside every span not drawn" in fig.layout.title.text
    drawn = {rater for bar in fig.data for rater in bar.y}
    assert drawn == {"found", "half", "quiet"}
    quiet = [x for bar in fig.data for y, x in zip(bar.y, bar.x, strict=True) if y == "quiet"]
    assert quiet and all(x == 0 for x in quiet)
