"""Choosing the dataset a page works on; the choice lives in the URL (``?dataset=``) for deep links.

The picker reads only the datasets' settings, never their counts: counting scans every item and label,
and every annotator action changes the store, so the counts would be recomputed on each rerun of an
annotation page (about 0.25 s at 100 K items).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlalchemy import Engine

from components.store_cache import cached
from db.repositories.datasets import DatasetInfo, list_dataset_infos
from render.literal_text import literal


def pick_dataset(engine: Engine, *, where: Any = st.sidebar) -> DatasetInfo | None:
    """A dataset selector that starts from ``?dataset=`` and writes the choice back to the URL.

    ``where``: ``st.sidebar``, another container, or ``st`` itself for the main area.
    """
    datasets = cached(list_dataset_infos, engine)
    if not datasets:
        st.info("No dataset yet: run `python cli.py demo` for the synthetic demo, or import a benchmark.")
        return None
    names = [d.name for d in datasets]
    wanted = st.query_params.get("dataset")
    if wanted is not None and wanted not in names:
        st.warning(
            f"There is no dataset named {literal(repr(wanted))}; showing {literal(repr(names[0]))} instead."
        )
    index = names.index(wanted) if wanted in names else 0
    name = where.selectbox("Dataset", names, index=index, key="dataset_picker")
    if st.query_params.get("dataset") != name:
        st.query_params["dataset"] = name
    return next(d for d in datasets if d.name == name)
