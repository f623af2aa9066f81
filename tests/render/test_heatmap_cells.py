"""Heatmap cells without a number read "—", as the tables show them, not plotly's "nan"."""

from __future__ import annotations

import math

import pandas as pd

from analysis.reports.base import Report, Table
from analysis.reports.provenance import Provenance
from render import figures


def test_two_raters_who_share_no_unit_read_a_dash() -> None:
    pairs = pd.DataFrame(
        [
            {"rater A": "x", "rater B": "y", "units": 0, "kappa": math.nan, "agreement": math.nan},
            {"rater A": "x", "rater B": "z", "units": 4, "kappa": 0.5, "agreement": 75.0},
            {"rater A": "y", "rater B": "z", "units": 4, "kappa": 0.25, "agreement": 50.0},
        ]
    )
    report = Report(
        "agreement",
        "Agreement · Spans",
        Provenance("d", ("x", "y", "z"), 4, "digest"),
        {"pairs": Table("pairs", "Cohen's kappa per pair of raters", pairs, mark_columns=("kappa",))},
    )
    cells = figures.agreement_kappa(report).data[0].text
    assert [list(row) for row in cells] == [
        ["1.00", "—", "0.50"],
        ["—", "1.00", "0.25"],
        ["0.50", "0.25", "1.00"],
    ]
