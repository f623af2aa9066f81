"""Datasets: what is in the store, how far labeling has come, and where to go next.

A first visit starts here, so the page opens with the way through the app in four steps (import,
annotate, compare, measure), each a link onto the demo; a step whose page the user's role does not open
says so instead of linking.
"""

from __future__ import annotations

import streamlit as st

from components.annotation_frame import locked_words
from components.dataset_picker import keep_dataset
from components.navigation import may_open
from components.page_setup import setup_page
from components.store_cache import cached
from db.repositories.assignments import assigned_work
from db.repositories.datasets import DatasetInfo, DatasetSummary, list_datasets
from db.repositories.queue import Progress, own_progress
from db.repositories.visibility import LabelSight, label_sight, sees_assigned_only
from page_table import pages
from render.literal_text import literal

ctx = setup_page("Datasets")

# A deep link to the root (?dataset=…&item=…) opens that item.
if st.query_params.get("dataset") and st.query_params.get("item"):
    st.switch_page(
        "app_pages/item.py",
        query_params={k: st.query_params[k] for k in ("dataset", "item", "user") if k in st.query_params},
    )

st.title("Spanlight")
st.write(
    "Annotate, compare and measure hallucination detectors for multimodal models: "
    "token spans (MHALO), sentence labels (AlignBench), claims (MHaluBench), triplets (Tri-HE)."
)

# The way through the app: (step, what it does, page, link label).
STEPS = (
    (
        "1 · Import",
        "Bring a benchmark or detector file; the synthetic demo is already loaded to try everything.",
        "app_pages/import_data.py",
        "Import a file",
    ),
    (
        "2 · Annotate",
        "Mark hallucinated words in responses; every label is saved as you go.",
        "app_pages/spans.py",
        "Mark spans",
    ),
    (
        "3 · Compare",
        "See each detector's spans against gold, item by item, and step through its failures.",
        "app_pages/compare.py",
        "Compare detectors",
    ),
    (
        "4 · Measure",
        "The papers' tables and figures (F1, correlation, agreement), computed live.",
        "app_pages/paper_metrics.py",
        "Metrics",
    ),
)
SPECS = {spec.path: spec for spec in pages()}


def guided_start(datasets: list[DatasetSummary], current: DatasetInfo | None) -> None:
    """The four steps, linked onto the demo (else the current dataset)."""
    demo = next((d for d in datasets if d.is_synthetic), None)
    target = demo.name if demo is not None else current.name if current is not None else None
    with st.container(border=True, key="guided_start"):
        st.markdown("**Start here**" + (" · with the demo" if demo is not None else ""))
        for column, (step, what, path, label) in zip(st.columns(len(STEPS)), STEPS, strict=True):
            spec = SPECS[path]
            with column:
                st.markdown(f"**{step}**")
                st.caption(what)
                if may_open(ctx.actor, spec):
                    params = (
                        {} if target is None or spec.path.endswith("import_data.py") else {"dataset": target}
                    )
                    st.page_link(spec.path, label=label, icon=spec.icon, query_params=params)
                else:
                    st.caption("Your role does not open this page.")


def everyone(dataset: DatasetSummary) -> None:
    """The dataset's counts and everyone's progress, with gold coverage."""
    a, b, c = st.columns(3)
    a.metric("Items", f"{dataset.n_items:,}")
    b.metric("Detectors", dataset.n_detectors)
    c.metric("Annotators", dataset.n_annotators)
    gold = f" · gold on {dataset.n_gold_items:,}"
    work = cached(assigned_work, ctx.engine, dataset.id)
    if work.items:
        # The Team page's count: an item is finished once every annotator assigned to it finished it.
        done, total = work.finished, work.items
        words = f"Assigned work: {done:,} / {total:,} items finished by every annotator assigned to them"
    else:
        # No work split: one person's "done" on one task is all there is to count, and the words say so.
        done, total = dataset.n_done_items, dataset.n_items
        words = f"Labeling: {done:,} / {total:,} items marked done by at least one annotator on some task"
    st.progress(done / total if total else 0.0, text=words + gold)


def blind_annotator(dataset: DatasetSummary, sight: LabelSight) -> None:
    """An annotator on a blind dataset sees their own items and progress only: neither gold coverage nor
    how far colleagues are (it anchors), nor the detectors unless pre-annotation shows them anyway."""
    who = ctx.annotator.stored()
    mine = (
        own_progress(ctx.engine, dataset.id, who.id, assigned_only=sees_assigned_only(ctx.actor))
        if who is not None
        else Progress(finished=0, flagged=0, total=0)
    )
    a, b = st.columns(2)
    a.metric("Your items", f"{mine.total:,}")
    if sight.detectors:
        b.metric("Detectors", dataset.n_detectors)
    # Items locked for them (gold shown to them) can be done no more: said apart, and the bar full once
    # the rest are done.
    locked = f" · {locked_words(mine.locked)}" if mine.locked else ""
    # An item counts once finished on every task the annotator has on it, so the words say so.
    scope = "assigned to you" if sees_assigned_only(ctx.actor) else "you began on them"
    skipped = f" ({mine.skipped:,} skipped)" if mine.skipped else ""
    st.progress(
        mine.fraction,
        text=f"You: {mine.finished:,} / {mine.total:,} items finished on every task {scope}{skipped}{locked}",
    )


datasets = cached(list_datasets, ctx.engine)
current = keep_dataset(ctx.engine)
guided_start(datasets, current)
if not datasets:
    st.info("The store is empty. Load the synthetic demo with `python cli.py demo`, or import a benchmark.")
    st.stop()

for dataset in datasets:
    with st.container(border=True):
        head, stats = st.columns([3, 2])
        with head:
            st.subheader(literal(dataset.name), anchor=False)
            if current is not None and dataset.id == current.id:
                st.badge("Current dataset: every page opens on it until you pick another", color="blue")
            if dataset.is_synthetic:
                st.badge("Synthetic demo: generated scenes and simulated detectors", color="orange")
            st.caption(
                f"Format: {literal(dataset.source_format)} · labels: {literal(', '.join(dataset.label_kinds) or '—')}"
            )
            if dataset.description:
                st.markdown(literal(dataset.description))
        with stats:
            sight = label_sight(ctx.engine, ctx.actor, dataset.id)
            if sight.gold:
                everyone(dataset)
            else:
                blind_annotator(dataset, sight)
            if st.button("Browse items", key=f"browse-{dataset.id}", icon=":material/table_rows:"):
                st.switch_page("app_pages/browse.py", query_params={"dataset": dataset.name})
