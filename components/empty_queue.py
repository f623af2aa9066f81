"""What an annotation page says when its task has nothing to label on the whole dataset.

"Every item is done 🎉" is only true when there was something to do. A Tri-HE file without model
answers has no extracted triplets, a caption file no claims: the page then names what is missing and
links to where it comes from (Import, Run detector), for whoever may open those pages.
"""

from __future__ import annotations

import streamlit as st

from components.navigation import may_open
from components.page_setup import PageContext
from db.repositories.datasets import DatasetInfo
from formats.problems import quoted
from page_table import pages
from render.literal_text import literal

# Per task: what its units are, and where they come from.
_MISSING: dict[str, tuple[str, str]] = {
    "triplets": (
        "extracted triplets to judge",
        "Triplets come from a model's answer: import a file with detector triplets (Tri-HE's "
        "`<model>_triplets`, with or without `<model>_triplets_judgements`), or run a detector with a "
        "Tri-HE prompt, which extracts the triplets of each answer.",
    ),
    "claims": (
        "claims to judge",
        "Import a file with claims (MHaluBench's `claim_list`, or segments with their claims), or run a "
        "detector that judges claims.",
    ),
    "sentences": (
        "sentences to label",
        "Items are split into sentences when they are imported; import the dataset's responses "
        "(an AlignBench file brings its own sentences).",
    ),
}
_NO_ITEMS = ("items", "Import a file to start.")
_LINKS = ("app_pages/import_data.py", "app_pages/run_detector.py")


def what_is_missing(task: str) -> tuple[str, str]:
    """What the task's queue needs and how to get it; every task needs items at least."""
    return _MISSING.get(task, _NO_ITEMS)


def show_nothing_to_do(ctx: PageContext, dataset: DatasetInfo, task: str) -> None:
    """Say that the dataset has nothing for this task, and offer the pages that bring it."""
    missing, how = what_is_missing(task)
    st.info(f"Nothing to do here: no item of {literal(quoted(dataset.name))} has {missing}. {how}")
    links = [spec for spec in pages() if spec.path in _LINKS and may_open(ctx.actor, spec)]
    if not links:
        st.caption("Ask an admin to import them.")
        return
    for column, spec in zip(st.columns(len(links) + 2)[: len(links)], links, strict=True):
        column.page_link(spec.path, label=spec.title, icon=spec.icon, query_params={"dataset": dataset.name})
