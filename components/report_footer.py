"""Show a report's table or figure with its provenance footer and download buttons.

Tables download as CSV (the provenance in ``#`` comment lines first: ``pandas.read_csv(f, comment="#")``
reads it back), figures as a self-contained HTML file, and as PNG from the camera button of the chart's
toolbar (drawn by the browser). A server-side PNG button appears only when the optional ``kaleido``
package is installed, since it needs a headless browser of its own. Downloads are generated when
clicked, so an unused button costs nothing on a rerun.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Hashable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from analysis.reports.base import BEST, SECOND, Table
from analysis.reports.provenance import Provenance
from render.literal_text import literal
from render.table_layout import by_group, grouped_columns

BEST_STYLE = "background-color: #b7dfb0; font-weight: 700"
SECOND_STYLE = "background-color: #e3f2df"
MARK_LEGEND = "Best value of a column in dark green, second best in light green."
PNG_HELP = "PNG: use the camera button in the chart's toolbar."


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "table"


def csv_text(table: Table, provenance: Provenance) -> str:
    header = "".join(f"# {line}\n" for line in (table.title, provenance.text(), *provenance.details()))
    return header + table.frame.to_csv(index=False)


def styled(
    table: Table, decimals: int = 2, display: pd.DataFrame | None = None
) -> pd.io.formats.style.Styler:
    """Numbers rounded for reading; best and second-best marked as the papers do.

    ``display`` (same shape as the table) replaces the shown values, e.g. with intervals written out;
    the marks still come from the numbers.
    """
    marks = table.marks() if table.mark_columns else None
    return marked_frame(table.frame, marks, decimals, display)


def marked_frame(
    frame: pd.DataFrame,
    marks: pd.DataFrame | None,
    decimals: int = 2,
    display: pd.DataFrame | None = None,
) -> pd.io.formats.style.Styler:
    """``frame`` rounded, missing cells shown as "—" (never "None"), cells marked by ``marks``."""
    if display is not None:
        styler = display.style
    else:
        numeric = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
        formats: dict[Any, str] = {
            c: "{:.2g}" if "p_value" in str(c) else f"{{:.{decimals}f}}" for c in numeric
        }
        # The data grid draws a missing cell as "None" whatever the Styler says: a column with gaps is
        # written out as text, "—" in the gaps.
        shown = frame.copy()
        gaps = [c for c in frame.columns if frame[c].isna().any()]
        for column in gaps:
            written = formats.get(column, "{}")
            shown[column] = ["—" if pd.isna(v) else written.format(v) for v in frame[column]]
        kept: dict[Any, str | Callable[[object], str] | None] = {
            c: f for c, f in formats.items() if c not in gaps
        }
        styler = shown.style.format(kept)
    if marks is not None:
        columns: list[Hashable] = [c for c in frame.columns if (marks[c] != "").any()]
        styler = styler.apply(
            lambda column: [
                BEST_STYLE if m == BEST else SECOND_STYLE if m == SECOND else "" for m in marks[column.name]
            ],
            subset=columns,
        )
    return styler


def judge_bias_marked(
    styler: pd.io.formats.style.Styler, frame: pd.DataFrame, provenance: Provenance
) -> pd.io.formats.style.Styler:
    """The detector cells of a detector judging its own model family's items marked with † (the
    footer says why); the table's values themselves are unchanged."""
    biased = provenance.biased
    if not biased or "detector" not in frame.columns:
        return styler
    return styler.format(lambda name: f"{name} †" if name in biased else str(name), subset=["detector"])


def show_table(
    table: Table,
    provenance: Provenance,
    *,
    key: str,
    column_config: dict[str, Any] | None = None,
    decimals: int = 2,
    data: pd.DataFrame | pd.io.formats.style.Styler | None = None,
    group_column: str | None = None,
    first_group: str | None = None,
) -> None:
    """The table (or ``data`` shown in its place), its caption, the provenance line and a CSV download.

    With ``group_column`` a table with ``"<group> · <measure>"`` columns is shown a row per group
    (:func:`render.table_layout.by_group`, ``first_group`` leading), so it fits the page; the CSV keeps
    the wide table.
    """
    st.markdown(f"**{literal(table.title)}**")
    if data is None and group_column is not None and grouped_columns(table.frame):
        frame, marks = by_group(table, group_column, first_group)
        data = judge_bias_marked(
            marked_frame(frame, marks if table.mark_columns else None, decimals), frame, provenance
        )
    st.dataframe(
        data if data is not None else judge_bias_marked(styled(table, decimals), table.frame, provenance),
        hide_index=True,
        width="stretch",
        column_config=column_config,
        key=f"{key}-frame",
    )
    notes = [table.caption] if table.caption else []
    if table.mark_columns and len(table.frame) > 1:
        notes.append(MARK_LEGEND)
    # The button takes the width of its label, the caption the rest: a share of the row (a sixth, in a
    # column half the page wide) cut "CSV" to "C…".
    footer_row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    footer_row.caption(
        literal(" ".join(notes))
        + ("  \n" if notes else "")
        + f"Computed from: {literal(provenance.text())}"
        + "".join(f"  \n{literal(line)}" for line in provenance.details())
    )
    footer_row.download_button(
        "CSV",
        data=lambda: csv_text(table, provenance),
        file_name=f"{slug(table.title)}-{provenance.digest}.csv",
        mime="text/csv",
        icon=":material/download:",
        key=f"{key}-csv",
        on_click="ignore",
        width="content",
    )


def png_export_available() -> bool:
    return importlib.util.find_spec("kaleido") is not None


def show_figure(
    fig: go.Figure, provenance: Provenance, *, key: str, name: str, selectable: bool = False
) -> Any:
    """The figure (its footer is drawn inside it) with HTML (and PNG, when possible) downloads.

    With ``selectable`` the chart reports clicked points (returns Streamlit's selection state).
    """
    file_name = f"{slug(name)}-{provenance.digest}"
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": file_name, "scale": 2},
    }
    event = st.plotly_chart(
        fig,
        key=f"{key}-chart",
        config=config,
        on_select="rerun" if selectable else "ignore",
        selection_mode=("points",) if selectable else ("points", "box", "lasso"),
    )
    buttons = st.container(horizontal=True, vertical_alignment="center", gap="small")  # natural widths
    buttons.download_button(
        "HTML",
        data=lambda: fig.to_html(include_plotlyjs=True, full_html=True, config=config),
        file_name=f"{file_name}.html",
        mime="text/html",
        icon=":material/download:",
        key=f"{key}-html",
        on_click="ignore",
        width="content",
    )
    if png_export_available():
        buttons.download_button(
            "PNG",
            data=lambda: fig.to_image(format="png", scale=2),
            file_name=f"{file_name}.png",
            mime="image/png",
            icon=":material/download:",
            key=f"{key}-png",
            on_click="ignore",
            width="content",
        )
        buttons.caption("The footer inside the figure names the data it shows.")
    else:
        buttons.caption(f"{PNG_HELP} The footer inside the figure names the data it shows.")
    return event
