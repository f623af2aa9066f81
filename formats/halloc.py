"""HalLoc: hallucinated texts with typed, word- and character-indexed parts (``halloc_vqa``, ``_instruct``,
``_caption``; JSON list or JSON lines).

Each sample is ``{id, split, prompt, source_text, hallucinated_text, image_id, annotations: {object: [...],
attribute: [...], relationship: [...], scene: [...]}}``. An annotation element names its parts by role
(``obj``, ``attribute``, ``subject``, ``predicate``, ``object``, ``scene``), each ``{name, word_index,
char_index}`` with ``"s:e"`` indices into ``hallucinated_text`` (HalLoc supplement, figures 1–4). Each part
becomes a gold span typed by its group, its note ``<role>#<element>`` keeping the structure for export.

A part is placed by ``char_index`` and must spell its ``name`` there; failing that, by ``word_index``
(whitespace words, end exclusive) with the name found inside those words. Anything else is reported.

A file has no place for a span of another type, nor for an untyped one: such a span is written in the
group its type names in other letter case (``Object``), else as an ``object`` part, and the export says
so (:meth:`HalLocFormat.changed_in_writing`), since it reads back typed by that group.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from formats import taxonomies
from formats.fields import RecordError, get_str, storable_object, type_name
from formats.ids import external_id, id_was_int, keys_with_id, written_id
from formats.json_documents import dump_json
from formats.record_formats import BenchmarkRecordsFormat, Warnings
from formats.records import Annotations, Bundle, ItemRecord, LabelSetRecord, SpanRecord, pick_label_set
from formats.text import head_text, looks_like_json

GROUPS = ("object", "attribute", "relationship", "scene")
DEFAULT_ROLE = {"object": "obj", "attribute": "attribute", "relationship": "predicate", "scene": "scene"}
KNOWN_KEYS = ("id", "split", "prompt", "source_text", "hallucinated_text", "image_id", "annotations")
_TOKEN = re.compile(r"\S+")


def _index_range(value: Any, field: str) -> tuple[int, int | None]:
    """``"s:e"`` -> (s, e); ``"s"`` or an integer -> (s, None)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, None
    if not isinstance(value, str) or not re.fullmatch(r"\s*\d+\s*(:\s*\d+\s*)?", value):
        raise RecordError(field, f"{value!r} is not an index 's' or a range 's:e'")
    start, _, end = value.partition(":")
    return int(start), (int(end) if end.strip() else None)


def place_part(text: str, part: dict[str, Any], field: str) -> tuple[int, int]:
    """Character offsets of one annotated part in ``text``; RecordError when it cannot be placed exactly."""
    name = part.get("name")
    if name is not None and not isinstance(name, str):
        raise RecordError(f"{field}.name", f"expected text, got {type_name(name)}")
    if part.get("char_index") is not None:
        start, end = _index_range(part["char_index"], f"{field}.char_index")
        if end is None:
            end = start + (len(name) if name else 1)
        if not 0 <= start < end <= len(text):
            raise RecordError(f"{field}.char_index", f"{start}:{end} lies outside the text (0-{len(text)})")
        if name is None or text[start:end] == name or text[start:end].lower() == name.lower():
            return start, end
        if part.get("word_index") is None:
            raise RecordError(f"{field}.char_index", f"the text there is {text[start:end]!r}, not {name!r}")
    if part.get("word_index") is None:
        raise RecordError(field, "has neither char_index nor word_index")
    first, last = _index_range(part["word_index"], f"{field}.word_index")
    last = first + 1 if last is None else last
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    if not 0 <= first < last <= len(tokens):
        raise RecordError(f"{field}.word_index", f"{first}:{last} outside the {len(tokens)} words")
    start, end = tokens[first][0], tokens[last - 1][1]
    if name:
        found = text.lower().find(name.lower(), start, end)
        if found == -1:
            raise RecordError(
                f"{field}.name", f"{name!r} is not in words {first}:{last} ({text[start:end]!r})"
            )
        return found, found + len(name)
    return start, end


