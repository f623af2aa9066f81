"""Adjudicate: where annotators disagree, each annotator's labels side by side, and gold decided from them.

A reviewer picks the labels to adjudicate (spans, sentences, claims, triplets or ratings). The items
where two or more annotators disagree are listed, most disagreement first (with the items the chosen
rule would send to review even though everyone agrees). For one item, with its image: accept one
annotator's labels, merge them span by span or unit by unit, or edit them, then promote them to gold
(one logged transaction; the reviewer's undo reverts it row by row). Below, every agreed item is
promoted at once by a rule — majority, unanimity or AlignBench's stricter rule — after a dry run has
shown what it would do. Either way, gold that no promotion wrote (imported with the dataset, the
benchmark's own, or put back by an undo, a restore or an import) is replaced only once the page has
listed which of its labels on which items go and the reviewer has agreed: Promote waits for that, and
the store refuses anything else. Promote also sends the item's gold as the page showed it: when another
reviewer changed it meanwhile, the store refuses, the page says who and when and offers to reload. Deep link: ``adjudicate?dataset=…&task=Sentences&item=…`` (the task as its button reads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from analysis.adjudication import (
    DISAGREEMENT,
    RULE_NAMES,
    RULES,
    SpanCluster,
    majority_spans,
    majority_units,
    span_clusters,
)
from components import adjudication_forms as forms
from components.dataset_picker import pick_dataset
from components.dead_ends import missing_item
from components.item_parts import show_image, show_text
from components.page_address import from_address, keep, keep_one, one_choice
from components.page_setup import setup_page
from components.store_cache import cached
from db.access import Actor, Forbidden
from db.repositories.adjudication import (
    TASKS,
    DisagreementRow,
    GoldLabels,
    UnitKey,
    gold_version,
    imported_gold_replaced,
    item_votes,
    items_in_disagreement,
    latest_promotion,
    promote_by_rule,
    promote_item,
    unit_texts,
)
from db.repositories.annotators import InvalidName, list_annotators
from db.repositories.assignments import DEFAULT_WEIGHT, weights
from db.repositories.gold_origin import ImportedGold, ReplacesImportedGold
from db.repositories.items import ItemView, get_item
from db.repositories.labeling import StaleEdit, StoreBusy
from render.literal_text import literal

TASK_TITLES = {
    "spans": "Spans",
    "sentences": "Sentences",
    "claims": "Claims",
    "triplets": "Triplets",
    "ratings": "Ratings",
}
RULE_TITLES = {"majority": "Majority", "unanimity": "Unanimity", "alignbench": "AlignBench (stricter)"}
ACCEPT, MERGE, EDIT = "Accept one annotator's labels", "Merge", "Edit"
_DONE = "adjudication_done"
_PREVIEW = "adjudication_preview"
_ITEM_SHOWN = "adjudication_item_shown"  # the item last shown, whatever the labels

ctx = setup_page("Adjudicate")
ctx.require("adjudicate")
picked = pick_dataset(ctx.engine)
if picked is None:
    st.stop()
dataset = picked  # bound after the check, so the functions below see a dataset
st.title(f"Adjudicate · {literal(dataset.name)}")
# ``?task=`` as its button reads: read when the page opens, written from the task shown (page_address).
# Said under the title, not beside the button: the sidebar's menu pushes that below the window's fold.
one_choice("task", list(TASK_TITLES), "spans", TASK_TITLES.__getitem__, called="labels")

with st.sidebar:
    task = str(
        st.segmented_control(
            "Labels",
            list(TASK_TITLES),
            format_func=lambda t: TASK_TITLES[t],
            required=True,
            key="task",
        )
        or "spans"
    )
    keep_one("task", task, "spans", TASK_TITLES.__getitem__)
    threshold = float(
        st.select_slider(
            "IoU threshold (spans)",
            [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
            value=0.5,
            key="adj_threshold",
            help="Two spans match when their token IoU reaches this (MHALO's F1_IoU).",
            disabled=task != "spans",
        )
    )
    rule_name = str(
        st.radio(
            "Rule",
            RULE_NAMES,
            format_func=lambda r: RULE_TITLES[r],
            key="adj_rule",
            help="For promoting agreed items in bulk (below); the items it would send to review are listed too.",
        )
    )
    show_promoted = st.checkbox("List items already promoted", key="adj_show_promoted")
assert task in TASKS
rule = RULES[rule_name]


def _acting() -> Actor | None:
    """Who promotes: the logged-in user, or in local mode the person working under the sidebar's name."""
    if ctx.actor.id is not None:
        return ctx.actor
    try:
        return Actor(ctx.annotator.id, ctx.annotator.name, ctx.actor.role)
    except InvalidName:
        return None


