"""Claim- and segment-level detection scores (MHaluBench / UniHD, section 5.1 and Table 2).

MHaluBench labels each claim of a response "hallucination" or "non-hallucination". Table 2 reports, for
each of the two classes, precision, recall and F1, then accuracy and the macro averages: the macro
F1 is the plain mean of the two per-class F1 (e.g. GPT-4V UniHD segment row: (79.60 + 68.10) / 2 =
73.85), not the harmonic mean of the macro precision and recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metrics._validation import as_list

HALLUCINATION = "hallucination"
NON_HALLUCINATION = "non-hallucination"
CLAIM_LABELS = (HALLUCINATION, NON_HALLUCINATION)


def _check_labels(values: Sequence[str], what: str) -> list[str]:
    labels = as_list(values, what)
    for i, label in enumerate(labels):
        if label not in CLAIM_LABELS:
            raise ValueError(f"{what}[{i}] must be {HALLUCINATION!r} or {NON_HALLUCINATION!r}, got {label!r}")
    return labels


def claim_scores(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Per-class precision/recall/F1, accuracy and macro averages (MHaluBench section 5.1, Table 2).

    For class ``c``: ``precision = |pred = c and gold = c| / |pred = c|`` (0 when ``c`` is never
    predicted), ``recall = |pred = c and gold = c| / |gold = c|`` (0 when ``c`` never occurs in gold),
    ``f1 = 2pr / (p + r)`` (0 when ``p + r = 0``). ``accuracy`` is the share of equal labels; the macro
    values are plain means over the two classes.

    Returns ``{"hallucination": {"precision", "recall", "f1"}, "non-hallucination": {...},
    "accuracy", "macro_precision", "macro_recall", "macro_f1"}``.
    """
    gold_labels = _check_labels(gold, "gold")
    pred_labels = _check_labels(pred, "pred")
    if len(gold_labels) != len(pred_labels):
        raise ValueError(
            f"gold and pred must have the same length, got {len(gold_labels)} and {len(pred_labels)}"
        )
    if not gold_labels:
        raise ValueError("no claims to score")
    result: dict[str, Any] = {}
    for cls in CLAIM_LABELS:
        tp = sum(1 for g, p in zip(gold_labels, pred_labels, strict=True) if g == cls and p == cls)
        n_pred = pred_labels.count(cls)
        n_gold = gold_labels.count(cls)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        result[cls] = {"precision": precision, "recall": recall, "f1": f1}
    agree = sum(1 for g, p in zip(gold_labels, pred_labels, strict=True) if g == p)
    result["accuracy"] = agree / len(gold_labels)
    for key in ("precision", "recall", "f1"):
        result[f"macro_{key}"] = (result[HALLUCINATION][key] + result[NON_HALLUCINATION][key]) / 2
    return result


def segment_labels(claim_labels_by_segment: Sequence[Sequence[str]]) -> list[str]:
    """Label of each segment from the labels of its claims (MHaluBench section 5.1).

    A segment is "hallucination" if any of its claims is, else "non-hallucination" (also when it has
    no claims: nothing in it was found to be wrong).
    """
    segments = as_list(claim_labels_by_segment, "claim_labels_by_segment")
    result = []
    for i, claims in enumerate(segments):
        labels = _check_labels(claims, f"claim_labels_by_segment[{i}]")
        result.append(HALLUCINATION if HALLUCINATION in labels else NON_HALLUCINATION)
    return result
