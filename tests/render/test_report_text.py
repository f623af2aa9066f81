"""`cli.py evaluate` prints each table as text; a table with no rows says so in words.

An AlignBench dataset whose gold marks no sentence incorrect printed Figure 9's table as pandas' own
"Empty DataFrame / Columns: [...] / Index: []".
"""

from __future__ import annotations

import pandas as pd

from analysis.reports.base import Table
from render.report_text import table_text


def test_a_table_without_rows_says_so() -> None:
    empty = pd.DataFrame({"detector": pd.Series([], dtype=str), "mean_score": pd.Series([], dtype=float)})
    text = table_text(Table("error_types", "Figure 9", empty, mark_columns=("mean_score",)))
    assert "DataFrame" not in text and "Index" not in text
    assert text == "(no rows)"


def test_a_table_with_rows_is_printed_with_its_header() -> None:
    frame = pd.DataFrame({"detector": ["d1"], "mean_score": [80.0]})
    assert table_text(Table("error_types", "Figure 9", frame)).splitlines() == [
        "detector mean_score",
        "      d1      80.00",
    ]
