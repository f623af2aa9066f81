"""Compare detectors on one item: gold first, then each detector's spans, matched / false positive / missed.

On a dataset without a gold label set nothing is scored: the page shows each detector's spans, sentence
scores and claim verdicts side by side, without F1, fates or a gold column, and says where gold comes
from (:mod:`components.no_gold`).

Deep link: ``compare?dataset=…&item=…&detectors=a,b,c``. Opened from the failure finder, the link also
carries the finder's preset and filters (``from=failures&preset=…``), and the page steps through that
same list of items, so a shared link steps through the same failures.
"""

from __future__ import annotations

import re

import streamlit as st
from PIL import Image

from analysis import failure_finder as ff
from analysis.item_comparison import (
    DetectorOutput,
    ItemComparison,
    Track,
    claim_grid,
    compare_item,
    matching_table,
    sentence_cell_styles,
    sentence_grid,
)
from analysis.reports.detector_runs import self_judging
from components.dataset_picker import dataset_switched, pick_dataset
from components.item_parts import response_title, show_image, show_raw_output, show_text
from components.live_refresh import follow_runs, poll_left_as_shown
from components.no_gold import show_no_gold
from components.page_address import from_address, keep, left_out, notice, unknown_values
from components.page_controls import iou_threshold
from components.page_setup import setup_page
from components.span_cache import dataset_spans, finder_selection
from components.store_cache import cached
from db.detector_runs import run_provenance
from db.images import resolve_image
from db.repositories.annotations import item_annotations
from db.repositories.items import get_item
from formats.problems import quoted
from render.comparison_export import comparison_html, comparison_png, png_bytes, thumbnail
from render.comparison_tracks import TRACK_CSS, compared_with_detectors, legend_html, track_html
from render.literal_text import literal

ctx = setup_page("Compare detectors")
ctx.require("view_reports")
picked_dataset = pick_dataset(ctx.engine)
if picked_dataset is None:
    st.stop()
dataset = picked_dataset  # bound after the check, so the functions below see a dataset
follow_runs(ctx.engine)  # a detector run going on this server: redraw as its answers arrive
evaluation = dataset_spans(ctx.engine, dataset.id)
names = [d.name for d in evaluation.detectors]
# Runs that locate spans get a track, and so does a run with no answer yet (a live run just started);
# a run of sentence scores, token probabilities or claim labels only its table below (a track read as a
# run that flagged nothing, scored F1 0 against gold).
spotting = {d.id for d in evaluation.span_detectors}
span_names = {
    d.name for d in evaluation.detectors if d.id in spotting or d.id not in evaluation.other_answers
}
graded = evaluation.gold is not None  # whether there is gold to score the detectors against
ids = evaluation.items.external_ids
if not ids:
    st.info("This dataset has no items yet.")
    st.stop()


def _params() -> dict[str, list[str]]:
    return {key: st.query_params.get_all(key) for key in st.query_params}


query = ff.FinderQuery.from_params(_params())
from_finder = st.query_params.get("from") == ff.COMPARE_FROM

# ------------------------------------------------------------------------------------------ settings
threshold = iou_threshold(
    help="A prediction matches a gold span when their IoU in whitespace tokens reaches this (MHALO uses 0.5)."
    if graded
    else "Two detectors' spans count as the same when their IoU in whitespace tokens reaches this "
    "(the failure list's disagreement)."
)
show_missed = graded
if graded:
    with st.sidebar:
        show_missed = st.toggle(
            "Show missed gold spans in detector tracks",
            value=True,
            key="compare_show_missed",
            help="Dotted blue: a gold span this detector did not find.",
        )
query = query.with_(threshold=threshold)

# The item shown: the ``?item=`` the page opened with (read once: see components.page_address), else the
# one last shown of this dataset in this session, else the first.
_SHOWN_ITEMS = "compare_shown_items"  # session state: dataset id -> the item last shown
shown_items: dict[int, str] = st.session_state.setdefault(_SHOWN_ITEMS, {})
wanted = from_address("item") or shown_items.get(dataset.id) or ids[0]
if wanted not in ids:
    st.warning(
        f"Dataset {literal(quoted(dataset.name))} has no item with id {literal(quoted(wanted))}; showing its first item instead."
    )
    wanted = ids[0]
