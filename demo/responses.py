"""Turn statements into a model response with injected, typed hallucinations and its gold labels.

A response is its statements' sentences joined by single spaces. At most one slot per sentence is
swapped for a wrong value, so each incorrect sentence has exactly one gold span and one error type.

Gold spans follow MHALO's minimal-span rule ("the smallest erroneous components requiring revision"),
at word granularity: the words the wrong value shares with the true one are left out (``top right`` for
``top left`` → span ``right``; ``to the right of`` → ``right``). Invented objects are spanned whole
(``yellow star``). Sentence labels follow the spans: a sentence with a gold span is ``incorrect`` with
that span's type, a subjective sentence is ``unknown`` (it never holds a span), all others ``correct``.
Claims and triplets are rendered from the same slot values, so they agree with the spans.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from string import Formatter

from demo.scenes import Scene
from demo.statements import Statement
from formats.records import (
    ClaimLabelRecord,
    ClaimRecord,
    SentenceLabelRecord,
    SpanRecord,
    TripletRecord,
)

Range = tuple[int, int]

# MHALO error type → MHaluBench claim type of the claim it makes false.
CLAIM_TYPE_OF_ERROR = {"Object": "object", "OCR": "scene-text", "Knowledge Error": "fact"}
TRIPLET_PARTS = (("object1", 0), ("relation", 1), ("object2", 2))


@dataclass
class Description:
    """A rendered response with everything the labellers and simulated detectors need to know."""

    text: str
    reference: str  # the same description with every slot true and nothing invented
    sentences: list[Range]
    gold_spans: list[SpanRecord]
    sentence_labels: list[SentenceLabelRecord]
    # Character ranges of slot values that are true: plausible places for a false alarm.
    true_slots: list[tuple[int, int, str]] = field(default_factory=list)
    claims: list[ClaimRecord] = field(default_factory=list)
    claim_labels: list[ClaimLabelRecord] = field(default_factory=list)
    claim_ranges: list[list[Range]] = field(default_factory=list)
    triplets: list[TripletRecord] = field(default_factory=list)
    # For each triplet: part name → character ranges of the slots it was rendered from.
    triplet_ranges: list[dict[str, list[Range]]] = field(default_factory=list)


def minimal_span(true: str | None, fake: str) -> Range:
    """The part of ``fake`` (as offsets into it) that differs from ``true``, trimmed to whole words."""
    words = fake.split(" ")
    if true is None:
        return 0, len(fake)
    truth = true.split(" ")
    head = 0
    while head < len(words) - 1 and head < len(truth) and words[head] == truth[head]:
        head += 1
    tail = 0
    while tail < len(words) - head - 1 and tail < len(truth) - head and words[-1 - tail] == truth[-1 - tail]:
        tail += 1
    start = sum(len(w) + 1 for w in words[:head])
    end = len(fake) - sum(len(w) + 1 for w in words[len(words) - tail :])
    return start, end


def _fields(template: str) -> list[str]:
    return [name for _, name, _, _ in Formatter().parse(template) if name]


def _render_sentence(
    statement: Statement, swap: tuple[str, str] | None, offset: int
) -> tuple[str, dict[str, Range]]:
    """The sentence text and where each slot value landed (absolute offsets)."""
    text, where = "", {}
    for literal, name, _, _ in Formatter().parse(statement.template):
        text += literal
        if name:
            slot = statement.slots[name]
            value = swap[1] if swap and swap[0] == name else slot.true
            assert value is not None, "an invented slot must be swapped in"
            where[name] = (offset + len(text), offset + len(text) + len(value))
            text += value
    return text, where


def render(statements: list[Statement], swaps: dict[int, tuple[str, str]]) -> Description:
    """Render ``statements``; ``swaps[i] = (slot, wrong value)`` makes sentence ``i`` hallucinate."""
    for i, st in enumerate(statements):
        if st.invented and i not in swaps:
            raise ValueError(f"statement {i} invents an object but has no swap")
    reference = " ".join(_render_sentence(st, None, 0)[0] for st in statements if not st.invented)
    out = Description(text="", reference=reference, sentences=[], gold_spans=[], sentence_labels=[])
    pieces: list[str] = []
    offset = 0
    for index, st in enumerate(statements):
        swap = swaps.get(index)
        sentence, where = _render_sentence(st, swap, offset)
        pieces.append(sentence)
        out.sentences.append((offset, offset + len(sentence)))
        error_type = None
        if swap:
            slot = st.slots[swap[0]]
            s, e = minimal_span(slot.true, swap[1])
            base = where[swap[0]][0]
            note = f"image shows: {slot.true}" if slot.true is not None else "not in the image"
            out.gold_spans.append(SpanRecord(base + s, base + e, type=slot.type, note=note))
            error_type = slot.type
        for name, (s, e) in where.items():
            if not swap or swap[0] != name:
                out.true_slots.append((s, e, st.slots[name].type))
        if st.subjective:
            out.sentence_labels.append(SentenceLabelRecord(index, "unknown"))
        elif error_type:
            out.sentence_labels.append(SentenceLabelRecord(index, "incorrect", error_type=error_type))
        else:
            out.sentence_labels.append(SentenceLabelRecord(index, "correct"))
        _add_claims(out, st, swap, where, index, sentence)
        _add_triplets(out, st, swap, where)
        offset += len(sentence) + 1
    out.text = " ".join(pieces)
    return out


def _values(statement: Statement, swap: tuple[str, str] | None) -> dict[str, str]:
    values = {name: slot.true or "" for name, slot in statement.slots.items()}
    if swap:
        values[swap[0]] = swap[1]
    return values


def _add_claims(
    out: Description,
    st: Statement,
    swap: tuple[str, str] | None,
    where: dict[str, Range],
    index: int,
    sentence: str,
) -> None:
    values = _values(st, swap)
    for template, own_type in st.claims:
        used = _fields(template)
        wrong = swap is not None and swap[0] in used
        k = len(out.claims)
        out.claims.append(ClaimRecord(template.format(**values), segment=index, segment_text=sentence))
        out.claim_ranges.append([where[name] for name in used])
        if wrong:
            assert swap is not None
            slot = st.slots[swap[0]]
            claim_type = CLAIM_TYPE_OF_ERROR.get(slot.type, "attribute")
            reason = (
                f"There is no {swap[1]} in the image."
                if slot.true is None
                else f'The image shows "{slot.true}", not "{swap[1]}".'
            )
            out.claim_labels.append(ClaimLabelRecord(k, "hallucination", type=claim_type, reason=reason))
        else:
            out.claim_labels.append(
                ClaimLabelRecord(k, "non-hallucination", type=own_type, reason="Consistent with the image.")
            )


def _add_triplets(
    out: Description, st: Statement, swap: tuple[str, str] | None, where: dict[str, Range]
) -> None:
    values = _values(st, swap)
    for template in st.triplets:
        subject, relation, object_ = (p.format(**values) for p in template)
        ranges = {part: [where[n] for n in _fields(template[i])] for part, i in TRIPLET_PARTS}
        wrong_part = None
        if swap:
            wrong_part = next((part for part, i in TRIPLET_PARTS if swap[0] in _fields(template[i])), None)
        out.triplets.append(
            TripletRecord(
                subject, relation, object_, verdict="no" if wrong_part else "yes", wrong_part=wrong_part
            )
        )
        out.triplet_ranges.append(ranges)


def choose_swaps(
    statements: list[Statement], n_errors: int, rng: random.Random
) -> dict[int, tuple[str, str]]:
    """Pick ``n_errors`` sentences to falsify, one slot each, spreading over error types.

    A type is drawn first and then a slot of that type, so rare types (OCR, Knowledge Error) are not
    drowned by the many colour and position slots.
    """
    swaps: dict[int, tuple[str, str]] = {}
    for i, st in enumerate(statements):
        if st.invented:
            name, slot = next(iter(st.slots.items()))
            swaps[i] = (name, slot.fakes[0])
    while len(swaps) < n_errors:
        by_type: dict[str, list[tuple[int, str]]] = {}
        for i, st in enumerate(statements):
            if i in swaps or st.subjective:
                continue
            for name, slot in st.slots.items():
                if slot.fakes:
                    by_type.setdefault(slot.type, []).append((i, name))
        if not by_type:
            break
        chosen_type = rng.choice(sorted(by_type))
        i, name = rng.choice(by_type[chosen_type])
        swaps[i] = (name, rng.choice(statements[i].slots[name].fakes))
    return swaps


@dataclass
class DemoItem:
    """One demo item as the labellers see it: the scene behind it and its rendered description."""

    external_id: str
    scene: Scene
    description: Description
    task_type: str = "image-to-text"
    has_claims: bool = False
    has_triplets: bool = False

    @property
    def text(self) -> str:
        return self.description.text

    @property
    def clean(self) -> bool:
        return not self.description.gold_spans
