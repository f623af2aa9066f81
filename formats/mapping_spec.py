"""What a mapped import is told about a file nobody wrote a reader for: which field is what, and how
the gold is given. Plain data, saved with the dataset as JSON so the same file shape imports again the
same way (``cli.py import --map``, or uploaded on the Import page).

::

    {"version": 1,
     "fields": {"id": "qid", "image": "image.path", "prompt": "question", "response": "answer"},
     "gold": {"shape": "offsets", "field": "spans", "keys": {"label": "kind"},
              "values": {"ACCURATE": null, "INACCURATE": "hallucination"}, "locate_by_text": true}}

``fields`` maps a role (:data:`ROLES`) to a dotted path into each record. ``gold.shape`` is one of
:data:`SHAPES`; the shape's options name further paths (``starts``/``ends`` for parallel lists,
``tokens``, ``sentences``, ``labels``), the keys inside each gold element (``keys``), a tag name, a
score's ``scale``, and ``values``: how a raw label becomes what Spanlight stores (``0 → incorrect``).
Every flaw is reported at once, each naming its mapping field (``gold.scale``), and a mapping of another
``version`` or with an unknown option is refused rather than half understood.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from formats.json_documents import loads

MAPPING_VERSION = 1

# Role -> what it is, for the Import page and for reports.
ROLES: dict[str, str] = {
    "id": "Id",
    "image": "Image (path or URL)",
    "prompt": "Prompt",
    "response": "Response",
    "reference": "Reference answer",
    "subset": "Subset",
    "source_model": "Source model",
}

SHAPES: dict[str, str] = {
    "offsets": "Character offsets: [{start, end, text, label}] or parallel lists",
    "inline_tags": "Inline tags in the text: <tag>…</tag>",
    "word_indices": "Word indices: [{start, end, text}] (end exclusive)",
    "token_labels": "A label per token (O / B-Object / I-Object, or 0 / 1)",
    "sentence_labels": "A label per sentence",
    "claims": "Claims with labels",
    "triplets": "Triplets (subject, relation, object)",
    "response_score": "A score for the whole response",
}

# Keys inside each gold element (when elements are objects), per shape, with their defaults.
ELEMENT_KEYS: dict[str, dict[str, str]] = {
    "offsets": {"start": "start", "end": "end", "text": "text", "label": "label"},
    "word_indices": {"start": "start", "end": "end", "text": "text", "label": "label"},
    "sentence_labels": {"text": "text", "label": "label"},
    "claims": {"text": "claim", "label": "label", "type": "type", "reason": "reason"},
    "triplets": {
        "subject": "subject",
        "relation": "relation",
        "object": "object",
        "label": "verdict",
        "wrong_part": "wrong_part",
    },
}

# The options each shape understands besides ``shape``, ``field`` and ``values``.
_OPTIONS: dict[str, tuple[str, ...]] = {
    "offsets": ("starts", "ends", "texts", "labels", "keys", "locate_by_text"),
    "inline_tags": ("tag",),
    "word_indices": ("keys",),
    "token_labels": ("tokens",),
    "sentence_labels": ("sentences", "keys"),
    "claims": ("labels", "keys"),
    "triplets": ("labels", "keys", "reference"),
    "response_score": ("scale",),
}
_PATH_OPTIONS = ("field", "starts", "ends", "texts", "labels", "tokens", "sentences")

SPAN_SHAPES = ("offsets", "inline_tags", "word_indices", "token_labels")
SENTENCE_LABELS = ("correct", "incorrect", "unknown")
CLAIM_LABELS = ("hallucination", "non-hallucination")
VERDICTS = ("yes", "no")
# The label kinds a dataset imported with each shape carries.
LABEL_KINDS: dict[str, tuple[str, ...]] = {
    **{shape: ("span",) for shape in SPAN_SHAPES},
    "sentence_labels": ("sentence",),
    "claims": ("claim",),
    "triplets": ("triplet",),
    "response_score": ("response",),
}
_TAG = re.compile(r"[A-Za-z][\w.-]{0,63}")


class MappingError(ValueError):
    """A mapping that cannot be used; ``problems`` lists each ``(mapping field, reason)``."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {where}: {reason}" for where, reason in problems)
        super().__init__(f"the mapping is not valid:\n{lines}")


