"""The Adjudicate page's widgets: each annotator's labels side by side, and the forms that decide gold.

Each form returns the labels it describes, in the shape ``db.repositories.adjudication.promote_item``
takes, with the annotators whose labels it used. Widget keys carry the item and task (``key``), so a
form starts afresh on each item. Every text from annotators, files or models is shown literally.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from analysis.adjudication import SpanCluster
from db.repositories.adjudication import (
    VERDICTS,
    WRONG_PARTS,
    ItemVotes,
    RatingLabel,
    SpanLabel,
    UnitKey,
    UnitLabel,
    label_text,
)
from db.repositories.gold_origin import ImportedGold
from render.comparison_tracks import attribute_text
from render.literal_text import literal
from render.span_html import SpanStyle, render_spans_html

NO_LABEL = "(no label)"
UNTYPED = "untyped"
# Items the list of imported gold a promotion replaces shows: a page holding a rule's preview sends the
# table again on every rerun, and a rule over a large dataset may replace labels on thousands of items.
LISTED_ITEMS = 200


def _names(votes: ItemVotes, annotators: Sequence[int]) -> str:
    return ", ".join(votes.annotators[a] for a in annotators)


def show_spans(votes: ItemVotes, clusters: Sequence[SpanCluster], taxonomy: Sequence[str]) -> None:
    """The response once per annotator with their spans; hovering a span names its cluster (the number
    the merge form uses) and who else marked it."""
    number = {(a, span): k for k, cluster in enumerate(clusters, 1) for a, span in cluster.members}
    by = {k: _names(votes, cluster.annotators) for k, cluster in enumerate(clusters, 1)}
    for annotator, name in votes.annotators.items():
        spans = votes.spans.get(annotator, [])
        st.markdown(f"**{literal(name)}** · {len(spans)} span(s)")
        styles = []
        for start, end, type_ in spans:
            k = number.get((annotator, (start, end, type_)))
            marked = by[k] if k is not None else name
            tip = f"span {k} · {type_ or UNTYPED} · {start}–{end} · marked by {marked}"
            styles.append(SpanStyle(start, end, type_, tooltip=attribute_text(tip)))
        st.html(render_spans_html(votes.response, styles, types=list(taxonomy), legend=False))


def _unit_label(votes: ItemVotes, annotator: int, unit: UnitKey) -> str:
    if votes.task == "ratings":
        rating = votes.ratings.get(annotator, {}).get(unit)
        return label_text("ratings", rating) if rating is not None else ""
    label = votes.units.get(annotator, {}).get(unit)
    return label_text(votes.task, label) if label is not None else ""


def units_of(votes: ItemVotes) -> list[UnitKey]:
    """Every unit some annotator labelled, in the order the store lists them."""
    given = votes.ratings if votes.task == "ratings" else votes.units
    return list(dict.fromkeys(unit for labels in given.values() for unit in labels))


def show_units(votes: ItemVotes, texts: Mapping[UnitKey, str], suggested: Mapping[UnitKey, Any]) -> None:
    """One row per unit: what it says, each annotator's label, and the weighted majority (if any)."""
    fixed = {"unit", "text", "majority"}
    columns = {
        a: name if name not in fixed else f"{name} (annotator)" for a, name in votes.annotators.items()
    }
    rows = []
    for unit in units_of(votes):
        row = {"unit": votes.unit_names.get(unit, str(unit)), "text": texts.get(unit, "")}
        row.update({columns[a]: _unit_label(votes, a, unit) for a in votes.annotators})
        row["majority"] = label_text(votes.task, suggested[unit]) if unit in suggested else "—"
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["unit", "text", *columns.values(), "majority"])
    st.dataframe(frame, hide_index=True, width="stretch")


# ---------------------------------------------------------------------------------------- spans


def _offsets(cluster: SpanCluster) -> list[tuple[int, int]]:
    counts = Counter((s, e) for _, (s, e, _t) in cluster.members)
    return sorted(counts, key=lambda se: (-counts[se], se[0], se[1] - se[0]))


