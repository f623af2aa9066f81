"""MHaluBench (claim-level detection): Table 2 at claim and segment level, per task type.

Every claim labelled by both gold and the detector is scored; a segment is hallucinatory when any of
its claims is (section 5.1), so the segment level regroups the same claims. A claim without a segment
number stands alone. Scores are in percent; macro values are plain means over the two classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from analysis.reports.base import Report, Table
from analysis.reports.data import ReportFilter, chosen_detectors, item_mask, items_frame
from analysis.reports.provenance import Provenance, fingerprint
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import claim_labels, claim_rows, dataset_name
from metrics import claim_scores, segment_labels

KEY, TITLE = "mhalubench", "MHaluBench · claim-level detection"
HALLUCINATION = "hallucination"


@dataclass(frozen=True)
class ClaimInputs:
    dataset: str
    items: pd.DataFrame
    label_sets: tuple[LabelSetView, ...]
    claims: pd.DataFrame  # claim_id, item_id, index, segment, source, task_type
    labels: pd.DataFrame  # label_set_id, claim_id, item_id, label, type, reason


def load(engine: Engine, dataset_id: int) -> ClaimInputs:
    return ClaimInputs(
        dataset_name(engine, dataset_id),
        items_frame(engine, dataset_id),
        tuple(list_label_sets(engine, dataset_id)),
        pd.DataFrame(claim_rows(engine, dataset_id)),
        pd.DataFrame(claim_labels(engine, dataset_id)),
    )


def _gold(inputs: ClaimInputs) -> LabelSetView | None:
    return next((v for v in inputs.label_sets if v.kind == "gold"), None)


def available(inputs: ClaimInputs) -> bool:
    gold = _gold(inputs)
    if gold is None or inputs.labels.empty:
        return False
    owners = set(inputs.labels["label_set_id"])
    return gold.id in owners and any(v.kind == "detector" and v.id in owners for v in inputs.label_sets)


def build(inputs: ClaimInputs, flt: ReportFilter) -> Report:
    gold_set = _gold(inputs)
    if gold_set is None or not available(inputs):
        raise ValueError("the dataset has no gold claim labels or no detector claim labels")
    labels = inputs.labels
    owners = set(labels["label_set_id"])
    detectors = [d for d in chosen_detectors(inputs.label_sets, flt) if d.id in owners]
    kept_items = set(inputs.items["item_id"].to_numpy()[item_mask(inputs.items, flt)].tolist())
    gold = labels[labels["label_set_id"] == gold_set.id].set_index("claim_id")
    claims = inputs.claims[
        inputs.claims["item_id"].isin(kept_items) & inputs.claims["claim_id"].isin(gold.index)
    ]
    if flt.types:
        g = gold.loc[claims["claim_id"]]
        keep = (g["label"] != HALLUCINATION).to_numpy() | g["type"].isin(flt.types).to_numpy()
        claims = claims[keep]
    # A claim is scored with its segment's other claims, or alone when it belongs to none.
    segment_keys = [
        (item, "segment", seg) if seg is not None and not pd.isna(seg) else (item, "claim", claim)
        for item, seg, claim in zip(claims["item_id"], claims["segment"], claims["claim_id"], strict=True)
    ]
    claims = claims.assign(
        gold=gold.loc[claims["claim_id"], "label"].to_numpy(),
        segment_key=pd.Series(segment_keys, index=claims.index, dtype=object),
    )
    predictions = {
        d.name: labels[labels["label_set_id"] == d.id].set_index("claim_id")["label"] for d in detectors
    }
    provenance = Provenance(
        dataset=inputs.dataset,
        label_sets=("gold", *(d.name for d in detectors)),
        n_items=int(claims["item_id"].nunique()),
        digest=fingerprint(
            claims["claim_id"].to_numpy(),
            claims["gold"].tolist(),
            {
                name: pred.reindex(claims["claim_id"]).fillna("").tolist()
                for name, pred in predictions.items()
            },
        ),
        filters=flt.describe(),
        partial=_partial_runs(claims["claim_id"], predictions),
    )
    rows = []
    for task in sorted(claims["task_type"].unique(), key=lambda t: (t != "image-to-text", t)):
        in_task = claims[claims["task_type"] == task]
        for name, pred in predictions.items():
            both = in_task[in_task["claim_id"].isin(pred.index)]
            if both.empty:
                continue
            predicted = pred.loc[both["claim_id"]].to_numpy()
            rows.append(_row(task, name, "Claim", both["gold"].tolist(), predicted.tolist()))
            segments = pd.DataFrame(
                {"key": both["segment_key"].to_numpy(), "gold": both["gold"], "pred": predicted}
            )
            grouped = segments.groupby("key", sort=False)
            rows.append(
                _row(
                    task,
                    name,
                    "Segment",
                    segment_labels([list(v) for _, v in grouped["gold"]]),
                    segment_labels([list(v) for _, v in grouped["pred"]]),
                )
            )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return Report(KEY, TITLE, provenance, notes=("No claim matches the filters.",))
    return Report(
        KEY,
        TITLE,
        provenance,
        tables={
            "table2": Table(
                "table2",
                "Table 2 · hallucinatory / non-hallucinatory P, R, F1, accuracy and macro scores (%)",
                frame,
                caption="Claims labelled by both gold and the detector; a segment is hallucinatory if any of its claims is.",
            )
        },
    )


def _partial_runs(claim_ids: pd.Series, predictions: dict[str, pd.Series]) -> tuple[tuple[str, str], ...]:
    """``(detector, "9 of 12 claims")`` for each run that labelled only some of the kept claims: its
    scores count those only, so a figure names it beside the runs that labelled them all."""
    total = len(claim_ids)
    labelled = {name: int(claim_ids.isin(pred.index).sum()) for name, pred in predictions.items()}
    return tuple((name, f"{n:,} of {total:,} claims") for name, n in labelled.items() if 0 < n < total)


def _row(task: str, detector: str, level: str, gold: list[str], pred: list[str]) -> dict[str, object]:
    scores = claim_scores(gold, pred)
    h, n = scores["hallucination"], scores["non-hallucination"]
    return {
        "task": task,
        "detector": detector,
        "level": level,
        "n": len(gold),
        "Hallucinatory · P": h["precision"] * 100,
        "Hallucinatory · R": h["recall"] * 100,
        "Hallucinatory · F1": h["f1"] * 100,
        "Non-hallucinatory · P": n["precision"] * 100,
        "Non-hallucinatory · R": n["recall"] * 100,
        "Non-hallucinatory · F1": n["f1"] * 100,
        "Acc.": scores["accuracy"] * 100,
        "Macro P": scores["macro_precision"] * 100,
        "Macro R": scores["macro_recall"] * 100,
        "Macro F1": scores["macro_f1"] * 100,
    }