def read_record(record: Any, index: int, stem: str) -> tuple[ItemRecord, Annotations]:
    storable_object(record)
    ext, _ = external_id(record, ("id",), f"{stem}-{index}")
    text = get_str(record, "hallucinated_text")
    assert text is not None
    groups = record.get("annotations") or {}
    if not isinstance(groups, dict):
        raise RecordError("annotations", f"expected an object, got {type_name(groups)}")
    spans, parts = [], {}
    for group, elements in groups.items():
        if group not in GROUPS:
            raise RecordError(f"annotations.{group}", f"unknown group; expected {', '.join(GROUPS)}")
        if not isinstance(elements, list):
            raise RecordError(f"annotations.{group}", f"expected a list, got {type_name(elements)}")
        for k, element in enumerate(elements):
            field = f"annotations.{group}[{k}]"
            if not isinstance(element, dict) or not element:
                raise RecordError(field, "expected an object of named parts")
            for role, part in element.items():
                if not isinstance(part, dict):
                    raise RecordError(f"{field}.{role}", f"expected an object, got {type_name(part)}")
                start, end = place_part(text, part, f"{field}.{role}")
                spans.append(SpanRecord(start, end, group, f"{role}#{k}"))
                parts[f"{group}/{k}/{role}"] = {
                    key: v for key, v in part.items() if key not in ("char_index",)
                }
    item = ItemRecord(
        external_id=ext,
        response=text,
        prompt=get_str(record, "prompt", required=False) or "",
        split=get_str(record, "split", required=False),
        reference=get_str(record, "source_text", required=False),
        image_ref=str(record["image_id"]) if record.get("image_id") is not None else None,
        meta={
            "fields": {k: v for k, v in record.items() if k not in KNOWN_KEYS},
            "parts": parts,
            "layout": {
                "keys": keys_with_id(record),
                "int_id": id_was_int(record),
                "groups": list(groups),
                "image_id_int": id_was_int(record, "image_id"),
            },
        },
    )
    return item, Annotations(item=ext, spans=spans)


def group_of(span_type: str | None) -> str:
    """The group a span of ``span_type`` is written in: the one it names (in any letter case), else
    ``object``."""
    named = (span_type or "").lower()
    return named if named in GROUPS else "object"


def subset_for(stem: str) -> str:
    return stem.removeprefix("halloc_") or stem


class HalLocFormat(BenchmarkRecordsFormat):
    name = "halloc"
    holds = ("span",)
    title = "HalLoc (typed word/char-indexed parts)"
    extensions = (".json", ".jsonl")
    description = "Samples with hallucinated_text and annotations {object, attribute, relationship, scene}."

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        return 0.9 if looks_like_json(data) and "hallucinated_text" in head and "annotations" in head else 0.0

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        return read_record(record, index, stem)

    def default_subset(self, stem: str) -> str:
        return subset_for(stem)

    def taxonomy(self, annotations: Sequence[Annotations]) -> Sequence[str]:
        return taxonomies.HALLOC

    def changed_in_writing(self, batch: Bundle, label_set: LabelSetRecord) -> Counter[str]:
        """The spans whose type is not a group's name, by type: they read back typed by their group."""
        regrouped = Counter(s.type for a in label_set.annotations for s in a.spans if s.type not in GROUPS)
        groups = ", ".join(GROUPS)
        return Counter(
            {
                f"{'untyped spans' if t is None else f'spans of type {t!r}'} are written as HalLoc "
                f"{group_of(t)!r} parts (its groups: {groups})": n
                for t, n in regrouped.items()
            }
        )

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        gold = pick_label_set(bundle)
        by_item = {a.item: a.spans for a in gold.annotations} if gold else {}
        return dump_json([self._record(item, by_item.get(item.external_id, [])) for item in bundle.items])

    @staticmethod
    def _record(item: ItemRecord, spans: list[SpanRecord]) -> dict[str, Any]:
        layout = item.meta.get("layout") or {}
        known_parts = item.meta.get("parts") or {}
        groups: dict[str, dict[int, dict[str, Any]]] = {g: {} for g in layout.get("groups") or GROUPS}
        extra = 10_000  # spans added in the app have no element number: give them their own
        for span in sorted(spans, key=lambda s: (s.start, s.end)):
            group = group_of(span.type)
            role, _, number = (span.note or "").partition("#")
            if not role or not number.isdigit():
                role, number, extra = DEFAULT_ROLE[group], str(extra), extra + 1
            part = dict(known_parts.get(f"{group}/{number}/{role}", {}))
            text = item.response[span.start : span.end]
            if not isinstance(part.get("name"), str) or part["name"].lower() != text.lower():
                part["name"] = text
            part["char_index"] = f"{span.start}:{span.end}"
            groups.setdefault(group, {}).setdefault(int(number), {})[role] = part
        annotations = {g: [elements[k] for k in sorted(elements)] for g, elements in groups.items()}
        values = {
            "id": written_id(item.external_id, layout),
            "split": item.split,
            "prompt": item.prompt,
            "source_text": item.reference,
            "hallucinated_text": item.response,
            "image_id": int(item.image_ref)
            if layout.get("image_id_int") and item.image_ref
            else item.image_ref,
            "annotations": annotations,
        }
        fields = item.meta.get("fields") or {}
        record = {}
        for key in keys_with_id(layout.get("keys") or KNOWN_KEYS):
            record[key] = values[key] if key in values else fields.get(key)
        return record


FORMAT = HalLocFormat()
