"""MHALO benchmark files: JSON arrays of responses with hallucinated spans wrapped in inline tags.

A record holds the response twice: ``test_solution`` (plain, what annotators and detectors see) and
``hallucinated_solution`` (the same text with ``<hallucination>…</hallucination>`` around each span).
Spanlight stores ``test_solution`` exactly and places the tag spans on it. The field names vary between
the released files (``prompt``/``question``, ``image_path``/``image``, ``id`` only in some) and the real
files have flaws, each handled on purpose:

* broken tags (``white/hallucination> jersey<``, a stray ``<``, an unclosed or nested tag) reject the
  record with the parser's reason;
* a tag-stripped text that differs from ``test_solution`` only in whitespace is aligned character by
  character ignoring whitespace, imported, and reported as a warning;
* any other difference rejects the record, showing where the texts part;
* ``hallucination_spans`` (M-HalDetect-derived file) must agree with the tags, or the record is rejected.

Fields Spanlight has no column for stay in the item's ``meta`` with the record's key order, so an export
writes each record back as it came — plus an ``id`` first where the source had none: the item's derived
id (``<file stem>-<index>``), which a re-import takes back (see :func:`formats.ids.keys_with_id`).
"""

from __future__ import annotations

import re
from typing import Any

from formats import taxonomies
from formats.alignment import NotACopy, first_difference, spans_on_copy
from formats.base import Format, FormatError, ReadOptions, ReadResult
from formats.bundles import gold_bundle, spans_by_item
from formats.fields import RecordError, get_first_str, get_int, get_list, get_str, storable_object, type_name
from formats.ids import external_id, id_was_int, keys_with_id, written_id
from formats.json_documents import dump_json, load_document
from formats.markers import explain_broken_tags, insert_markers, overlapping
from formats.problems import outside, record_label
from formats.record_loops import benchmark_items
from formats.records import Annotations, Bundle, ItemRecord, SpanRecord
from formats.text import file_stem, head_text, looks_like_json
from metrics.tagged_text import parse_tagged

TAG = "hallucination"
TAGGED = "hallucinated_solution"
RESPONSE = "test_solution"
SPANS = "hallucination_spans"
# Not in the released files, whose subset is their file's name: written by an export to a named file
# where an item's subset is not the one that name gives (a dataset of several subsets in one file, or a
# subset written under another name), so a round trip keeps it.
SUBSET = "subset"
ID_KEYS = ("id",)
PROMPT_KEYS = ("prompt", "question", "query")
IMAGE_KEYS = ("image_path", "image")
REFERENCE_KEYS = ("original_solution", "gt_answer")
# The released files (and the benchmark's other subsets) with the names the MHALO paper's tables give
# them. Keys are file stems without case, "_" or "-": the MathV360K file is ``processed_mathv_360k``.
KNOWN_SUBSETS = {
    "processedmhaldataset": "M-HalDetect",
    "processedgeo170k": "Geo170K",
    "processedtest": "MC",
    "processedrlhfvdataset": "RLHF-V",
    "processedmathv360k": "MathV360K",
}
# A marker left in the text once the tags are parsed: a tag that lost a character.
_DAMAGED = re.compile(r"</?\s*hallucination\b|\bhallucination\s*>", re.IGNORECASE)


def subset_for(stem: str) -> str:
    """The subset a file's items belong to: the paper's name for a released file, else the stem."""
    known = KNOWN_SUBSETS.get(re.sub(r"[_\-]", "", stem.lower()))
    if known:
        return known
    name = stem.removeprefix("processed_").removesuffix("_dataset")
    return name or stem


def gold_spans_on(response: str, tagged: str) -> tuple[list[tuple[int, int]], str | None]:
    """Spans of ``tagged`` placed on ``response``, and a warning when only whitespace differed.

    Raises :class:`~formats.fields.RecordError` when the tags are broken or the texts differ otherwise.
    """
    try:
        plain, spans = parse_tagged(tagged, TAG)
    except ValueError as error:
        raise RecordError(TAGGED, f"broken tags: {explain_broken_tags(tagged, TAG, error)}") from None
    damaged = _DAMAGED.search(plain)
    if damaged:
        raise RecordError(
            TAGGED,
            f"a damaged tag marker {damaged.group()!r} is left in the text at character {damaged.start()}",
        )
    try:
        placed, moved = spans_on_copy(plain, spans, response)
    except NotACopy as difference:
        raise RecordError(TAGGED, f"without its tags the text differs from {RESPONSE} {difference}") from None
    for (start, end), span in zip(spans, placed, strict=True):
        if span is None:
            raise RecordError(TAGGED, f"the span {start}-{end} holds only whitespace")
    if not moved:
        return [span for span in placed if span], None
    return [span for span in placed if span], (
        f"without its tags the text differs from {RESPONSE} only in whitespace "
        f"({first_difference(plain, response)}); spans were placed on {RESPONSE} exactly"
    )


def _check_listed_spans(record: dict[str, Any], response: str, tag_spans: list[tuple[int, int]]) -> None:
    listed = get_list(record, SPANS)
    found: list[tuple[int, int]] = []
    for k, entry in enumerate(listed):
        field = f"{SPANS}[{k}]"
        if not isinstance(entry, dict):
            raise RecordError(field, f"expected an object with start, end and text, got {type_name(entry)}")
        start, end = (
            get_int(entry.get("start"), f"{field}.start"),
            get_int(entry.get("end"), f"{field}.end"),
        )
        if not 0 <= start < end <= len(response):
            raise RecordError(field, outside(start, end, RESPONSE, len(response)))
        text = entry.get("text")
        if text is not None and text != response[start:end]:
            raise RecordError(
                f"{field}.text", f"{text!r} is not the text at {start}-{end}: {response[start:end]!r}"
            )
        found.append((start, end))
    if sorted(found) != sorted(tag_spans):
        raise RecordError(
            SPANS, f"disagree with the tags: listed {sorted(found)}, tags give {sorted(tag_spans)}"
        )


