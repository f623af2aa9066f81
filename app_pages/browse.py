"""Browse a dataset: search and filter its items, page through them, open one.

In team mode an annotator browses only the items assigned to them, and sees gold (its filter and span
counts) only where the dataset's settings let them (``db.repositories.visibility``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from components.store_cache import cached
from db.repositories.items import ItemFilter, browse_page, facets
from db.repositories.text_search import prepare as prepare_search
from db.repositories.visibility import label_sight, sees_assigned_only
from render.literal_text import literal

ctx = setup_page("Browse items")
dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()

st.title(f"Browse · {literal(dataset.name)}")
if dataset.is_synthetic:
    st.caption("Synthetic demo data: generated scenes and simulated detectors.")

options = cached(facets, ctx.engine, dataset.id)
prepare_search(ctx.engine, dataset.id)  # read the texts while the user types a word
shows_gold = label_sight(ctx.engine, ctx.actor, dataset.id).gold
assigned_to = ctx.actor.id if sees_assigned_only(ctx.actor) else None
if assigned_to is not None:
    st.caption("The items assigned to you.")
query_col, subset_col, model_col, gold_col = st.columns([3, 2, 2, 2])
text = query_col.text_input(
    "Search id, prompt or response", value=st.query_params.get("q", ""), key="browse_q"
)
subsets = subset_col.multiselect("Subset", options.subsets, key="browse_subsets")
models = model_col.multiselect("Source model", options.source_models, key="browse_models")
gold = (
    gold_col.selectbox("Gold says", ["any", "hallucinated", "clean"], key="browse_gold")
    if shows_gold
    else "any"
)
flt = ItemFilter(
    text=text,
    subsets=tuple(subsets),
    source_models=tuple(models),
    hallucinated={"any": None, "hallucinated": True, "clean": False}[gold],
    assigned_to=assigned_to,
)
if text != st.query_params.get("q", ""):
    st.query_params["q"] = text

size_col, page_col, count_col = st.columns([1, 1, 4])
page_size = size_col.selectbox("Per page", [25, 50, 100, 200], index=1, key="browse_size")
asked = int(st.session_state.get("browse_page", 1))
shown = st.session_state.get("browse_view")  # (dataset, filter, page size) of the page shown last
if shown is not None and shown[:2] != (dataset.id, flt):
    asked = 1  # another dataset or a new search starts at its first page
elif shown is not None and shown[2] != page_size:
    asked = (asked - 1) * shown[2] // page_size + 1  # the page holding the first item shown before
st.session_state["browse_view"] = (dataset.id, flt, page_size)
found = cached(browse_page, ctx.engine, dataset.id, flt, asked, page_size)
# The pager shows the page found: the last one when fewer pages match than the number asked for. Past
# the counted matches any page may be typed; one past the end shows the last.
st.session_state["browse_page"] = found.page
page_col.number_input(
    "Page", min_value=1, max_value=found.n_pages if found.counted_all else None, step=1, key="browse_page"
)
if found.counted_all:
    count_col.markdown(f"**{found.n_matching:,}** matching items · page {found.page} of {found.n_pages}")
else:
    count_col.markdown(
        f"More than **{found.n_matching:,}** matching items · page {found.page} of {found.n_pages} or more"
    )

rows = found.rows
if not rows:
    st.info("No item matches these filters.")
    st.stop()

columns = {
    "id": [r.external_id for r in rows],
    "subset": [r.subset or "" for r in rows],
    "source model": [r.source_model or "" for r in rows],
    "gold spans": [r.n_gold_spans for r in rows],
    "prompt": [r.prompt for r in rows],
    "response": [r.response_preview for r in rows],
}
if not shows_gold:
    del columns["gold spans"]
table = pd.DataFrame(columns)
st.caption("Click a row to open the item.")
event = st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    on_select="rerun",
    selection_mode="single-row",
    key="browse_table",
    column_config={"gold spans": st.column_config.NumberColumn(width="small")},
)
if event.selection.rows:
    chosen = rows[event.selection.rows[0]]
    st.switch_page(
        "app_pages/item.py",
        query_params={"dataset": dataset.name, "item": chosen.external_id}
        | ({} if ctx.team else {"user": ctx.annotator.name}),
    )