shown_items[dataset.id] = wanted
keep("item", wanted)
found = cached(get_item, ctx.engine, dataset.id, wanted)
if found is None:
    st.error(f"Dataset {literal(quoted(dataset.name))} has no item with id {literal(quoted(wanted))}.")
    st.stop()
item = found  # bound after the check, so the functions below see an item
position = ids.index(wanted)


def _go(external_id: str) -> None:
    shown_items[dataset.id] = external_id
    keep("item", external_id)


# -------------------------------------------------------------------------------------- navigation
if from_finder:
    failures = list(finder_selection(ctx.engine, dataset.id, query).index)
    previous, following, place = ff.step(failures, wanted)
    back, forward = "◀ Previous failure", "Next failure ▶"
    where = (
        f"Failure **{place + 1}** of **{len(failures)}**"
        if place is not None
        else f"This item is not in the list of **{len(failures)}** failures"
    )
    label = ff.PRESETS.get(query.preset or "", "all items")
    where += f" · {label}"
else:
    previous = ids[position - 1] if position > 0 else None
    following = ids[position + 1] if position + 1 < len(ids) else None
    back, forward = "◀ Previous item", "Next item ▶"
    where = f"Item {position + 1} of {len(ids)}"

nav = st.columns([1.2, 1.2, 2, 3.6])
if (
    nav[0].button(back, disabled=previous is None, width="stretch", key="compare_prev")
    and previous is not None
):
    _go(previous)
    st.rerun()
if (
    nav[1].button(forward, disabled=following is None, width="stretch", key="compare_next")
    and following is not None
):
    _go(following)
    st.rerun()
jump = nav[2].selectbox("Item", ids, index=position, key=f"compare_item_{dataset.id}_{wanted}")
if jump != wanted:
    _go(jump)
    st.rerun()
nav[3].markdown(where)
if from_finder:
    nav[3].page_link(
        "app_pages/failures.py",
        label="Back to the failure list",
        icon=":material/bug_report:",
        query_params={"dataset": dataset.name, **query.to_params()},
    )

# --------------------------------------------------------------------------------------- the tracks
if not names:
    st.info(
        "This dataset has no detector outputs to compare"
        + ("; showing the gold spans only." if "span" in dataset.label_kinds else ".")
    )
elif not graded:
    show_no_gold(ctx, dataset, "F1 scores and matched, false-positive or missed spans")
# The chosen tracks in order live in ``_ORDER``; the multiselect (``_TRACKS``) is handed that value on
# every run. Set only once, a value the server gave a widget can be lost in the browser when another
# rerun (a cookie's confirmation, a second click) starts before the widget took it: the browser then
# sends the widget's empty default back, and a later click would act on an empty list.
_ORDER = "compare_order"
_TRACKS = "compare_tracks"
_COLLAPSED = "compare_collapsed"  # "gold:Gold", "detector:<name>"
_ORDER_OF = "compare_order_dataset"  # the dataset whose tracks ``_ORDER`` holds
st.session_state.setdefault(_COLLAPSED, set())
switched = dataset_switched(_ORDER_OF, dataset)
# Arriving on the page (the multiselect's state goes when a run does not draw it), the tracks are those
# of the ``?detectors=`` the page opened with (read once: see components.page_address); on another
# dataset picked here, those chosen before. Without such a list, or when the dataset has none of its
# detectors, the failure finder's. Kept in the session before anything is drawn: the run may be cut short.
arriving = _ORDER not in st.session_state or _TRACKS not in st.session_state
asked = from_address("detectors")
from_link = asked is not None
if switched and not arriving and asked is None:
    asked = ",".join(st.session_state[_ORDER])
linked = [n for n in (asked or "").split(",") if n] if switched or arriving else []
known = [n for n in linked if n in names]
if switched or arriving:
    given = asked is not None and (known or not linked)
    st.session_state[_ORDER] = known if given else ff.tracks_for(query, names)[:6]
