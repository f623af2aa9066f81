"""Agreement: how consistently annotators label spans, sentences, claims and ratings."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from analysis.reports import agreement
from components import live_reports as live
from components.dataset_picker import pick_dataset
from components.live_refresh import follow_store
from components.page_address import keep_one, one_choice
from components.page_setup import setup_page
from components.preannotation import anchoring_section
from components.report_filters import report_filter
from components.report_footer import show_figure, show_table
from components.report_views import figure_of
from render import figures
from render.literal_text import literal

ctx = setup_page("Agreement")
ctx.require("view_reports")
dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()
follow_store(ctx.engine)

st.title(f"Agreement · {literal(dataset.name)}")
inputs = live.agreement_inputs(ctx.engine, dataset.id)
kinds = agreement.kinds_available(inputs)
if not kinds:
    st.info("Agreement needs two raters (annotators, gold or detectors) with labels of the same kind.")
    st.stop()

by_label = {agreement.KINDS[k]: k for k in kinds}
first_label = agreement.KINDS[kinds[0]]
one_choice(
    "kind", list(by_label), first_label, called="labels"
)  # ``?kind=``: read when the page opens (page_address)
kind_label = st.segmented_control("Labels", list(by_label), required=True, key="kind") or first_label
keep_one("kind", kind_label, first_label)
kind = by_label[kind_label]
flt = report_filter(ctx.engine, dataset, detectors=False, types=False)
raters = st.multiselect(
    "Raters",
    agreement.raters_for(inputs, kind),
    default=agreement.default_raters(inputs, kind),
    key=f"raters-{dataset.id}-{kind}",  # per dataset: its raters are its own
    help="Annotators by default; add gold or a detector to see how close it comes to the people.",
)
if skipped := agreement.left_out(inputs, kind):
    st.caption(
        f"Not counted for {literal(agreement.KINDS[kind].lower())}, as they hold none: "
        + "; ".join(f"{literal(who.name)}: {literal(who.reason)}" for who in skipped)
    )
with st.spinner("Computing…"):
    report = live.agreement_report(ctx.engine, dataset.id, flt, kind, tuple(raters))
for note in report.notes:
    st.info(literal(note))
if not report.tables:
    anchoring_section(ctx.engine, dataset)
    st.stop()

summary = report.tables["summary"].frame.set_index("measure")
values, units = summary["value"].astype(float), summary["units"].astype(int)
headline = list(summary.index)
for column, measure in zip(st.columns(len(headline)), headline, strict=True):
    column.metric(literal(measure), f"{values[measure]:.3f}", help=f"over {units[measure]:,} units")
st.caption(f"Computed from {literal(report.provenance.text())}")

left, right = st.columns(2)
with left:
    show_table(report.tables["pairs"], report.provenance, key="agreement-pairs")
with right:
    show_table(report.tables["summary"], report.provenance, key="agreement-summary", decimals=3)
if "span_matching" in report.tables:
    show_table(report.tables["span_matching"], report.provenance, key="agreement-span-matching", decimals=1)
show_figure(
    figure_of(report, figures.agreement_kappa),
    report.provenance,
    key="agreement-kappa",
    name=f"agreement-{kind}-kappa",
)
show_figure(
    figure_of(report, figures.agreement_distribution),
    report.provenance,
    key="agreement-dist",
    name=f"agreement-{kind}-labels",
)
disagreements = report.tables["disagreements"]
show_table(
    disagreements,
    report.provenance,
    key="agreement-disagreements",
    data=disagreements.frame.assign(
        open=[f"item?{urlencode({'dataset': dataset.name, 'item': i})}" for i in disagreements.frame["item"]]
    ),
    column_config={
        "open": st.column_config.LinkColumn("open", display_text="open item"),
        "disagreement": st.column_config.NumberColumn("disagreement (%)", format="%.1f"),
    },
)
anchoring_section(ctx.engine, dataset)
