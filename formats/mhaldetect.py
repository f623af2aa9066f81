"""M-HalDetect (original release): responses with labelled character-offset segments.

``{question, response, image, annotations: [{start, end, text, label}]}`` with offsets into ``response``
and labels ``ACCURATE``, ``INACCURATE``, ``ANALYSIS`` (and ``UNSURE``). Segments are usually whole
sentences, so they become the item's sentences with gold sentence labels (INACCURATE → incorrect,
ACCURATE → correct, ANALYSIS and UNSURE → unknown, the original label kept on the label); every
INACCURATE segment is also a gold span. A segment whose text is not the response at its offsets, or
that overlaps another, rejects the record: it cannot be placed exactly.
"""

from __future__ import annotations

from typing import Any

from formats.bundles import annotations_by_item
from formats.fields import RecordError, get_int, get_list, get_str, storable_object, type_name
from formats.ids import external_id, id_was_int, keys_with_id, written_id
from formats.json_documents import dump_json
from formats.problems import outside
from formats.record_formats import BenchmarkRecordsFormat, Warnings
from formats.records import (
    Annotations,
    Bundle,
    ItemRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SpanRecord,
)
from formats.tables import parquet_columns
from formats.text import head_text, looks_like_json

TO_SENTENCE_LABEL = {
    "ACCURATE": "correct",
    "INACCURATE": "incorrect",
    "ANALYSIS": "unknown",
    "UNSURE": "unknown",
}
FROM_SENTENCE_LABEL = {"correct": "ACCURATE", "incorrect": "INACCURATE", "unknown": "UNSURE"}
KNOWN_KEYS = ("id", "question", "response", "image", "annotations")


def read_record(record: Any, index: int, stem: str) -> tuple[ItemRecord, Annotations]:
    storable_object(record)
    ext, _ = external_id(record, ("id",), f"{stem}-{index}")
    response = get_str(record, "response")
    assert response is not None
    segments = get_list(record, "annotations")
    sentences: list[SentenceRecord] = []
    labels: list[SentenceLabelRecord] = []
    spans: list[SpanRecord] = []
    previous_end = 0
    for k, segment in sorted(enumerate(segments), key=lambda pair: _start_of(pair[1])):
        field = f"annotations[{k}]"
        if not isinstance(segment, dict):
            raise RecordError(field, f"expected an object, got {type_name(segment)}")
        start = get_int(segment.get("start"), f"{field}.start")
        end = get_int(segment.get("end"), f"{field}.end")
        if not 0 <= start < end <= len(response):
            raise RecordError(field, outside(start, end, "the response", len(response)))
        text = segment.get("text")
        if text is not None and text != response[start:end]:
            raise RecordError(
                f"{field}.text",
                f"{text!r} is not the response text at {start}-{end}: {response[start:end]!r}",
            )
        if start < previous_end:
            raise RecordError(field, f"overlaps the previous segment (which ends at {previous_end})")
        previous_end = end
        label = segment.get("label")
        if not isinstance(label, str) or label not in TO_SENTENCE_LABEL:
            raise RecordError(f"{field}.label", f"{label!r} is not one of {', '.join(TO_SENTENCE_LABEL)}")
        meta = {"label": label} if label in ("ANALYSIS", "UNSURE") else {}
        labels.append(SentenceLabelRecord(len(sentences), TO_SENTENCE_LABEL[label], meta=meta))
        sentences.append(SentenceRecord(start, end))
        if label == "INACCURATE":
            spans.append(SpanRecord(start, end))
    item = ItemRecord(
        external_id=ext,
        response=response,
        prompt=get_str(record, "question", required=False) or "",
        image_ref=get_str(record, "image", required=False),
        sentences=sentences,
        meta={
            "fields": {k: v for k, v in record.items() if k not in KNOWN_KEYS},
            "layout": {"keys": keys_with_id(record), "int_id": id_was_int(record)},
        },
    )
    return item, Annotations(item=ext, spans=spans, sentence_labels=labels)


def _start_of(segment: Any) -> int:
    start = segment.get("start") if isinstance(segment, dict) else None
    return start if isinstance(start, int) and not isinstance(start, bool) else -1


class MHalDetectFormat(BenchmarkRecordsFormat):
    name = "mhaldetect"
    holds = ("sentence",)
    title = "M-HalDetect (offset segments)"
    label_kinds = ("sentence", "span")
    extensions = (".json", ".jsonl", ".parquet")
    description = "Records (JSON or Parquet) with response and annotations [{start, end, text, label: ACCURATE|INACCURATE|…}]."

    def sniff(self, data: bytes, filename: str = "") -> float:
        if bytes(data[:4]) == b"PAR1":
            return 0.85 if {"response", "annotations"} <= set(parquet_columns(data)) else 0.0
        head = head_text(data)
        if looks_like_json(data) and '"annotations"' in head and "ACCURATE" in head and '"response"' in head:
            return 0.85
        return 0.0

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        return read_record(record, index, stem)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        by_item = annotations_by_item(bundle)
        records = []
        for item in bundle.items:
            annotations = by_item.get(item.external_id)
            labels = {lab.index: lab for lab in annotations.sentence_labels} if annotations else {}
            segments = []
            for k, sentence in enumerate(item.sentences or []):
                label = labels.get(k)
                if label is None:
                    continue
                name = label.meta.get("label") or FROM_SENTENCE_LABEL[label.label]
                segments.append(
                    {
                        "start": sentence.start,
                        "end": sentence.end,
                        "text": item.response[sentence.start : sentence.end],
                        "label": name,
                    }
                )
            layout = item.meta.get("layout") or {"keys": list(KNOWN_KEYS)}
            fields = item.meta.get("fields") or {}
            values = {
                "id": written_id(item.external_id, layout),
                "question": item.prompt,
                "response": item.response,
                "image": item.image_ref,
                "annotations": segments,
            }
            record = {}
            for key in keys_with_id(layout["keys"]):
                record[key] = fields[key] if key in fields else values.get(key)
            records.append(record)
        return dump_json(records)


FORMAT = MHalDetectFormat()
