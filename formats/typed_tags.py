"""Typed inline tags (ZINA-style): ``There are <number>three</number> cats.`` — the tag names the type.

The most readable way to hand typed spans to and from a language model. Records are a JSON list or JSON
lines of ``{id, prompt, image, tagged}`` (``tagged`` may also be called ``tagged_text``, ``text`` or
``output``). Every ``<name>…</name>`` pair is a span of type ``name``; ``<hallucination>`` is an untyped
span. Tags may not nest or cross, every opened tag must be closed, and text that merely contains ``<`` is
fine.

A tag name is a letter, then letters, digits, ``_``, ``.`` or ``-``, so a type such as ``Color Attribute``
cannot be one. Such a type is written under a tag name made of it (``<Color_Attribute>``), and the record
says which type each such tag stands for in ``tag_types`` (``{"Color_Attribute": "Color Attribute"}``),
so the type reads back as it was; a tag without an entry there is a type of its own name, as a language
model or a person writes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from formats.base import FormatError
from formats.fields import RecordError, get_first_str, get_str, storable_object
from formats.ids import external_id, id_was_int, keys_with_id, written_id
from formats.json_documents import dump_jsonl
from formats.markers import insert_markers, overlapping
from formats.record_formats import BenchmarkRecordsFormat, Warnings
from formats.records import Annotations, Bundle, ItemRecord, SpanRecord, pick_label_set
from formats.text import head_text, looks_like_json

UNTYPED = "hallucination"
TEXT_KEYS = ("tagged", "tagged_text", "text", "output")
TYPES_KEY = "tag_types"
KNOWN_KEYS = ("id", "prompt", "image", *TEXT_KEYS, TYPES_KEY)
_MARKER = re.compile(r"<(/?)([A-Za-z][\w.-]{0,63})>")
_TAG = re.compile(r"[A-Za-z][\w.-]{0,63}")


def parse_typed(tagged: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Plain text and ``(start, end, type)`` spans; ValueError for nested, crossing or unclosed tags."""
    pieces: list[str] = []
    spans: list[tuple[int, int, str]] = []
    at, length = 0, 0
    open_tag: tuple[str, int, int] | None = None  # (name, plain offset, position in input)
    for marker in _MARKER.finditer(tagged):
        closing, name = marker.group(1) == "/", marker.group(2)
        chunk = tagged[at : marker.start()]
        pieces.append(chunk)
        length += len(chunk)
        at = marker.end()
        if not closing:
            if open_tag is not None:
                raise ValueError(f"<{name}> at character {marker.start()} opens inside <{open_tag[0]}>")
            open_tag = (name, length, marker.start())
        else:
            if open_tag is None:
                raise ValueError(f"</{name}> at character {marker.start()} closes nothing")
            if open_tag[0] != name:
                raise ValueError(f"</{name}> at character {marker.start()} closes <{open_tag[0]}>")
            if length > open_tag[1]:
                spans.append((open_tag[1], length, name))
            open_tag = None
    if open_tag is not None:
        raise ValueError(f"<{open_tag[0]}> at character {open_tag[2]} is never closed")
    pieces.append(tagged[at:])
    return "".join(pieces), spans


def _made_tag(span_type: str) -> str:
    """A tag name made of a type that is none: other characters as ``_``, a leading ``t_`` when it does
    not start with a letter, at most 64 characters."""
    name = re.sub(r"[^\w.-]+", "_", span_type.strip()) or "_"
    return (name if re.match(r"[A-Za-z]", name) else f"t_{name}")[:64]


def tag_names(span_types: set[str | None]) -> dict[str | None, str]:
    """A distinct tag name for each type of one record's spans (None, untyped: ``hallucination``).

    A type that is a tag name other than ``hallucination`` is its own; any other gets one made of it,
    numbered (``Color_Attribute.2``) when another type has that name already.
    """
    names: dict[str | None, str] = {None: UNTYPED}
    own = sorted(t for t in span_types if t is not None and t != UNTYPED and _TAG.fullmatch(t))
    names.update((t, t) for t in own)
    used = set(names.values())
    for span_type in sorted(t for t in span_types if t is not None and t not in names):
        base = name = _made_tag(span_type)
        number = 2
        while name in used:
            suffix = f".{number}"
            name, number = base[: 64 - len(suffix)] + suffix, number + 1
        names[span_type] = name
        used.add(name)
    return names


