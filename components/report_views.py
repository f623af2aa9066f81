"""How each report is laid out on a page: its tables, then its figures, each with footer and downloads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from analysis.reports import alignbench, calibration, claims, mhalo, mmhal, triplets
from analysis.reports.base import Report
from components.report_footer import show_figure, show_table, styled
from render import figures
from render.literal_text import literal


@st.cache_resource(show_spinner=False, max_entries=128)
def _figure(
    report_key: str,
    digest: str,
    provenance: str,
    figure: str,
    args: tuple[Any, ...],
    _make: Callable[..., go.Figure],
    _report: Report,
) -> go.Figure:
    return _make(_report, *args)


def figure_of(report: Report, make: Callable[..., go.Figure], *args: Any) -> go.Figure:
    """``make(report, *args)``, built once per report content: plotly's figure building (tens of
    milliseconds per figure) would otherwise dominate a rerun. The figure is shared: do not change it."""
    p = report.provenance
    return _figure(
        report.key, p.digest, p.text(), f"{make.__module__}.{make.__qualname__}", args, make, report
    )


def show_notes(report: Report) -> bool:
    """Show the report's notes; False when it has nothing else to show."""
    for note in report.notes:
        st.info(literal(note))
    return bool(report.tables)


def figure_block(report: Report, spec: figures.FigureSpec, *, key: str, with_data: bool = True) -> None:
    """One figure with its downloads, and the table it was drawn from in an expander."""
    show_figure(figure_of(report, spec.make), report.provenance, key=f"{key}-{spec.key}", name=spec.key)
    table = report.table(spec.needs)
    if with_data and table is not None:
        with st.expander(f"Data of this figure · {literal(table.title)}"):
            show_table(table, report.provenance, key=f"{key}-{spec.key}-data")


def show_section(report: Report, *, key: str) -> None:
    if not show_notes(report):
        return
    {
        mhalo.KEY: _mhalo,
        alignbench.KEY: _alignbench,
        claims.KEY: _claims,
        triplets.KEY: _triplets,
        calibration.KEY: _calibration,
        mmhal.KEY: _mmhal,
    }[report.key](report, key)


def _figures(report: Report, key: str, skip: tuple[str, ...] = ()) -> None:
    for spec in figures.figures_for(report):
        if spec.key not in skip:
            figure_block(report, spec, key=key)


def _mhalo(report: Report, key: str) -> None:
    # A row per subset, the Average first: a column per subset × measure does not fit a laptop screen.
    show_table(
        report.tables["table3"],
        report.provenance,
        key=f"{key}-table3",
        group_column="subset",
        first_group=mhalo.AVERAGE,
    )
    _figures(report, key)


def _alignbench(report: Report, key: str) -> None:
    table3 = report.tables["table3"]
    show_table(
        table3, report.provenance, key=f"{key}-table3", data=styled(table3, display=_with_intervals(report))
    )
    show_table(report.tables["unknown"], report.provenance, key=f"{key}-unknown")
    _figures(report, key, skip=("alignbench-localization",))
    if "localization" in report.tables:
        show_table(report.tables["localization"], report.provenance, key=f"{key}-localization")
        spec = next(s for s in figures.FIGURES[alignbench.KEY] if s.key == "alignbench-localization")
        figure_block(report, spec, key=key, with_data=False)


def _with_intervals(report: Report) -> pd.DataFrame:
    """Table 3 with each cell written "AUROC [low, high]" (Avg has no interval of its own)."""
    frame = report.tables["table3"].frame
    cells = report.tables["table3_ci"].frame.set_index(["detector", "captioner"])
    display = frame.copy().astype(object)
    for row, detector in enumerate(frame["detector"]):
        for column in frame.columns[1:]:
            value: Any = frame.at[row, column]  # a number, or missing
            if pd.isna(value):
                display.at[row, column] = "—"
            elif column == alignbench.AVG or (detector, column) not in cells.index:
                display.at[row, column] = f"{value:.1f}"
            else:
                low, high = cells.loc[(detector, column), ["low", "high"]].to_numpy()
                interval = "" if pd.isna(low) else f" [{low:.1f}, {high:.1f}]"
                display.at[row, column] = f"{value:.1f}{interval}"
    return display


def _claims(report: Report, key: str) -> None:
    show_table(report.tables["table2"], report.provenance, key=f"{key}-table2")
    _figures(report, key)


def _triplets(report: Report, key: str) -> None:
    table = report.tables["table2"]
    # A row per kind of hallucination (overall, object, relation) instead of a column per kind × rate.
    show_table(table, report.provenance, key=f"{key}-table2", group_column="hallucination")
    judges = list(dict.fromkeys(table.frame["judge"]))
    judge = st.segmented_control(
        "Radar of the judge",
        judges,
        default=judges[0],
        required=True,
        format_func=literal,
        key=f"{key}-judge",
    )
    show_figure(
        figures.trihe_radar(report, judge), report.provenance, key=f"{key}-radar", name=f"trihe-radar-{judge}"
    )
    if "judges" in report.tables:
        show_table(report.tables["judges"], report.provenance, key=f"{key}-judges")


def _calibration(report: Report, key: str) -> None:
    show_table(report.tables["calibration"], report.provenance, key=f"{key}-calibration")
    types = list(dict.fromkeys(report.tables["reliability"].frame["type"]))
    type_ = st.selectbox("Reliability diagram of", types, key=f"{key}-reliability-type")
    show_figure(
        figure_of(report, figures.halloc_reliability, type_),
        report.provenance,
        key=f"{key}-reliability",
        name=f"halloc-reliability-{type_}",
    )
    with st.expander(f"Data of this figure · {literal(report.tables['reliability'].title)}"):
        show_table(report.tables["reliability"], report.provenance, key=f"{key}-reliability-data")
    show_table(report.tables["by_type"], report.provenance, key=f"{key}-by-type")
    _figures(report, key, skip=("halloc-reliability",))


def _mmhal(report: Report, key: str) -> None:
    for name in ("scores", "agreement"):
        if name in report.tables:
            show_table(report.tables[name], report.provenance, key=f"{key}-{name}")
