"""MHaluBench detector predictions: a label (and a reason) for each stored claim of an item.

``{id, claims: [{claim, label, reason}]}``, or the train shape's parallel lists ``{id, claim_list?,
claim_label | pred_claim_label | ref_claim_label, reason | ref_reason}``, in a JSON list or JSON lines.
Claims are matched to the stored ones by position; when a prediction repeats the claim's text it must
match (up to whitespace). A prediction whose labels are not ``hallucination`` / ``non-hallucination`` or
whose claims do not line up is kept as raw output, reported, and gives no labels.
"""

from __future__ import annotations

import json
from typing import Any

from formats.alignment import norm_ws
from formats.base import KnownItem, ReadOptions
from formats.bundles import detector_outputs, raw_output_json
from formats.fields import RecordError, get_list, type_name
from formats.json_documents import dump_jsonl
from formats.mhalubench import LABELS
from formats.record_formats import PredictionRecordsFormat, Warnings, kept_without
from formats.records import Annotations, Bundle, ClaimLabelRecord, RawOutputRecord
from formats.text import head_text, looks_like_json

LABEL_LIST_KEYS = ("claim_label", "pred_claim_label", "ref_claim_label", "labels")
REASON_LIST_KEYS = ("reason", "reasons", "ref_reason")


def _predictions(record: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The record's predictions as ``[{claim?, label, reason?}]`` and the key they came from."""
    if "claims" in record:
        claims = get_list(record, "claims")
        return "claims", claims
    key = next((k for k in LABEL_LIST_KEYS if k in record), None)
    if key is None:
        raise RecordError("claims", f"missing (give claims, or one of {', '.join(LABEL_LIST_KEYS)})")
    labels = get_list(record, key)
    texts = get_list(record, "claim_list", required=False)
    reasons_key = next((k for k in REASON_LIST_KEYS if k in record), None)
    reasons = get_list(record, reasons_key, required=False) if reasons_key else []
    out = []
    for k, label in enumerate(labels):
        entry: dict[str, Any] = {"label": label}
        if k < len(texts):
            entry["claim"] = texts[k]
        if k < len(reasons):
            reason = reasons[k]
            entry["reason"] = reason.get("reason") if isinstance(reason, dict) else reason
        out.append(entry)
    return key, out


def claim_labels(predictions: list[Any], stored: tuple[str, ...]) -> list[ClaimLabelRecord]:
    """Claim labels of a prediction list; RecordError when it cannot be matched exactly."""
    if len(predictions) != len(stored):
        raise RecordError("claims", f"{len(predictions)} predictions for the item's {len(stored)} claims")
    labels = []
    for k, entry in enumerate(predictions):
        field = f"claims[{k}]"
        if not isinstance(entry, dict):
            raise RecordError(field, f"expected an object, got {type_name(entry)}")
        text = entry.get("claim")
        if text is not None and (not isinstance(text, str) or norm_ws(text) != norm_ws(stored[k])):
            raise RecordError(f"{field}.claim", f"{text!r} is not stored claim {k}: {stored[k]!r}")
        label = entry.get("label", entry.get("prediction"))
        if not isinstance(label, str) or label.strip().lower() not in LABELS:
            raise RecordError(f"{field}.label", f"{label!r} is not hallucination or non-hallucination")
        reason = entry.get("reason")
        if reason is not None and not isinstance(reason, str):
            reason = json.dumps(reason, ensure_ascii=False)
        claim_type = entry.get("type") if isinstance(entry.get("type"), str) else None
        labels.append(ClaimLabelRecord(k, label.strip().lower(), claim_type, reason))
    return labels


class MHaluBenchPredictionsFormat(PredictionRecordsFormat[tuple[str, list[dict[str, Any]]]]):
    name = "mhalubench-predictions"
    holds = ("claim", "output")
    title = "MHaluBench claim predictions (with reasons)"
    source_format = "mhalubench"
    output = "prediction"
    description = "Records {id, claims: [{claim, label, reason}]} (or claim_label / reason lists)."

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if not looks_like_json(data) or "ref_tool_info" in head or '"segments"' in head:
            return 0.0
        if '"claims"' in head and '"label"' in head:
            return 0.6
        if any(f'"{k}"' in head for k in LABEL_LIST_KEYS[:2]):
            return 0.6
        return 0.0

    def record_fields(self, record: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        return _predictions(record)

    def annotate(
        self,
        ext: str,
        record: dict[str, Any],
        fields: tuple[str, list[dict[str, Any]]],
        item: KnownItem,
        options: ReadOptions,
        warnings: Warnings,
    ) -> Annotations:
        predictions = fields[1]
        raw_text = json.dumps(predictions, ensure_ascii=False)
        try:
            labels = claim_labels(predictions, item.claims)
        except RecordError as error:
            return kept_without("labels", ext, raw_text, error, warnings)
        return Annotations(ext, claim_labels=labels, raw_output=RawOutputRecord(raw_text, True))

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows = []
        for item, detected in detector_outputs(bundle):
            claims = raw_output_json(detected)
            if not isinstance(claims, list):
                by_index = {c.index: c for c in detected.claim_labels}
                claims = []
                for k, claim in enumerate(item.claims):
                    entry: dict[str, Any] = {"claim": claim.text}
                    if k in by_index:
                        entry["label"] = by_index[k].label
                        entry["reason"] = by_index[k].reason
                        if by_index[k].type:
                            entry["type"] = by_index[k].type
                    claims.append(entry)
            rows.append({"id": item.external_id, "claims": claims})
        return dump_jsonl(rows)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.claim-predictions.jsonl"


FORMAT = MHaluBenchPredictionsFormat()
