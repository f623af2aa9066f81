"""RAGTruth-style span files: responses with their hallucinated character spans, typed, one per line.

RAGTruth's ``response.jsonl`` holds one object per response: ``id``, ``source_id``, ``model``,
``temperature``, ``labels`` (``[{start, end, text, meta, label_type, implicit_true, due_to_null}]``),
``split``, ``quality`` and ``response``. Any file of that shape — a ``response`` and ``labels`` of character
spans, in JSON lines or a JSON list — is read alike, with ``prompt`` (or ``question``/``query``),
``task_type`` and an image (``image``/``image_path``) where a record has them. Items without an image are
text-only: a retrieval-augmented answer has none.

* A label is ``[start, end)`` into ``response``. Its offsets must lie inside the response and its ``text``
  (when given) must be exactly ``response[start:end]``, or the record is rejected naming the label and
  field: a file whose offsets are off by one must not shift every span silently.
* ``label_type`` is the span's type (RAGTruth's Evident/Subtle Conflict and Evident/Subtle Baseless Info,
  or any other name a file uses); ``meta``, the annotator's comment, is its note.
* A label marked ``implicit_true`` (RAGTruth: the span is right although the source does not say it) is no
  hallucination: it is not imported as a span, stays with the item for the export, and is reported.
* ``task_type`` (QA, Data2txt, Summary) is the item's subset, ``model`` its source model, ``split`` its
  split.

The rest of a record (``source_id``, ``temperature``, ``quality``…) and of each label (``due_to_null``…)
stays in the item's meta, so an export writes each record back as it came, its labels as the gold spans
are now: a label whose span is still stored is written as it was (with the span's current note), a span
added in the app is appended with its type and note, and a deleted one is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from formats.bundles import annotations_by_item
from formats.fields import RecordError, get_first_str, get_int, get_list, get_str, storable_object, type_name
from formats.ids import external_id, id_was_int, keys_with_id, written_id
from formats.json_documents import dump_jsonl
from formats.problems import outside
from formats.record_formats import BenchmarkRecordsFormat, Warnings
from formats.records import Annotations, Bundle, ItemRecord, SpanRecord
from formats.text import head_text, looks_like_json

RESPONSE, LABELS = "response", "labels"
PROMPT_KEYS = ("prompt", "question", "query")
IMAGE_KEYS = ("image", "image_path")
COLUMNS = {"model": "source_model", "split": "split", "task_type": "subset"}
# RAGTruth's four hallucination types (its paper, section 3.3).
TYPES = ("Evident Conflict", "Subtle Conflict", "Evident Baseless Info", "Subtle Baseless Info")


def read_label(label: Any, k: int, response: str) -> SpanRecord | None:
    """The span a label marks, or None for a label marked ``implicit_true``; RecordError when misplaced."""
    field = f"{LABELS}[{k}]"
    if not isinstance(label, dict):
        raise RecordError(field, f"expected an object with start, end and text, got {type_name(label)}")
    start, end = get_int(label.get("start"), f"{field}.start"), get_int(label.get("end"), f"{field}.end")
    if not 0 <= start < end <= len(response):
        raise RecordError(field, outside(start, end, "the response", len(response)))
    text = label.get("text")
    if text is not None and text != response[start:end]:
        raise RecordError(
            f"{field}.text", f"{text!r} is not the response's text at {start}-{end}: {response[start:end]!r}"
        )
    span_type = get_str(label, "label_type", required=False)
    note = get_str(label, "meta", required=False)
    if label.get("implicit_true") is True:
        return None
    return SpanRecord(start, end, span_type or None, note)


class RagTruthFormat(BenchmarkRecordsFormat):
    name = "ragtruth"
    title = "RAGTruth-style spans (JSONL)"
    extensions = (".jsonl", ".json")
    holds = ("span",)
    description = (
        "Records {id, response, labels: [{start, end, text, label_type, meta}]} (RAGTruth's response.jsonl)."
    )

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data, 16384)
        if (
            looks_like_json(data)
            and f'"{RESPONSE}"' in head
            and f'"{LABELS}"' in head
            and '"label_type"' in head
        ):
            return 0.85
        return 0.0

    def taxonomy(self, annotations: Sequence[Annotations]) -> Sequence[str]:
        """RAGTruth's four types, then any other the file uses."""
        found = {s.type for a in annotations for s in a.spans if s.type}
        return [*TYPES, *sorted(found - set(TYPES))]

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        storable_object(record)
        ext, _ = external_id(record, ("id",), f"{stem}-{index}")
        response = get_str(record, RESPONSE)
        labels = get_list(record, LABELS)
        read = [read_label(label, k, response) for k, label in enumerate(labels)]
        spans = [span for span in read if span is not None]
        if len(spans) < len(read):
            warnings.append(
                (
                    LABELS,
                    f"{len(read) - len(spans)} label(s) marked implicit_true (right, though the source does not "
                    "say it) are kept with the item, not imported as hallucinated spans",
                )
            )
        prompt_key, prompt = get_first_str(record, PROMPT_KEYS, required=False)
        image_key, image = get_first_str(record, IMAGE_KEYS, required=False)
        columns = {column: get_str(record, key, required=False) for key, column in COLUMNS.items()}
        roles = {"id", RESPONSE, LABELS, prompt_key, image_key, *COLUMNS}
        item = ItemRecord(
            external_id=ext,
            response=response,
            prompt=prompt or "",
            subset=columns["subset"],
            split=columns["split"],
            source_model=columns["source_model"],
            task_type="image-to-text" if image else "text-to-text",
            image_ref=image,
            meta={
                "fields": {k: v for k, v in record.items() if k not in roles},
                "labels": labels,
                "layout": {
                    "keys": keys_with_id(record),
                    "prompt": prompt_key,
                    "image": image_key,
                    "int_id": id_was_int(record),
                },
            },
        )
        return item, Annotations(ext, spans)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        by_item = annotations_by_item(bundle)
        rows = []
        for item in bundle.items:
            annotations = by_item.get(item.external_id)
            layout = item.meta.get("layout") or {}
            fields = item.meta.get("fields") or {}
            values: dict[str, Any] = {
                "id": written_id(item.external_id, layout),
                RESPONSE: item.response,
                LABELS: written_labels(item, annotations.spans if annotations else []),
                layout.get("prompt") or "prompt": item.prompt,
                "model": item.source_model,
                "split": item.split,
                "task_type": item.subset,
            }
            if item.image_ref is not None:
                values[layout.get("image") or "image"] = item.image_ref
            # A dataset read from another format has no RAGTruth layout: its model, split, subset and
            # image go in the fields RAGTruth reads them from (they were left out, and read back as a
            # text-only item of no model).
            given = [k for k in (*COLUMNS, layout.get("image") or "image") if values.get(k) is not None]
            keys = keys_with_id(layout.get("keys") or ("id", "prompt", RESPONSE, LABELS, *given))
            row = {key: values[key] if key in values else fields.get(key) for key in keys}
            rows.append(row)
        return dump_jsonl(rows)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.spans.jsonl"


def written_labels(item: ItemRecord, spans: Sequence[SpanRecord]) -> list[Any]:
    """The item's labels as the file had them, for the spans still stored, then those added since."""
    pending = list(spans)
    written: list[Any] = []
    for label in item.meta.get("labels") or []:
        if not isinstance(label, dict):
            continue
        if label.get("implicit_true") is True:
            written.append(label)
            continue
        span = next(
            (
                s
                for s in pending
                if (s.start, s.end) == (label.get("start"), label.get("end"))
                and (s.type or None) == (label.get("label_type") or None)
            ),
            None,
        )
        if span is None:
            continue
        pending.remove(span)
        written.append({**label, "meta": span.note} if "meta" in label or span.note is not None else label)
    for span in pending:
        written.append(
            {
                "start": span.start,
                "end": span.end,
                "text": item.response[span.start : span.end],
                "meta": span.note,
                "label_type": span.type,
            }
        )
    return written


FORMAT = RagTruthFormat()
