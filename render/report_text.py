"""Reports as plain text and JSON, for ``python cli.py evaluate``.

Text tables mark the best value of a column with ``*`` and the second best with ``'`` (the papers use
bold and underline); numbers are rounded to two decimals. JSON keeps full precision and lists the
marks by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis.reports.base import BEST, SECOND, Report, Table

MARKERS = {BEST: "*", SECOND: "'"}


def table_text(table: Table, decimals: int = 2) -> str:
    if table.frame.empty:  # pandas would print "Empty DataFrame / Columns: […] / Index: []"
        return "(no rows)"
    frame = table.frame.copy()
    marks = table.marks() if table.mark_columns else None
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_float_dtype(values):
            text = values.map(lambda v: "—" if pd.isna(v) else f"{v:.{decimals}f}")
            if marks is not None and column in table.mark_columns:
                text = text + marks[column].map(lambda m: MARKERS.get(m, " "))
            frame[column] = text
        elif values.isna().any():  # an empty cell reads "—", never "None" or "NaN"
            frame[column] = values.map(lambda v: "—" if pd.isna(v) else v)
    return frame.to_string(index=False)


def report_text(report: Report) -> str:
    lines = [report.title, "=" * len(report.title), f"Computed from: {report.provenance.text()}"]
    lines += report.provenance.details()
    lines += [f"Note: {note}" for note in report.notes]
    for table in report.tables.values():
        lines += ["", table.title, "-" * len(table.title), table_text(table)]
        if table.caption:
            lines.append(table.caption)
    return "\n".join(lines)


def reports_text(reports: Sequence[Report]) -> str:
    if not reports:
        return "Nothing to measure: the dataset has no gold labels with a detector run, and no ratings."
    legend = "Marks: * best, ' second best in a column."
    return "\n\n\n".join([*(report_text(r) for r in reports), legend])


def reports_payload(dataset: str, reports: Sequence[Report]) -> dict[str, Any]:
    return {"dataset": dataset, "reports": [r.to_dict() for r in reports]}