def _disagreements(
    engine: Any, dataset_id: int, task: str, threshold: float, rule_name: str
) -> list[DisagreementRow]:
    """The listed items, computed once per store revision (``cached``)."""
    return items_in_disagreement(
        engine, dataset_id, task, threshold, measure=DISAGREEMENT, rule=RULES[rule_name]
    )


done = st.session_state.pop(_DONE, None)
if done:
    st.success(literal(done))

rows = cached(_disagreements, ctx.engine, dataset.id, task, threshold, rule_name)
listed = [r for r in rows if show_promoted or not r.promoted_current]
st.subheader("Items to adjudicate", anchor=False)
if not listed:
    st.info(
        f"No item needs adjudicating on {TASK_TITLES[task].lower()}: no two annotators disagree"
        + ("" if show_promoted else " on an item not yet promoted")
        + " and the rule sends nothing to review."
    )
else:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "item": r.votes.external_id,
                    "disagreement (%)": round(100 * r.disagreement, 1),
                    "annotators": ", ".join(r.votes.annotators.values()),
                    f"{RULE_TITLES[rule_name]} rule": r.review or "would promote",
                    "promoted": (
                        ""
                        if r.promotion is None
                        else f"{r.promotion.method}"
                        + ("" if r.promoted_current else " · labels changed since")
                    ),
                }
                for r in listed
            ]
        ),
        hide_index=True,
        width="stretch",
        height=min(400, 38 + 35 * len(listed)),
    )

# ---------------------------------------------------------------------------------- one item


def _reload(key: str) -> None:
    """Show the item's gold as it is now (and promote over that)."""
    st.session_state.pop(f"{key}_gold_seen", None)


