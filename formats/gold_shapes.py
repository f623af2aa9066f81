"""One record's gold, read in the shape a mapping names (:data:`~formats.mapping_spec.SHAPES`).

Each shape is placed on the response exactly or the record is rejected with the field and the reason,
never guessed: character offsets must spell their ``text`` when one is given (or, when the mapping
says ``locate_by_text``, are moved to where that text is, with a warning); inline tags, word indices,
sentences and tokens reuse the project's one parser, word numbering and sentence splitter. Some shapes
can also spell the response when the file has none of its own: the text inside the tags, the sentences
or the tokens joined with spaces, the claims one per line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from formats.alignment import align_ignoring_whitespace, first_difference, map_span
from formats.field_paths import (
    MISSING,
    int_of,
    list_at,
    number_of,
    structured,
    text_of,
    value_at,
    value_key,
)
from formats.fields import RecordError, type_name
from formats.mapping_spec import CLAIM_LABELS, SENTENCE_LABELS, VERDICTS, GoldSpec
from formats.problems import outside
from formats.records import (
    ClaimLabelRecord,
    ClaimRecord,
    ResponseScoreRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SpanRecord,
    TripletRecord,
)
from formats.sentences import split_sentences
from formats.trihe import parse_triplet
from formats.trihe_judgments import verdict_of
from formats.typed_tags import UNTYPED, parse_typed
from formats.word_index import place_words, words_of
from metrics.tagged_text import parse_tagged

Warnings = list[tuple[str, str]]


class _NoSpan:
    def __repr__(self) -> str:
        return "NO_SPAN"


# A label that marks no span (``O``, ``0``, or mapped to null/false).
NO_SPAN: Any = _NoSpan()
_BIO = re.compile(r"^([BIES])-(.+)$")


@dataclass
class RecordGold:
    """What one record's gold says, ready for its item and its gold annotations."""

    response: str | None = None  # the text the gold spells, when the file gives none of its own
    spans: list[SpanRecord] = field(default_factory=list)
    sentences: list[SentenceRecord] | None = None
    sentence_labels: list[SentenceLabelRecord] = field(default_factory=list)
    claims: list[ClaimRecord] = field(default_factory=list)
    claim_labels: list[ClaimLabelRecord] = field(default_factory=list)
    triplets: list[TripletRecord] = field(default_factory=list)
    reference_triplets: list[TripletRecord] = field(default_factory=list)
    response_score: ResponseScoreRecord | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def read_gold(record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings) -> RecordGold:
    """The record's gold; ``response`` is the record's own response text (None when it has none)."""
    reader = _READERS[spec.shape]
    return reader(record, spec, response, warnings)


def _need(response: str | None, spec: GoldSpec) -> str:
    if response is None:
        raise RecordError("response", f"missing: the {spec.shape.replace('_', ' ')} are placed on a response")
    return response


# ------------------------------------------------------------------------------------------- values


def mapped(raw: Any, spec: GoldSpec, where: str) -> Any:
    """``raw`` through the value mapping (unchanged when there is none)."""
    if not spec.values:
        return raw
    key = value_key(raw)
    if key not in spec.values:
        raise RecordError(where, f"{raw!r} is not in the value mapping (gold.values)")
    return spec.values[key]


def span_type(raw: Any, spec: GoldSpec, where: str) -> Any:
    """The span type a label gives: a type, None for an untyped span, or :data:`NO_SPAN`."""
    if raw is None and not spec.values:
        return None
    target = mapped(raw, spec, where)
    if target is None or target is False or (isinstance(target, str) and not target.strip()):
        return NO_SPAN
    if target is True or target == UNTYPED:
        return None
    if isinstance(target, str):
        return target.strip()
    if isinstance(target, int | float):
        return value_key(target)
    raise RecordError(where, f"expected a label, got {type_name(target)}")


def choice(raw: Any, spec: GoldSpec, choices: Sequence[str], where: str) -> str | None:
    """A label that must be one of ``choices`` (None: this one carries no label)."""
    target = mapped(raw, spec, where)
    if target is None:
        return None
    if isinstance(target, str) and target.strip().lower() in choices:
        return target.strip().lower()
    raise RecordError(
        where, f"{raw!r} is not one of {', '.join(choices)}; say what it means in the value mapping"
    )


