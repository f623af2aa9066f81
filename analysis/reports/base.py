"""What every report builder returns: named tables with their provenance, ready to plot or print."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis.reports.provenance import Provenance

BEST, SECOND = "best", "second"


@dataclass(frozen=True)
class Table:
    """One table of a report. ``frame`` holds plain numbers (percent where the papers use percent).

    ``mark_columns`` are compared across rows: the best and second-best value of each is marked (as the
    papers mark them in bold and underlined), higher being better unless ``lower_is_better``.
    ``unranked`` are the positions of rows whose values are not compared (a kappa of 1.0 by convention
    between raters who both used a single category is no best agreement); they get no mark.
    """

    key: str
    title: str
    frame: pd.DataFrame
    caption: str = ""
    mark_columns: tuple[str, ...] = ()
    lower_is_better: bool = False
    unranked: tuple[int, ...] = ()

    def marks(self) -> pd.DataFrame:
        """``"best"`` / ``"second"`` / ``""`` for every cell (only ``mark_columns`` get marks)."""
        out = pd.DataFrame("", index=self.frame.index, columns=self.frame.columns)
        for column in self.mark_columns:
            values = pd.to_numeric(self.frame[column], errors="coerce").to_numpy(dtype=float, copy=True)
            values[list(self.unranked)] = math.nan
            ranked = sorted({v for v in values if not math.isnan(v)}, reverse=not self.lower_is_better)
            if ranked:
                out.loc[values == ranked[0], column] = BEST
            if len(ranked) > 1:
                out.loc[values == ranked[1], column] = SECOND
        return out

    def to_records(self) -> list[dict[str, Any]]:
        return [{str(k): _plain(v) for k, v in row.items()} for row in self.frame.to_dict(orient="records")]


@dataclass(frozen=True)
class Report:
    """The tables of one paper's section (or of a page) computed on one filtered slice of the store."""

    key: str
    title: str
    provenance: Provenance
    tables: dict[str, Table] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def table(self, key: str) -> Table | None:
        return self.tables.get(key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "provenance": self.provenance.to_dict(),
            "notes": list(self.notes),
            "tables": {
                key: {
                    "title": table.title,
                    "caption": table.caption,
                    "rows": table.to_records(),
                    "marks": _mark_records(table),
                }
                for key, table in self.tables.items()
            },
        }


def _mark_records(table: Table) -> dict[str, dict[str, list[int]]]:
    if not table.mark_columns:
        return {}
    marks = table.marks().reset_index(drop=True)
    return {
        column: {
            kind: [int(i) for i in np.flatnonzero(marks[column].to_numpy() == kind)]
            for kind in (BEST, SECOND)
        }
        for column in table.mark_columns
    }


def _plain(value: Any) -> Any:
    """JSON-friendly scalars: numpy numbers to Python, NaN to None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def percent(values: Sequence[float] | np.ndarray | float) -> Any:
    """Fractions to percent, as the papers print them."""
    return np.asarray(values, dtype=float) * 100 if not isinstance(values, float) else values * 100
