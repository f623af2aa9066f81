"""Plotly figures of the reports: one function per paper figure, each taking a report's tables.

Every figure carries its provenance as a footer inside the plot, so a downloaded HTML or PNG file still
says which data it shows. Colours follow the Okabe-Ito palette (safe for colour-blind readers) and a
detector keeps its colour across figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.reports import agreement, alignbench, calibration, claims, correlation, mhalo, triplets
from analysis.reports.base import Report
from analysis.reports.provenance import Provenance
from render.literal_text import LINE_BREAK, plotly_literal

# Okabe-Ito first, then Plotly's "Safe" qualitative colours for long category lists.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    "#88CCEE", "#CC6677", "#DDCC77", "#117733", "#332288", "#AA4499", "#44AA99", "#999933",
)  # fmt: skip
GREY = "#6b6b6b"
FOOTER_PX = 34
FOOTER = "provenance"
BASE_FONT = 13


def colors(names: Iterable[Hashable]) -> dict[Hashable, str]:
    """A stable colour per name (in the order given; names are table cells, so any hashable value)."""
    return {name: PALETTE[k % len(PALETTE)] for k, name in enumerate(dict.fromkeys(names))}


def finish(
    fig: go.Figure,
    title: str,
    provenance: Provenance,
    *,
    height: int = 460,
    panels: bool = False,
    bottom: int = 76,
) -> go.Figure:
    """Common layout: title, white template, legend on top, provenance footer at the bottom edge.

    ``panels``: the figure has subplot titles, so the legend moves up above them. ``bottom``: room for
    the x-axis (tick labels and title) above the footer.
    """
    top = 120 if panels else 92
    margin_bottom = bottom + FOOTER_PX
    _short_ticks(fig)
    _literal_labels(fig)
    if fig.layout.showlegend is None and any(_in_legend(trace) for trace in fig.data):
        # Plotly draws no legend for a single trace: a figure of one detector would not say whose it is.
        fig.update_layout(showlegend=True)
    if any(trace.type == "bar" for trace in fig.data):
        # A bar's value that does not fit over it is left out (its hover has it), not run into its
        # neighbours' ("66.766.766.7" over eleven groups of three runs).
        fig.update_layout(uniformtext={"mode": "hide", "minsize": BASE_FONT - 4})
    fig.update_layout(
        title={
            "text": plotly_literal(title),
            "x": 0.01,
            "xanchor": "left",
            "y": 0.98,
            "yanchor": "top",
            "font": {"size": BASE_FONT + 4},
        },
        template="plotly_white",
        height=height,
        font={"size": BASE_FONT},
        margin={"l": 64, "r": 24, "t": top, "b": margin_bottom},
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 1 - 40 / height,
            "yanchor": "top",
            "x": 0.01,
            "title": {"text": ""},
        },
    )
    fig.add_annotation(
        name=FOOTER,
        text=plotly_literal(provenance.text()),
        xref="paper",
        yref="paper",
        x=0,
        xanchor="left",
        yanchor="bottom",
        showarrow=False,
        font={"size": BASE_FONT - 3, "color": GREY},
    )
    _place_footer(fig)
    return fig


def _in_legend(trace: Any) -> bool:
    """Whether ``trace`` has a legend entry: it is named and not kept out (heatmaps have a colour bar)."""
    return bool(trace.name) and trace.showlegend is not False and trace.type not in ("heatmap", "table")


# Trace attributes plotly draws as text (legend, ticks, bar labels, hover boxes).
_TEXT_ATTRIBUTES = ("name", "x", "y", "text", "hovertext", "customdata", "theta", "labels", "meta")


def _literal(value: Any) -> Any:
    if isinstance(value, str):
        return plotly_literal(value)
    if isinstance(value, np.ndarray | pd.Series | list | tuple) and _holds_text(value):
        return [_literal(v) for v in value]
    return value


def _holds_text(values: Any) -> bool:
    kind = getattr(values, "dtype", None)
    if kind is not None and kind.kind != "O":  # a numeric or datetime array holds no text
        return False
    return any(isinstance(v, str | list | tuple | np.ndarray) for v in values)


def _literal_labels(fig: go.Figure) -> None:
    """Every name, category and label of the figure drawn as its characters.

    Plotly reads a small HTML subset (``<b>``, ``<a href>``, ``<br>`` …) and entities in every text it
    draws, and detector, type and dataset names come from files: they are escaped here, once, for every
    figure (each goes through :func:`finish`). Our own line breaks are :data:`LINE_BREAK`, turned into
    ``<br>`` only after the escaping. Hover templates are ours and name untrusted values only by
    reference (``%{fullData.name}``, ``%{meta}``), which plotly substitutes as data.
    """
    for trace in fig.data:
        for attribute in _TEXT_ATTRIBUTES:
            value = getattr(trace, attribute, None)
            if value is not None:
                escaped = _literal(value)
                if escaped is not value:
                    trace[attribute] = escaped
    for annotation in fig.layout.annotations or ():  # subplot titles and messages
        if annotation.text is not None:
            annotation.text = plotly_literal(annotation.text)


TICK_CHARS = 28  # the longest category label drawn whole on an axis


def _short_ticks(fig: go.Figure) -> None:
    """Category labels longer than :data:`TICK_CHARS` drawn shortened, with an ellipsis (the hover
    keeps the whole name): a subset or type named by a file at any length ran over the plot's footer
    and out of the window. Called before the labels are escaped; the shortened ones are escaped here."""
    for axis in ("x", "y"):
        labels: dict[str, None] = {}
        for trace in fig.data:
            values = getattr(trace, axis, None)
            if values is not None and trace.type in ("bar", "scatter", "box"):
                labels.update(dict.fromkeys(v for v in values if isinstance(v, str)))
        short = [_shortened(label) for label in labels]
        if short == list(labels):
            continue
        for name in {trace[f"{axis}axis"] or axis for trace in fig.data}:
            fig.layout[f"{name.replace(axis, axis + 'axis', 1)}"].update(
                tickmode="array",
                tickvals=[plotly_literal(label) for label in labels],
                ticktext=[plotly_literal(label) for label in short],
            )


def _shortened(label: str) -> str:
    """Each line of ``label`` (see :func:`wrap`) at most :data:`TICK_CHARS` long."""
    return LINE_BREAK.join(
        line if len(line) <= TICK_CHARS else line[: TICK_CHARS - 1] + "…" for line in label.split(LINE_BREAK)
    )


def _place_footer(fig: go.Figure) -> None:
    """Pin the provenance footer a few pixels above the figure's bottom edge (in paper units)."""
    layout = fig.layout
    plot_height = max(layout.height - layout.margin.t - layout.margin.b, 1)
    for annotation in layout.annotations or ():
        if annotation.name == FOOTER:
            annotation.y = -(layout.margin.b - 8) / plot_height


