"""HalLoc (token-level calibration): ECE and ACE per detector and per hallucination type, reliability.

A detector gives each token a probability of being hallucinated; a token's truth is whether it overlaps
a gold span. Following the HalLoc supplement (section B) errors are reported in percent, on all tokens
and separately on the positive and negative tokens with their mean ("avg", footnote 3). Per type:
probabilities that carry a type are compared with the gold spans of that type; untyped probabilities
are scored per gold type on the tokens of that type (positives) against the tokens outside every gold
span (negatives), which asks "is the detector calibrated on this kind of hallucination?".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.reports.base import Report, Table
from analysis.reports.data import UNTYPED, ReportFilter, chosen_detectors, item_mask
from analysis.reports.provenance import Provenance, fingerprint
from analysis.reports.spans import SpanInputs, load_span_inputs
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import token_probabilities
from metrics import ace, calibration_by_label, ece, reliability_diagram

KEY, TITLE = "halloc", "HalLoc · calibration of token probabilities"
N_BINS = 10
ALL_TYPES = "all types"


@dataclass(frozen=True)
class TokenInputs:
    spans: SpanInputs
    tokens: pd.DataFrame  # label_set_id, item_id, token_index, start, end, probability, type


def load(engine: Engine, dataset_id: int) -> TokenInputs:
    return TokenInputs(
        load_span_inputs(engine, dataset_id), pd.DataFrame(token_probabilities(engine, dataset_id))
    )


def available(inputs: TokenInputs) -> bool:
    return not inputs.tokens.empty and inputs.spans.spans.gold is not None


def build(inputs: TokenInputs, flt: ReportFilter, n_bins: int = N_BINS) -> Report:
    ev = inputs.spans.spans
    if ev.gold is None or not available(inputs):
        raise ValueError("the dataset has no token probabilities or no gold spans")
    items = inputs.spans.items
    owners = set(inputs.tokens["label_set_id"])
    detectors = [d for d in chosen_detectors(ev.detectors, flt) if d.id in owners]
    kept_items = items["item_id"].to_numpy()[item_mask(items, flt)]
    tokens = inputs.tokens[inputs.tokens["item_id"].isin(kept_items)]
    gold_by_item = {
        item_id: spans
        for item_id, spans in zip(items["item_id"], ev.char_spans[ev.gold.id], strict=True)
        if spans
    }
    positive, types_hit = _gold_labels(tokens, gold_by_item)
    if flt.types:
        other = np.array([bool(t) and not (t & set(flt.types)) for t in types_hit], dtype=bool)
        tokens, positive, types_hit = (
            tokens[~other],
            positive[~other],
            [t for t, o in zip(types_hit, other, strict=True) if not o],
        )
    provenance = Provenance(
        dataset=inputs.spans.dataset,
        label_sets=("gold", *(d.name for d in detectors)),
        n_items=int(tokens["item_id"].nunique()),
        digest=fingerprint(
            tokens[["label_set_id", "item_id", "token_index", "probability"]].to_numpy(dtype=float),
            tokens["type"].astype(str).to_numpy(),
            positive,
            n_bins,
        ),
        filters=flt.describe(),
        partial=_partial_runs(tokens, detectors),
    )
    overall, by_type, bins = [], [], []
    type_sets = np.array(types_hit, dtype=object)
    for detector in detectors:
        mine = (tokens["label_set_id"] == detector.id).to_numpy()
        untyped = mine & tokens["type"].isna().to_numpy()
        if untyped.any():
            p = tokens["probability"].to_numpy()[untyped]
            y = positive[untyped]
            overall.append(_errors(detector.name, p, y, n_bins))
            bins.extend(_bins(detector.name, ALL_TYPES, p, y, n_bins))
            negatives = untyped & ~positive.astype(bool)
            for type_ in sorted({t for s in type_sets[untyped] for t in s}):
                if not flt.keeps_type(type_):
                    continue
                of_type = untyped & np.array([type_ in s for s in type_sets], dtype=bool)
                chosen = of_type | negatives
                by_type.append(
                    {
                        "source": "untyped probabilities",
                        **_by_label(detector.name, type_, tokens, positive, chosen, n_bins),
                    }
                )
                bins.extend(
                    _bins(
                        detector.name,
                        type_,
                        tokens["probability"].to_numpy()[chosen],
                        positive[chosen],
                        n_bins,
                    )
                )
        typed = mine & tokens["type"].notna().to_numpy()
        for type_ in sorted(tokens.loc[typed, "type"].unique()):
            if not flt.keeps_type(type_):
                continue
            chosen = typed & (tokens["type"] == type_).to_numpy()
            truth = np.array([type_ in s for s in type_sets], dtype=np.int8)
            by_type.append(
                {
                    "source": "typed probabilities",
                    **_by_label(detector.name, type_, tokens, truth, chosen, n_bins),
                }
            )
            bins.extend(
                _bins(detector.name, type_, tokens["probability"].to_numpy()[chosen], truth[chosen], n_bins)
            )
    tables = {
        "calibration": Table(
            "calibration",
            "Calibration of token probabilities (%, lower is better)",
            pd.DataFrame(overall),
            caption=f"{n_bins} equal-width bins (ECE) and {n_bins} equal-count groups (ACE); pos / neg restrict to tokens of one true label, avg is their mean.",
            mark_columns=("ECE", "ACE", "ECE avg", "ACE avg"),
            lower_is_better=True,
        ),
        "by_type": Table(
            "by_type",
            "Calibration per hallucination type (%, lower is better)",
            pd.DataFrame(by_type),
        ),
        "reliability": Table(
            "reliability",
            "Reliability diagram: share of hallucinated tokens against the mean probability, per bin",
            pd.DataFrame(bins),
            caption=f"Type '{ALL_TYPES}': every token; a type: its gold tokens against the tokens outside every gold span.",
        ),
    }
    return Report(KEY, TITLE, provenance, tables=tables)


def _bins(detector: str, type_: str, p: np.ndarray, y: np.ndarray, n_bins: int) -> list[dict[str, object]]:
    diagram = reliability_diagram(p, y, n_bins)
    return [
        {
            "detector": detector,
            "type": type_,
            "bin": k,
            "lower": float(diagram["lower"][k]),
            "upper": float(diagram["upper"][k]),
            "count": int(diagram["count"][k]),
            "confidence": float(diagram["confidence"][k]),
            "accuracy": float(diagram["accuracy"][k]),
        }
        for k in range(n_bins)
    ]


def _calibration_columns(p: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, object]:
    """ECE and ACE overall and on positive and negative tokens (HalLoc's pos/neg/avg), in percent."""
    split = calibration_by_label(p, y, n_bins)
    return {
        "ECE": ece(p, y, n_bins) * 100,
        "ACE": ace(p, y, n_bins) * 100,
        **{
            f"{measure.upper()} {short}": split[measure][side] * 100
            for measure in ("ece", "ace")
            for short, side in (("pos", "positive"), ("neg", "negative"), ("avg", "average"))
        },
    }


def _partial_runs(tokens: pd.DataFrame, detectors: list[LabelSetView]) -> tuple[tuple[str, str], ...]:
    """``(detector, "3 of 4 items")`` for each run with token probabilities on only some of the items
    counted (given some, or stopped half way): a figure names it so beside the complete runs."""
    total = int(tokens["item_id"].nunique())
    per_run = tokens.groupby("label_set_id")["item_id"].nunique()
    found = ((d.name, int(per_run.get(d.id, 0))) for d in detectors)
    return tuple((name, f"{n:,} of {total:,} items") for name, n in found if 0 < n < total)


def _errors(detector: str, p: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, object]:
    return {
        "detector": detector,
        "tokens": int(p.size),
        "hallucinated tokens": int(y.sum()),
        **_calibration_columns(p, y, n_bins),
    }


def _by_label(
    detector: str, type_: str, tokens: pd.DataFrame, truth: np.ndarray, chosen: np.ndarray, n_bins: int
) -> dict[str, object]:
    p = tokens["probability"].to_numpy()[chosen]
    y = truth[chosen]
    return {
        "detector": detector,
        "type": type_,
        "positive tokens": int(y.sum()),
        **_calibration_columns(p, y, n_bins),
    }


def _gold_labels(
    tokens: pd.DataFrame, gold_by_item: dict[int, list[tuple[int, int, str | None]]]
) -> tuple[np.ndarray, list[frozenset[str]]]:
    """For every token row: 1 if it overlaps a gold span, and the types of the gold spans it overlaps."""
    positive = np.zeros(len(tokens), dtype=np.int8)
    types: list[frozenset[str]] = [frozenset()] * len(tokens)
    for k, (item_id, start, end) in enumerate(
        zip(tokens["item_id"], tokens["start"], tokens["end"], strict=True)
    ):
        spans = gold_by_item.get(item_id)
        if not spans:
            continue
        hit = frozenset(t or UNTYPED for s, e, t in spans if s < end and e > start)
        if hit:
            positive[k] = 1
            types[k] = hit
    return positive, types
