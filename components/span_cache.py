"""The dataset's spans and the failure finder's tables for the pages, computed once per store revision.

The comparison and failures pages read the same spans and filter the same tables on every rerun (a
click on next/previous, a changed filter); caching them here, by store revision, keeps the analysis
layer free of Streamlit while a saved label still shows on the next rerun. The results are shared, not
copied (at 10 K items x 12 detectors the tables hold 120 K rows): the pages only read them.
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Engine

from analysis import failure_finder as ff
from analysis.dataset_spans import DatasetSpans, load_dataset_spans
from components.store_cache import shared


def dataset_spans(engine: Engine, dataset_id: int) -> DatasetSpans:
    """:func:`analysis.dataset_spans.load_dataset_spans`, once per store revision (shared: read-only)."""
    return shared(load_dataset_spans, engine, dataset_id)


def _tables(engine: Engine, dataset_id: int, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    return ff.failure_tables(dataset_spans(engine, dataset_id), threshold)


def finder_tables(engine: Engine, dataset_id: int, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(detector_rows, item_table)`` at this threshold, once per store revision (shared: read-only)."""
    return shared(_tables, engine, dataset_id, threshold)


def _selection(engine: Engine, dataset_id: int, query: ff.FinderQuery) -> pd.DataFrame:
    rows, table = finder_tables(engine, dataset_id, query.threshold)
    return ff.select_items(query, rows, table, dataset_spans(engine, dataset_id))


def finder_selection(engine: Engine, dataset_id: int, query: ff.FinderQuery) -> pd.DataFrame:
    """The items ``query`` selects, once per store revision, so stepping through them refilters nothing
    (shared: read-only)."""
    return shared(_selection, engine, dataset_id, query)