def wrap(label: str, width: int = 12) -> str:
    """A category label on two lines (at the space nearest the middle) when it is long."""
    label = str(label)
    if len(label) <= width or " " not in label:
        return label
    spaces = [k for k, ch in enumerate(label) if ch == " "]
    cut = min(spaces, key=lambda k: abs(k - len(label) / 2))
    return f"{label[:cut]}{LINE_BREAK}{label[cut + 1 :]}"


def enlarge(fig: go.Figure, scale: float = 1.6) -> go.Figure:
    """The same figure for a projector: larger type everywhere, no title (the slide has one), and no fixed
    height: it takes the height of the box it is drawn in (the window's, in presenter mode), so the footer
    is pinned in pixels above the bottom edge rather than in paper units of one height."""
    fig = go.Figure(fig)
    margin = fig.layout.margin
    legend_y = 1 - 12 / 760  # the legend a dozen pixels below the top at a projector's height
    fig.update_layout(
        font={"size": round(BASE_FONT * scale)},
        height=None,
        title=None,
        margin={
            "t": round((margin.t - 40) * scale),
            "b": round(margin.b * scale),
            "l": round(margin.l * scale),
        },
        legend={"y": legend_y},
    )
    for annotation in fig.layout.annotations or ():
        size = annotation.font.size or BASE_FONT
        annotation.font.size = round(size * scale)
        if annotation.name == FOOTER:
            annotation.update(y=0, yshift=-(fig.layout.margin.b - 8))
    return fig


def _cell(value: float) -> str:
    """A heatmap cell's number, or "—" where there is none (two raters who share no unit), as the
    tables show it: plotly would print "nan"."""
    return "—" if math.isnan(value) else f"{value:.2f}"


def _note_above(fig: go.Figure, text: str) -> None:
    """A line of small grey text over the plot's top left corner: what the figure leaves out or marks,
    where a reader of the plot (or a slide) looks, not in the footer."""
    fig.add_annotation(
        text=text,
        xref="paper",
        yref="paper",
        x=0,
        y=1.0,
        yshift=28,
        xanchor="left",
        showarrow=False,
        font={"size": BASE_FONT - 2, "color": GREY},
    )