def write_typed(text: str, spans: list[SpanRecord]) -> tuple[str, dict[str, str]]:
    """``text`` with each span inside the tags of its type, and the types whose tag is not their own
    name, by tag name (what :data:`TYPES_KEY` holds)."""
    names = tag_names({s.type for s in spans})
    marks = [(s.start, s.end, f"<{names[s.type]}>", f"</{names[s.type]}>") for s in spans]
    renamed = {name: t for t, name in names.items() if t is not None and name != t}
    return insert_markers(text, marks), renamed


def _tag_types(record: dict[str, Any]) -> dict[str, str]:
    """The record's ``tag_types``: the type each tag named there stands for."""
    value = record.get(TYPES_KEY)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(t, str) and t.strip() for t in value.values()):
        raise RecordError(TYPES_KEY, "expected an object of tag names and the type each stands for")
    return value


class TypedTagsFormat(BenchmarkRecordsFormat):
    name = "typed-tags"
    holds = ("span",)
    title = "Typed inline tags (<number>three</number>)"
    extensions = (".jsonl", ".json")
    description = "Records {id, prompt, image, tagged} where each <type>…</type> marks a span of that type."

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if looks_like_json(data) and any(f'"{k}"' in head for k in ("tagged", "tagged_text")):
            return 0.7
        return 0.0

    def taxonomy(self, annotations: Sequence[Annotations]) -> Sequence[str]:
        """The span types the file uses."""
        return sorted({s.type for a in annotations for s in a.spans if s.type})

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        if isinstance(record, str):
            record = {"tagged": record}
        storable_object(record, "an object or text")
        ext, _ = external_id(record, ("id",), f"{stem}-{index}")
        key, tagged = get_first_str(record, TEXT_KEYS)
        try:
            text, spans = parse_typed(tagged or "")
        except ValueError as error:
            raise RecordError(key or "tagged", f"broken tags: {error}") from None
        types = _tag_types(record)
        item = ItemRecord(
            external_id=ext,
            response=text,
            prompt=get_str(record, "prompt", required=False) or "",
            image_ref=get_str(record, "image", required=False),
            meta={
                "fields": {k: v for k, v in record.items() if k not in KNOWN_KEYS},
                "layout": {
                    "keys": keys_with_id(record),
                    "text_key": key,
                    "int_id": id_was_int(record),
                },
            },
        )
        typed = [(s, e, types.get(t, None if t == UNTYPED else t)) for s, e, t in spans]
        return item, Annotations(ext, [SpanRecord(s, e, t) for s, e, t in typed])

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        gold = pick_label_set(bundle)
        by_item = {a.item: a.spans for a in gold.annotations} if gold else {}
        rows = []
        for item in bundle.items:
            spans = by_item.get(item.external_id, [])
            clash = overlapping([(s.start, s.end) for s in spans])
            if clash:
                raise FormatError(
                    f"item {item.external_id}: spans {clash[0]} and {clash[1]} overlap; inline tags cannot "
                    "express overlapping spans (export as canonical JSONL instead)"
                )
            literal = _MARKER.search(item.response)
            if literal:
                raise FormatError(
                    f"item {item.external_id}: its text contains {literal.group()!r}, which would read back as "
                    "a tag (export as canonical JSONL instead)"
                )
            layout = item.meta.get("layout") or {}
            fields = item.meta.get("fields") or {}
            text_key = layout.get("text_key") or "tagged"
            tagged, renamed = write_typed(item.response, spans)
            values = {
                "id": written_id(item.external_id, layout),
                "prompt": item.prompt,
                "image": item.image_ref,
                text_key: tagged,
            }
            row = {}
            for key in keys_with_id(layout.get("keys") or ["id", "prompt", "image", "tagged"]):
                if key != TYPES_KEY:
                    row[key] = values[key] if key in values else fields.get(key)
                elif renamed:
                    row[key] = renamed
            if renamed:
                row[TYPES_KEY] = renamed
            rows.append(row)
        return dump_jsonl(rows)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.tagged.jsonl"


FORMAT = TypedTagsFormat()
