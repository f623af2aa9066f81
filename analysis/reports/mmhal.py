"""MMHal-Bench (response-level ratings): average score overall and per question type, hallucination rate.

Every label set that rated whole responses is a rater: gold, annotators, and judges (detector label
sets, filtered like detectors). Following MMHal-Bench (Sun et al., 2023), a rater's responses are
summarised by their average rating (0-6) overall and per question type (the item's subset), and by
the hallucination rate, the share of responses rated below 3 (:mod:`metrics.response_scores`); rows
are per answering model (the item's source model) when the dataset has several. That cut belongs to
the 0-6 scale, so a label set on another scale gets averages but no rate.

When gold ratings exist, every other rater is held against them on the responses both rated: Pearson
and Spearman correlation of the scores (with bootstrap intervals), the share of equal scores, and the
share of equal hallucination flags (a rater who gave no flag is read by MMHal's rule: rated below 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.reports.base import Report, Table
from analysis.reports.data import ReportFilter, gold_of, item_mask, items_frame
from analysis.reports.provenance import Provenance, fingerprint
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import dataset_name, response_scores
from formats.records import RESPONSE_SCALE
from metrics import HALLUCINATION_BELOW, correlations, exact_agreement, response_score_summary

KEY, TITLE = "mmhal", "MMHal-Bench · response ratings"
ALL_MODELS = "All models"
OVERALL, RATE = "Overall score", "Hallucination rate (%)"


@dataclass(frozen=True)
class ResponseScoreInputs:
    dataset: str
    items: pd.DataFrame
    label_sets: tuple[LabelSetView, ...]
    scores: pd.DataFrame  # label_set_id, item_id, score, scale_min, scale_max, hallucination


def load(engine: Engine, dataset_id: int) -> ResponseScoreInputs:
    return ResponseScoreInputs(
        dataset_name(engine, dataset_id),
        items_frame(engine, dataset_id),
        tuple(list_label_sets(engine, dataset_id)),
        pd.DataFrame(response_scores(engine, dataset_id)),
    )


def available(inputs: ResponseScoreInputs) -> bool:
    return not inputs.scores.empty


def raters(inputs: ResponseScoreInputs, flt: ReportFilter) -> list[LabelSetView]:
    """The label sets that rated responses, gold first; judges (detectors) as the filter keeps them."""
    owners = set(inputs.scores["label_set_id"]) if not inputs.scores.empty else set()
    return [
        v
        for v in inputs.label_sets
        if v.id in owners and (v.kind != "detector" or flt.keeps_detector(v.name))
    ]


def _name(rater: LabelSetView) -> str:
    return "gold" if rater.kind == "gold" else rater.name


def build(inputs: ResponseScoreInputs, flt: ReportFilter, n_resamples: int = 1000) -> Report:
    if not available(inputs):
        raise ValueError("the dataset has no response scores")
    info = inputs.items[item_mask(inputs.items, flt)].set_index("item_id")
    scored = inputs.scores[inputs.scores["item_id"].isin(info.index)]
    chosen = raters(inputs, flt)
    scored = scored[scored["label_set_id"].isin([r.id for r in chosen])].assign(
        question_type=lambda f: info.loc[f["item_id"], "subset"].to_numpy(),
        source_model=lambda f: info.loc[f["item_id"], "source_model"].to_numpy(),
    )
    provenance = Provenance(
        dataset=inputs.dataset,
        label_sets=tuple(_name(r) for r in chosen),
        n_items=int(scored["item_id"].nunique()),
        digest=fingerprint(
            scored[["label_set_id", "item_id", "score", "scale_min", "scale_max"]].to_numpy(dtype=float),
            scored["hallucination"].astype(str).tolist(),
        ),
        filters=flt.describe(),
    )
    if scored.empty:
        return Report(KEY, TITLE, provenance, notes=("No response score matches the filters.",))
    types = list(dict.fromkeys(info["subset"][info.index.isin(scored["item_id"])]))
    rows = []
    off_scale = []
    for rater in chosen:
        mine = scored[scored["label_set_id"] == rater.id]
        if mine.empty:
            continue
        on_mmhal = {(int(a), int(b)) for a, b in zip(mine["scale_min"], mine["scale_max"], strict=True)} == {
            RESPONSE_SCALE
        }
        if not on_mmhal:
            off_scale.append(_name(rater))
        models = sorted(mine["source_model"].unique())
        for model in [*models, ALL_MODELS] if len(models) > 1 else models:
            part = mine if model == ALL_MODELS else mine[mine["source_model"] == model]
            rows.append(_row(rater, model, part, types, on_mmhal))
    tables = {
        "scores": Table(
            "scores",
            "Average score (0-6) overall and per question type, and hallucination rate",
            pd.DataFrame(rows),
            caption=(
                "MMHal-Bench's measures per rater: the average rating of the responses, overall and per "
                f"question type, and the share of responses rated below {HALLUCINATION_BELOW:g} "
                "(hallucination rate, lower is better)."
            ),
        )
    }
    against = _against_gold(scored, chosen, n_resamples)
    if not against.empty:
        tables["agreement"] = Table(
            "agreement",
            "Raters against gold on the same responses",
            against,
            caption=(
                f"Pearson and Spearman correlation of the scores ({_interval(n_resamples)}), equal scores, "
                f"and equal hallucination flags (no flag given: rated below {HALLUCINATION_BELOW:g})."
            ),
            mark_columns=("Pearson r", "Spearman ρ", "Hallucination flag match (%)"),
        )
    notes = (
        (f"Not on MMHal-Bench's 0-6 scale, so no hallucination rate: {', '.join(off_scale)}.",)
        if off_scale
        else ()
    )
    return Report(KEY, TITLE, provenance, tables=tables, notes=notes)


def _row(
    rater: LabelSetView, model: str, part: pd.DataFrame, types: list[str], on_mmhal: bool
) -> dict[str, object]:
    summary = response_score_summary(part["score"].to_numpy(dtype=float), part["question_type"].tolist())
    row: dict[str, object] = {
        "rater": _name(rater),
        "kind": rater.kind,
        "model": model,
        "responses": summary["n"],
        OVERALL: summary["average"],
        RATE: 100 * summary["hallucination_rate"] if on_mmhal else math.nan,
    }
    for question_type in types:
        found = summary["by_group"].get(question_type)
        row[question_type] = found["average"] if found else math.nan
    return row


def _flags(flags: pd.Series, scores: pd.Series) -> list[bool]:
    """Each response's hallucination flag: as given, else MMHal's reading of its score."""
    return [
        bool(flag) if flag is not None and not pd.isna(flag) else bool(score < HALLUCINATION_BELOW)
        for flag, score in zip(flags, scores, strict=True)
    ]


def _interval(n_resamples: int) -> str:
    return f"bootstrap 95 % intervals, {n_resamples:,} resamples" if n_resamples else "no intervals"


def _against_gold(scored: pd.DataFrame, chosen: list[LabelSetView], n_resamples: int) -> pd.DataFrame:
    gold = gold_of(chosen)
    if gold is None:
        return pd.DataFrame()
    reference = scored[scored["label_set_id"] == gold.id]
    rows = []
    for rater in chosen:
        if rater.id == gold.id:
            continue
        both = reference.merge(
            scored[scored["label_set_id"] == rater.id], on="item_id", suffixes=("_g", "_r")
        )
        if both.empty:
            continue
        truth, said = both["score_g"].to_numpy(dtype=float), both["score_r"].to_numpy(dtype=float)
        gold_flags = _flags(both["hallucination_g"], both["score_g"])
        rater_flags = _flags(both["hallucination_r"], both["score_r"])
        row: dict[str, object] = {
            "rater": _name(rater),
            "kind": rater.kind,
            "responses": len(both),
            "Pearson r": math.nan,
            "Pearson low": math.nan,
            "Pearson high": math.nan,
            "Spearman ρ": math.nan,
            "Score match (%)": 100 * exact_agreement(truth.tolist(), said.tolist()),
            "Hallucination flag match (%)": 100 * exact_agreement(gold_flags, rater_flags),
            "Average − gold average": float(np.mean(said) - np.mean(truth)),
        }
        try:
            found = correlations(said, truth, n_resamples=max(n_resamples, 1))
        except ValueError:  # fewer than 3 responses, or one side constant: no correlation
            found = None
        if found is not None:
            row["Pearson r"], row["Spearman ρ"] = found["pearson"]["r"], found["spearman"]["r"]
            if n_resamples:
                row["Pearson low"], row["Pearson high"] = found["pearson"]["low"], found["pearson"]["high"]
        rows.append(row)
    return pd.DataFrame(rows)