def _labels_beside(record: dict[str, Any], spec: GoldSpec, n: int, what: str) -> list[Any] | None:
    """The parallel list of labels (``gold.labels``), checked to have one per ``what``."""
    if not spec.labels:
        return None
    labels = list_at(record, spec.labels)
    if len(labels) != n:
        raise RecordError(spec.labels, f"{len(labels)} labels for {n} {what}")
    return labels


def locate_in_order(response: str, texts: Sequence[Any], path: str) -> list[tuple[int, int]]:
    """Where each text lies in ``response``, each found after the one before (sentences, tokens)."""
    found: list[tuple[int, int]] = []
    at = 0
    for k, text in enumerate(texts):
        if not isinstance(text, str):
            raise RecordError(f"{path}[{k}]", f"expected text, got {type_name(text)}")
        piece = text.strip()
        if not piece:
            found.append((at, at))
            continue
        start = response.find(piece, at)
        if start == -1:
            raise RecordError(f"{path}[{k}]", f"{piece!r} is not in the response after character {at}")
        found.append((start, start + len(piece)))
        at = start + len(piece)
    return found


def nearest(response: str, text: str, near: int) -> int | None:
    """The start of the occurrence of ``text`` in ``response`` nearest to ``near``, or None."""
    best = None
    at = response.find(text)
    while at != -1:
        if best is None or abs(at - near) < abs(best - near):
            best = at
        at = response.find(text, at + 1)
    return best


# ------------------------------------------------------------------------------------------- offsets


def _offset_entries(record: dict[str, Any], spec: GoldSpec) -> list[tuple[str, Any, Any, Any, Any]]:
    """``(where, start, end, text, label)`` of each span, from a list of objects or parallel lists."""
    if spec.field:
        entries = []
        for k, element in enumerate(list_at(record, spec.field)):
            where = f"{spec.field}[{k}]"
            element = structured(element)
            if isinstance(element, dict):
                start, end, text, label = (
                    None if (v := value_at(element, spec.key(name))) is MISSING else v
                    for name in ("start", "end", "text", "label")
                )
                entries.append((where, start, end, text, label))
            elif isinstance(element, list | tuple) and len(element) in (2, 3):
                entries.append(
                    (where, element[0], element[1], None, element[2] if len(element) == 3 else None)
                )
            else:
                raise RecordError(
                    where, f"expected {{start, end, text, label}} or [start, end], got {type_name(element)}"
                )
        return entries
    assert spec.starts and spec.ends
    starts, ends = list_at(record, spec.starts), list_at(record, spec.ends)
    if len(ends) != len(starts):
        raise RecordError(spec.ends, f"{len(ends)} ends for {len(starts)} starts")
    texts = list_at(record, spec.texts) if spec.texts else [None] * len(starts)
    if len(texts) != len(starts):
        raise RecordError(spec.texts or "texts", f"{len(texts)} texts for {len(starts)} starts")
    labels = _labels_beside(record, spec, len(starts), "starts") or [None] * len(starts)
    return [
        (f"{spec.starts}[{k}]", s, e, t, lab)
        for k, (s, e, t, lab) in enumerate(zip(starts, ends, texts, labels, strict=True))
    ]


def place_offsets(
    response: str, start: Any, end: Any, text: Any, where: str, locate: bool
) -> tuple[int, int, bool]:
    """``(start, end, moved)`` of one span; ``moved`` when it was placed by its text (``locate``)."""
    if text is not None and not isinstance(text, str):
        raise RecordError(f"{where}.text", f"expected text, got {type_name(text)}")
    n = len(response)
    s = None if start is None else int_of(start, f"{where}.start")
    e = None if end is None else int_of(end, f"{where}.end")
    inside = s is not None and e is not None and 0 <= s < e <= n
    if inside and (text is None or response[s:e] == text):
        assert s is not None and e is not None
        return s, e, False
    if text and locate:
        found = nearest(response, text, s or 0)
        if found is None:
            raise RecordError(f"{where}.text", f"{text!r} does not occur in the response")
        return found, found + len(text), True
    if s is None or e is None:
        raise RecordError(f"{where}.{'start' if s is None else 'end'}", "missing")
    if not inside:
        raise RecordError(where, outside(s, e, "the response", n))
    raise RecordError(
        f"{where}.text",
        f"{text!r} is not the response text at {s}-{e}: {response[s:e]!r} "
        "(choose “locate by text” to place spans where their text is)",
    )


