"""Correlation: how well each automatic metric follows human ratings, item by item."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from analysis.reports import correlation
from analysis.reports.base import Report
from components import live_reports as live
from components.dataset_picker import pick_dataset
from components.live_refresh import follow_store
from components.page_address import keep_one, one_choice
from components.page_setup import setup_page
from components.report_filters import report_filter
from components.report_footer import show_figure, show_table
from components.report_views import figure_of
from render import figures
from render.literal_text import literal

ctx = setup_page("Correlation")
ctx.require("view_reports")
dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()
follow_store(ctx.engine)

st.title(f"Correlation with human ratings · {literal(dataset.name)}")
st.caption(
    "Each rated item gets a human score (every rater's mean over the segments they scored, then the mean over "
    "raters, as MHALO section 5.1) and the rated detector's metrics on the same item."
)
inputs = live.correlation_inputs(ctx.engine, dataset.id)
if not correlation.available(inputs):
    st.info("No human ratings yet. Ratings of a detector's outputs appear here as soon as they are saved.")
    st.stop()

# ``?task=`` and ``?flagged=``: read when the page opens, written from the choices shown (page_address).
# The task is always written: the first one, shown without it, is another once a task is added.
left, right = st.columns(2)
tasks = inputs.tasks()
one_choice("task", tasks, tasks[0], called="rating task")
task = left.selectbox("Rating task", tasks, key="task") or tasks[0]
keep_one("task", task, None)
NOTHING = {
    "left out (MHALO)": correlation.NOTHING_EXCLUDED,
    "top if right, bottom if not": correlation.NOTHING_SCORED,
}
LEFT_OUT = "left out (MHALO)"
one_choice("flagged", list(NOTHING), LEFT_OUT, called="choice for items where the detector flagged nothing")
flagged = (
    right.segmented_control(
        "Items where the detector flagged nothing",
        list(NOTHING),
        required=True,
        key="flagged",
        help="They have no segment to rate. Scored: the top of the scale when the item is clean, else the bottom.",
    )
    or LEFT_OUT
)
keep_one("flagged", flagged, LEFT_OUT)
nothing_flagged = NOTHING[flagged]
flt = report_filter(ctx.engine, dataset, detectors=False, types=False)
chosen = st.multiselect(
    "Metrics side by side",
    list(correlation.METRICS),
    default=list(correlation.METRICS),
    format_func=lambda m: correlation.METRICS[m],
    key="metrics",
)


def _headline(report: Report, resampled: bool = True) -> None:
    """One card per chosen metric: Pearson r, with its interval on hover once resampled."""
    table = report.tables["correlations"].frame
    pearson = table[(table["method"] == "Pearson") & table["metric"].isin(chosen_names)]
    for column, row in zip(st.columns(max(len(pearson), 1)), pearson.itertuples(), strict=False):
        interval = f"[{row.low:.3f}, {row.high:.3f}]" if resampled else "on its way…"
        column.metric(
            f"Pearson r · {literal(row.metric)}",
            f"{row.r:.3f}",
            help=f"95 % interval {interval}, n = {row.n}",
        )


chosen_names = [correlation.METRICS[k] for k in chosen]
args = (ctx.engine, dataset.id, flt, task, nothing_flagged or correlation.NOTHING_EXCLUDED)
headline = st.empty()
if not live.correlation_ready(*args):
    # The intervals take a bootstrap pass over the items: the point estimates first.
    with headline.container():
        _headline(live.correlation_report(*args, n_resamples=0), resampled=False)
with st.spinner("Computing…"):
    report = live.correlation_report(*args)
with headline.container():
    _headline(report)
for note in report.notes:
    st.info(literal(note))

table = report.tables["correlations"]
shown = table.frame[table.frame["metric"].isin(chosen_names)]

if chosen:
    event = show_figure(
        figure_of(report, figures.correlation_scatter, tuple(chosen)),
        report.provenance,
        key="correlation-scatter",
        name="correlation-scatter",
        selectable=True,
    )
    points = event.selection.get("points", []) if event else []
    if points:
        item = points[0].get("customdata", [None])[0]
        if item:
            st.page_link(
                "app_pages/item.py",
                label=f"Open item {literal(item)}",
                icon=":material/open_in_new:",
                query_params={"dataset": dataset.name, "item": item, "user": ctx.annotator.name},
            )
    else:
        st.caption("Click a point to open its item.")
show_table(
    type(table)(table.key, table.title, shown, table.caption),
    report.provenance,
    key="correlation-table",
)
show_figure(
    figure_of(report, figures.correlation_bars),
    report.provenance,
    key="correlation-bars",
    name="correlation-bars",
)
show_table(report.tables["by_subset"], report.provenance, key="correlation-subsets")

items = report.tables["items"]
links = items.frame.assign(
    link=[f"item?{urlencode({'dataset': dataset.name, 'item': i})}" for i in items.frame["item"]]
)
show_table(
    items,
    report.provenance,
    key="correlation-items",
    data=links.drop(columns=["item_id"]),
    column_config={
        "link": st.column_config.LinkColumn("open", display_text="open item"),
        **{
            k: st.column_config.NumberColumn(correlation.METRICS[k], format="%.3f")
            for k in correlation.METRICS
        },
        "human": st.column_config.NumberColumn("human", format="%.2f"),
    },
)