def _empty(title: str, provenance: Provenance, message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return finish(fig, title, provenance, height=260)


# --------------------------------------------------------------------------------------------- MHALO


def _one_decimal(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.1f}"


def mhalo_subsets(report: Report) -> go.Figure:
    """Table 3 at a glance: F1_IoU of every detector per subset and on average."""
    title = "MHALO Table 3 · F1_IoU per subset"
    table = report.table("table3")
    if table is None:
        return _empty(title, report.provenance, "No data.")
    frame = table.frame
    subsets = [c.removesuffix(" · F1_IoU") for c in frame.columns if c.endswith(" · F1_IoU")]
    palette = colors(frame["detector"])
    fig = go.Figure()
    for _, row in frame.iterrows():
        fig.add_bar(
            name=report.provenance.run_name(row["detector"]),
            x=subsets,
            y=[row[f"{s} · F1_IoU"] for s in subsets],
            marker_color=palette[row["detector"]],
            # A run given no item of a subset has no bar there, and no "nan" over it.
            text=[_one_decimal(row[f"{s} · F1_IoU"]) for s in subsets],
            textposition="outside",
            customdata=np.array([[row[f"{s} · F1_M"], row[f"{s} · IF"]] for s in subsets]),
            hovertemplate="%{x}<br>F1_IoU %{y:.2f}<br>F1_M %{customdata[0]:.2f}<br>IF %{customdata[1]:.2f}<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(barmode="group", yaxis={"title": "F1_IoU (%)", "range": [0, 105]})
    return finish(fig, title, report.provenance)


def mhalo_curve(report: Report) -> go.Figure:
    title = "F1_IoU against the IoU threshold"
    table = report.table("curve")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No data.")
    frame = table.frame
    palette = colors(frame["detector"])
    fig = go.Figure()
    for name, part in frame.groupby("detector", sort=False):
        fig.add_scatter(
            name=report.provenance.run_name(str(name)),
            x=part["iou_threshold"],
            y=part["f1_iou"],
            mode="lines+markers",
            line={"color": palette[name], "width": 3},
            hovertemplate="IoU ≥ %{x:.1f}: F1_IoU %{y:.2f}<extra>%{fullData.name}</extra>",
        )
    fig.add_vline(
        x=0.5, line_dash="dot", line_color=GREY, annotation_text="MHALO's 0.5", annotation_position="top"
    )
    fig.update_layout(
        xaxis={"title": "IoU threshold", "dtick": 0.1}, yaxis={"title": "F1_IoU (%)", "rangemode": "tozero"}
    )
    return finish(fig, title, report.provenance)


def mhalo_types(report: Report) -> go.Figure:
    title = "MHALO Figure 5 · gold hallucinations detected, per type"
    table = report.table("by_type")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No gold span of the chosen types.")
    frame = table.frame
    # One row per type, named with its most gold spans: a run given only some items counts fewer, and
    # naming the row by each run's own count drew a row per run ("Spatial (2)", "Spatial (15)").
    most = frame.groupby("type")["n_gold_spans"].max().sort_values()
    order = most.index.tolist()
    rows = [f"{t} ({int(n)})" for t, n in most.items()]
    palette = colors(frame["detector"])
    fig = go.Figure()
    # Horizontal groups draw their first trace at the bottom: add in reverse, list the legend reversed.
    for name, part in reversed(list(frame.groupby("detector", sort=False))):
        part = part.set_index("type").reindex(order)
        fig.add_bar(
            name=report.provenance.run_name(str(name)),
            y=rows,
            x=part["detected"],
            customdata=part["n_gold_spans"].fillna(0).astype(int),
            orientation="h",
            marker_color=palette[name],
            text=[f"{v:.0f}" for v in part["detected"].fillna(0)],
            textposition="outside",
            textfont={"color": palette[name]},
            constraintext="none",
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.1f} % of the run's %{customdata} gold spans detected"
            "<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="group",
        bargap=0.25,
        xaxis={"title": "gold spans detected (%)", "range": [0, 108]},
        yaxis={
            "title": "type (number of gold spans)"
            if len(set(zip(frame["type"], frame["n_gold_spans"], strict=True))) == len(order)
            else "type (gold spans of the run given the most items)"
        },
        legend={"traceorder": "reversed"},
    )
    return finish(fig, title, report.provenance, height=max(460, 190 + 15 * len(order) * len(palette)))


def mhalo_clean(report: Report) -> go.Figure:
    title = "MHALO Figure 6 · accuracy on responses without hallucination"
    table = report.table("clean")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No clean response among the chosen items.")
    frame = table.frame
    palette = colors(frame["detector"])
    # One group per subset, named with its most clean responses (a run given some items has fewer).
    most = frame.groupby("subset", sort=False)["n_clean"].max()
    named = {subset: f"{subset} ({int(n)})" for subset, n in most.items()}
    fig = go.Figure()
    for name, part in frame.groupby("detector", sort=False):
        fig.add_bar(
            name=report.provenance.run_name(str(name)),
            x=[named[s] for s in part["subset"]],
            y=part["accuracy"],
            customdata=part["n_clean"],
            marker_color=palette[name],
            text=[f"{v:.0f}" for v in part["accuracy"]],
            textposition="outside",
            hovertemplate="%{x}: %{y:.1f} % of the run's %{customdata} clean responses flagged nothing"
            "<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="group",
        yaxis={"title": "clean responses left unflagged (%)", "range": [0, 110]},
        xaxis={"title": "subset (clean responses)"},
    )
    return finish(fig, title, report.provenance)


# ---------------------------------------------------------------------------------------- AlignBench


def _has_auroc(report: Report) -> bool:
    """Whether Table 3's figure has a point to draw (an AUROC of some captioner)."""
    table = report.table("table3_ci")
    return table is not None and bool(np.isfinite(table.frame["auroc"].to_numpy(dtype=float)).any())


def alignbench_auroc(report: Report) -> go.Figure:
    title = "AlignBench Table 3 · AUROC per captioning model, with 95 % intervals"
    table = report.table("table3_ci")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No data.")
    frame = table.frame
    if not _has_auroc(report):
        # AUROC needs incorrect and other sentences under one captioner: a chart of no point says nothing
        return _empty(
            title,
            report.provenance,
            "No AUROC: no captioning model has both incorrect and other sentences scored.",
        )
    captioners = [c for c in report.tables["table3"].frame.columns if c not in ("detector", alignbench.AVG)]
    palette = colors(frame["detector"])
    fig = go.Figure()
    for name, part in frame.groupby("detector", sort=False):
        part = part.set_index("captioner").reindex(captioners)
        fig.add_scatter(
            name=report.provenance.run_name(str(name)),
            x=captioners,
            y=part["auroc"],
            mode="markers",
            marker={"color": palette[name], "size": 11},
            error_y={
                "type": "data",
                "symmetric": False,
                "array": (part["high"] - part["auroc"]).to_numpy(),
                "arrayminus": (part["auroc"] - part["low"]).to_numpy(),
                "thickness": 1.5,
                "width": 6,
            },
            customdata=np.stack([part["low"], part["high"], part["n_incorrect"], part["n_other"]], axis=1),
            hovertemplate=(
                "%{x}: AUROC %{y:.1f} [%{customdata[0]:.1f}, %{customdata[1]:.1f}]"
                "<br>%{customdata[2]} incorrect / %{customdata[3]} other<extra>%{fullData.name}</extra>"
            ),
        )
    fig.add_hline(
        y=50, line_dash="dot", line_color=GREY, annotation_text="chance", annotation_position="bottom right"
    )
    fig.update_layout(
        scattermode="group",
        xaxis={"title": "captioning model"},
        yaxis={"title": "AUROC (%)", "range": [min(40.0, float(frame["low"].min()) - 5), 101]},
    )
    return finish(fig, title, report.provenance)


MIN_POINT_SENTENCES = 3  # a mean of one or two sentences is noise: Figure 7 does not draw it


def _positional_points(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["n"] >= MIN_POINT_SENTENCES]


def _has_positional_points(report: Report) -> bool:
    table = report.table("positional")
    return table is not None and not _positional_points(table.frame).empty


def alignbench_positional(report: Report) -> go.Figure:
    title = "AlignBench Figure 7 · mean correctness score by sentence position"
    table = report.table("positional")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No data.")
    frame = _positional_points(table.frame)
    hidden = len(table.frame) - len(frame)
    if frame.empty:
        return _empty(
            title,
            report.provenance,
            f"Every point averages fewer than {MIN_POINT_SENTENCES} sentences ({hidden} not drawn): "
            "see the figure's data.",
        )
    detectors = list(dict.fromkeys(table.frame["detector"]))
    titles = [report.provenance.run_name(d) for d in detectors]
    fig = make_subplots(rows=1, cols=len(detectors), shared_yaxes=True, subplot_titles=titles)
    styles = {"correct": ("#0072B2", "solid"), "incorrect": ("#D55E00", "dash")}
    for k, name in enumerate(detectors, start=1):
        part = frame[frame["detector"] == name]
        for label, (color, dash) in styles.items():
            line = part[part["label"] == label]
            fig.add_scatter(
                row=1,
                col=k,
                name=label,
                legendgroup=label,
                showlegend=k == 1,
                x=line["position"],
                y=line["mean_score"],
                mode="lines+markers",
                line={"color": color, "dash": dash, "width": 3},
                customdata=line["n"],
                meta=titles[k - 1],
                hovertemplate=f"position %{{x}}: mean %{{y:.1f}} (%{{customdata}} {label})<extra>%{{meta}}</extra>",
            )
        fig.update_xaxes(title_text="sentence position", dtick=1, row=1, col=k)
    if hidden:  # said, not hidden silently: the table holds every position
        fig.update_xaxes(
            title_text=f"sentence position · {hidden} point(s) of fewer than {MIN_POINT_SENTENCES} sentences "
            "not drawn",
            row=1,
            col=1,
        )
    fig.update_yaxes(title_text="mean correctness score", range=[0, 100], row=1, col=1)
    return finish(fig, title, report.provenance, panels=True)


def _self_preference_matrix(report: Report) -> pd.DataFrame:
    """Figure 8's cells: normalised AUROC per detector (rows) and captioning model (columns)."""
    frame = report.tables["self_preference"].frame
    captioners = [c for c in report.tables["table3"].frame.columns if c not in ("detector", alignbench.AVG)]
    matrix = frame.pivot(index="detector", columns="captioner", values="normalized")
    return matrix.reindex(index=list(dict.fromkeys(frame["detector"])), columns=captioners)


def _has_self_preference(report: Report) -> bool:
    table = report.table("self_preference")
    return (
        table is not None
        and not table.frame.empty
        and bool(np.isfinite(_self_preference_matrix(report).to_numpy(dtype=float)).any())
    )


def alignbench_self_preference(report: Report) -> go.Figure:
    title = "AlignBench Figure 8 · AUROC normalised per detector (self-preference)"
    table = report.table("self_preference")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No data.")
    frame = table.frame
    detectors = list(dict.fromkeys(frame["detector"]))
    captioners = [c for c in report.tables["table3"].frame.columns if c not in ("detector", alignbench.AVG)]
    matrix = _self_preference_matrix(report)
    if not np.isfinite(matrix.to_numpy(dtype=float)).any():
        # no captioner has both correct and incorrect sentences for a detector: nothing to normalise
        return _empty(title, report.provenance, "No AUROC per captioner to normalise.")
    spread = max(float(np.nanmax(np.abs(matrix.to_numpy(dtype=float) - 1))), 0.05)
    fig = go.Figure(
        go.Heatmap(
            z=matrix.to_numpy(),
            x=captioners,
            y=[report.provenance.run_name(d) for d in detectors],
            colorscale="RdBu",
            zmin=1 - spread,
            zmax=1 + spread,
            text=[[_cell(v) for v in row] for row in matrix.to_numpy()],
            texttemplate="%{text}",
            colorbar={"title": {"text": "÷ mean"}},
            hovertemplate="%{y} on %{x}: %{z:.3f} × its mean AUROC<extra></extra>",
        )
    )
    for row in frame[frame["self"]].itertuples():
        fig.add_shape(
            type="rect",
            x0=captioners.index(str(row.captioner)) - 0.5,
            x1=captioners.index(str(row.captioner)) + 0.5,
            y0=detectors.index(row.detector) - 0.5,
            y1=detectors.index(row.detector) + 0.5,
            line={"color": "black", "width": 3},
        )
    fig.update_layout(
        xaxis={"title": "captioning model"}, yaxis={"title": "detector", "autorange": "reversed"}
    )
    if not frame["self"].any():
        _note_above(
            fig, "No detector shares a name with a captioning model, so no cell is a self-evaluation."
        )
    return finish(fig, title, report.provenance, height=max(360, 120 + 60 * len(detectors)))


def alignbench_error_types(report: Report) -> go.Figure:
    title = "AlignBench Figure 9 · mean correctness score per error type (lower is better)"
    table = report.table("error_types")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No incorrect sentence with an error type.")
    frame = table.frame
    order = frame.groupby("type")["mean_score"].mean().sort_values(ascending=False).index.tolist()
    palette = colors(frame["detector"])
    fig = go.Figure()
    for name, part in frame.groupby("detector", sort=False):
        part = part.set_index("type").reindex(order)
        fig.add_bar(
            name=report.provenance.run_name(str(name)),
            x=[wrap(t) for t in order],
            y=part["mean_score"],
            marker_color=palette[name],
            customdata=part["n"],
            hovertemplate="%{x}: mean %{y:.1f} over %{customdata} sentences<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="group",
        yaxis={"title": "mean correctness score", "range": [0, 100]},
        xaxis={"title": "error type"},
    )
    return finish(fig, title, report.provenance)


def alignbench_localization(report: Report) -> go.Figure:
    title = "AlignBench Table 5 / H · localizing the hallucinated segment"
    table = report.table("localization")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No detector spans on incorrect sentences.")
    frame = table.frame
    fig = go.Figure()
    for measure, color in (("AP", "#0072B2"), ("mIoU", "#E69F00")):
        fig.add_bar(
            name=f"{measure} (Avg)",
            x=[report.provenance.run_name(d) for d in frame["detector"]],
            y=frame[f"{alignbench.AVG} · {measure}"],
            marker_color=color,
            text=[f"{v:.1f}" for v in frame[f"{alignbench.AVG} · {measure}"]],
            textposition="outside",
        )
    fig.update_layout(barmode="group", yaxis={"title": "%", "range": [0, 110]}, xaxis={"title": "detector"})
    return finish(fig, title, report.provenance)


# ----------------------------------------------------------------------------------------- MHaluBench


def mhalubench_macro_f1(report: Report) -> go.Figure:
    title = "MHaluBench Table 2 · macro F1 at claim and segment level"
    table = report.table("table2")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No data.")
    frame = table.frame
    tasks = list(dict.fromkeys(frame["task"]))
    fig = make_subplots(rows=1, cols=len(tasks), shared_yaxes=True, subplot_titles=tasks)
    level_colors = {"Claim": "#0072B2", "Segment": "#E69F00"}
    for k, task in enumerate(tasks, start=1):
        part = frame[frame["task"] == task]
        for level, color in level_colors.items():
            rows = part[part["level"] == level]
            fig.add_bar(
                row=1,
                col=k,
                name=level,
                legendgroup=level,
                showlegend=k == 1,
                x=[report.provenance.run_name(d) for d in rows["detector"]],
                y=rows["Macro F1"],
                marker_color=color,
                text=[f"{v:.1f}" for v in rows["Macro F1"]],
                textposition="outside",
                customdata=np.stack([rows["Acc."], rows["n"]], axis=1),
                hovertemplate="%{x}: macro F1 %{y:.1f}, accuracy %{customdata[0]:.1f} (n=%{customdata[1]})<extra></extra>",
            )
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="macro F1 (%)", range=[0, 110], row=1, col=1)
    return finish(fig, title, report.provenance, panels=True)