def _offsets(record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings) -> RecordGold:
    text = _need(response, spec)
    spans, moved = [], []
    for where, start, end, quoted, label in _offset_entries(record, spec):
        kind = span_type(label, spec, f"{where}.label")
        if kind is NO_SPAN:
            continue
        s, e, was_moved = place_offsets(text, start, end, quoted, where, spec.locate_by_text)
        if was_moved:
            moved.append(f"{where} to {s}-{e} (offsets {start}-{end})")
        spans.append(SpanRecord(s, e, kind))
    if moved:
        shown = "; ".join(moved[:3]) + (f"; and {len(moved) - 3} more" if len(moved) > 3 else "")
        warnings.append((spec.field or spec.starts or "-", f"placed by their text: {shown}"))
    return RecordGold(spans=spans)


# --------------------------------------------------------------------------------------- inline tags


def _inline_tags(
    record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings
) -> RecordGold:
    assert spec.field
    tagged = text_of(value_at(record, spec.field), spec.field)
    if tagged is None:
        raise RecordError(spec.field, "missing")
    try:
        if spec.tag:
            plain, untyped = parse_tagged(tagged, spec.tag)
            found: list[tuple[int, int, str | None]] = [(s, e, None) for s, e in untyped]
        else:
            plain, typed = parse_typed(tagged)
            found = [(s, e, t) for s, e, t in typed]
    except ValueError as error:
        raise RecordError(spec.field, f"broken tags: {error}") from None
    spans = []
    for k, (s, e, name) in enumerate(found):
        kind = span_type(name, spec, f"{spec.field} tag {k}") if name is not None else None
        if kind is not NO_SPAN:
            spans.append(SpanRecord(s, e, kind))
    if response is None or plain == response:
        return RecordGold(response=plain, spans=spans)
    moves = align_ignoring_whitespace(plain, response)
    if moves is None:
        raise RecordError(
            spec.field,
            f"without its tags the text differs from the response {first_difference(plain, response)}",
        )
    placed = []
    for span in spans:
        moved = map_span(moves, plain, span.start, span.end)
        if moved is None:
            raise RecordError(spec.field, f"the span {span.start}-{span.end} holds only whitespace")
        placed.append(SpanRecord(*moved, span.type))
    warnings.append(
        (
            spec.field,
            f"without its tags the text differs from the response only in whitespace "
            f"({first_difference(plain, response)}); spans were placed on the response exactly",
        )
    )
    return RecordGold(spans=placed)


# -------------------------------------------------------------------------------------- word indices


def _word_indices(
    record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings
) -> RecordGold:
    assert spec.field
    text = _need(response, spec)
    elements = [structured(e) for e in list_at(record, spec.field)]
    words: list[Any] = []
    for element in elements:
        if not isinstance(element, dict):
            words.append(element)
            continue
        parts = {name: value_at(element, spec.key(name)) for name in ("start", "end", "text")}
        word = {name: None if v is MISSING else v for name, v in parts.items()}
        for name in ("start", "end"):
            if isinstance(word[name], str):
                word[name] = int_of(word[name], name)
        words.append(word)
    try:
        placed = place_words(words, text)
    except RecordError as error:
        raise RecordError(spec.field + error.field.removeprefix("spans"), error.reason) from None
    spans = []
    for k, ((s, e), element) in enumerate(zip(placed, elements, strict=True)):
        label = value_at(element, spec.key("label")) if isinstance(element, dict) else None
        kind = span_type(None if label is MISSING else label, spec, f"{spec.field}[{k}].label")
        if kind is not NO_SPAN:
            spans.append(SpanRecord(s, e, kind))
    return RecordGold(spans=spans)


# -------------------------------------------------------------------------------------- token labels


def token_kind(raw: Any, spec: GoldSpec, where: str) -> tuple[bool, Any]:
    """``(begins a new span, span type or NO_SPAN)`` of one token's label.

    ``B-``/``S-`` prefixes begin a span, ``I-``/``E-`` continue one; the value mapping is asked for the
    whole label first, then for the label without its prefix. Without a mapping ``O``, ``0``, false and
    empty mark no span, ``1`` and true an untyped one, and any other label is the span's type.
    """
    bio = _BIO.match(raw) if isinstance(raw, str) else None
    begins = bool(bio) and bio is not None and bio.group(1) in "BS"
    if spec.values:
        key = value_key(raw)
        if key not in spec.values and bio is not None and bio.group(2) in spec.values:
            return begins, span_type(bio.group(2), spec, where)
        return begins, span_type(raw, spec, where)
    key = value_key(raw).lower()
    if key in ("", "o", "0", "false", "null"):
        return False, NO_SPAN
    if key in ("1", "true"):
        return False, None
    return begins, bio.group(2) if bio is not None else value_key(raw)


