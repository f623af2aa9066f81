"""MHaluBench: claim labels, in its train shape and its validation shape (JSON list or JSON lines).

* Train: ``{id, image_path, claim_list, ref_claim_label, ref_reason: [{claimN: label, reason}],
  ref_tool_info, ref_prompt}``. There is no response text: the claims, one per line, are the text
  shown, each claim placed at its line.
* Validation: ``{image_path, prompt, response, model, task_type, label, segments: [{segment, label,
  claims: [{claim, label, type}]}]}``. Claims keep their segment; segments found in the response in
  order become its sentences. For text-to-image items the image is the model's output and the claims
  come from the user's prompt (claim source ``prompt``).

Claim labels (with type and reason) form the gold label set. A segment or response label that disagrees
with its claims ("hallucination" if any claim is) is reported as a warning: the claims are the truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from formats import taxonomies
from formats.fields import RecordError, get_first_str, get_list, get_str, storable_object, type_name
from formats.ids import external_id, id_was_int, keys_with_id, written_id
from formats.json_documents import dump_json
from formats.record_formats import BenchmarkRecordsFormat, Warnings
from formats.records import (
    Annotations,
    Bundle,
    ClaimLabelRecord,
    ClaimRecord,
    ItemRecord,
    SentenceRecord,
    pick_label_set,
)
from formats.text import head_text, looks_like_json

LABELS = ("hallucination", "non-hallucination")
TRAIN_KEYS = ("id", "image_path", "claim_list", "ref_claim_label", "ref_reason")
VALIDATION_KEYS = ("id", "image_path", "prompt", "response", "model", "task_type", "label", "segments")
SEGMENT_TEXT_KEYS = ("segment", "segment_text", "text")


def _label(value: Any, field: str) -> str:
    if isinstance(value, str) and value.strip().lower() in LABELS:
        return value.strip().lower()
    raise RecordError(field, f"{value!r} is not hallucination or non-hallucination")


def _any_hallucination(labels: list[str]) -> str:
    return "hallucination" if "hallucination" in labels else "non-hallucination"


def is_text_to_image(task_type: Any) -> bool:
    text = str(task_type or "").lower().replace("_", "-").replace(" ", "-")
    return "text-to-image" in text or text in ("t2i", "text2image")


def read_train(
    record: dict[str, Any], ext: str, layout: dict[str, Any], warnings: list[tuple[str, str]]
) -> tuple[ItemRecord, Annotations]:
    claims_text = get_list(record, "claim_list")
    labels = get_list(record, "ref_claim_label")
    if len(labels) != len(claims_text):
        raise RecordError("ref_claim_label", f"{len(labels)} labels for {len(claims_text)} claims")
    reasons = get_list(record, "ref_reason", required=False)
    if reasons and len(reasons) != len(claims_text):
        raise RecordError("ref_reason", f"{len(reasons)} reasons for {len(claims_text)} claims")
    claims, claim_labels = [], []
    at = 0
    for k, (claim, label) in enumerate(zip(claims_text, labels, strict=True)):
        if not isinstance(claim, str) or not claim.strip() or "\n" in claim:
            raise RecordError(f"claim_list[{k}]", "expected one line of text")
        claims.append(ClaimRecord(claim, at, at + len(claim)))
        at += len(claim) + 1
        reason = None
        if reasons:
            entry = reasons[k]
            if not isinstance(entry, dict):
                raise RecordError(f"ref_reason[{k}]", f"expected an object, got {type_name(entry)}")
            reason = entry.get("reason")
            if reason is not None and not isinstance(reason, str):
                raise RecordError(f"ref_reason[{k}].reason", f"expected text, got {type_name(reason)}")
            said = entry.get(f"claim{k + 1}")
            if said is not None and str(said).strip().lower() != str(label).strip().lower():
                warnings.append(
                    (f"ref_reason[{k}]", f"says {said!r} but ref_claim_label says {label!r}; kept the label")
                )
        claim_labels.append(ClaimLabelRecord(k, _label(label, f"ref_claim_label[{k}]"), reason=reason))
    layout["shape"] = "train"
    item = ItemRecord(
        external_id=ext,
        response="\n".join(claims_text),
        image_ref=get_str(record, "image_path", required=False),
        claims=claims,
        meta={"fields": {k: v for k, v in record.items() if k not in TRAIN_KEYS}, "layout": layout},
    )
    return item, Annotations(item=ext, claim_labels=claim_labels)


def read_validation(
    record: dict[str, Any], ext: str, layout: dict[str, Any], warnings: list[tuple[str, str]]
) -> tuple[ItemRecord, Annotations]:
    response = get_str(record, "response", required=False) or ""
    task_type = record.get("task_type")
    t2i = is_text_to_image(task_type)
    claims, claim_labels, sentences = [], [], []
    at = 0
    placed = True
    segment_keys, segment_texts = [], []
    for s, segment in enumerate(get_list(record, "segments")):
        field = f"segments[{s}]"
        if not isinstance(segment, dict):
            raise RecordError(field, f"expected an object, got {type_name(segment)}")
        key, text = get_first_str(segment, SEGMENT_TEXT_KEYS, required=False)
        segment_keys.append(key)
        segment_texts.append(text)
        inner = get_list(segment, "claims")
        labels_here = []
        for c, claim in enumerate(inner):
            cfield = f"{field}.claims[{c}]"
            if not isinstance(claim, dict):
                raise RecordError(cfield, f"expected an object, got {type_name(claim)}")
            claim_text = get_str(claim, "claim", allow_empty=False)
            label = _label(claim.get("label"), f"{cfield}.label")
            claim_type = get_str(claim, "type", required=False)
            claims.append(
                ClaimRecord(claim_text, segment=s, segment_text=text, source="prompt" if t2i else "response")
            )
            claim_labels.append(ClaimLabelRecord(len(claims) - 1, label, claim_type))
            labels_here.append(label)
        given = segment.get("label")
        if (
            given is not None
            and labels_here
            and _label(given, f"{field}.label") != _any_hallucination(labels_here)
        ):
            warnings.append((f"{field}.label", f"{given!r} disagrees with its claims; the claims are kept"))
        if text and placed and not t2i:
            found = response.find(text, at)
            if found == -1:
                placed = False
            else:
                sentences.append(SentenceRecord(found, found + len(text)))
                at = found + len(text)
    given = record.get("label")
    if given is not None and claim_labels:
        overall = _any_hallucination([c.label for c in claim_labels])
        if _label(given, "label") != overall:
            warnings.append(
                ("label", f"{given!r} disagrees with the claims ({overall}); the claims are kept")
            )
    layout["shape"] = "validation"
    layout["segment_keys"] = segment_keys
    layout["segment_texts"] = segment_texts  # a segment without claims has no claim to carry its text
    layout["segment_labels"] = [
        seg.get("label") if isinstance(seg, dict) else None for seg in record["segments"]
    ]
    item = ItemRecord(
        external_id=ext,
        response=response,
        prompt=get_str(record, "prompt", required=False) or "",
        source_model=get_str(record, "model", required=False),
        task_type="text-to-image" if t2i else "image-to-text",
        image_ref=get_str(record, "image_path", required=False),
        claims=claims,
        sentences=sentences if placed and sentences else None,
        meta={
            "fields": {
                k: v for k, v in record.items() if k not in VALIDATION_KEYS or k in ("task_type", "label")
            },
            "layout": layout,
        },
    )
    return item, Annotations(item=ext, claim_labels=claim_labels)


def read_record(
    record: Any, index: int, stem: str, warnings: list[tuple[str, str]]
) -> tuple[ItemRecord, Annotations]:
    """A train or a validation record, by the keys it has."""
    storable_object(record)
    ext, _ = external_id(record, ("id",), f"{stem}-{index}")
    layout = {"keys": keys_with_id(record), "int_id": id_was_int(record)}
    if "claim_list" in record:
        return read_train(record, ext, layout, warnings)
    if "segments" in record:
        return read_validation(record, ext, layout, warnings)
    raise RecordError("claim_list/segments", "missing: neither a train nor a validation record")


def _segment_texts(item: ItemRecord, layout: dict[str, Any]) -> list[str | None]:
    """The text of each segment of a validation record as it was read. An item imported before its
    layout kept them has them as its sentences, where every segment was placed in the response."""
    if "segment_texts" in layout:
        return list(layout["segment_texts"])
    keys = layout.get("segment_keys") or []
    sentences = item.sentences or []
    if keys and len(sentences) == len(keys):
        return [item.response[s.start : s.end] for s in sentences]
    return []


class MHaluBenchFormat(BenchmarkRecordsFormat):
    name = "mhalubench"
    holds = ("claim",)
    title = "MHaluBench (claims: train and validation shapes)"
    label_kinds = ("claim",)
    extensions = (".json", ".jsonl")
    description = "Train records (claim_list, ref_claim_label) or validation records (segments with claims)."

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if not looks_like_json(data):
            return 0.0
        if "claim_list" in head and "ref_claim_label" in head:
            return 0.9
        if '"segments"' in head and '"claims"' in head and '"claim"' in head:
            return 0.85
        return 0.0

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        return read_record(record, index, stem, warnings)

    def taxonomy(self, annotations: Sequence[Annotations]) -> Sequence[str]:
        return taxonomies.MHALUBENCH

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        gold = pick_label_set(bundle)
        by_item = {a.item: {c.index: c for c in a.claim_labels} for a in gold.annotations} if gold else {}
        return dump_json([self._record(item, by_item.get(item.external_id, {})) for item in bundle.items])

    @staticmethod
    def _record(item: ItemRecord, labels: dict[int, ClaimLabelRecord]) -> dict[str, Any]:
        layout = item.meta.get("layout") or {}
        fields = item.meta.get("fields") or {}
        shape = layout.get("shape") or ("train" if not item.response else "validation")
        values: dict[str, Any] = {"id": written_id(item.external_id, layout), "image_path": item.image_ref}
        if shape == "train":
            keys = layout.get("keys") or list(TRAIN_KEYS)
            said = [labels[k].label if k in labels else None for k in range(len(item.claims))]
            values["claim_list"] = [c.text for c in item.claims]
            values["ref_claim_label"] = said
            values["ref_reason"] = [
                {f"claim{k + 1}": said[k], "reason": labels[k].reason if k in labels else None}
                for k in range(len(item.claims))
            ]
        else:
            keys = layout.get("keys") or [*VALIDATION_KEYS, "segments"]
            segment_keys = layout.get("segment_keys") or []
            segment_labels = layout.get("segment_labels") or []
            segments: dict[int, dict[str, Any]] = {}
            for k, claim in enumerate(item.claims):
                s = claim.segment if claim.segment is not None else k
                if s not in segments:
                    key = segment_keys[s] if s < len(segment_keys) and segment_keys[s] else "segment"
                    segments[s] = {key: claim.segment_text, "label": None, "claims": []}
                label = labels.get(k)
                segments[s]["claims"].append(
                    {
                        "claim": claim.text,
                        "label": label.label if label else None,
                        "type": label.type if label else None,
                    }
                )
            for s, text in enumerate(_segment_texts(item, layout)):
                if s not in segments:  # a segment that holds no claim
                    key = segment_keys[s] if s < len(segment_keys) and segment_keys[s] else "segment"
                    segments[s] = {key: text, "label": None, "claims": []}
            for s, segment in segments.items():
                given = segment_labels[s] if s < len(segment_labels) else None
                derived = [c["label"] for c in segment["claims"] if c["label"]]
                segment["label"] = (
                    given if given is not None else (_any_hallucination(derived) if derived else None)
                )
            values.update(
                prompt=item.prompt,
                response=item.response,
                model=item.source_model,
                task_type=fields.get("task_type", item.task_type),
                label=fields.get("label"),
                segments=[segments[s] for s in sorted(segments)],
            )
        record = {}
        for key in keys_with_id(keys):
            if key in values and key not in ("task_type", "label"):
                record[key] = values[key]
            elif key in fields:
                record[key] = fields[key]
            elif key in values:
                record[key] = values[key]
        return record


FORMAT = MHaluBenchFormat()