# --------------------------------------------------------------------------------------------- Tri-HE


def trihe_radar(report: Report, judge: str | None = None) -> go.Figure:
    """The radar comparison (Tri-HE Figure 1b): each answering model over the six rates of one judge."""
    table = report.table("table2")
    judge = judge or "gold"
    title = f"Tri-HE · hallucination rates per answering model (judge: {judge}; lower is better)"
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No data.")
    frame = table.frame
    if judge not in set(frame["judge"]):
        judge = frame["judge"].iloc[0]
        title = f"Tri-HE · hallucination rates per answering model (judge: {judge}; lower is better)"
    part = frame[frame["judge"] == judge]
    axes = triplets.COLUMNS
    palette = colors(part["model"])
    fig = go.Figure()
    for row in part.to_dict("records"):
        values = [row[c] for c in axes]
        model = row["model"]
        fig.add_scatterpolar(
            name=f"{model} ({row['answers']} answers)",
            r=[*values, values[0]],
            theta=[*axes, axes[0]],
            line={
                "color": palette[model],
                "width": 3,
                "dash": "dot" if model == triplets.ALL_MODELS else "solid",
            },
            hovertemplate="%{theta}: %{r:.1f} %<extra>%{fullData.name}</extra>",
        )
    top = float(np.nanmax(part[axes].to_numpy())) if len(part) else 100.0
    fig.update_layout(
        polar={
            "radialaxis": {
                "range": [0, max(10.0, top * 1.1)],
                "ticksuffix": " %",
                "angle": 90,
                "tickangle": 90,
            },
            "angularaxis": {"rotation": 60},
        }
    )
    return finish(fig, title, report.provenance, height=560)