@dataclass
class GoldSpec:
    """Where a record's gold is and how to read it (see the module docstring)."""

    shape: str
    field: str | None = None
    starts: str | None = None
    ends: str | None = None
    texts: str | None = None
    labels: str | None = None
    tokens: str | None = None
    sentences: str | None = None
    tag: str | None = None
    keys: dict[str, str] = dataclasses.field(default_factory=dict)
    values: dict[str, Any] = dataclasses.field(default_factory=dict)
    scale: tuple[float, float] | None = None
    locate_by_text: bool = False
    reference: bool = False  # triplets: the item's reference scene graph rather than judged gold triplets

    def key(self, name: str) -> str:
        """The key of ``name`` inside each gold element (the mapping's, else the shape's default)."""
        return self.keys.get(name) or ELEMENT_KEYS[self.shape][name]

    def paths(self) -> dict[str, str]:
        """Every record path this gold reads, by option name."""
        return {name: path for name in _PATH_OPTIONS if (path := getattr(self, name))}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"shape": self.shape, **self.paths()}
        if self.tag:
            out["tag"] = self.tag
        if self.keys:
            out["keys"] = dict(self.keys)
        if self.values:
            out["values"] = dict(self.values)
        if self.scale is not None:
            out["scale"] = list(self.scale)
        if self.locate_by_text:
            out["locate_by_text"] = True
        if self.reference:
            out["reference"] = True
        return out


@dataclass
class ImportMapping:
    """Roles to record paths, and the gold (None: the file brings items only)."""

    fields: dict[str, str]
    gold: GoldSpec | None = None
    version: int = MAPPING_VERSION

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "fields": dict(self.fields)}
        if self.gold is not None:
            out["gold"] = self.gold.to_dict()
        return out

    def to_json(self) -> bytes:
        return (json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes | str) -> ImportMapping:
        try:
            value = loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            raise MappingError([("-", f"not valid JSON: {error}")]) from None
        return cls.from_dict(value)

    @classmethod
    def from_dict(cls, value: Any) -> ImportMapping:
        """The mapping ``value`` describes; :class:`MappingError` listing every flaw otherwise."""
        problems: list[tuple[str, str]] = []
        if not isinstance(value, dict):
            raise MappingError([("-", f"expected an object, got {type(value).__name__}")])
        for key in sorted(set(value) - {"version", "fields", "gold"}):
            problems.append((key, "unknown; a mapping has version, fields and gold"))
        if value.get("version") != MAPPING_VERSION:
            problems.append(
                (
                    "version",
                    f"{value.get('version')!r} is not a mapping version this reads ({MAPPING_VERSION})",
                )
            )
        fields = _fields(value.get("fields"), problems)
        gold = _gold(value["gold"], problems) if value.get("gold") is not None else None
        if "response" not in fields and not spells_response(gold):
            problems.append(
                (
                    "fields.response",
                    "missing: name the field holding the response (or gold that spells it: inline tags, "
                    "sentence texts, tokens or claims)",
                )
            )
        if problems:
            raise MappingError(problems)
        return cls(fields=fields, gold=gold)