st.session_state[_ORDER] = [n for n in st.session_state[_ORDER] if n in names]
st.session_state[_TRACKS] = list(st.session_state[_ORDER])
# A stale or mistyped link: said as every page says a value of its address that names no option (until
# the tracks change); the tracks of the dataset switched from that this one lacks, in a word of its own.
unknown = [n for n in linked if n not in names]
said = None
if unknown and from_link:
    shown_instead = ", ".join(map(quoted, st.session_state[_ORDER])) or "no track"
    said = (
        left_out("detector", linked, names)
        if known
        else unknown_values("detector", unknown, names, f"showing {shown_instead} instead")
    )
notice("detectors", st.session_state[_ORDER], said)
if unknown and not from_link:
    st.warning(
        literal(
            f"Dataset {quoted(dataset.name)} has no detector named {', '.join(map(quoted, unknown))}"
            + (": showing the detectors it has." if not known else ".")
        )
    )

gold_spans = evaluation.char_spans[evaluation.gold.id][position] if evaluation.gold else None


def _outputs(chosen: list[str]) -> list[DetectorOutput]:
    by_name = {d.name: d for d in evaluation.detectors}
    return [
        DetectorOutput(
            name,
            evaluation.char_spans[by_name[name].id][position],
            bool(evaluation.follows_format[by_name[name].id][position]),
            by_name[name].id,
            bool(evaluation.ran_on(by_name[name].id)[position]),
        )
        for name in chosen
        if name in span_names
    ]


def _compare(chosen: list[str]) -> ItemComparison:
    return compare_item(
        dataset=dataset.name,
        item=item.external_id,
        prompt=item.prompt,
        response=item.response,
        gold=gold_spans,
        detectors=_outputs(chosen),
        threshold=threshold,
    )


def _arrange(how: str) -> None:
    """Re-order the chosen tracks (a callback: runs before the widgets are drawn)."""
    chosen = list(st.session_state[_ORDER])
    # A run not given the item has no F1_IoU: it goes last either way, not first among the worst.
    tracks = {t.name: t for t in _compare(chosen).detectors}
    unscored = {n: n not in tracks or not tracks[n].given or tracks[n].f1_iou is None for n in chosen}
    scores = {n: (tracks[n].f1_iou or 0.0) if n in tracks else 0.0 for n in chosen}
    if how == "best":
        chosen.sort(key=lambda n: (unscored[n], -scores[n]))
    elif how == "worst":
        chosen.sort(key=lambda n: (unscored[n], scores[n]))
    else:
        chosen.sort(key=str.lower)
    st.session_state[_ORDER] = chosen


def _move(name: str, by: int) -> None:
    chosen = list(st.session_state[_ORDER])
    if name not in chosen:  # removed in the same rerun as the click
        return
    # past the chosen runs that have no track, to the next track up or down
    with_tracks = [k for k, n in enumerate(chosen) if n in span_names]
    here = with_tracks.index(chosen.index(name)) if name in span_names else None
    if here is None or not 0 <= here + by < len(with_tracks):
        return
    k, j = with_tracks[here], with_tracks[here + by]
    chosen[k], chosen[j] = chosen[j], chosen[k]
    st.session_state[_ORDER] = chosen


def _picked_tracks() -> None:
    # A poll's run brings the tracks as the tab showed them before the last arrangement: no pick.
    if poll_left_as_shown(_TRACKS, list(st.session_state[_ORDER])):
        return
    st.session_state[_ORDER] = list(st.session_state[_TRACKS])


def _collapse(tracks: list[str], collapsed: bool) -> None:
    current = set(st.session_state[_COLLAPSED])
    st.session_state[_COLLAPSED] = current | set(tracks) if collapsed else current - set(tracks)


ALL_TRACKS = ["gold:Gold", *(f"detector:{n}" for n in names)]


