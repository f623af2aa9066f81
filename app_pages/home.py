"""Datasets: what is in the store, how far labeling has come, and where to go next."""

from __future__ import annotations

import streamlit as st

from components.page_setup import setup_page
from components.store_cache import cached
from db.repositories.datasets import list_datasets
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

datasets = cached(list_datasets, ctx.engine)
if not datasets:
    st.info("The store is empty. Load the synthetic demo with `python cli.py demo`, or import a benchmark.")
    st.stop()

for dataset in datasets:
    with st.container(border=True):
        head, stats = st.columns([3, 2])
        with head:
            st.subheader(literal(dataset.name), anchor=False)
            if dataset.is_synthetic:
                st.badge("Synthetic demo: generated scenes and simulated detectors", color="orange")
            st.caption(
                f"Format: {literal(dataset.source_format)} · labels: {literal(', '.join(dataset.label_kinds) or '—')}"
            )
            if dataset.description:
                st.markdown(literal(dataset.description))
        with stats:
            a, b, c = st.columns(3)
            a.metric("Items", f"{dataset.n_items:,}")
            b.metric("Detectors", dataset.n_detectors)
            c.metric("Annotators", dataset.n_annotators)
            st.progress(
                dataset.progress,
                text=f"Labeling: {dataset.n_done_items:,} / {dataset.n_items:,} items done · "
                f"gold on {dataset.n_gold_items:,}",
            )
            if st.button("Browse items", key=f"browse-{dataset.id}", icon=":material/table_rows:"):
                st.switch_page("app_pages/browse.py", query_params={"dataset": dataset.name})