def read_record(
    record: Any, *, stem: str, index: int, subset: str, own_subset: bool = False
) -> tuple[ItemRecord, list[tuple[int, int]], str | None]:
    """One record's item, gold spans and whitespace warning. ``own_subset``: a record's ``subset``
    field (which a Spanlight export writes where the file's name would say otherwise) names its subset
    instead of ``subset``."""
    storable_object(record)
    ext, has_id = external_id(record, ID_KEYS, f"{stem}-{index}")
    response = get_str(record, RESPONSE)
    tagged = get_str(record, TAGGED)
    assert response is not None and tagged is not None
    if TAG in response and _DAMAGED.search(response):
        raise RecordError(RESPONSE, "contains a <hallucination> tag marker; it should be the plain response")
    spans, warning = gold_spans_on(response, tagged)
    if SPANS in record:
        _check_listed_spans(record, response, spans)
    prompt_key, prompt = get_first_str(record, PROMPT_KEYS, required=False)
    image_key, image = get_first_str(record, IMAGE_KEYS, required=False)
    reference_key, reference = get_first_str(record, REFERENCE_KEYS, required=False)
    named = record.get(SUBSET) if own_subset else None
    if not (isinstance(named, str) and named.strip()):
        named = None  # not a subset's name: kept as one of the record's own fields
    if named:
        subset = named
    roles = {
        k
        for k in (*ID_KEYS[:has_id], RESPONSE, TAGGED, SPANS, prompt_key, image_key, reference_key)
        + ((SUBSET,) if named else ())
        if k
    }
    layout: dict[str, Any] = {
        "keys": keys_with_id(record),
        "prompt": prompt_key,
        "image": image_key,
        "reference": reference_key,
    }
    if has_id and id_was_int(record):
        layout["int_id"] = True
    item = ItemRecord(
        external_id=ext,
        response=response,
        prompt=prompt or "",
        subset=subset,
        reference=reference,
        image_ref=image,
        meta={"fields": {k: v for k, v in record.items() if k not in roles}, "layout": layout},
    )
    return item, spans, warning


def _label(index: int, record: Any) -> str:
    """How a record is named in a report: by its index, and its id (of any type) when it has one."""
    record_id = record.get("id") if isinstance(record, dict) else None
    return record_label(index, None if record_id is None else str(record_id))


class MhaloFormat(Format):
    name = "mhalo"
    holds = ("span",)
    holds_span_types = False
    title = "MHALO (tagged JSON)"
    description = "JSON array; hallucinated_solution with <hallucination> tags, test_solution plain."

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if looks_like_json(data) == "[" and TAGGED in head and RESPONSE in head:
            return 0.95
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        document, problems = load_document(data, source, list, "a JSON list of records")
        if document is None:
            return ReadResult(None, problems)
        stem = file_stem(source)
        subset = options.subset or subset_for(stem)

        def read(record: Any, index: int, warnings: list[tuple[str, str]]) -> tuple[ItemRecord, Annotations]:
            item, spans, warning = read_record(
                record, stem=stem, index=index, subset=subset, own_subset=not options.subset
            )
            if warning:
                warnings.append((TAGGED, warning))
            return item, Annotations(item=item.external_id, spans=[SpanRecord(s, e) for s, e in spans])

        items, annotations = benchmark_items(enumerate(document), source, problems, read, _label)
        bundle = gold_bundle(options, source, self.name, items, annotations, ["span"], taxonomies.MHALO)
        return ReadResult(bundle, problems)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        spans_of = spans_by_item(bundle)
        # What the file's name will say when read back; not knowing the name, a record is written as read.
        named = subset_for(file_stem(filename)) if filename else None
        records = []
        for item in bundle.items:
            spans = spans_of.get(item.external_id, [])
            clash = overlapping(spans)
            if clash:
                raise FormatError(
                    f"item {item.external_id}: spans {clash[0]} and {clash[1]} overlap; inline tags cannot "
                    "express overlapping spans (export as canonical JSONL instead)"
                )
            if _DAMAGED.search(item.response):
                raise FormatError(
                    f"item {item.external_id}: its text contains a <{TAG}> marker, which would read back as a tag"
                )
            record = self._record(item, spans)
            if named is not None and item.subset and item.subset != named:
                record[SUBSET] = item.subset
            records.append(record)
        return dump_json(records, indent=1)

    @staticmethod
    def _record(item: ItemRecord, spans: list[tuple[int, int]]) -> dict[str, Any]:
        tagged = insert_markers(item.response, [(s, e, f"<{TAG}>", f"</{TAG}>") for s, e in spans])
        listed = [{"start": s, "end": e, "text": item.response[s:e]} for s, e in sorted(spans)]
        layout = item.meta.get("layout") if isinstance(item.meta.get("layout"), dict) else None
        if layout is None:
            return {
                "id": item.external_id,
                "image_path": item.image_ref,
                "prompt": item.prompt,
                "original_solution": item.reference,
                RESPONSE: item.response,
                TAGGED: tagged,
            }
        extra = item.meta.get("fields") or {}
        by_role = {
            "id": written_id(item.external_id, layout),
            RESPONSE: item.response,
            TAGGED: tagged,
            SPANS: listed,
            layout.get("prompt"): item.prompt,
            layout.get("image"): item.image_ref,
            layout.get("reference"): item.reference,
        }
        record = {}
        for key in keys_with_id(layout.get("keys", [])):
            if key in extra:
                record[key] = extra[key]
            elif key in by_role:
                record[key] = by_role[key]
        return record


FORMAT = MhaloFormat()