def _token_labels(
    record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings
) -> RecordGold:
    assert spec.field
    labels = list_at(record, spec.field)
    spelled = None
    if spec.tokens:
        tokens = list_at(record, spec.tokens)
        if response is None:
            bad = next((k for k, t in enumerate(tokens) if not isinstance(t, str)), None)
            if bad is not None:
                raise RecordError(f"{spec.tokens}[{bad}]", f"expected text, got {type_name(tokens[bad])}")
            response = spelled = " ".join(tokens)
        positions = locate_in_order(response, tokens, spec.tokens)
    else:
        positions = words_of(_need(response, spec))
    if len(labels) != len(positions):
        raise RecordError(spec.field, f"{len(labels)} labels for {len(positions)} tokens")
    spans: list[SpanRecord] = []
    current: SpanRecord | None = None
    for k, (raw, (s, e)) in enumerate(zip(labels, positions, strict=True)):
        if s == e:
            continue
        begins, kind = token_kind(raw, spec, f"{spec.field}[{k}]")
        if kind is NO_SPAN:
            current = None
            continue
        if current is not None and not begins and current.type == kind:
            current.end = e
            continue
        current = SpanRecord(s, e, kind)
        spans.append(current)
    return RecordGold(response=spelled, spans=spans)


# ----------------------------------------------------------------------------------- sentence labels


def _sentence_labels(
    record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings
) -> RecordGold:
    assert spec.field
    elements = [structured(e) for e in list_at(record, spec.field)]
    label_key, text_key = spec.key("label"), spec.key("text")
    raw_labels = [value_at(e, label_key) if isinstance(e, dict) else e for e in elements]
    raw_labels = [None if v is MISSING else v for v in raw_labels]
    texts: list[Any] | None = None
    texts_path = spec.sentences or spec.field
    if spec.sentences:
        texts = list_at(record, spec.sentences)
        if len(texts) != len(raw_labels):
            raise RecordError(spec.field, f"{len(raw_labels)} labels for {len(texts)} sentences")
    elif elements and all(isinstance(e, dict) and value_at(e, text_key) is not MISSING for e in elements):
        texts = [value_at(e, text_key) for e in elements]
    spelled = None
    sentences: list[SentenceRecord] | None = None
    if texts is not None:
        if response is None:
            bad = next((k for k, t in enumerate(texts) if not isinstance(t, str)), None)
            if bad is not None:
                raise RecordError(f"{texts_path}[{bad}]", f"expected text, got {type_name(texts[bad])}")
            response = spelled = " ".join(t.strip() for t in texts)
        offsets = locate_in_order(response, texts, texts_path)
        for k, (s, e) in enumerate(offsets):
            if s == e:
                raise RecordError(f"{texts_path}[{k}]", "is empty")
        sentences = [SentenceRecord(s, e) for s, e in offsets]
    else:
        found = split_sentences(_need(response, spec))
        if len(found) != len(raw_labels):
            raise RecordError(
                spec.field,
                f"{len(raw_labels)} labels for the {len(found)} sentences the splitter finds in the response; "
                "map the sentence texts (gold.sentences) to place them",
            )
    labels = []
    for k, raw in enumerate(raw_labels):
        label = choice(raw, spec, SENTENCE_LABELS, f"{spec.field}[{k}]")
        if label is not None:
            meta = {"value": raw} if spec.values and raw is not None else {}
            labels.append(SentenceLabelRecord(k, label, meta=meta))
    return RecordGold(response=spelled, sentences=sentences, sentence_labels=labels)


# -------------------------------------------------------------------------------------------- claims


