"""One item: image, prompt, the response with a label set's spans, sentence labels, claims, triplets.

"Spans of" and the claim and triplet tables offer only the label sets the user may see: in team mode an
annotator on a blind dataset sees only their own (``db.repositories.visibility``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.sentence_labels import shown_sentence_labels
from components.dataset_picker import pick_dataset
from components.dead_ends import missing_item
from components.item_history import show_item_history
from components.item_parts import (
    judged_on_the_response,
    response_title,
    show_image,
    show_raw_output,
    show_text,
)
from components.page_setup import setup_page
from db.access import Forbidden
from db.repositories.annotations import item_annotations
from db.repositories.datasets import set_image_root
from db.repositories.items import get_item, item_at, neighbours
from db.repositories.visibility import visible_label_sets
from formats.problems import quoted
from formats.trihe import run_answer
from render.literal_text import literal
from render.span_html import SpanStyle, render_sentences_html, render_spans_html

ctx = setup_page("Item")
dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()

first = item_at(ctx.engine, dataset.id, 0)
wanted = st.query_params.get("item") or first
item = get_item(ctx.engine, dataset.id, wanted) if wanted else None
if item is None:
    if first is None:
        st.info("This dataset has no items yet.")
    else:
        missing_item(dataset, wanted, "app_pages/item.py", first)
    st.stop()
if st.query_params.get("item") != item.external_id:
    st.query_params["item"] = item.external_id


def _go(external_id: str) -> None:
    st.query_params["item"] = external_id


previous, following = neighbours(ctx.engine, dataset.id, item.position)
nav = st.columns([1, 1, 3, 3])
if nav[0].button("◀ Previous", disabled=previous is None, width="stretch") and previous is not None:
    _go(previous)
    st.rerun()
if nav[1].button("Next ▶", disabled=following is None, width="stretch") and following is not None:
    _go(following)
    st.rerun()
jump = nav[2].text_input(
    "Go to item id", key="item_jump", placeholder="item id", label_visibility="collapsed"
)
if jump and jump != item.external_id:
    if get_item(ctx.engine, dataset.id, jump) is None:
        nav[2].error(f"No item {literal(quoted(jump))} in this dataset.")
    else:
        _go(jump)
        st.rerun()
nav[3].caption(
    f"Item **{literal(item.external_id)}** · position {item.position} · subset {literal(item.subset or '—')} · "
    f"model {literal(item.source_model or '—')} · {literal(item.task_type)}"
)
if dataset.is_synthetic:
    st.caption("Synthetic demo: the picture and the detectors are generated.")

label_sets = visible_label_sets(ctx.engine, ctx.actor, dataset.id)
shown_labels = item_annotations(ctx.engine, item.id, [ls.id for ls in label_sets])
by_title = {ls.title: ls for ls in label_sets}
default = next((t for t, ls in by_title.items() if ls.kind == "gold"), None)

left, right = st.columns([2, 3], gap="large")
with left:
    show_image(dataset, item, settings_below=ctx.may("manage_data"))
    if ctx.may("manage_data"):
        with st.expander("Image settings"):
            root = st.text_input(
                "Image root of this dataset",
                value=dataset.image_root or "",
                key=f"item_image_root_{dataset.id}",  # per dataset: a box keeps what it holds
                help="The folder that the items' relative image references are resolved against: inside the "
                "import folder (a relative name is taken there) or the data folder.",
            )
            if st.button("Save image root") and root != (dataset.image_root or ""):
                try:
                    set_image_root(ctx.engine, dataset.id, root.strip() or None, actor=ctx.actor)
                except (Forbidden, ValueError) as refused:
                    st.error(literal(str(refused)))
                else:
                    st.rerun()
with right:
    show_text(item.prompt or "(no prompt)", label="Prompt")
    if item.reference:
        with st.expander("Reference answer"):
            show_text(item.reference)
    on_response = [
        t
        for t, ls in by_title.items()
        if judged_on_the_response(dataset, shown_labels[ls.id].raw_output is not None)
    ]
    if not on_response:
        show_text(item.response, label=response_title(dataset))
    else:
        titles = on_response
        shown = st.selectbox(
            "Spans of", titles, index=titles.index(default) if default in titles else 0, key="item_label_set"
        )
        chosen = by_title[shown]
        found = shown_labels[chosen.id]
        st.markdown(f"**{response_title(dataset)}** · {len(found.spans)} span(s) from {literal(shown)}")
        styles = [
            SpanStyle(s.start, s.end, s.type, tooltip=f"{s.type or 'untyped'} · {s.start}–{s.end}")
            for s in found.spans
        ]
        st.html(render_spans_html(item.response, styles, types=dataset.taxonomy))
        if found.raw_output is not None:
            show_raw_output(found.raw_output, title="Raw detector output")
        if item.sentences:
            st.markdown(f"**Sentences** · labels from {literal(shown)}")
            labels = shown_sentence_labels(
                [(s.start, s.end) for s in item.sentences],
                {index: label.label for index, label in found.sentence_labels.items()},
                [(s.start, s.end) for s in found.spans],
                found.spans_complete,
            )
            st.html(render_sentences_html(item.response, [(s.start, s.end) for s in item.sentences], labels))
            if found.sentence_scores:
                scores = [found.sentence_scores.get(s.index, (None, True))[0] for s in item.sentences]
                st.caption(
                    "Detector scores (0 = surely wrong, 100 = surely correct): "
                    + ", ".join("—" if v is None else f"{v:.0f}" for v in scores)
                )

rated = {
    t: shown_labels[ls.id].response_score for t, ls in by_title.items() if shown_labels[ls.id].response_score
}
if rated:
    st.subheader("Ratings of the response", anchor=False)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "by": title,
                    "score": r.score,
                    "scale": f"{r.scale_min}-{r.scale_max}",
                    "hallucination": {True: "yes", False: "no", None: ""}[r.hallucination],
                    "rationale": r.rationale or "",
                }
                for title, r in rated.items()
                if r is not None
            ]
        ),
        hide_index=True,
        width="stretch",
    )

if item.claims:
    st.subheader("Claims", anchor=False)
    rows = []
    for claim in item.claims:
        # Numbered from 1, as on Judge claims and in every receipt.
        row = {
            "#": claim.index + 1,
            "claim": claim.text,
            "from": claim.source,
            "segment": claim.segment + 1 if claim.segment is not None else None,
        }
        for title, ls in by_title.items():
            label = shown_labels[ls.id].claim_labels.get(claim.index)
            row[title] = label.label if label else ""
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

# Each run's own answer (a Tri-HE run keeps it with the triplets it extracted from it), shown with them
# even where it gave no triplet: it is the text the run was judged on, not the item's response.
answers = {
    t: run_answer(labels.raw_output.text)
    for t, labels in ((t, shown_labels[ls.id]) for t, ls in by_title.items())
    if labels.raw_output is not None
}
extracted = {
    t: shown_labels[ls.id] for t, ls in by_title.items() if shown_labels[ls.id].triplets or answers.get(t)
}
if item.reference_triplets or extracted:
    st.subheader("Triplets", anchor=False)
    ref_col, ext_col = st.columns(2)
    with ref_col:
        st.markdown("**Reference scene graph**")
        st.dataframe(
            pd.DataFrame(
                [
                    {"subject": t.subject, "relation": t.relation, "object": t.object}
                    for t in item.reference_triplets
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    with ext_col:
        for title, run in extracted.items():
            st.markdown(f"**Extracted · {literal(title)}**")
            answer = answers.get(title)
            if answer is not None:  # the text these triplets come from, not the item's response
                show_text(answer, label="Its answer")
            if not run.triplets:
                st.caption("No triplet extracted from this answer.")
                continue
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "subject": t.subject,
                            "relation": t.relation,
                            "object": t.object,
                            "verdict": t.verdict or "—",
                            "wrong part": t.wrong_part or "",
                        }
                        for t in run.triplets
                    ]
                ),
                hide_index=True,
                width="stretch",
            )

show_item_history(ctx, dataset, item)
