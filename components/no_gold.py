"""What a page that scores detectors against gold says on a dataset that has no gold label set yet.

Scores against an empty gold are not zero-valued facts but no facts at all (every F1 0, every span a
false positive), so such a page leaves them out, keeps what the detectors' own outputs show, and says
in one line what is left out and where gold comes from: the Import page (a file with gold labels) and
the Adjudicate page (annotators' labels promoted to gold), linked for whoever may open them.
"""

from __future__ import annotations

import streamlit as st

from components.navigation import may_open
from components.page_setup import PageContext
from db.repositories.datasets import DatasetInfo
from page_table import pages

_WHERE_GOLD_COMES_FROM = ("app_pages/import_data.py", "app_pages/adjudicate.py")


def show_no_gold(ctx: PageContext, dataset: DatasetInfo, left_out: str) -> None:
    """Say that ``dataset`` has no gold, so ``left_out`` (plain words, e.g. "F1 scores") is not shown,
    and link to the pages that make gold."""
    st.info(
        f"This dataset has no gold label set yet, so {left_out} are not shown: import one, or adjudicate "
        "the annotators' labels into gold, to see them.",
        icon=":material/info:",
    )
    links = [spec for spec in pages() if spec.path in _WHERE_GOLD_COMES_FROM and may_open(ctx.actor, spec)]
    if links:
        row = st.container(horizontal=True, gap="small")
        for spec in links:
            row.page_link(spec.path, label=spec.title, icon=spec.icon, query_params={"dataset": dataset.name})