def _path(value: Any, where: str, problems: list[tuple[str, str]]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append((where, "expected a field name (a dotted path such as meta.answer)"))
        return None
    return value.strip()


def _fields(value: Any, problems: list[tuple[str, str]]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(("fields", "expected an object of role -> field"))
        return {}
    found = {}
    for role, path in value.items():
        where = f"fields.{role}"
        if role not in ROLES:
            problems.append((where, f"unknown role; roles are {', '.join(ROLES)}"))
            continue
        checked = _path(path, where, problems)
        if checked:
            found[role] = checked
    return found


def _gold(value: Any, problems: list[tuple[str, str]]) -> GoldSpec | None:
    if not isinstance(value, dict):
        problems.append(("gold", "expected an object with a shape"))
        return None
    shape = value.get("shape")
    if shape not in SHAPES:
        problems.append(("gold.shape", f"{shape!r} is not one of {', '.join(SHAPES)}"))
        return None
    allowed = {"shape", "field", "values", *_OPTIONS[shape]}
    for key in sorted(set(value) - allowed):
        problems.append((f"gold.{key}", f"not an option of the {shape} shape"))
    spec = GoldSpec(shape=shape)
    for name in _PATH_OPTIONS:
        if name in allowed:
            setattr(spec, name, _path(value.get(name), f"gold.{name}", problems))
    if shape == "offsets":
        parallel = spec.starts or spec.ends
        if spec.field and parallel:
            problems.append(("gold.starts", "give either gold.field (a list) or parallel lists, not both"))
        elif not spec.field and not (spec.starts and spec.ends):
            problems.append(("gold.field", "missing: name the list of spans, or gold.starts and gold.ends"))
    elif not spec.field:
        problems.append(("gold.field", f"missing: name the field holding the {shape.replace('_', ' ')}"))
    spec.keys = _keys(value.get("keys"), shape, problems)
    spec.values = _values(value.get("values"), shape, problems)
    if shape == "inline_tags" and value.get("tag") is not None:
        tag = value["tag"]
        if not isinstance(tag, str) or not _TAG.fullmatch(tag):
            problems.append(("gold.tag", f"{tag!r} is not a tag name (letters, digits, _ . -)"))
        else:
            spec.tag = tag
    for flag in ("locate_by_text", "reference"):
        if flag in allowed and value.get(flag) is not None:
            if not isinstance(value[flag], bool):
                problems.append((f"gold.{flag}", "expected true or false"))
            else:
                setattr(spec, flag, value[flag])
    if shape == "response_score":
        spec.scale = _scale(value.get("scale"), problems)
    return spec


def _keys(value: Any, shape: str, problems: list[tuple[str, str]]) -> dict[str, str]:
    if value is None:
        return {}
    known = ELEMENT_KEYS.get(shape, {})
    if not isinstance(value, dict):
        problems.append(("gold.keys", "expected an object of part -> key inside each element"))
        return {}
    keys = {}
    for name, key in value.items():
        if name not in known:
            problems.append((f"gold.keys.{name}", f"unknown part; the {shape} shape has {', '.join(known)}"))
            continue
        checked = _path(key, f"gold.keys.{name}", problems)
        if checked:
            keys[name] = checked
    return keys


def _values(value: Any, shape: str, problems: list[tuple[str, str]]) -> dict[str, Any]:
    """The value mapping, every target checked against what the shape stores."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(("gold.values", "expected an object of raw value -> stored value"))
        return {}
    choices = {
        "sentence_labels": SENTENCE_LABELS,
        "claims": CLAIM_LABELS,
        "triplets": VERDICTS,
    }.get(shape)
    for raw, target in value.items():
        where = f"gold.values.{raw}"
        if shape == "response_score":
            if isinstance(target, bool) or not isinstance(target, int | float):
                problems.append((where, f"expected a number, got {target!r}"))
        elif choices is not None:
            if target is not None and target not in choices:
                problems.append((where, f"{target!r} is not one of {', '.join(choices)} (or null)"))
        elif target is not None and not isinstance(target, bool | str):
            problems.append(
                (where, f"expected a span type, true (untyped), or false/null (no span); got {target!r}")
            )
    return dict(value)


def _scale(value: Any, problems: list[tuple[str, str]]) -> tuple[float, float] | None:
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and value[0] < value[1]
    ):
        return float(value[0]), float(value[1])
    problems.append(("gold.scale", "expected [lowest, highest], two numbers, lowest first"))
    return None


def spells_response(gold: GoldSpec | None) -> bool:
    """Whether the gold alone spells the response (the fields need not name one)."""
    if gold is None:
        return False
    return (
        gold.shape in ("inline_tags", "claims")
        or (gold.shape == "token_labels" and gold.tokens is not None)
        or (gold.shape == "sentence_labels")
    )
