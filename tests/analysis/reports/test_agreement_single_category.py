"""A pair of raters who used one category alone is not the best agreement.

Cohen's kappa is 1.0 when both raters use a single identical category (metrics contract), so two
detectors that flagged nothing on the items they share read "1.00*", marked best, on the Agreement page,
its slide and in ``cli.py evaluate``, above pairs that agreed on what to flag. The number stays; the
best mark goes to the best pair that used more than one category, and the pair carries a note (‡)
saying it agreed on a single category only.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from analysis.reports import agreement
from analysis.reports.data import ReportFilter
from render import figures
from render.report_text import table_text
from tests.analysis.reports.test_partial_runs import RED, _dataset, _run


@pytest.fixture
def report(engine: Engine):
    """Four runs, no person: "found" and "half" flag red on a (half: only a); "quiet" and "silent" are
    given c and d alone and flag nothing there."""
    dataset_id = _dataset(engine)
    _run(engine, "found", {"a": [RED], "b": [RED], "c": [], "d": []})
    _run(engine, "half", {"a": [RED], "b": [], "c": [], "d": []})
    _run(engine, "quiet", {"c": [], "d": []})
    _run(engine, "silent", {"c": [], "d": []})
    inputs = agreement.load(engine, dataset_id)
    return agreement.build(inputs, ReportFilter(), "spans", ("found", "half", "quiet", "silent"))


def test_a_pair_that_flagged_nothing_is_not_marked_best(report) -> None:
    table = report.tables["pairs"]
    frame = table.frame.set_index(["rater A", "rater B"])
    assert frame.at[("quiet", "silent"), "kappa"] == pytest.approx(1.0)  # the contract's number stays
    assert frame.at[("quiet", "silent"), "agreement"] == pytest.approx(100)
    marks = table.marks().set_index(table.frame.index)["kappa"]
    single = table.frame.index[(table.frame["rater A"] == "quiet") & (table.frame["rater B"] == "silent")][0]
    assert marks[single] == ""
    best = table.frame.loc[marks == "best", ["rater A", "rater B"]].to_numpy().tolist()
    assert best == [["found", "half"]]  # the one pair that agreed on what to flag
    assert frame.at[("quiet", "silent"), "note"] == "‡ single category: neither rater flagged anything"
    assert "‡" in table.caption and "not marked best" in table.caption


def test_the_text_and_the_figure_say_so(report) -> None:
    line = next(
        row for row in table_text(report.tables["pairs"]).splitlines() if "quiet" in row and "silent" in row
    )
    assert "1.00*" not in line and "1.00 " in line and "‡ single category" in line, line
    fig = figures.agreement_kappa(report)
    heat = fig.data[0]
    raters = list(heat.x)
    q, s = raters.index("quiet"), raters.index("silent")
    assert heat.text[q][s] == heat.text[s][q] == "1.00 ‡"
    shown = " ".join(a.text for a in fig.layout.annotations)
    assert "‡ single category: neither rater flagged anything: kappa 1 by convention" in shown, shown


def test_span_matching_of_two_raters_without_spans_is_not_marked_best(report) -> None:
    table = report.tables["span_matching"]
    rows = table.frame.set_index(["rater A", "rater B"])
    assert rows.at[("quiet", "silent"), "F1_IoU"] == pytest.approx(100)
    best = table.frame.loc[table.marks()["F1_IoU"] == "best", ["rater A", "rater B"]].to_numpy().tolist()
    assert best == [["found", "half"]]
    assert rows.at[("quiet", "silent"), "note"].startswith("‡")