def _decide(item: ItemView) -> None:
    """The item beside each annotator's labels, the form that decides its gold, and the Promote button."""
    votes = item_votes(ctx.engine, dataset.id, item.id, task)
    weighed = weights(ctx.engine, dataset.id)
    key = f"adj_{task}_{item.id}"
    st.subheader(f"Item {literal(item.external_id)}", anchor=False)
    # The gold this page showed when the item opened (or was reloaded), not the gold of this rerun:
    # Promote sends it, and the store refuses when another reviewer changed that gold meanwhile.
    seen_gold = st.session_state.setdefault(
        f"{key}_gold_seen", gold_version(ctx.engine, dataset.id, item.id, task)
    )
    promotion = latest_promotion(ctx.engine, dataset.id, item.id, task)
    if promotion is not None:
        st.caption(
            f"Promoted to gold ({literal(promotion.method)}) by "
            f"{literal(promotion.reviewer or 'the command line')} on {promotion.at:%Y-%m-%d %H:%M}"
            + ("" if promotion.digest == votes.digest else "; the annotators' labels changed since.")
        )
    clusters: list[SpanCluster] = []
    majority: list[SpanCluster] = []
    suggested: Mapping[UnitKey, Any] = {}
    left, right = st.columns([2, 3], gap="large")
    with left:
        show_image(dataset, item)
        show_text(item.prompt or "(no prompt)", label="Prompt")
    with right:
        if task == "spans":
            clusters = span_clusters(votes.response, votes.spans, weighed, threshold)
            majority = majority_spans(clusters, weighed, votes.annotators)
            forms.show_spans(votes, clusters, dataset.taxonomy)
        else:
            if task == "ratings":
                suggested = majority_units(votes.ratings, weighed, votes.unit_names)[0]
            else:
                suggested = majority_units(votes.units, weighed, votes.unit_names)[0]
            show_text(item.response, label="Response")
    if task != "spans":  # the table of units, annotators side by side, at full width under the item
        forms.show_units(votes, unit_texts(ctx.engine, item.id, task), suggested)
    if not votes.annotators:
        st.info("No annotator labelled this item on this task.")
        return

    st.markdown("**Decide the gold labels**")
    # The forms are keyed by the labels they were drawn from (and the threshold that grouped the spans):
    # a box keeps what it holds whatever its default, so after an annotator changed their labels the
    # boxes of span 2 or unit 3 stood beside another span or unit than the one they were ticked for.
    form = f"{key}_{threshold}_{votes.digest[:16]}"
    drawn = f"{key}_digest"
    if st.session_state.get(drawn, votes.digest) != votes.digest:
        st.info("The annotators changed their labels on this item since it was shown: the form starts again.")
    st.session_state[drawn] = votes.digest
    mode = st.radio("Decide by", [ACCEPT, MERGE, EDIT], horizontal=True, key=f"{key}_mode")
    labels: GoldLabels
    sources: list[int]
    if mode == ACCEPT:
        accepted = st.selectbox(
            "Annotator",
            list(votes.annotators),
            format_func=lambda a: votes.annotators[a],
            key=f"{key}_accept",
        )
        labels, sources = votes.labels_of(accepted), [accepted]
        if task != "spans":
            unlabeled = len(votes.unit_names) - len(labels)
            if unlabeled > 0:
                st.caption(
                    f"{unlabeled} unit(s) labelled by others but not by this annotator keep their current gold "
                    "(use Edit to remove gold labels)."
                )
    elif task == "spans":
        labels, sources = forms.span_form(
            votes, clusters, majority, dataset.taxonomy, key=f"{form}_{mode}", free=mode == EDIT
        )
    elif mode == MERGE:
        labels, sources = forms.merge_units(votes, suggested, key=f"{form}_merge")
    else:
        labels, sources = forms.edit_units(votes, suggested, dataset.taxonomy, key=f"{form}_edit")
    acting = _acting()
    if acting is None:
        st.info("Choose the name you work under in the sidebar (Working as) to promote labels.")
        return
    method = {ACCEPT: "accept", MERGE: "merge", EDIT: "edit"}[mode]
    try:
        imported = imported_gold_replaced(ctx.engine, dataset.id, item.id, task, labels, method=method)
    except ValueError:
        imported = ImportedGold()  # labels the store refuses: Promote says why
    agreed = forms.confirm_replacing(imported, key=f"{key}_replace")
    unagreed = bool(imported.rows) and agreed is None
    if not st.button("Promote to gold", type="primary", key="adj_promote", disabled=unagreed):
        return
    try:
        result = promote_item(
            ctx.engine,
            dataset.id,
            item.id,
            task,
            labels,
            method=method,
            sources=sources,
            actor=acting,
            expected_digest=votes.digest,
            expected_gold=seen_gold,
            replacing=agreed,
        )
    except ReplacesImportedGold as changed:  # the imported gold changed since it was listed
        st.error(literal(f"{changed} The list above is now up to date: look at it again."))
        return
    except StaleEdit as refused:  # gold or the annotators' labels changed since the page showed them
        st.error(literal(str(refused)))
        st.button("Reload the item", key="adj_reload", on_click=_reload, args=(key,))
        return
    except (StoreBusy, ValueError, Forbidden) as refused:
        st.error(literal(str(refused)))
        return
    st.session_state.pop(f"{key}_gold_seen", None)  # the gold it shows next is this promotion's
    st.session_state[_DONE] = (
        f"Promoted {TASK_TITLES[task].lower()} of item {item.external_id} to gold "
        f"({method}): {result.changes} gold label(s) changed"
        + (f", among them the {len(imported.rows)} listed that no promotion wrote." if imported.rows else ".")
    )
    st.rerun()


ids = [r.votes.external_id for r in listed]
# The item shown: the ``?item=`` the page opened with (read once: see components.page_address), else the
# one chosen for these labels, else the one last shown (other labels were chosen), else the first listed.
# One not (or no longer) listed, a deep link's or one just promoted, stays offered while it is shown.
item_key = f"adj_item_{task}"
wanted = from_address("item") or st.session_state.get(item_key) or st.session_state.get(_ITEM_SHOWN)
if wanted and wanted not in ids:
    ids.insert(0, wanted)
