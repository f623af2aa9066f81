"""FaithScore annotations (the ``annotation.jsonl`` of the FaithScore release): answers of vision-language
models about COCO images, with their sub-sentences and atomic facts labelled by people.

One JSON object per line: ``id`` (a COCO val2014 image id such as ``"000000525439"``; the image is
``COCO_val2014_000000525439.jpg``), ``answer`` (the model's answer), ``"stage 1"`` ``{sub-sentence: 0|1}``
and ``"stage 2"`` ``{atomic fact: 0|1}``. An image has several answers (one per question), so an item is
named ``<image id>-<k>`` for the k-th answer about that image in the file; an export writes that name as
``item_id`` wherever reading the exported file would not give it back by itself (a record was rejected).

Sub-sentences are the answer cut at commas and full stops, each keeping its leading space
(``" with the skateboarder standing on it"``). Each is found in the answer, after the previous one, and
becomes one sentence row of the item (without the surrounding whitespace, which is kept for the export).
Atomic facts are rewritten statements (``"There is a skateboard."``), not parts of the answer: they become
the item's claims, without offsets.

**What 0 and 1 mean.** The release's README says a stage-1 ``1`` marks an *analytical* sub-sentence and a
stage-2 ``1`` a fact that *contains hallucination*. The annotations say the opposite, so by default
(``polarity="data"``) Spanlight reads them as they are used:

* stage 2: ``"There is a skateboard."``, ``"There is a skateboarder."`` are 1 for an answer about a boy
  skateboarding on a ramp (image 525439), as are ``"There is a car."`` and ``"There is a parking meter."``
  for the car at a parking meter (image 97131); the pen, pencil and notebook one answer adds to a desk
  that the shorter answer about the same image (151358) lists as newspaper, book, sunglasses and apple
  are 0. So 1 = faithful (``non-hallucination``), 0 = ``hallucination``.
* stage 1: ``"In the image"``, ``"Firstly"``, ``"Overall"`` and speculation (``"The cat may have chosen the
  red velvet couch as a sleeping spot…"``, ``"which suggests that the cat is in a cozy… environment"``) are
  0, while ``"The image features a young boy standing on a skateboard"`` is 1. So 1 = descriptive (to be
  checked against the image), 0 = analytical.

``polarity="readme"`` (``--faithscore-polarity readme``; a choice on the Import page) reads both stages
the README's way instead. The polarity an item was read with is kept, so its export writes the same
digits back.

**Labels.** An analytical sub-sentence gets the sentence label ``unknown``, as M-HalDetect's ANALYSIS
segments do: it states nothing the image could confirm, and FaithScore leaves it out of verification. A
descriptive one gets no sentence label: stage 1 says it can be checked, not whether it is right (its
atomic facts say that). Each atomic fact gets the claim label ``hallucination`` or ``non-hallucination``.

**Problems.** A sub-sentence not found in the answer rejects the record, naming it. A key a stage object
repeats (JSON keeps only one of them) is a warning when both say the same — a repeated sub-sentence is
placed on its next occurrence, a repeated fact is one claim — and rejects the record when they differ. A
record repeating an earlier one's image and answer is dropped with a warning when its labels are the same,
and rejected, naming the first label that differs, when they are not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from formats.base import ReadOptions, ReadResult
from formats.bundles import annotations_by_item
from formats.fields import RecordError, get_str, storable_object, type_name
from formats.ids import id_was_int
from formats.problems import Problem
from formats.record_formats import BenchmarkRecordsFormat, RecordReader, Warnings
from formats.records import (
    Annotations,
    Bundle,
    ClaimLabelRecord,
    ClaimRecord,
    ItemRecord,
    SentenceLabelRecord,
    SentenceRecord,
)
from formats.sentences import split_sentences
from formats.text import head_text, looks_like_json

IMAGE_ID, ANSWER, STAGE_1, STAGE_2, ITEM_ID = "id", "answer", "stage 1", "stage 2", "item_id"
KNOWN_KEYS = (ITEM_ID, IMAGE_ID, ANSWER, STAGE_1, STAGE_2)
POLARITIES = ("data", "readme")
POLARITY_HELP = {
    "data": "as the annotations use them: 1 = faithful fact / descriptive sub-sentence",
    "readme": "as the README states: 1 = hallucinated fact / analytical sub-sentence",
}
ANALYTICAL = "unknown"


class StageObject(dict[str, Any]):
    """A JSON object that also keeps its ``(key, value)`` pairs in file order, repeated keys included."""

    pairs: list[tuple[str, Any]]


def object_with_pairs(pairs: list[tuple[str, Any]]) -> StageObject:
    found = StageObject(pairs)
    found.pairs = pairs
    return found


def image_file(image_id: str) -> str | None:
    """``COCO_val2014_%012d.jpg`` of a COCO image id, or None when the id is not a number."""
    return f"COCO_val2014_{int(image_id):012d}.jpg" if image_id.isascii() and image_id.isdigit() else None


def _bit(value: Any, field: str, key: str) -> int:
    if isinstance(value, bool) or value not in (0, 1):
        raise RecordError(
            field, f"{key!r}: expected 0 or 1, got {json.dumps(value)[:40]} ({type_name(value)})"
        )
    return int(value)


def stage_pairs(record: dict[str, Any], field: str, warnings: Warnings) -> list[tuple[str, int]]:
    """The ``(key, 0|1)`` pairs of a stage object in file order: a key repeated with the same label is
    kept (and reported), one repeated with another label rejects the record."""
    value = record.get(field)
    if value is None:
        raise RecordError(field, "missing")
    if not isinstance(value, dict):
        raise RecordError(field, f"expected an object of {{text: 0 or 1}}, got {type_name(value)}")
    pairs = value.pairs if isinstance(value, StageObject) else list(value.items())
    seen: dict[str, int] = {}
    found = []
    for key, raw in pairs:
        if not key.strip():
            raise RecordError(field, "holds an empty key")
        bit = _bit(raw, field, key)
        if key in seen and seen[key] != bit:
            raise RecordError(field, f"{key!r} is listed twice, with {seen[key]} and with {bit}")
        if key in seen:
            what = "placed on its next occurrence in the answer" if field == STAGE_1 else "kept once"
            warnings.append((field, f"{key!r} is listed twice (JSON keeps only one of them); {what}"))
            if field == STAGE_2:
                continue
        seen[key] = bit
        found.append((key, bit))
    return found


def locate(answer: str, fragments: Sequence[str]) -> Iterator[tuple[int, int, str, str]]:
    """``(start, end, leading, trailing)`` of each fragment in ``answer``, each after the previous one;
    the row is the fragment without the whitespace around it."""
    cursor = 0
    for fragment in fragments:
        at = answer.find(fragment, cursor)
        if at == -1:
            where = (
                "in the answer" if answer.find(fragment) == -1 else f"in the answer after character {cursor}"
            )
            raise RecordError(STAGE_1, f"the sub-sentence {fragment!r} is not {where}")
        leading = fragment[: len(fragment) - len(fragment.lstrip())]
        trailing = fragment[len(fragment.rstrip()) :]
        yield at + len(leading), at + len(fragment) - len(trailing), leading, trailing
        cursor = at + len(fragment)


def _faithful(bit: int, polarity: str) -> bool:
    """Whether a stage-2 digit marks a faithful fact (or a stage-1 digit a descriptive sub-sentence)."""
    return bit == 1 if polarity == "data" else bit == 0


def _digit(yes: bool, polarity: str) -> int:
    """The digit saying ``yes`` (faithful / descriptive) in ``polarity``."""
    return int(yes) if polarity == "data" else int(not yes)


class FaithScoreReader:
    """Reads the records of one file, remembering the answers already read (for repeats) and how many
    answers each image has had (for item names)."""

    def __init__(self, stem: str, polarity: str) -> None:
        self.stem = stem
        self.polarity = polarity
        self.answers: dict[tuple[str, str], tuple[int, str, Any]] = {}
        self.per_image: dict[str, int] = {}

    def __call__(self, record: Any, index: int, warnings: Warnings) -> tuple[ItemRecord, Annotations]:
        storable_object(record)
        image_id = record.get(IMAGE_ID)
        if isinstance(image_id, bool) or not isinstance(image_id, str | int) or not str(image_id).strip():
            raise RecordError(
                IMAGE_ID, f"expected the COCO image id (text or a number), got {type_name(image_id)}"
            )
        image_id = str(image_id)
        k = self.per_image.get(image_id, 0)
        answer = record.get(ANSWER)
        earlier = self.answers.get((image_id, answer)) if isinstance(answer, str) else None
        if earlier is None or ITEM_ID in record:
            # Every answer keeps its place, also a rejected one: fixing it later renames no other item.
            self.per_image[image_id] = k + 1
        answer = get_str(record, ANSWER, allow_empty=False)
        stage_1 = stage_pairs(record, STAGE_1, warnings)
        stage_2 = stage_pairs(record, STAGE_2, warnings)
        rows = list(locate(answer, [key for key, _ in stage_1]))
        given = get_str(record, ITEM_ID, required=False, allow_empty=False)
        labels = (stage_1, stage_2)
        if earlier is not None and given is None:
            first, ext, their_labels = earlier
            if their_labels != labels:
                raise RecordError(*self._difference(first, their_labels, labels))
            # An exact repeat: the first one's name, so the record loop drops it as a copy.
        else:
            ext = given or f"{image_id}-{k}"
            self.answers.setdefault((image_id, answer), (index, ext, labels))
        image = image_file(image_id)
        if image is None:
            warnings.append((IMAGE_ID, f"{image_id!r} is not a COCO image id; the item has no image"))
        item = ItemRecord(
            external_id=ext,
            response=answer,
            image_ref=image,
            sentences=[SentenceRecord(start, end) for start, end, _, _ in rows],
            claims=[ClaimRecord(fact) for fact, _ in stage_2],
            meta={
                "fields": {k: v for k, v in record.items() if k not in KNOWN_KEYS},
                "layout": {
                    "keys": [k for k in record if k != ITEM_ID],
                    "image_id": record[IMAGE_ID],
                    "int_id": id_was_int(record, IMAGE_ID),
                    "polarity": self.polarity,
                    "padding": [[lead, trail] for _, _, lead, trail in rows],
                },
            },
        )
        gold = Annotations(
            ext,
            sentence_labels=[
                SentenceLabelRecord(k, ANALYTICAL)
                for k, (_, bit) in enumerate(stage_1)
                if not _faithful(bit, self.polarity)
            ],
            claim_labels=[
                ClaimLabelRecord(k, "non-hallucination" if _faithful(bit, self.polarity) else "hallucination")
                for k, (_, bit) in enumerate(stage_2)
            ],
        )
        return item, gold

    @staticmethod
    def _difference(first: int, theirs: tuple[Any, ...], ours: tuple[Any, ...]) -> tuple[str, str]:
        for field, a, b in zip((STAGE_1, STAGE_2), theirs, ours, strict=True):
            if a != b:
                mine, other = dict(b), dict(a)
                key = next((k for k in {**other, **mine} if other.get(k) != mine.get(k)), None)
                shown = (
                    f"{key!r} is {other.get(key, 'missing')} there and {mine.get(key, 'missing')} here"
                    if key is not None
                    else "its entries are in another order"
                )
                return (
                    field,
                    f"the same answer about the same image as record #{first}, with other labels: {shown}",
                )
        raise AssertionError("labels differ")  # pragma: no cover - only called when they do


class FaithScoreFormat(BenchmarkRecordsFormat):
    name = "faithscore"
    title = "FaithScore annotations (JSONL)"
    extensions = (".jsonl", ".json")
    label_kinds = ("sentence", "claim")
    holds = ("sentence", "claim")
    pairs_hook = object_with_pairs
    description = 'JSON lines {id: COCO image id, answer, "stage 1": {sub-sentence: 0|1}, "stage 2": {atomic fact: 0|1}}.'

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data, 16384)
        if looks_like_json(data) and all(f'"{k}"' in head for k in (ANSWER, STAGE_1, STAGE_2)):
            return 0.95
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        polarity = (options or ReadOptions()).faithscore_polarity
        if polarity not in POLARITIES:
            reason = f"{polarity!r} is not a FaithScore polarity; choose {' or '.join(POLARITIES)}"
            return ReadResult(None, [Problem(source, "-", "polarity", reason)])
        return super().read(data, source=source, options=options)

    def record_reader(self, stem: str, options: ReadOptions) -> RecordReader:
        return FaithScoreReader(stem, options.faithscore_polarity)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        by_item = annotations_by_item(bundle)
        lines = []
        per_image: dict[str, int] = {}
        answers: set[tuple[str, str]] = set()
        for item in bundle.items:
            layout = item.meta.get("layout") or {}
            polarity = str(layout["polarity"]) if layout.get("polarity") in POLARITIES else "data"
            image_id = layout.get("image_id", _image_id_of(item))
            k = per_image.get(str(image_id), 0)
            per_image[str(image_id)] = k + 1
            repeated = (str(image_id), item.response) in answers
            answers.add((str(image_id), item.response))
            annotations = by_item.get(item.external_id)
            fields = item.meta.get("fields") or {}
            written = {key: _json(value) for key, value in fields.items()}
            written.update(
                {
                    IMAGE_ID: _json(image_id),
                    ANSWER: _json(item.response),
                    STAGE_1: _object(_stage_1(item, annotations, layout, polarity)),
                    STAGE_2: _object(_stage_2(item, annotations, polarity)),
                }
            )
            keys = list(layout.get("keys") or (IMAGE_ID, ANSWER, STAGE_1, STAGE_2))
            # The reader names the k-th answer about an image "<image id>-<k>" and takes a repeated
            # answer for a copy: an item named otherwise, or repeating an answer, says its name.
            if item.external_id != f"{image_id}-{k}" or repeated:
                keys.insert(0, ITEM_ID)
                written[ITEM_ID] = _json(item.external_id)
            lines.append(_object([(key, written.get(key, "null")) for key in keys]) + "\n")
        return "".join(lines).encode("utf-8")

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.faithscore.jsonl"


def _image_id_of(item: ItemRecord) -> str:
    found = re.fullmatch(r"COCO_val2014_(\d{12})\.jpg", item.image_ref or "")
    return found.group(1) if found else item.external_id


def _stage_1(
    item: ItemRecord, annotations: Annotations | None, layout: dict[str, Any], polarity: str
) -> list[tuple[str, int]]:
    rows = (
        [(s.start, s.end) for s in item.sentences]
        if item.sentences is not None
        else split_sentences(item.response)
    )
    kept = layout.get("padding")
    padding: list[Any] = kept if isinstance(kept, list) and len(kept) == len(rows) else [["", ""]] * len(rows)
    analytical = (
        {lab.index for lab in annotations.sentence_labels if lab.label == ANALYTICAL}
        if annotations
        else set()
    )
    return [
        (f"{lead}{item.response[start:end]}{trail}", _digit(k not in analytical, polarity))
        for k, ((start, end), (lead, trail)) in enumerate(zip(rows, padding, strict=True))
    ]


def _stage_2(item: ItemRecord, annotations: Annotations | None, polarity: str) -> list[tuple[str, int]]:
    labels = {lab.index: lab.label for lab in annotations.claim_labels} if annotations else {}
    return [
        (claim.text, _digit(labels[k] == "non-hallucination", polarity))
        for k, claim in enumerate(item.claims)
        if k in labels
    ]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _object(pairs: Sequence[tuple[str, Any]]) -> str:
    """A JSON object written from its pairs (values already JSON text, or numbers): unlike a dict, it
    keeps a key listed twice, as a sub-sentence repeated in one answer is."""
    return "{" + ", ".join(f"{_json(key)}: {value}" for key, value in pairs) + "}"


FORMAT = FaithScoreFormat()
