"""MHALO (span detection): Table 3, the F1_IoU threshold curve, Figures 5 and 6.

All scores are in whitespace tokens (MHALO section 2.3) and in percent. An output that broke the
format scores 0 on every item-level measure (section 4.1) and counts in IF against the detector.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import cast

import numpy as np
import pandas as pd

from analysis.dataset_spans import per_item
from analysis.reports.base import Report, Table
from analysis.reports.data import (
    UNTYPED,
    ReportFilter,
    chosen_detectors,
    item_mask,
    typed_item_mask,
)
from analysis.reports.provenance import Provenance, fingerprint
from analysis.reports.spans import SpanInputs
from metrics import (
    DEFAULT_CURVE_THRESHOLDS,
    clean_response_accuracy,
    f1_iou_by_type,
    f1_iou_curve,
)
from metrics import span_detection_table as detection_table
from metrics.span_batches import PackedSpans, scored_predictions, span_pairs

KEY, TITLE = "mhalo", "MHALO · span detection"
AVERAGE = "Average"
ALL_CLEAN = "All clean items"


def available(inputs: SpanInputs) -> bool:
    """A span gold (its spans, or none at all: every response clean) and a run that locates spans."""
    return inputs.gold_marks_spans and bool(inputs.spans.span_detectors)


def build(inputs: SpanInputs, flt: ReportFilter, threshold: float = 0.5) -> Report:
    ev = inputs.spans
    if ev.gold is None or not available(inputs):
        raise ValueError("the dataset has no span gold or no detector run")
    gold_spans = ev.packed[ev.gold.id]
    gold_types = [t or UNTYPED for t in gold_spans.token_types.tolist()]
    keep = item_mask(inputs.items, flt) & typed_item_mask(
        per_item(gold_types, gold_spans.tokens.offsets), flt
    )
    rows = np.flatnonzero(keep)
    detectors = chosen_detectors(ev.span_detectors, flt)
    subsets = inputs.items["subset"].to_numpy()[rows]
    packed_gold = gold_spans.tokens.take(rows)
    # Each kept gold span's type as a code into ``type_names``: found once, not once per detector.
    type_names, type_codes = np.unique(
        np.asarray(gold_types, dtype=str)[gold_spans.tokens.span_rows(rows)], return_inverse=True
    )
    predictions = {d.id: ev.packed[d.id].tokens.take(rows) for d in detectors}
    provenance = Provenance(
        dataset=inputs.dataset,
        label_sets=("gold", *(d.name for d in detectors)),
        n_items=int(rows.size),
        digest=fingerprint(  # spans as flat arrays: hashed by their bytes, not span by span
            inputs.items["item_id"].to_numpy()[rows],
            _arrays(packed_gold),
            type_names[type_codes].tolist(),  # the types as text: the digest stays what it was
            {d.name: _digested(inputs, d.id, predictions[d.id], rows) for d in detectors},
            threshold,
        ),
        filters=flt.describe(),
    )
    if rows.size == 0 or not detectors:
        return Report(KEY, TITLE, provenance, notes=("No item or detector matches the filters.",))

    table3, curve, by_type, clean = [], [], [], []
    names = np.asarray(_subset_names(subsets), dtype=object)
    name_text = names.astype(str)  # coded by numpy in the scores, per detector (an object array is not)
    # The runs given only some of the kept items (a run given every item the filters keep is not partial)
    given = {d.id: ev.given[d.id][rows] for d in detectors if d.id in ev.given}
    given = {d: mask for d, mask in given.items() if not mask.all()}
    unscored = []  # runs given none of the kept items
    for detector in detectors:
        # A run given only some items is scored on those (DatasetSpans.ran_on): positions in ``rows``.
        within = np.flatnonzero(given[detector.id]) if detector.id in given else np.arange(rows.size)
        if within.size == 0:
            unscored.append(detector.name)
            continue
        gold = packed_gold.take(within)
        codes = type_codes[packed_gold.span_rows(within)]
        ok = ev.follows_format[detector.id][rows][within]
        preds = scored_predictions(predictions[detector.id].take(within), ok)
        # Paired once for every measure below, at the lowest threshold any of them counts at.
        pairs = span_pairs(preds, gold, min(threshold, *DEFAULT_CURVE_THRESHOLDS))
        scores = detection_table(name_text[within], preds, gold, ok, threshold, pairs=pairs)
        row: dict[str, object] = {"detector": detector.name}
        for subset, values in scores.items():
            label = _label(subset)
            row[f"{label} · F1_M"] = values["f1_m"] * 100
            row[f"{label} · F1_IoU"] = values["f1_iou"] * 100
            row[f"{label} · IF"] = values["if_rate"] * 100
            row[f"{label} · items"] = values["n"]  # a run given some items: how many each cell scores
        table3.append(row)
        for t, value in zip(
            DEFAULT_CURVE_THRESHOLDS,
            f1_iou_curve(preds, gold, follows_format=ok, pairs=pairs),
            strict=True,
        ):
            curve.append({"detector": detector.name, "iou_threshold": t, "f1_iou": value * 100})
        per_type = f1_iou_by_type(
            preds,
            gold,
            codes,
            threshold=threshold,
            follows_format=ok,
            pairs=pairs,
        )
        for code, found in per_type.items():
            type_ = str(type_names[cast(int, code)])
            recall = found["recall"]
            if flt.keeps_type(type_):
                by_type.append(
                    {
                        "detector": detector.name,
                        "type": type_,
                        "n_gold_spans": found["n_gold"],
                        "detected": math.nan if recall is None else recall * 100,
                    }
                )
        clean.extend(_clean_rows(detector.name, preds, gold, ok, subsets[within]))

    if not table3:
        return Report(
            KEY,
            TITLE,
            provenance,
            notes=(f"No detector was given an item the filters keep ({', '.join(unscored)}).",),
        )
    n_per_subset = pd.Series(names).value_counts(sort=False)
    partly = [
        f"{d.name} {int(given[d.id].sum())}" for d in detectors if d.id in given and given[d.id].any()
    ]  # runs given only some of the kept items (those given none are left out, with a note)
    # The figures draw each of them with its count beside the complete runs (the footer counts all items).
    provenance = replace(
        provenance,
        partial=tuple(
            (d.name, f"{int(given[d.id].sum()):,} of {rows.size:,} items")
            for d in detectors
            if d.id in given and given[d.id].any()
        ),
    )
    # Every subset's columns in the order of the items, the Average last, whichever run comes first (a
    # run given no item of the first subset put its columns after the Average); cells a run was given
    # no item of are empty. The item counts only when some run was given only some items.
    measures = ("F1_M", "F1_IoU", "IF", *(("items",) if given else ()))
    groups = [*dict.fromkeys(_label(n) for n in names), AVERAGE]
    frame3 = pd.DataFrame(table3).reindex(
        columns=["detector", *(f"{g} · {measure}" for g in groups for measure in measures)]
    )
    return Report(
        KEY,
        TITLE,
        provenance,
        notes=_left_out(inputs, flt)
        + (
            ("Not in these tables (given none of the items the filters keep): " + ", ".join(unscored) + ".",)
            if unscored
            else ()
        )
        + (
            # Figure 5's table stays, empty: its figure is not drawn, and this says why.
            ("No Figure 5 (gold hallucinations detected, per type): gold marks no span on these items.",)
            if type_codes.size == 0
            else ()
        ),
        tables={
            "table3": Table(
                "table3",
                "Table 3 · F1_M, F1_IoU and IF per subset (%)",
                frame3,
                caption=(
                    f"Token spans; F1_IoU at IoU ≥ {threshold:g}; an output that broke the format scores 0. "
                    "Average pools all items (item-weighted, as MHALO). Items per subset: "
                    + ", ".join(f"{str(k).removeprefix('subset:')} {v}" for k, v in n_per_subset.items())
                    + f"; all {rows.size}."
                    + (
                        " Runs given only some of these items are scored on those alone (items): "
                        + ", ".join(partly)
                        + "; so no best value is marked."
                        if partly
                        else ""
                    )
                ),
                # Best and second best compare runs scored alike: not a run on ten items with one on all.
                mark_columns=()
                if partly
                else tuple(c for c in frame3.columns if c != "detector" and not c.endswith("· items")),
            ),
            "curve": Table(
                "curve",
                "F1_IoU against the IoU threshold (%)",
                pd.DataFrame(curve),
                caption="How much of a score depends on exact boundaries: a steep fall means right place, wrong words.",
            ),
            "by_type": Table(
                "by_type",
                "Figure 5 · gold hallucinations detected, per type (%)",
                pd.DataFrame(by_type, columns=["detector", "type", "n_gold_spans", "detected"]),
                caption=f"A gold span counts as detected when a prediction of the same item overlaps it with IoU ≥ {threshold:g}.",
            ),
            "clean": Table(
                "clean",
                "Figure 6 · accuracy on responses without hallucination (%)",
                pd.DataFrame(clean, columns=["detector", "subset", "n_clean", "accuracy"]),
                caption="Share of clean responses on which the detector flagged nothing (a broken output counts as wrong).",
            ),
        },
    )


def _left_out(inputs: SpanInputs, flt: ReportFilter) -> tuple[str, ...]:
    """A note naming the detector runs left out of the span tables because they locate no spans."""
    ev = inputs.spans
    spanless = [d.name for d in chosen_detectors(ev.detectors, flt) if d not in ev.span_detectors]
    if not spanless:
        return ()
    return (
        "Not in these tables (no spans or tagged outputs, so nothing to score as spans): "
        + ", ".join(spanless)
        + ".",
    )


def _digested(
    inputs: SpanInputs, label_set_id: int, predictions: PackedSpans, rows: np.ndarray
) -> tuple[np.ndarray, ...]:
    """What a detector's scores rest on, for the provenance digest: its spans, format flags and, for a
    run given only some items, which (left out for the others, so their digests stay what they were)."""
    ev = inputs.spans
    found = (*_arrays(predictions), ev.follows_format[label_set_id][rows])
    given = ev.given.get(label_set_id)
    return found if given is None else (*found, given[rows])


def _arrays(packed: PackedSpans) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return packed.starts, packed.ends, packed.offsets


def _label(subset: object) -> str:
    """A subset's name in the table's columns (the pooled "overall" row is the Average)."""
    return AVERAGE if subset == "overall" else str(subset).removeprefix("subset:")


def _subset_names(subsets: np.ndarray) -> list[str]:
    # "overall" is the pooled row of the metrics table; prefix a subset that happens to share the name.
    return [f"subset:{s}" if s == "overall" else str(s) for s in subsets]


def _clean_rows(
    detector: str,
    preds: PackedSpans,
    gold: PackedSpans,
    ok: np.ndarray,
    subsets: np.ndarray,
) -> list[dict[str, object]]:
    clean = gold.counts == 0
    rows = []
    groups = [*dict.fromkeys(subsets[clean].tolist()), ALL_CLEAN]
    for subset in groups:
        members = clean if subset == ALL_CLEAN else clean & (subsets == subset)
        idx = np.flatnonzero(members)
        if idx.size == 0:
            continue
        accuracy = clean_response_accuracy(preds.take(idx), gold.take(idx), ok[idx])
        rows.append(
            {"detector": detector, "subset": subset, "n_clean": int(idx.size), "accuracy": accuracy * 100}
        )
    return rows