if not ids:
    keep("item", None)
else:
    st.session_state[item_key] = wanted if wanted in ids else ids[0]
    chosen = st.selectbox("Item", ids, key=item_key, help="Most disagreement first.")
    st.session_state[_ITEM_SHOWN] = chosen
    keep("item", chosen)
    found = get_item(ctx.engine, dataset.id, chosen)
    if found is None:
        missing_item(dataset, chosen, "app_pages/adjudicate.py", None)
    else:
        _decide(found)

# ----------------------------------------------------------------------------------- by rule
st.divider()
st.subheader(f"Promote agreed items by the {RULE_TITLES[rule_name].lower()} rule", anchor=False)
st.caption(
    {
        "majority": "A label becomes gold when annotators carrying more than half of the weight give it "
        "(AlignBench D.2, MHALO A.3); a tie sends the item to review.",
        "unanimity": "Only items every annotator labelled alike are promoted.",
        "alignbench": "As majority, but an item goes to review when a trusted annotator, or two annotators, "
        "flag a hallucination (AlignBench appendix D.2).",
    }[rule_name]
)
names = {a.id: a.name for a in list_annotators(ctx.engine)}
# Weights as the Team page sets them; only those differing from the default are listed.
weights_set = {a: w for a, w in weights(ctx.engine, dataset.id).items() if w != DEFAULT_WEIGHT}
if weights_set:
    st.dataframe(
        pd.DataFrame(
            [
                {"annotator": names.get(a, str(a)), "weight": w, "trusted": "yes" if trusted else "no"}
                for a, (w, trusted) in sorted(weights_set.items(), key=lambda kv: names.get(kv[0], ""))
            ]
        ),
        hide_index=True,
    )
    st.caption("Everyone else counts 1.0 and is trusted. Admins set weights on the Team page.")
else:
    st.caption("Every annotator counts 1.0 and is trusted (admins set weights on the Team page).")

signature = (dataset.id, task, rule_name, threshold)
acting = _acting()
if acting is None:
    st.info("Choose the name you work under in the sidebar (Working as) to promote labels.")
    st.stop()
if st.button("Preview (dry run)", key="adj_preview"):
    try:
        preview = promote_by_rule(
            ctx.engine, dataset.id, task, rule, threshold=threshold, actor=acting, dry_run=True
        )
    except (Forbidden, ValueError) as refused:
        st.error(literal(str(refused)))
    else:
        st.session_state[_PREVIEW] = (signature, preview)
stored = st.session_state.get(_PREVIEW)
if stored is not None and stored[0] == signature:
    preview = stored[1]
    counts = st.columns(4)
    counts[0].metric("Would promote", len(preview.promoted))
    counts[1].metric("Replacing other gold", preview.replaced)
    counts[2].metric("Need review", len(preview.review))
    counts[3].metric("Unchanged since promoted", preview.unchanged)
    if preview.single:
        st.caption(f"{preview.single} item(s) with a single annotator are left alone.")
    if preview.review:
        st.dataframe(
            pd.DataFrame(preview.review, columns=["item", "why it needs review"]),
            hide_index=True,
            width="stretch",
        )
    agreed = forms.confirm_replacing(preview.imported, key="adj_rule_replace") if preview.promoted else None
    unagreed = bool(preview.imported.rows) and agreed is None
    if preview.promoted and st.button(
        f"Promote {len(preview.promoted)} item(s) to gold",
        type="primary",
        key="adj_confirm",
        disabled=unagreed,
    ):
        try:
            summary = promote_by_rule(
                ctx.engine, dataset.id, task, rule, threshold=threshold, actor=acting, replacing=agreed
            )
        except ReplacesImportedGold as changed:  # the imported gold changed since the preview
            st.session_state.pop(_PREVIEW, None)
            st.error(literal(f"{changed} Preview again to see what the rule would replace now."))
        except (StaleEdit, StoreBusy, ValueError, Forbidden) as refused:
            st.error(literal(str(refused)))
        else:
            st.session_state.pop(_PREVIEW, None)
            st.session_state[_DONE] = (
                f"The {rule_name} rule promoted {len(summary.promoted)} item(s) to gold; "
                f"{len(summary.review)} need review."
            )
            st.rerun()
