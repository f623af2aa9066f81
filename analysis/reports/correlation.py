"""Automatic metrics against human ratings, item by item (MHALO Figure 4, Tri-HE Table 3).

Human score of an item: each rater's mean over the segments they scored on it, then the mean over
raters (MHALO section 5.1 and appendix B.2). The metrics are those of the rated detector's output on
the same item, in tokens: F1_IoU, F1_M, token accuracy (ACC, the binary token classification MHALO
compares against) and the IoU of the covered tokens; an output that broke the format scores 0.
Items where the detector flagged nothing have no segment to rate: they are left out (as MHALO) or,
on request, scored the top of the scale when that was right (the item is clean) and the bottom when not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.rating_scores import item_means
from analysis.reports.base import Report, Table
from analysis.reports.data import ReportFilter, item_mask
from analysis.reports.provenance import Provenance, fingerprint
from analysis.reports.spans import SpanInputs, load_span_inputs
from db.repositories.report_inputs import rating_scales, ratings
from metrics import correlations, f1_iou_per_item, f1_m_per_item
from metrics.localization import coverage_iou

KEY, TITLE = "correlation", "Metrics against human ratings"
METRICS = {
    "f1_iou": "F1_IoU",
    "f1_m": "F1_M",
    "acc": "ACC (token accuracy)",
    "iou": "IoU of covered tokens",
}
NOTHING_EXCLUDED, NOTHING_SCORED = "exclude", "score"


@dataclass(frozen=True)
class RatingInputs:
    spans: SpanInputs
    ratings: pd.DataFrame
    scales: dict[int, tuple[int, int]]

    def tasks(self) -> list[str]:
        return list(dict.fromkeys(self.ratings["task"])) if not self.ratings.empty else []


def load(engine: Engine, dataset_id: int) -> RatingInputs:
    return RatingInputs(
        load_span_inputs(engine, dataset_id),
        pd.DataFrame(ratings(engine, dataset_id)),
        rating_scales(engine, dataset_id),
    )


def available(inputs: RatingInputs) -> bool:
    return bool(inputs.tasks()) and inputs.spans.spans.gold is not None


def human_scores(inputs: RatingInputs, task: str, nothing_flagged: str = NOTHING_EXCLUDED) -> pd.DataFrame:
    """One row per rated item: ``item_id``, ``human`` (mean over raters of their mean) and ``raters``."""
    rows = inputs.ratings[inputs.ratings["task"] == task]
    if rows.empty:
        return pd.DataFrame(columns=["item_id", "human", "raters"])
    low, high = inputs.scales.get(int(rows["task_id"].iloc[0]), (1, 4))
    score = rows["score"].astype(float)
    if nothing_flagged == NOTHING_SCORED:
        flagged_nothing = score.isna() & rows["nothing_flagged_correct"].notna()
        filled = pd.Series(
            np.where(rows["nothing_flagged_correct"].astype(bool), float(high), float(low)), index=rows.index
        )
        score = score.where(~flagged_nothing, filled)
    scored = rows.assign(score=score).dropna(subset=["score"])
    means = item_means(list(scored["item_id"]), list(scored["rater"]), list(scored["score"]))
    raters = scored.groupby("item_id")["rater"].nunique()
    ids = sorted(means)
    return pd.DataFrame(
        {"item_id": ids, "human": [means[i] for i in ids], "raters": [int(raters[i]) for i in ids]}
    )


def build(
    inputs: RatingInputs,
    flt: ReportFilter,
    task: str | None = None,
    nothing_flagged: str = NOTHING_EXCLUDED,
    n_resamples: int = 1000,
) -> Report:
    if not available(inputs):
        raise ValueError("the dataset has no ratings or no gold spans")
    task = task or inputs.tasks()[0]
    rows = inputs.ratings[inputs.ratings["task"] == task]
    detector_id = int(rows["detector_label_set_id"].iloc[0])
    ev = inputs.spans.spans
    detector = ev.label_set(detector_id)
    items = inputs.spans.items
    # Only items the run was given: on another, the metrics would score an output it never gave.
    given = ev.ran_on(detector_id)
    keep = item_mask(items, flt) & given
    human = human_scores(inputs, task, nothing_flagged)
    position = {item_id: k for k, item_id in enumerate(items["item_id"])}
    not_given = 0 if human.empty else sum(not given[position[i]] for i in human["item_id"])
    human = human[[keep[position[i]] for i in human["item_id"]]] if not human.empty else human
    idx = [position[i] for i in human["item_id"]]
    frame = pd.DataFrame(
        {
            "item_id": human["item_id"].to_numpy(),
            "item": items["external_id"].to_numpy()[idx] if idx else [],
            "subset": items["subset"].to_numpy()[idx] if idx else [],
            "source_model": items["source_model"].to_numpy()[idx] if idx else [],
            "human": human["human"].to_numpy(),
            "raters": human["raters"].to_numpy(),
        }
    )
    if idx:
        for key, values in _metrics(inputs.spans, detector_id, idx).items():
            frame[key] = values
    provenance = Provenance(
        dataset=inputs.spans.dataset,
        label_sets=("gold", detector.name, f"ratings: {task}"),
        n_items=len(frame),
        digest=fingerprint(
            frame.drop(columns=["item", "subset", "source_model"]), nothing_flagged, n_resamples
        ),
        filters=flt.describe(),
    )
    notes = [] if len(frame) >= 3 else ["Correlation needs at least three rated items."]
    if not_given:
        notes.append(f"{not_given} rated items left out: {detector.name} was not given them.")
    table_rows, subset_rows = [], []
    for key, label in METRICS.items():
        if key not in frame:
            continue
        table_rows.extend(_correlate(label, frame[key], frame["human"], n_resamples))
        for subset, part in frame.groupby("subset", sort=True):
            for row in _correlate(label, part[key], part["human"], 0):
                if row["method"] == "Pearson":
                    subset_rows.append({"subset": subset, **row})
    tables = {
        "correlations": Table(
            "correlations",
            f"Correlation with human ratings of {detector.name} ({task})",
            pd.DataFrame(table_rows, columns=["metric", "method", "r", "low", "high", "p_value", "n"]),
            caption=f"Bootstrap 95 % intervals over items ({n_resamples:,} resamples); Kendall is tau-b.",
        ),
        "by_subset": Table(
            "by_subset",
            "Pearson correlation per subset (MHALO Figure 4)",
            pd.DataFrame(
                subset_rows, columns=["subset", "metric", "method", "r", "low", "high", "p_value", "n"]
            ),
        ),
        "items": Table("items", "Rated items: human score and metrics", frame),
    }
    return Report(KEY, TITLE, provenance, tables=tables, notes=tuple(notes))


def _metrics(spans: SpanInputs, detector_id: int, idx: list[int]) -> dict[str, np.ndarray]:
    ev = spans.spans
    preds = [ev.token_spans[detector_id][i] for i in idx]
    golds = [ev.gold_tokens[i] for i in idx]
    ok = ev.follows_format[detector_id][idx]
    acc, iou = [], []
    for i, pred, gold in zip(idx, preds, golds, strict=True):
        n_tokens = len(ev.items.responses[i].split())
        covered_pred, covered_gold = _covered(pred, n_tokens), _covered(gold, n_tokens)
        acc.append(float((covered_pred == covered_gold).mean()) if n_tokens else 1.0)
        iou.append(coverage_iou(pred, gold))
    return {
        "f1_iou": np.where(ok, f1_iou_per_item(preds, golds), 0.0),
        "f1_m": np.where(ok, f1_m_per_item(preds, golds), 0.0),
        "acc": np.where(ok, acc, 0.0),
        "iou": np.where(ok, iou, 0.0),
    }


def _covered(spans: list[tuple[int, int]], n_tokens: int) -> np.ndarray:
    mask = np.zeros(n_tokens, dtype=bool)
    for start, end in spans:
        mask[start:end] = True
    return mask


def _correlate(label: str, metric: pd.Series, human: pd.Series, n_resamples: int) -> list[dict[str, object]]:
    try:
        found = correlations(
            metric.to_numpy(dtype=float),
            human.to_numpy(dtype=float),
            n_resamples=max(n_resamples, 1),
        )
    except ValueError:
        return [
            {
                "metric": label,
                "method": m,
                "r": math.nan,
                "low": math.nan,
                "high": math.nan,
                "p_value": math.nan,
                "n": len(metric),
            }
            for m in ("Pearson", "Spearman", "Kendall")
        ]
    return [
        {
            "metric": label,
            "method": name.capitalize(),
            "r": values["r"],
            "low": values["low"] if n_resamples else math.nan,
            "high": values["high"] if n_resamples else math.nan,
            "p_value": values["p_value"],
            "n": len(metric),
        }
        for name, values in found.items()
    ]
