"""Detector outputs as word-index spans: ``{id, spans: [{start, end, text}]}`` (end exclusive).

Words are the maximal runs of non-whitespace characters of the stored response, numbered from 0 (the
metrics contract's tokens). A span becomes the characters from its first word's start to its last word's
end. When a span carries ``text``, it must be those words (up to whitespace); a span that cannot be placed
exactly is reported and the output kept without spans (its format not followed), never dropped.

A run is written back as it was read: each output as it came, when it reads back as the same spans and
the same output. Any other run — its outputs in another format's shape, or its spans not of whole words —
is written as the word-index spans of its spans: a span inside a word is widened to the whole word, the
outputs are not in the file, an output that failed its format is written as its text (so it reads back
failed still) and span types are dropped. The export lists each of these (:func:`written_output`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from typing import Any

from formats.alignment import norm_ws
from formats.base import KnownItem, ReadOptions
from formats.bundles import detector_outputs, raw_output_json
from formats.fields import RecordError, get_int, type_name
from formats.json_documents import dump_jsonl
from formats.mhalo_outputs import OUTPUT_KEYS, RECORD_KEY
from formats.record_formats import PredictionRecordsFormat, Warnings, kept_without
from formats.records import Annotations, Bundle, LabelSetRecord, RawOutputRecord, SpanRecord
from formats.text import head_text, looks_like_json

SPAN_KEYS = ("spans", "prediction", "predictions", "hallucination_spans", "value")
_WORD = re.compile(r"\S+")
# Keys word-index spans are read from that MHALO outputs are not (``prediction`` and ``value`` are
# both's), and the keys only MHALO outputs are read from.
_OWN_KEYS = set(SPAN_KEYS) - set(OUTPUT_KEYS)
_OUTPUT_KEYS = set(OUTPUT_KEYS) - set(SPAN_KEYS)


def _span_key(record: dict[str, Any]) -> str:
    """The key a record's spans are under."""
    key = next((k for k in SPAN_KEYS if k in record), None)
    if key is None:
        raise RecordError("spans", "missing")
    return key


def words_of(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _WORD.finditer(text)]


def place_words(spans: Any, response: str) -> list[tuple[int, int]]:
    """Character spans of a list of word-index spans; RecordError for the first that cannot be placed."""
    if not isinstance(spans, list):
        raise RecordError("spans", f"expected a list, got {type_name(spans)}")
    words = words_of(response)
    placed = []
    for k, span in enumerate(spans):
        field = f"spans[{k}]"
        if isinstance(span, list | tuple) and len(span) == 2:
            span = {"start": span[0], "end": span[1]}
        if not isinstance(span, dict):
            raise RecordError(field, f"expected {{start, end, text}}, got {type_name(span)}")
        start, end = (
            get_int(span.get("start"), f"{field}.start"),
            get_int(span.get("end"), f"{field}.end"),
        )
        if start < 0 or end < 0:  # "words -1-0" read as a range from 1 to 0
            raise RecordError(
                field, f"start {start}, end {end}: a word index is negative (words count from 0)"
            )
        if start >= end:
            kind = "an empty" if start == end else "a reversed"
            raise RecordError(
                field,
                f"start {start}, end {end}: {kind} range (end is one past the last word, so after start)",
            )
        if end > len(words):
            raise RecordError(field, f"words {start}-{end} outside the response's {len(words)} words")
        first, last = words[start][0], words[end - 1][1]
        text = span.get("text")
        if text is not None and (not isinstance(text, str) or norm_ws(text) != norm_ws(response[first:last])):
            raise RecordError(
                f"{field}.text", f"{text!r} is not words {start}-{end}: {response[first:last]!r}"
            )
        placed.append((first, last))
    return placed