controls = st.columns([6, 1.3])
chosen = controls[0].multiselect(
    "Detector tracks (top to bottom)",
    names,
    key=_TRACKS,
    on_change=_picked_tracks,
    help="Add, remove or re-order tracks; the order is kept in the page address.",
)
with controls[1].popover("Arrange tracks", icon=":material/reorder:", width="stretch"):
    if graded:  # without gold no track has an F1_IoU
        st.button("Best F1_IoU first", on_click=_arrange, args=("best",), width="stretch")
        st.button("Worst F1_IoU first", on_click=_arrange, args=("worst",), width="stretch")
    st.button("By name", on_click=_arrange, args=("name",), width="stretch")
    st.button("Collapse all", on_click=_collapse, args=(ALL_TRACKS, True), width="stretch")
    st.button("Expand all", on_click=_collapse, args=(ALL_TRACKS, False), width="stretch")
keep("detectors", ",".join(chosen))

comparison = _compare(chosen)
by_name = {d.name: d for d in evaluation.detectors}
label_sets = [by_name[name].id for name in chosen] + ([evaluation.gold.id] if evaluation.gold else [])
shown_labels = cached(item_annotations, ctx.engine, item.id, tuple(label_sets))
judging_own = self_judging(cached(run_provenance, ctx.engine, dataset.id)[0], item.source_model)
gold_says = shown_labels[evaluation.gold.id] if evaluation.gold else None


def _draw_track(k: int, track: Track) -> None:
    """One track in a bordered box: its name and scores, arrange buttons, the text, on-demand details."""
    track_id = f"{track.kind}:{track.name}"
    collapsed = track_id in st.session_state[_COLLAPSED]
    with st.container(border=True, key=f"compare_track_{k}"):
        head = st.columns([12, 1, 1, 1], vertical_alignment="center", gap="small")
        bias = (
            " · † judges its own model family's text (AlignBench Fig. 8)" if track.name in judging_own else ""
        )
        head[0].markdown(f"**{literal(track.name)}** · {literal(track.summary())}{bias}")
        if track.kind == "detector":
            head[1].button(
                "",
                icon=":material/arrow_upward:",
                key=f"compare_up_{track.name}",
                help=f"Move {literal(track.name)} up",
                on_click=_move,
                args=(track.name, -1),
                disabled=k == first_detector,
            )
            head[2].button(
                "",
                icon=":material/arrow_downward:",
                key=f"compare_down_{track.name}",
                help=f"Move {literal(track.name)} down",
                on_click=_move,
                args=(track.name, 1),
                disabled=k == len(comparison.tracks) - 1,
            )
        head[3].button(
            "",
            icon=":material/unfold_more:" if collapsed else ":material/unfold_less:",
            key=f"compare_fold_{track_id}",
            help=f"Expand {literal(track.name)}" if collapsed else f"Collapse {literal(track.name)}",
            on_click=_collapse,
            args=([track_id], not collapsed),
        )
        if collapsed or not track.given:  # a run not given the item has no text of its own to show
            return
        st.html(track_html(comparison, track, show_missed=show_missed))
        if track.kind == "detector":
            raw = shown_labels[by_name[track.name].id].raw_output
            if raw is not None:
                show_raw_output(raw, title="Raw output", analysis_label="Analysis (Analyze-then-Judge)")
        if track.graded and (track.spans or track.missed):
            with st.expander("Matching details"):
                st.dataframe(matching_table(comparison, track), hide_index=True, width="stretch")


first_detector = len(comparison.tracks) - len(comparison.detectors)  # after the gold track, if any
st.html(TRACK_CSS)
left, right = st.columns([2, 5], gap="large")
with left:
    show_image(dataset, item)
    show_text(item.prompt or "(no prompt)", label="Prompt")
    st.caption(
        f"Item **{literal(item.external_id)}** · subset {literal(item.subset or '—')} · "
        f"model {literal(item.source_model or '—')} · {literal(item.task_type)}"
    )


