"""What a page shows when a link leads nowhere (an item id that is not in the dataset): what is
missing, and links on — the dataset's first item on this page, Browse, and the Datasets page — so a
stale or mistyped link is never a dead end."""

from __future__ import annotations

import streamlit as st

from db.repositories.datasets import DatasetInfo
from render.literal_text import literal


def missing_item(dataset: DatasetInfo, wanted: str | None, page: str, first: str | None) -> None:
    """Say that ``dataset`` has no item ``wanted`` and offer ways on. ``page``: this page's script
    (for the link to ``first``, the item to open instead; None: the page picks one itself)."""
    st.warning(
        f"Dataset {literal(repr(dataset.name))} has no item with id {literal(repr(wanted))}: "
        "it may have been removed, or the link is mistyped."
    )
    ways = st.container(horizontal=True)
    ways.page_link(
        page,
        label="Open its first item" if first is not None else "Open the next item",
        icon=":material/arrow_forward:",
        query_params={"dataset": dataset.name, **({"item": first} if first is not None else {})},
    )
    ways.page_link(
        "app_pages/browse.py",
        label=f"Browse {literal(dataset.name)}",
        icon=":material/table_rows:",
        query_params={"dataset": dataset.name},
    )
    ways.page_link("app_pages/home.py", label="All datasets", icon=":material/dataset:")
