"""Spanlight metrics: the published definitions, as pure functions on plain Python and numpy inputs.

Modules are grouped by family (as in scikit-learn's ``sklearn.metrics``) and everything public is
re-exported here, so callers write ``from metrics import f1_iou``. The names of the metrics contract
come first; the rest is what the app's pages build their tables and charts from.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from metrics.aggregate import aggregate_spans, clean_response_accuracy, span_detection_table
    from metrics.agreement import (
        cohen_kappa,
        cohen_table,
        fleiss_kappa,
        krippendorff_alpha,
        observed_agreement,
        spans_to_unit_labels,
    )
    from metrics.bootstrap import bootstrap_ci, bootstrap_indices, percentile_interval
    from metrics.calibration import ace, calibration_by_label, ece, reliability_diagram
    from metrics.claims import claim_scores, segment_labels
    from metrics.correlation import correlations
    from metrics.localization import localization_precision, mean_iou
    from metrics.matching import MatchedPair, SpanMatching, match_spans, span_iou
    from metrics.ranking import AurocTable, auroc, auroc_by_group, auroc_table
    from metrics.response_scores import HALLUCINATION_BELOW, exact_agreement, response_score_summary
    from metrics.span_batches import (
        DEFAULT_CURVE_THRESHOLDS,
        PackedSpans,
        f1_iou_curve,
        f1_iou_per_item,
        f1_m_per_item,
        pack_spans,
    )
    from metrics.span_types import f1_iou_by_type
    from metrics.spans import f1_iou, f1_m
    from metrics.tagged_text import follows_format, parse_tagged, token_offsets, token_spans
    from metrics.triplets import hallu_rates

# The names above by the module that defines them. Each module is imported when one of its names is
# first used: a caller of one pure-Python function (``formats`` parses tagged text) does not load numpy
# and the rest of the package with it, a tenth of a second of every command that reads or writes a file.
_EXPORTS = {
    "aggregate": ("aggregate_spans", "clean_response_accuracy", "span_detection_table"),
    "agreement": (
        "cohen_kappa",
        "cohen_table",
        "fleiss_kappa",
        "krippendorff_alpha",
        "observed_agreement",
        "spans_to_unit_labels",
    ),
    "bootstrap": ("bootstrap_ci", "bootstrap_indices", "percentile_interval"),
    "calibration": ("ace", "calibration_by_label", "ece", "reliability_diagram"),
    "claims": ("claim_scores", "segment_labels"),
    "correlation": ("correlations",),
    "localization": ("localization_precision", "mean_iou"),
    "matching": ("MatchedPair", "SpanMatching", "match_spans", "span_iou"),
    "ranking": ("AurocTable", "auroc", "auroc_by_group", "auroc_table"),
    "response_scores": ("HALLUCINATION_BELOW", "exact_agreement", "response_score_summary"),
    "span_batches": (
        "DEFAULT_CURVE_THRESHOLDS",
        "PackedSpans",
        "f1_iou_curve",
        "f1_iou_per_item",
        "f1_m_per_item",
        "pack_spans",
    ),
    "span_types": ("f1_iou_by_type",),
    "spans": ("f1_iou", "f1_m"),
    "tagged_text": ("follows_format", "parse_tagged", "token_offsets", "token_spans"),
    "triplets": ("hallu_rates",),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    # the metrics contract
    "f1_iou",
    "f1_m",
    "parse_tagged",
    "follows_format",
    "token_spans",
    "auroc",
    "localization_precision",
    "mean_iou",
    "claim_scores",
    "segment_labels",
    "hallu_rates",
    "ece",
    "ace",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    # span detection over many items (MHALO)
    "DEFAULT_CURVE_THRESHOLDS",
    "PackedSpans",
    "pack_spans",
    "span_iou",
    "match_spans",
    "MatchedPair",
    "SpanMatching",
    "token_offsets",
    "f1_iou_per_item",
    "f1_m_per_item",
    "f1_iou_curve",
    "f1_iou_by_type",
    "span_detection_table",
    "aggregate_spans",
    "clean_response_accuracy",
    # sentence-level detection (AlignBench)
    "AurocTable",
    "auroc_by_group",
    "auroc_table",
    # response-level ratings (MMHal-Bench)
    "HALLUCINATION_BELOW",
    "response_score_summary",
    "exact_agreement",
    # calibration (HalLoc)
    "reliability_diagram",
    "calibration_by_label",
    # agreement
    "observed_agreement",
    "cohen_table",
    "spans_to_unit_labels",
    # statistics
    "correlations",
    "bootstrap_ci",
    "bootstrap_indices",
    "percentile_interval",
]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'metrics' has no attribute {name!r}")
    value = getattr(import_module(f"metrics.{module}"), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