has_spans = "span" in dataset.label_kinds
with right:
    if has_spans and graded:
        st.html(legend_html(comparison))
        if compared_with_detectors(comparison):
            st.caption(
                f"IoU in whitespace tokens, matched one-to-one at IoU ≥ {threshold:.2f} as F1_IoU counts. "
                "Hover over a span, or click it, for its type, the gold span it matched and the IoU."
            )
        else:  # nothing to match: the gold spans alone
            st.caption(
                "The gold spans, with no detector run on this item to match them against. "
                "Hover over a span, or click it, for its type."
            )
    elif has_spans:
        st.caption("Each detector's spans, coloured by type. Hover over a span, or click it, for its type.")
    if has_spans:
        for k, track in enumerate(comparison.tracks):
            _draw_track(k, track)
        trackless = [n for n in chosen if n not in span_names]
        if trackless:
            st.caption(
                f"No span track for {', '.join(literal(n) for n in trackless)}: "
                f"{'these runs give' if len(trackless) > 1 else 'this run gives'} no spans; "
                "see the tables below."
            )
    else:
        show_text(item.response, label=response_title(dataset))
        # Said once the tables below are drawn or not: "see the tables below" above none misleads.
        no_span_note = st.empty()
tables_drawn = False

# ------------------------------------------------------------------------- sentences and claims
if item.sentences and chosen:
    scores = {
        name: shown_labels[by_name[name].id].sentence_scores
        for name in chosen
        if shown_labels[by_name[name].id].sentence_scores
    }
    if scores:
        labels = {i: v.label for i, v in gold_says.sentence_labels.items()} if gold_says else None
        tables_drawn = True
        st.subheader("Sentence scores", anchor=False)
        st.caption(
            "0 = the detector is sure the sentence is wrong, 100 = sure it is right; empty = unparseable."
            + (
                " Green: the score sides with the gold label (below 50 for an incorrect sentence); red: it "
                "does not."
                if graded
                else ""
            )
        )
        grid = sentence_grid([(s.index, s.text) for s in item.sentences], labels, scores)
        st.dataframe(
            grid.style.apply(lambda _: sentence_cell_styles(grid, list(scores)), axis=None),
            hide_index=True,
            width="stretch",
            column_config={name: st.column_config.NumberColumn(name, format="%.0f") for name in scores},
        )

if item.claims and chosen:
    gold_claims = {i: v.label for i, v in gold_says.claim_labels.items()} if gold_says else None
    verdicts = {
        name: {i: (v.label, v.reason) for i, v in shown_labels[by_name[name].id].claim_labels.items()}
        for name in chosen
        if shown_labels[by_name[name].id].claim_labels
    }
    if verdicts:
        tables_drawn = True
        st.subheader("Claims", anchor=False)
        grid, reasons = claim_grid([(c.index, c.text) for c in item.claims], gold_claims, verdicts)
        st.dataframe(grid, hide_index=True, width="stretch")
        if len(reasons):
            with st.expander(f"Reasons ({len(reasons)})"):
                st.dataframe(reasons, hide_index=True, width="stretch")

# ------------------------------------------------------------------------------------------ export
if not has_spans:
    if tables_drawn:
        no_span_note.info("This dataset has no span labels: compare its detectors in the tables below.")
    else:
        missing = (
            "it has no detector runs"
            if not names
            else "no detector is chosen"
            if not chosen
            else "the chosen detectors give no sentence scores or claim verdicts on this item"
        )
        no_span_note.info(
            f"This dataset has no span labels, and {missing}: there is nothing to compare here. "
            "Triplet judgments and the other runs are measured on the Metrics page."
        )
    st.stop()
st.subheader("Export this comparison", anchor=False)
safe_name = re.sub(r"[^A-Za-z0-9._-]+", "_", item.external_id)[:80] or "item"


def _image() -> Image.Image | None:
    return thumbnail(resolve_image(dataset.image_root, item.image_ref))


export = st.container(horizontal=True, vertical_alignment="center", gap="small")  # natural widths
export.download_button(
    "HTML snippet",
    data=lambda: comparison_html(comparison, show_missed=show_missed, image_png=png_bytes(_image())),
    file_name=f"compare-{safe_name}.html",
    mime="text/html",
    icon=":material/code:",
    on_click="ignore",
)
export.download_button(
    "PNG for slides",
    data=lambda: comparison_png(comparison, show_missed=show_missed, image=_image()),
    file_name=f"compare-{safe_name}.png",
    mime="image/png",
    icon=":material/image:",
    on_click="ignore",
)
export.caption("Both hold the shown tracks in the shown order; the HTML keeps the hover explanations.")