def span_form(
    votes: ItemVotes,
    clusters: Sequence[SpanCluster],
    majority: Sequence[SpanCluster],
    taxonomy: Sequence[str],
    *,
    key: str,
    free: bool,
) -> tuple[list[SpanLabel], list[int]]:
    """One row per span cluster: keep it or not (the majority's kept at first), which offsets, which type.

    ``free``: offsets are typed in and any type of the taxonomy may be chosen (edit); otherwise they
    are chosen among the annotators' (merge). ``free`` also offers one new span.
    """
    response = votes.response
    labels: list[SpanLabel] = []
    sources: set[int] = set()
    for k, cluster in enumerate(clusters, 1):
        offered = _offsets(cluster)
        given = list(dict.fromkeys(t for _, (_s, _e, t) in cluster.members))
        types = list(dict.fromkeys([*given, *(taxonomy if free else ()), None]))
        keep_col, where_col, type_col = st.columns([2, 5, 3], vertical_alignment="center")
        quote = response[cluster.start : cluster.end]
        keep = keep_col.checkbox(
            literal(f"Span {k}: “{quote[:30]}”"),
            value=cluster in majority,
            key=f"{key}_keep_{k}",
            help=literal(f"Marked by {_names(votes, cluster.annotators)}"),
        )
        if free:
            start = where_col.number_input(
                "Start", 0, len(response) - 1, value=cluster.start, key=f"{key}_start_{k}"
            )
            end = where_col.number_input("End", 1, len(response), value=cluster.end, key=f"{key}_end_{k}")
            where = (int(start), int(end))
        else:
            where = where_col.selectbox(
                "Offsets",
                offered,
                format_func=lambda se: f"“{response[se[0] : se[1]]}” ({se[0]}–{se[1]})",
                key=f"{key}_where_{k}",
                label_visibility="collapsed",
            )
        type_ = type_col.selectbox(
            "Type",
            types,
            index=types.index(cluster.type) if cluster.type in types else 0,
            format_func=lambda t: t or UNTYPED,
            key=f"{key}_type_{k}",
            label_visibility="collapsed",
        )
        if keep:
            labels.append((where[0], where[1], type_))
            sources.update(cluster.annotators)
    if free:
        add_col, where_col, type_col = st.columns([2, 5, 3], vertical_alignment="center")
        add = add_col.checkbox("Add a span", key=f"{key}_add")
        start = where_col.number_input(
            "New span's start", 0, len(response) - 1, value=0, key=f"{key}_new_start"
        )
        end = where_col.number_input("New span's end", 1, len(response), value=1, key=f"{key}_new_end")
        new_type = type_col.selectbox(
            "New span's type", [*taxonomy, None], format_func=lambda t: t or UNTYPED, key=f"{key}_new_type"
        )
        if add:
            labels.append((int(start), int(end), new_type))
    return labels, sorted(sources)


# ---------------------------------------------------------------------------------------- units


def _given(votes: ItemVotes, unit: UnitKey) -> dict[Any, list[int]]:
    """Each distinct label given to the unit, with the annotators who gave it."""
    given: dict[Any, list[int]] = {}
    source = votes.ratings if votes.task == "ratings" else votes.units
    for annotator, labels in source.items():
        if unit in labels:
            given.setdefault(labels[unit], []).append(annotator)
    return given


def _described(votes: ItemVotes, given: Mapping[Any, list[int]]) -> Callable[[Any], str]:
    """How a merge option reads: the label and who gave it."""

    def describe(label: Any) -> str:
        if label is None:
            return NO_LABEL
        return f"{label_text(votes.task, label)} · {_names(votes, given[label])}"

    return describe


def merge_units(
    votes: ItemVotes, suggested: Mapping[UnitKey, Any], *, key: str
) -> tuple[dict[UnitKey, Any], list[int]]:
    """Per unit, one of the labels the annotators gave (the weighted majority's first, if there is one)."""
    chosen: dict[UnitKey, Any] = {}
    sources: set[int] = set()
    for k, unit in enumerate(units_of(votes)):
        given = _given(votes, unit)
        options: list[Any] = [*given, None]
        default = options.index(suggested[unit]) if unit in suggested and suggested[unit] in options else 0
        picked = st.selectbox(
            literal(votes.unit_names.get(unit, str(unit))),
            options,
            index=default,
            format_func=_described(votes, given),
            key=f"{key}_unit_{k}",
        )
        if picked is not None:
            chosen[unit] = picked
            sources.update(given[picked])
    return chosen, sorted(sources)