def _claims(record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings) -> RecordGold:
    assert spec.field
    elements = [structured(e) for e in list_at(record, spec.field)]
    beside = _labels_beside(record, spec, len(elements), "claims")
    texts, labels = [], []
    for k, element in enumerate(elements):
        where = f"{spec.field}[{k}]"
        claim_type = reason = None
        raw: Any = beside[k] if beside is not None else None
        if isinstance(element, str):
            text = element
        elif isinstance(element, dict):
            text = text_of(value_at(element, spec.key("text")), f"{where}.{spec.key('text')}") or ""
            if beside is None:
                raw = value_at(element, spec.key("label"))
                raw = None if raw is MISSING else raw
            claim_type = text_of(value_at(element, spec.key("type")), f"{where}.{spec.key('type')}")
            reason = text_of(value_at(element, spec.key("reason")), f"{where}.{spec.key('reason')}")
        else:
            raise RecordError(where, f"expected a claim (text or an object), got {type_name(element)}")
        if not text.strip():
            raise RecordError(where, "the claim is empty")
        texts.append(text)
        label = choice(
            raw, spec, CLAIM_LABELS, f"{spec.labels or where}" + (f"[{k}]" if spec.labels else ".label")
        )
        if label is not None:
            labels.append(ClaimLabelRecord(k, label, claim_type, reason))
    spelled = None
    if response is None:
        # No response of its own: the claims are the text shown, one per line.
        if any("\n" in t for t in texts):
            raise RecordError(spec.field, "a claim spans several lines; map a response field")
        spelled = "\n".join(texts)
        claims, at = [], 0
        for text in texts:
            claims.append(ClaimRecord(text, at, at + len(text)))
            at += len(text) + 1
    else:
        claims = [ClaimRecord(text) for text in texts]
    return RecordGold(response=spelled, claims=claims, claim_labels=labels)


# ------------------------------------------------------------------------------------------ triplets


def _triplets(record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings) -> RecordGold:
    assert spec.field
    elements = [structured(e) for e in list_at(record, spec.field)]
    beside = _labels_beside(record, spec, len(elements), "triplets")
    found = []
    for k, element in enumerate(elements):
        where = f"{spec.field}[{k}]"
        raw: Any = beside[k] if beside is not None else None
        wrong: Any = None
        if isinstance(element, dict):
            parts = []
            for name in ("subject", "relation", "object"):
                part = text_of(value_at(element, spec.key(name)), f"{where}.{spec.key(name)}")
                if not part or not part.strip():
                    raise RecordError(f"{where}.{spec.key(name)}", "missing or empty")
                parts.append(part.strip())
            triplet = (parts[0], parts[1], parts[2])
            if beside is None:
                raw = value_at(element, spec.key("label"))
                raw = None if raw is MISSING else raw
            wrong = value_at(element, spec.key("wrong_part"))
            wrong = None if wrong is MISSING else wrong
        else:
            parsed = parse_triplet(element)
            if parsed is None:
                raise RecordError(where, f"{element!r} is not a triplet (subject, relation, object)")
            triplet = parsed
        label_where = f"{spec.labels}[{k}]" if spec.labels else f"{where}.{spec.key('label')}"
        if spec.values:
            verdict, wrong_part = choice(raw, spec, VERDICTS, label_where), None
            if verdict == "no" and wrong in ("object1", "object2", "relation"):
                wrong_part = wrong
        else:
            try:
                verdict, wrong_part = verdict_of(raw, wrong)
            except RecordError as error:
                raise RecordError(label_where, error.reason) from None
        subject, relation, obj = triplet
        found.append(TripletRecord(subject, relation, obj, verdict=verdict, wrong_part=wrong_part))
    if spec.reference:
        return RecordGold(reference_triplets=[TripletRecord(t.subject, t.relation, t.object) for t in found])
    return RecordGold(triplets=found)


# ------------------------------------------------------------------------------------ response score


def _response_score(
    record: dict[str, Any], spec: GoldSpec, response: str | None, warnings: Warnings
) -> RecordGold:
    assert spec.field and spec.scale
    raw = value_at(record, spec.field)
    if raw is MISSING or raw is None or raw == "":
        return RecordGold()
    score = number_of(mapped(raw, spec, spec.field), spec.field)
    low, high = spec.scale
    if not low <= score <= high:
        raise RecordError(spec.field, f"{score:g} is outside the scale {low:g} to {high:g}")
    if low != int(low) or high != int(high):
        raise RecordError(
            spec.field, f"a response score's scale runs between whole numbers; got {low:g} to {high:g}"
        )
    return RecordGold(response_score=ResponseScoreRecord(score, scale_min=int(low), scale_max=int(high)))


_READERS = {
    "offsets": _offsets,
    "inline_tags": _inline_tags,
    "word_indices": _word_indices,
    "token_labels": _token_labels,
    "sentence_labels": _sentence_labels,
    "claims": _claims,
    "triplets": _triplets,
    "response_score": _response_score,
}