# --------------------------------------------------------------------------------------------- HalLoc


def halloc_reliability(report: Report, type_: str = calibration.ALL_TYPES) -> go.Figure:
    """Reliability diagram per detector, on every token or on one hallucination type's tokens."""
    which = "" if type_ == calibration.ALL_TYPES else f" · {type_}"
    title = f"HalLoc · reliability diagram of token probabilities{which}"
    table = report.table("reliability")
    if table is None or table.frame.empty or type_ not in set(table.frame["type"]):
        return _empty(title, report.provenance, "No token probabilities for this choice.")
    every = table.frame[table.frame["type"] == type_]
    frame = every.dropna(subset=["confidence"])
    if type_ == calibration.ALL_TYPES:
        errors = report.tables["calibration"].frame.set_index("detector")
    else:
        by_type = report.tables["by_type"].frame
        errors = by_type[by_type["type"] == type_].groupby("detector").first()
    palette = colors(table.frame["detector"])
    fig = go.Figure()
    fig.add_scatter(
        x=[0, 1],
        y=[0, 1],
        mode="lines",
        line={"color": GREY, "dash": "dot"},
        name="perfect calibration",
        hoverinfo="skip",
    )
    biggest = max(1, int(frame["count"].max())) if len(frame) else 1
    for key, part in frame.groupby("detector", sort=False):
        name = str(key)
        shown = report.provenance.run_name(name)
        label = (
            f"{shown} (ECE {errors['ECE'][name]:.1f}, ACE {errors['ACE'][name]:.1f})"
            if name in errors.index
            else shown
        )
        fig.add_scatter(
            name=label,
            x=part["confidence"],
            y=part["accuracy"],
            mode="lines+markers",
            line={"color": palette[name], "width": 3},
            marker={"size": 6 + 20 * np.sqrt(part["count"] / biggest), "color": palette[name]},
            customdata=np.stack([part["lower"], part["upper"], part["count"]], axis=1),
            hovertemplate=(
                "bin [%{customdata[0]:.1f}, %{customdata[1]:.1f}): mean probability %{x:.3f}, "
                "hallucinated %{y:.3f}, %{customdata[2]} tokens<extra>" + name + "</extra>"
            ),
        )
    fig.update_layout(
        xaxis={"title": "mean predicted probability (confidence)", "range": [-0.02, 1.02]},
        yaxis={"title": "share of tokens that are hallucinated", "range": [-0.02, 1.04]},
    )
    return finish(fig, title, report.provenance, height=560)