def word_spans(response: str, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """The inverse: word-index spans (with their text) of character spans."""
    from metrics import token_spans

    out = []
    words = words_of(response)
    for start, end in token_spans(response, spans):
        out.append({"start": start, "end": end, "text": response[words[start][0] : words[end - 1][1]]})
    return out


def read_output(ext: str, value: Any, response: str, warnings: Warnings) -> Annotations:
    """A record's spans value as the detector's annotations of ``response``: its spans and the value as
    the raw output, or, when it cannot be placed, the raw output alone (not following the format)."""
    raw_text = json.dumps(value, ensure_ascii=False)
    try:
        spans = place_words(value, response)
    except RecordError as error:
        return kept_without("spans", ext, raw_text, error, warnings)
    return Annotations(ext, [SpanRecord(s, e) for s, e in spans], raw_output=RawOutputRecord(raw_text, True))


_NOT_JSON = object()


def _placed(spans: list[SpanRecord]) -> list[tuple[int, int, str | None, str | None]]:
    return sorted((s.start, s.end, s.type, s.note) for s in spans)


def written_output(response: str, detected: Annotations) -> tuple[Any, Counter[str]]:
    """The ``spans`` value a record holds for a detector's annotations of ``response``, and what reads
    back otherwise than they say, as :meth:`~formats.base.Format.changed_in_writing` counts it (but for
    their types, which no word-index span has: the base class counts those). The caller must not change
    what it is given: an export asks twice for each item, to list what changes and to write it, and the
    second answer is the first one, kept (reading each output back is most of the writer's time)."""
    raw = detected.raw_output
    spans = tuple((s.start, s.end, s.type, s.note) for s in detected.spans)
    fields = (raw.text, raw.follows_format, raw.analysis, raw.parse_error) if raw is not None else None
    return _written_output(detected.item, response, spans, fields)


@lru_cache(maxsize=4_096)  # more than an export's batch (2,000 items): each is asked again once counted
def _written_output(
    ext: str,
    response: str,
    spans: tuple[tuple[int, int, str | None, str | None], ...],
    raw_fields: tuple[Any, ...] | None,
) -> tuple[Any, Counter[str]]:
    raw = RawOutputRecord(*raw_fields) if raw_fields is not None else None
    value = raw_output_json(Annotations(ext, raw_output=raw), _NOT_JSON)
    if raw is not None and value is not _NOT_JSON:
        back = read_output(ext, value, response, [])
        if back.raw_output == raw and _placed(back.spans) == sorted(spans):
            return value, Counter()  # the output as it came
    if raw is not None and not raw.follows_format:
        return raw.text, Counter(
            ["outputs that failed their format are written as their text (read back, they fail still)"]
        )
    value = word_spans(response, [(start, end) for start, end, _, _ in spans])
    changed: Counter[str] = Counter()
    if raw is not None:
        changed["raw outputs are replaced by the word-index spans of their spans"] += 1
    back_spans = {(s.start, s.end) for s in read_output(ext, value, response, []).spans}
    changed["spans are widened to whole words"] += sum(
        (start, end) not in back_spans for start, end, _, _ in spans
    )
    return value, +changed


class WordIndexFormat(PredictionRecordsFormat[str]):
    name = "word-index"
    holds = ("span", "output")  # an output that could not be read is written back as it came
    holds_span_types = False
    title = "Word-index spans (JSON list of {start, end, text})"
    source_format = "word-index"
    description = (
        "Records {id, spans: [{start, end, text}]} with word indices into the response (end exclusive)."
    )

    def sniff(self, data: bytes, filename: str = "") -> float:
        """Records under a key only this format reads spans from (``spans``), beside no key an MHALO
        output is read from, are its own whatever their values hold: an output that failed its format
        is written back here as its text, and that text may be an MHALO output (``<Tagged_Text>…``),
        which alone sent the whole file to the MHALO reader, where no record has an output."""
        head = head_text(data)
        if not looks_like_json(data):
            return 0.0
        keys = set(RECORD_KEY.findall(head))
        if keys & _OWN_KEYS and not keys & _OUTPUT_KEYS:
            return 0.95
        if '"start"' in head and '"end"' in head and "Tagged_Text" not in head:
            return 0.5 if any(f'"{k}"' in head for k in SPAN_KEYS) else 0.2
        return 0.0

    def record_fields(self, record: dict[str, Any]) -> str:
        return _span_key(record)

    def annotate(
        self,
        ext: str,
        record: dict[str, Any],
        key: str,
        item: KnownItem,
        options: ReadOptions,
        warnings: Warnings,
    ) -> Annotations:
        return read_output(ext, record[key], item.response, warnings)

    def changed_in_writing(self, batch: Bundle, label_set: LabelSetRecord) -> Counter[str]:
        by_item = {a.item: a for a in label_set.annotations}
        changed = super().changed_in_writing(batch, label_set)  # the span types
        for item in batch.items:
            if item.external_id in by_item:
                changed += written_output(item.response, by_item[item.external_id])[1]
        return changed

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows = [
            {"id": item.external_id, "spans": written_output(item.response, detected)[0]}
            for item, detected in detector_outputs(bundle)
        ]
        return dump_jsonl(rows)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.word-spans.jsonl"


FORMAT = WordIndexFormat()
