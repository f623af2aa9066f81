"""Overridden labels: where a reviewer's gold differs from what the annotator on this page said.

After an item has been promoted to gold (by a reviewer or a rule), an annotator sees each unit where
gold now says something else than they did: what they said, what gold says, who promoted the item and
when. Only their own labels are compared, so the page shows nothing of other annotators' work. A blind
annotator sees none of an item assigned to them that they have not done (on any of their tasks): gold
there would answer it. Gold shown to them is recorded first, and their labels on those items are kept as
they were from then on (:mod:`db.repositories.gold_sightings`); the page says so under the title.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from db.access import Forbidden
from db.repositories.adjudication import overridden_labels
from db.repositories.gold_sightings import record_gold_shown
from db.repositories.visibility import gold_waits_for_finish
from render.literal_text import literal

ctx = setup_page("Overridden labels")
ctx.require("label")
dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()
st.title(f"Overridden labels · {literal(dataset.name)}")

me = ctx.actor.id
if me is None:
    stored = ctx.annotator.stored()
    me = stored.id if stored is not None else None
if me is None:
    st.info(
        f"{literal(ctx.annotator.name)} has not labelled anything yet, so nothing of theirs was overridden."
    )
    st.stop()

blind = gold_waits_for_finish(ctx.engine, ctx.actor, dataset.id)
# One read of what is overridden and of what is held back: the annotator's open items are read once.
shown = overridden_labels(ctx.engine, dataset.id, me, open_items_hidden=blind)
found, held_back = shown.found, shown.held_back
if held_back:
    # Not "gold agrees with you": gold of these items is not compared until it may be shown.
    st.info(
        f"{held_back} promoted item(s) you have still to finish (on any of your tasks) are not compared "
        "here: gold there would answer what you have left to label. They appear once you finish them."
    )
if not found:
    if not held_back:
        st.success("Gold agrees with every label of yours on the items promoted so far.")
    st.stop()
if blind:
    # Recorded before it is shown: from now on the store keeps this annotator's labels on these items.
    try:
        record_gold_shown(ctx.engine, ctx.actor, dataset.id, {o.item_id for o in found})
    except Forbidden as refusal:
        st.error(literal(str(refusal)))
        st.stop()
st.caption(
    f"{len(found)} unit(s) on {len({(o.item_id, o.task) for o in found})} promoted item(s) where gold differs "
    "from your label."
    + (
        " Gold of these items is now shown to you, so your labels on them are kept as they were."
        if blind
        else ""
    )
)
st.dataframe(
    pd.DataFrame(
        [
            {
                "item": o.external_id,
                "labels": o.task,
                "unit": o.unit,
                "you said": o.theirs,
                "gold says": o.gold,
                "promoted by": o.reviewer or "the command line",
                "how": o.method,
                "when": o.at.strftime("%Y-%m-%d %H:%M"),
            }
            for o in found
        ]
    ),
    hide_index=True,
    width="stretch",
)