def _rating_options(low: float, high: float) -> list[RatingLabel | None]:
    scores: list[RatingLabel | None] = [((float(v), None), None) for v in range(int(low), int(high) + 1)]
    return [*scores, ((None, True), None), ((None, False), None), None]


def edit_units(
    votes: ItemVotes, suggested: Mapping[UnitKey, Any], taxonomy: Sequence[str], *, key: str
) -> tuple[dict[UnitKey, Any], list[int]]:
    """Per unit, any label: a verdict and its detail (error type, claim type, wrong part), or a score."""
    chosen: dict[UnitKey, Any] = {}
    for k, unit in enumerate(units_of(votes)):
        start = suggested.get(unit) or next(iter(_given(votes, unit)), None)
        title = literal(votes.unit_names.get(unit, str(unit)))
        if votes.task == "ratings":
            options = _rating_options(*votes.scales.get(unit, (1.0, 4.0)))
            picked = st.selectbox(
                title,
                options,
                index=options.index(start) if start in options else len(options) - 1,
                format_func=lambda label: NO_LABEL if label is None else label_text("ratings", label),
                key=f"{key}_unit_{k}",
            )
            if picked is not None:
                chosen[unit] = picked
            continue
        verdicts: list[str | None] = [*VERDICTS[votes.task], None]
        details = list(WRONG_PARTS) if votes.task == "triplets" else list(taxonomy)
        if start is not None and start[1] and start[1] not in details:
            details.append(start[1])
        verdict_col, detail_col = st.columns(2)
        verdict = verdict_col.selectbox(
            title,
            verdicts,
            index=verdicts.index(start[0]) if start is not None else len(verdicts) - 1,
            format_func=lambda v: NO_LABEL if v is None else v,
            key=f"{key}_verdict_{k}",
        )
        detail_options: list[str | None] = [None, *details]
        detail = detail_col.selectbox(
            "Wrong part" if votes.task == "triplets" else "Type",
            detail_options,
            index=detail_options.index(start[1]) if start is not None and start[1] in detail_options else 0,
            format_func=lambda d: "—" if d is None else d,
            key=f"{key}_detail_{k}",
        )
        if verdict is not None:
            label: UnitLabel = (verdict, detail)
            chosen[unit] = label
    sources = sorted({a for unit, label in chosen.items() for a in _given(votes, unit).get(label, [])})
    return chosen, sources


# ------------------------------------------------------------------------------- imported gold


def confirm_replacing(imported: ImportedGold, *, key: str) -> str | None:
    """Show the gold labels adjudication did not write that a promotion would replace, item by item (the
    first :data:`LISTED_ITEMS` items; the rest are counted), and ask the reviewer to agree. Returns what
    they agreed to (:attr:`ImportedGold.digest`, which the store checks), or None: nothing to replace
    (nothing is shown), or not agreed yet. The box is keyed by what it lists, so a list that changes (an
    import meanwhile) asks again."""
    if not imported.rows:
        return None
    st.warning(
        literal(
            f"Promoting replaces {imported.summary()}. They came with an import of the dataset, or an "
            "undo, a restore or an import put them back: they may be the benchmark's own gold, or "
            "adjudicated labels put back, which the store cannot tell apart. Look at them before you agree."
        ),
        icon=":material/warning:",
    )
    listed = imported.per_item()
    shown = listed[:LISTED_ITEMS]
    st.dataframe(
        pd.DataFrame(
            [
                {"item": item, "labels replaced": len(says), "they say now": "; ".join(says)}
                for item, says in shown
            ],
            columns=["item", "labels replaced", "they say now"],
        ),
        hide_index=True,
        width="stretch",
        height=min(400, 38 + 35 * len(shown)),
    )
    count = len(imported.rows)
    if len(listed) > len(shown):
        rest = listed[len(shown) :]
        st.caption(
            f"The first {len(shown)} items are listed; {len(rest)} more hold "
            f"{sum(len(says) for _, says in rest)} more of these labels, which are replaced too."
        )
    agreed = st.checkbox(
        "Replace the gold label listed" if count == 1 else f"Replace the {count} gold labels listed",
        key=f"{key}_{imported.digest[:16]}",
    )
    return imported.digest if agreed else None
