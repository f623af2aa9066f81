"""Find detectors' failure cases: a filterable, sortable table of items, presets, deep links, exports.

Deep link: ``failures?dataset=…&preset=…&detector=…&other=…`` plus the filters (``subset``, ``model``,
``type`` repeated per value, ``min_dis``, ``sort``, ``order``, ``iou``). Clicking a row opens the
comparison page on that item; it steps through exactly the rows listed here.

On a dataset without a gold label set the table counts each detector's spans instead of scoring them,
leaves out the columns and presets measured against gold, and says where gold comes from
(:mod:`components.no_gold`); disagreement between detectors and format failures stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

import streamlit as st

from analysis import failure_finder as ff
from components.dataset_picker import pick_dataset
from components.no_gold import show_no_gold
from components.page_address import all_from_address, back_or_forward, keep, left_out, notice, unknown_values
from components.page_controls import iou_threshold
from components.page_setup import setup_page
from components.span_cache import dataset_spans, finder_selection, finder_tables
from formats.problems import quoted
from render.literal_text import literal

ctx = setup_page("Failure cases")
ctx.require("view_reports")
dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()
evaluation = dataset_spans(ctx.engine, dataset.id)
names = [d.name for d in evaluation.span_detectors]
if "span" not in dataset.label_kinds:
    st.info(
        "The failure finder compares span predictions, and this dataset has no span labels; "
        "its sentence and claim outputs are compared on the comparison page."
    )
    st.stop()
if not names:
    st.info(
        "This dataset has no detector run that marks spans yet: import one (or run a detector) to look "
        "for its failures."
    )
    st.stop()
graded = evaluation.gold is not None  # whether there is gold to score the detectors against
if not graded:
    show_no_gold(ctx, dataset, "F1 scores, false positives and the presets and columns that need gold")

# Disagreement is measured between detector runs: with one, it has no value, and filtering on it would
# empty the list without a word.
ONE_RUN = len(names) < 2
ONE_RUN_HELP = "Disagreement is measured between two detector runs, and this dataset has one."

# ------------------------------------------------------------------------------------------- filters
# The preset and filters shown are the widgets' (see components.page_address): each is set before it is
# drawn to the address's value when the page opens (read once; on the browser's back or forward, one it
# leaves out is the default), else the widget's (the user's choice),
# else the one last shown in this session (another dataset's widgets), else none. A value of the address
# this dataset lacks is said and left out; the address is written from the widgets on every run, so a run
# asked for with an older address (as a watcher's run is) changes nothing shown.
key = f"ff_{dataset.id}"  # widget keys per dataset: the detectors and facets differ between datasets
_SHOWN = "ff_shown_query"  # session state: the query the filters showed last
ALL_ITEMS = ""  # the preset box's "All items": a value set before a box is drawn cannot be None (none chosen)
PRESET_CHOICES = [ALL_ITEMS, *ff.presets(graded)]
DETECTOR_CHOICES = [ff.ANY, *names]
asked = {name: all_from_address(name) for name in ff.PARAMS if name != "iou"}  # ?iou=: the slider's own
if back_or_forward():  # an address stepped back to: a filter it leaves out is at its default
    asked = {name: values or [] for name, values in asked.items()}
link = ff.FinderQuery.from_params({name: values for name, values in asked.items() if values is not None})
before: ff.FinderQuery = st.session_state.get(_SHOWN, ff.FinderQuery())


def _shown(widget: str, options: Sequence[object], name: str, field: str) -> object:
    """Set the one-choice widget to the value it shows (see above) and return that value."""
    candidates = [
        *([getattr(link, field)] if asked[name] is not None else []),
        *([st.session_state[widget]] if widget in st.session_state else []),
        getattr(before, field),
    ]
    if field == "preset":  # a query's "no preset" is the box's "All items"
        candidates = [ALL_ITEMS if c is None else c for c in candidates]
    value = next((c for c in candidates if c in options), options[0])
    st.session_state[widget] = value
    return value


def _shown_many(widget: str, options: Sequence[str], name: str, field: str, called: str) -> list[str]:
    """Set the many-choice widget to the values it shows (see above), say those of the address that are
    not options, and return the values."""
    if asked[name] is not None:
        current = list(getattr(link, field))
    elif widget in st.session_state:
        current = list(st.session_state[widget])
    else:
        current = list(getattr(before, field))
    value = st.session_state[widget] = [v for v in current if v in options]
    notice(name, value, left_out(called, list(getattr(link, field)) if asked[name] else [], options))
    return value


def _unknown_detector(name: str, shown: object) -> None:
    """Say a detector of the address (``?detector=``, ``?other=``) this dataset has no run of."""
    wanted = getattr(link, name)
    unknown = asked[name] is not None and wanted != ff.ANY and wanted not in names
    instead = f"showing {quoted(str(shown))} instead" if shown != ff.ANY else "showing any detector instead"
    notice(name, shown, unknown_values("detector", [wanted], names, instead) if unknown else None)


preset_shown = _shown(f"{key}_preset", PRESET_CHOICES, "preset", "preset")
# A link made while the dataset had gold may ask for a preset that needs it, or for one that is not a
# preset at all: said, not dropped unseen.
link_preset = (asked["preset"] or [""])[-1]
notice(
    "preset",
    preset_shown,
    None
    if not link_preset or link_preset in PRESET_CHOICES
    else f"The link's preset “{ff.PRESETS[link_preset]}” needs a gold label set: showing all items instead."
    if link_preset in ff.PRESETS
    else unknown_values(
        "preset", [link_preset], [p for p in PRESET_CHOICES if p], "showing all items instead"
    ),
)
needs_x = preset_shown == "misses"
detector_choices = DETECTOR_CHOICES[1:] if needs_x else DETECTOR_CHOICES
detector_widget = f"{key}_detector_{needs_x}"
_unknown_detector("detector", _shown(detector_widget, detector_choices, "detector", "detector"))
if graded:
    _unknown_detector("other", _shown(f"{key}_other", DETECTOR_CHOICES, "other", "other"))
problems = st.container()  # what is wrong with the choice shown, said once it is made (below)

top = st.columns([2.2, 1.4, 1.4])
preset = top[0].selectbox(
    "Preset",
    PRESET_CHOICES,
    format_func=lambda p: "All items" if p == ALL_ITEMS else ff.PRESETS[p],
    key=f"{key}_preset",
)
detector = top[1].selectbox(
    "Detector X" if needs_x else "Detector",
    detector_choices,
    format_func=lambda d: "any detector" if d == ff.ANY else d,
    key=detector_widget,
    help="The detector the preset is about.",
)
# Y of "X misses what Y finds": without gold that preset is not offered, and the box is left out.
other = (
    top[2].selectbox(
        "…misses what Y finds",
        DETECTOR_CHOICES,
        format_func=lambda d: "any other detector" if d == ff.ANY else d,
        key=f"{key}_other",
        disabled=not needs_x,
    )
    if graded
    else ff.ANY
)
threshold = iou_threshold(
    help="F1_IoU counts a predicted span as found when its IoU with a gold span reaches this (MHALO: 0.5)."
    if graded
    else "Disagreement counts two detectors' spans as the same when their IoU reaches this."
)
_, table = finder_tables(ctx.engine, dataset.id, float(threshold))

all_types = sorted({t for types in table["gold types"] for t in types}) if graded else []
all_subsets = sorted(table["subset"].dropna().unique())
all_models = sorted(table["source model"].dropna().unique())
# A link from another dataset may ask for values this dataset lacks: said (beside the filters), left out.
_shown_many(f"{key}_subset", all_subsets, "subset", "subsets", "subset")
_shown_many(f"{key}_model", all_models, "model", "models", "source model")
if graded:
    _shown_many(f"{key}_type", all_types, "type", "types", "hallucination type")
sort_choices = [c for c in ff.sort_options(table) if not (ONE_RUN and c == "disagreement")]
sort_shown = _shown(f"{key}_sort", sort_choices, "sort", "sort")
link_sort = (asked["sort"] or [""])[-1]
notice(
    "sort",
    sort_shown,
    unknown_values(
        "column to sort by", [link_sort], sort_choices, f"sorting by {quoted(str(sort_shown))} instead"
    )
    if link_sort and link_sort not in sort_choices
    else None,
)
dis_widget, order_widget = f"{key}_min_dis", f"{key}_order"
if ONE_RUN:
    st.session_state[dis_widget] = 0.0
elif asked["min_dis"] is not None:
    st.session_state[dis_widget] = link.min_disagreement
elif dis_widget not in st.session_state:
    st.session_state[dis_widget] = before.min_disagreement
notice(
    "min_dis",
    st.session_state[dis_widget],
    f"The link's disagreement filter is left out. {ONE_RUN_HELP}"
    if ONE_RUN and asked["min_dis"] is not None and link.min_disagreement > 0
    else None,
)
_shown(order_widget, [False, True], "order", "descending")
# Without gold no item has a hallucination type to filter on: that filter is left out.
more = st.columns([1.3, 1.3, 1.6, 1.2, 1.4] if graded else [1.3, 1.3, 1.2, 1.4])
subset_box, model_box, *types_box, dis_box, sort_box = more
subsets = subset_box.multiselect("Subset", all_subsets, key=f"{key}_subset")
models = model_box.multiselect("Source model", all_models, key=f"{key}_model")
types = types_box[0].multiselect("Hallucination type present", all_types, key=f"{key}_type") if graded else []
min_dis = dis_box.slider(
    "Disagreement ≥",
    0.0,
    1.0,
    step=0.05,
    key=dis_widget,
    disabled=ONE_RUN,
    help=ONE_RUN_HELP
    if ONE_RUN
    else "Mean over detector pairs of 1 − F1_IoU between their predictions: 0 = all detectors flag the "
    "same spans, 1 = no two share a matching span.",
)
sort = sort_box.selectbox(
    "Sort by",
    sort_choices,
    format_func=lambda c: "dataset order" if c == "item" else c,
    key=f"{key}_sort",
)
descending = sort_box.toggle("Descending", key=order_widget)

query = ff.FinderQuery(
    preset=preset or None,
    detector=detector,
    other=other if needs_x else ff.ANY,
    subsets=tuple(subsets),
    models=tuple(models),
    types=tuple(types),
    min_disagreement=0.0 if ONE_RUN else float(min_dis),
    sort=sort,
    descending=descending,
    threshold=float(threshold),
)
st.session_state[_SHOWN] = query
for problem in ff.problems(query, names):
    problems.warning(literal(problem))
written = query.to_params()
wanted_params = {"dataset": dataset.name, **written}
for name in ff.PARAMS:
    if name != "iou":  # the slider keeps its own
        keep(name, written.get(name))

# --------------------------------------------------------------------------------------------- table
found = finder_selection(ctx.engine, dataset.id, query)
st.markdown(
    f"**{len(found)}** of {len(table)} items · {ff.PRESETS.get(preset or '', 'all items')}"
    + ("" if not preset or detector == ff.ANY else f" · detector **{literal(detector)}**")
    + (f" vs **{literal(other)}**" if needs_x and other != ff.ANY else "")
)

shown = st.multiselect(
    "Score columns for" if graded else "Span-count columns for",
    names,
    default=ff.tracks_for(query, names)[:4],
    key=f"{key}_columns",
    help="Which detectors' F1_IoU, F1_M and false-positive counts the table shows."
    if graded
    else "Which detectors' numbers of spans on each item the table shows.",
)
columns = [c for c in ff.table_columns(shown, graded) if not (ONE_RUN and c == "disagreement")]
config = {
    "item": st.column_config.TextColumn("item", pinned=True),
    "disagreement": st.column_config.NumberColumn("disagreement", format="%.2f"),
    "clean": st.column_config.CheckboxColumn("clean", help="The gold label set marks no span in it."),
    "gold types": st.column_config.ListColumn("gold types"),
    "clean flagged by": st.column_config.ListColumn(
        "clean flagged by", help="Detectors that flagged a clean item."
    ),
    "format failures": st.column_config.ListColumn(
        "format failures", help="Detectors whose output broke the format."
    ),
    "boundary errors": st.column_config.ListColumn(
        "boundary errors",
        help="Detectors with a span whose best IoU with a gold span is between 0.2 and 0.5.",
    ),
    **{
        ff.detector_column(d, m): st.column_config.NumberColumn(
            ff.detector_column(d, m), format="%.2f" if m.startswith("F1") else "%d"
        )
        for d in shown
        for m in ff.per_detector(graded)
    },
}
event = st.dataframe(
    found[columns],
    hide_index=True,
    width="stretch",
    column_config=config,
    on_select="rerun",
    selection_mode="single-row",
    key=f"{key}_table",
)
tracks = ff.tracks_for(query, names)
if event.selection.rows:
    chosen = found.index[event.selection.rows[0]]
    st.switch_page(
        "app_pages/compare.py", query_params=ff.compare_params(query, dataset.name, chosen, tracks)
    )

actions = st.container(horizontal=True, vertical_alignment="center", gap="small")  # natural widths
if len(found):
    actions.page_link(
        "app_pages/compare.py",
        label=f"Step through these {len(found)} in the comparison",
        icon=":material/compare:",
        query_params=ff.compare_params(query, dataset.name, found.index[0], tracks),
    )
actions.download_button(
    "CSV",
    data=lambda: ff.to_csv(found[columns]),
    file_name="failures.csv",
    mime="text/csv",
    icon=":material/download:",
    on_click="ignore",
    disabled=not len(found),
)
actions.download_button(
    "JSONL",
    data=lambda: ff.to_jsonl(found),
    file_name="failures.jsonl",
    mime="application/jsonl",
    icon=":material/download:",
    on_click="ignore",
    disabled=not len(found),
)
with actions.popover("Share this list", icon=":material/link:"):
    st.caption("Anyone with this link sees the same preset, filters and order.")
    here = st.context.url or "failures"  # the page's address as the browser sees it, without the query
    st.code(f"{here}?{urlencode(wanted_params, doseq=True)}", language=None, wrap_lines=True)
st.caption(
    "Click a row to open the item in the comparison page; its ◀ ▶ buttons then step through this list. "
    + (
        "F1 values are the raw per-item scores (a format failure scores 0 in dataset tables). "
        if graded
        else "Spans: how many spans the detector marked on the item. "
    )
    + "Disagreement: mean over detector pairs of 1 − F1_IoU between their predictions."
)