def halloc_types(report: Report) -> go.Figure:
    title = "HalLoc · ECE per hallucination type (avg of positive and negative tokens; lower is better)"
    table = report.table("by_type")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No typed gold span.")
    frame = table.frame
    palette = colors(frame["detector"])
    order = sorted(frame["type"].unique())
    fig = go.Figure()
    for name, part in frame.groupby("detector", sort=False):
        part = part.groupby("type").first().reindex(order)
        fig.add_bar(
            name=report.provenance.run_name(str(name)),
            x=[wrap(t) for t in order],
            y=part["ECE avg"],
            marker_color=palette[name],
            customdata=np.stack([part["ECE pos"], part["ECE neg"], part["positive tokens"]], axis=1),
            hovertemplate="%{x}: avg %{y:.1f} (pos %{customdata[0]:.1f}, neg %{customdata[1]:.1f}; %{customdata[2]} tokens)<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="group", yaxis={"title": "ECE avg (%)", "rangemode": "tozero"}, xaxis={"title": "type"}
    )
    return finish(fig, title, report.provenance)


# ----------------------------------------------------------------------------------------- correlation


def correlation_scatter(report: Report, metrics: Sequence[str] | None = None) -> go.Figure:
    """Human score against each metric, one panel per metric; each point carries its item id."""
    title = "Metrics against human ratings (each point is an item)"
    table = report.table("items")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No rated item.")
    frame = table.frame
    keys = [k for k in (metrics or correlation.METRICS) if k in frame]
    pearson = report.tables["correlations"].frame
    labels = []
    for key in keys:
        row = pearson[(pearson["metric"] == correlation.METRICS[key]) & (pearson["method"] == "Pearson")]
        r = float(row["r"].iloc[0]) if len(row) else float("nan")
        labels.append(f"{correlation.METRICS[key]} · r = {r:.2f}")
    fig = make_subplots(
        rows=1, cols=len(keys), shared_yaxes=True, subplot_titles=labels, horizontal_spacing=0.04
    )
    palette = colors(frame["subset"])
    for k, key in enumerate(keys, start=1):
        for subset, part in frame.groupby("subset", sort=True):
            fig.add_scatter(
                row=1,
                col=k,
                name=str(subset),
                legendgroup=str(subset),
                showlegend=k == 1,
                x=part[key],
                y=part["human"],
                mode="markers",
                marker={
                    "color": palette[subset],
                    "size": 10,
                    "opacity": 0.8,
                    "line": {"width": 1, "color": "white"},
                },
                customdata=np.stack([part["item"], part["raters"]], axis=1),
                hovertemplate="%{customdata[0]}: metric %{x:.3f}, human %{y:.2f} (%{customdata[1]} raters)<extra></extra>",
            )
        low = float(frame[key].min())
        fig.update_xaxes(
            title_text=correlation.METRICS[key],
            range=[min(low, 0.9) - 0.05, 1.05] if low >= 0 else None,
            row=1,
            col=k,
        )
    fig.update_yaxes(title_text="human score (mean of raters)", row=1, col=1)
    return finish(fig, title, report.provenance, height=500, panels=True)


