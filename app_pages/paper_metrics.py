"""Metrics: the seed papers' tables and figures, computed live on the chosen dataset."""

from __future__ import annotations

import streamlit as st

from analysis.reports import (
    RESAMPLED,
    SECTIONS,
    alignbench,
    calibration,
    claims,
    mhalo,
    mmhal,
    offered_sections,
    triplets,
)
from components import live_reports as live
from components.dataset_picker import pick_dataset
from components.live_refresh import follow_store
from components.page_address import keep_one, one_choice
from components.page_controls import iou_threshold
from components.page_setup import setup_page
from components.report_filters import report_filter
from components.report_views import show_section
from render.literal_text import literal

ctx = setup_page("Metrics")
ctx.require("view_reports")
picked_dataset = pick_dataset(ctx.engine)
if picked_dataset is None:
    st.stop()
dataset = picked_dataset  # bound after the check, so the function below sees a dataset
follow_store(ctx.engine)  # another session's labels, or a detector run's answers: redraw as they arrive

st.title(f"Metrics · {literal(dataset.name)}")
offered = offered_sections(
    live.counts(ctx.engine, dataset.id),
    lambda key: live.section_available(ctx.engine, key, dataset.id),
    label_kinds=dataset.label_kinds,
)
if not offered:
    st.info(
        "This dataset has nothing to measure yet: the tables need gold labels and at least one detector run "
        "(spans, sentence scores, claim labels, triplet judgments or token probabilities), or ratings of "
        "whole responses."
    )
    st.stop()

# The paper's name is the option (and so the ``?view=`` of a shared link: read when the page opens, written
# from the paper shown on every run, see components.page_address).
by_title = {SECTIONS[key].title: key for key in offered}
first_title = SECTIONS[offered[0]].title
one_choice("view", list(by_title), first_title, called="paper")
view_title = (
    st.segmented_control(
        "Paper",
        list(by_title),
        required=True,
        key="view",
        help="Only the papers whose kind of labels this dataset holds are offered.",
    )
    or first_title
)
keep_one("view", view_title, first_title)
view = by_title[view_title]
# Tri-HE's triplets and MMHal's ratings carry no hallucination type, so that filter is not offered there.
flt = report_filter(
    ctx.engine,
    dataset,
    types=view not in (triplets.KEY, mmhal.KEY),
    unknown=view == alignbench.KEY,
    answering_models=view == triplets.KEY,
    type_kind={
        mhalo.KEY: "spans",
        calibration.KEY: "spans",
        alignbench.KEY: "sentences",
        claims.KEY: "claims",
    }.get(view),
)
options: dict[str, object] = {}
if view == mhalo.KEY:
    options["threshold"] = iou_threshold(
        help="F1_IoU counts a predicted span as found when its IoU with a gold span reaches this (MHALO: 0.5)."
    )
with st.expander("Options"):
    if view in RESAMPLED:
        options["n_resamples"] = st.select_slider(
            "Bootstrap resamples for the intervals", [0, 200, 1000, 2000], value=1000, key="resamples"
        )
    st.caption("Numbers follow the store: a label saved in any session shows here within seconds.")

if not live.section_available(ctx.engine, view, dataset.id):
    st.info("The store changed and this paper's data is gone; pick another one.")
    st.stop()
slow = bool(options.get("n_resamples")) and not live.section_ready(
    ctx.engine, view, dataset.id, flt, **options
)
if slow:
    # Intervals take a resampling pass over every sentence: draw the point estimates first.
    first = st.empty()
    with first.container():
        quick = live.section_report(ctx.engine, view, dataset.id, flt, n_resamples=0)
        st.caption(f"Computed from {literal(quick.provenance.text())} · bootstrap intervals on their way…")
        show_section(quick, key=f"metrics-{view}-quick")
with st.spinner("Computing…"):
    report = live.section_report(ctx.engine, view, dataset.id, flt, **options)
if slow:
    first.empty()
st.caption(f"Computed from {literal(report.provenance.text())}")
show_section(report, key=f"metrics-{view}")