def _has_correlations(report: Report) -> bool:
    table = report.table("correlations")
    return table is not None and not table.frame.dropna(subset=["r"]).empty


def correlation_bars(report: Report) -> go.Figure:
    title = "Correlation with human ratings, with 95 % bootstrap intervals"
    table = report.table("correlations")
    if table is None or not _has_correlations(report):
        return _empty(title, report.provenance, "Not enough rated items.")
    frame = table.frame
    method_colors = {"Pearson": "#0072B2", "Spearman": "#E69F00", "Kendall": "#009E73"}
    fig = go.Figure()
    for method, color in method_colors.items():
        part = frame[frame["method"] == method]
        fig.add_bar(
            name=method,
            x=part["metric"],
            y=part["r"],
            marker_color=color,
            error_y={
                "type": "data",
                "symmetric": False,
                "array": (part["high"] - part["r"]).to_numpy(),
                "arrayminus": (part["r"] - part["low"]).to_numpy(),
            },
            hovertemplate="%{x}: r %{y:.3f}<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="group", yaxis={"title": "correlation", "range": [-1, 1]}, xaxis={"title": "metric"}
    )
    return finish(fig, title, report.provenance)


# ------------------------------------------------------------------------------------------- agreement


def agreement_kappa(report: Report) -> go.Figure:
    title = f"{report.title} · Cohen's kappa per pair"
    table = report.table("pairs")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "Needs two raters.")
    frame = table.frame
    raters = list(dict.fromkeys([*frame["rater A"], *frame["rater B"]]))
    matrix = pd.DataFrame(np.eye(len(raters)), index=raters, columns=raters)
    for a, b, kappa in zip(frame["rater A"], frame["rater B"], frame["kappa"], strict=True):
        matrix.loc[a, b] = matrix.loc[b, a] = kappa
    text = pd.DataFrame(
        [[_cell(v) for v in r] for r in matrix.to_numpy()], index=raters, columns=raters, dtype=object
    )
    # A pair that used one category alone (nothing flagged by either) is 1.00 by convention: the cell
    # says so, as the table's note does, rather than pass for perfect agreement.
    single = frame.iloc[list(table.unranked)]
    for a, b in zip(single["rater A"], single["rater B"], strict=True):
        text.loc[a, b] = text.loc[b, a] = f"{text.loc[a, b]} {agreement.SINGLE}"
    fig = go.Figure(
        go.Heatmap(
            z=matrix.to_numpy(),
            x=raters,
            y=raters,
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            text=text.to_numpy().tolist(),
            texttemplate="%{text}",
            colorbar={"title": {"text": "κ"}},
            hovertemplate="%{y} vs %{x}: κ = %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(yaxis={"autorange": "reversed"})
    if len(single):
        # The cells say which pairs; the note says what ‡ means (naming the pairs ran off the slide).
        _note_above(
            fig,
            LINE_BREAK.join(f"{note}: kappa 1 by convention" for note in sorted(set(single[agreement.NOTE]))),
        )
    return finish(fig, title, report.provenance, height=max(360, 140 + 70 * len(raters)))


def _stack_order(frame: pd.DataFrame) -> list[str]:
    """The labels in the order they are stacked and listed: the points of a rating scale by value (a
    scale reads from low to high), other labels the most given first."""
    by_use = list(dict.fromkeys(frame.sort_values("units", ascending=False, kind="stable")["label"]))
    try:
        return sorted(by_use, key=float)
    except ValueError:
        return by_use


def agreement_distribution(report: Report) -> go.Figure:
    title = f"{report.title} · label distribution per rater"
    table = report.table("distribution")
    if table is None or table.frame.empty:
        return _empty(title, report.provenance, "No labels.")
    frame = table.frame
    outside = frame["label"] == agreement.OUTSIDE
    note = ""
    if outside.any() and not outside.all():
        # Tokens outside every span dwarf the rest; draw the labelled ones and say so.
        frame = frame[~outside]
        note = " (tokens outside every span not drawn)"
        title += note
    labels = _stack_order(frame)
    palette = colors(labels)
    fig = go.Figure()
    for label in labels:
        part = frame[frame["label"] == label]
        fig.add_bar(
            name=label,
            y=part["rater"],
            x=part["share"],
            orientation="h",
            marker_color=palette[label],
            customdata=part["units"],
            hovertemplate="%{y}: %{x:.1f} % (%{customdata} units)<extra>%{fullData.name}</extra>",
        )
    fig.update_layout(
        barmode="stack",
        # Listed as stacked, left to right (plotly lists a stack's traces reversed, as stacked upwards).
        legend={"traceorder": "normal"},
        xaxis={"title": "share of the rater's units (%)", "range": None if note else [0, 100]},
    )
    return finish(fig, title, report.provenance, height=max(320, 160 + 50 * frame["rater"].nunique()))


# ----------------------------------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class FigureSpec:
    key: str
    title: str
    make: Callable[[Report], go.Figure]
    needs: str  # the table that must be present and non-empty
    # Whether the figure draws anything of that table (None: any row is drawn). A figure that draws
    # nothing says why in words, on the Metrics page, next to the table it points to.
    draws: Callable[[Report], bool] | None = None


FIGURES: dict[str, tuple[FigureSpec, ...]] = {
    mhalo.KEY: (
        FigureSpec("mhalo-table3", "Table 3 · F1_IoU per subset", mhalo_subsets, "table3"),
        FigureSpec("mhalo-curve", "F1_IoU vs IoU threshold", mhalo_curve, "curve"),
        FigureSpec("mhalo-types", "Figure 5 · per type", mhalo_types, "by_type"),
        FigureSpec("mhalo-clean", "Figure 6 · clean responses", mhalo_clean, "clean"),
    ),
    alignbench.KEY: (
        FigureSpec(
            "alignbench-auroc", "Table 3 · AUROC with intervals", alignbench_auroc, "table3_ci", _has_auroc
        ),
        FigureSpec(
            "alignbench-positional",
            "Figure 7 · positional bias",
            alignbench_positional,
            "positional",
            _has_positional_points,
        ),
        FigureSpec(
            "alignbench-self",
            "Figure 8 · self-preference",
            alignbench_self_preference,
            "self_preference",
            _has_self_preference,
        ),
        FigureSpec("alignbench-types", "Figure 9 · per error type", alignbench_error_types, "error_types"),
        FigureSpec(
            "alignbench-localization", "Table 5 / H · localization", alignbench_localization, "localization"
        ),
    ),
    claims.KEY: (FigureSpec("mhalubench-f1", "Table 2 · macro F1", mhalubench_macro_f1, "table2"),),
    triplets.KEY: (FigureSpec("trihe-radar", "Radar · rates per model", trihe_radar, "table2"),),
    calibration.KEY: (
        FigureSpec("halloc-reliability", "Reliability diagram", halloc_reliability, "reliability"),
        FigureSpec("halloc-types", "ECE per type", halloc_types, "by_type"),
    ),
    correlation.KEY: (
        FigureSpec("correlation-scatter", "Scatter against human scores", correlation_scatter, "items"),
        FigureSpec(
            "correlation-bars",
            "Correlations with intervals",
            correlation_bars,
            "correlations",
            _has_correlations,
        ),
    ),
    agreement.KEY: (
        FigureSpec("agreement-kappa", "Cohen's kappa per pair", agreement_kappa, "pairs"),
        FigureSpec("agreement-distribution", "Label distribution", agreement_distribution, "distribution"),
    ),
}


def figures_for(report: Report) -> list[FigureSpec]:
    """The figures a report has data for."""
    family = report.key.split(".")[0]
    return [
        spec
        for spec in FIGURES.get(family, ())
        if (table := report.table(spec.needs)) is not None and not table.frame.empty
    ]


def slides_for(report: Report) -> list[FigureSpec]:
    """The figures of a report that presenter mode offers as slides: those that draw something.

    A figure with nothing to draw (every point of Figure 7 averages too few sentences, no captioner has
    an AUROC…) is a sentence pointing to the figure's data on the Metrics page, where that data is
    shown. Presenter mode has no data view, and showing that table instead would put on a projector, in
    large type, the means the figure leaves out as noise, in a table too long for a slide. So such a
    figure is not a slide at all: the deck is numbered over the slides it offers, so ``?slide=`` and the
    slide list still agree.
    """
    return [spec for spec in figures_for(report) if spec.draws is None or spec.draws(report)]
