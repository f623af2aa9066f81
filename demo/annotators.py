"""Simulated people: two span annotators (for the agreement page) and three raters (MHALO Table 4).

Annotators "alice" and "bob" label the first 20 image-to-text items. They copy the gold spans except for
deliberate, documented disagreements, so agreement measures land high but below 1:

- alice widens 3 gold spans by the word before them (a boundary disagreement), misses 1 gold span,
  and labels every subjective ("unknown" in gold) sentence ``correct``;
- bob adds 2 spans on true words (false alarms, typed like the slot they sit on), gives 2 gold spans a
  different type ("Object"), and keeps subjective sentences ``unknown``.

Each annotator's sentence labels follow their own spans (``incorrect`` with the span's type where
they marked one, else as above).

Raters "rater-1" … "rater-3" score every predicted segment of the ``eager`` detector on 30 items
(all items where it flagged nothing, then the earliest others) on MHALO's 1–4 scale: 4 for an exact
match of a gold span, 3 for token IoU >= 0.5, 2 for a smaller overlap, 1 for a false alarm — then each
rater moves a score by one step with probability 0.15 (rater-3 is also stricter: a 3 becomes 2 with
probability 0.3), never past 3 for a non-exact segment nor past 2 for a false alarm, and never below 3
for an exact match. Items where eager flagged nothing get one response-level rating per rater with
``score=None`` and ``nothing_flagged_correct`` = "the item has no gold span".
"""

from __future__ import annotations

import random

from db.rubrics import MHALO_TABLE_4
from demo.responses import DemoItem
from demo.tokens import Range, overlaps, token_interval, tokenize
from formats.records import (
    Annotations,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    SentenceLabelRecord,
    SpanRecord,
)
from metrics.matching import span_iou

RATERS = ("rater-1", "rater-2", "rater-3")
RATED_ITEMS = 30
HUMAN_ITEMS = 20


def _sentence_labels(item: DemoItem, spans: list[SpanRecord], unknown_as: str) -> list[SentenceLabelRecord]:
    out = []
    for k, ((s, e), gold) in enumerate(
        zip(item.description.sentences, item.description.sentence_labels, strict=True)
    ):
        hit = next((sp for sp in spans if overlaps((sp.start, sp.end), (s, e))), None)
        if hit:
            out.append(SentenceLabelRecord(k, "incorrect", error_type=hit.type))
        elif gold.label == "unknown":
            out.append(SentenceLabelRecord(k, unknown_as))
        else:
            out.append(SentenceLabelRecord(k, "correct"))
    return out


def _widen(item: DemoItem, span: SpanRecord) -> SpanRecord | None:
    """The span grown by the word before it, if that word is in the same sentence."""
    tokens = tokenize(item.text)
    first, _ = token_interval(tokens, (span.start, span.end))
    sentence = next(s for s in item.description.sentences if s[0] <= span.start < s[1])
    if first == 0 or tokens[first - 1][0] < sentence[0]:
        return None
    return SpanRecord(tokens[first - 1][0], span.end, span.type, span.note)


def human_label_sets(items: list[DemoItem], seed: int) -> list[LabelSetRecord]:
    rng = random.Random(f"{seed}:humans")
    chosen = [i for i in items if i.task_type == "image-to-text" and i.external_id != "demo-xss"]
    chosen = chosen[:HUMAN_ITEMS]
    alice = {i.external_id: list(i.description.gold_spans) for i in chosen}
    bob = {i.external_id: list(i.description.gold_spans) for i in chosen}
    by_id = {i.external_id: i for i in chosen}
    spans_at = [(i.external_id, k) for i in chosen for k in range(len(i.description.gold_spans))]

    picks = rng.sample(spans_at, 4)
    widened = 0
    for ext, k in picks[:3]:
        wide = _widen(by_id[ext], alice[ext][k])
        if wide:
            alice[ext][k] = wide
            widened += 1
    ext, k = picks[3]
    del alice[ext][k]

    for ext, k in rng.sample(spans_at, 2):
        old = bob[ext][k]
        bob[ext][k] = SpanRecord(old.start, old.end, "Object" if old.type != "Object" else "OCR", old.note)
    free = [
        (i.external_id, s, e, t)
        for i in chosen
        for s, e, t in i.description.true_slots
        if not any(overlaps((s, e), (g.start, g.end)) for g in i.description.gold_spans)
    ]
    for ext, s, e, t in rng.sample(free, 2):
        bob[ext].append(SpanRecord(s, e, t, "false alarm"))
        bob[ext].sort(key=lambda sp: sp.start)

    sets = []
    for name, spans_by_item, unknown_as in (("alice", alice, "correct"), ("bob", bob, "unknown")):
        annotations = [
            Annotations(
                item=i.external_id,
                spans=spans_by_item[i.external_id],
                sentence_labels=_sentence_labels(i, spans_by_item[i.external_id], unknown_as),
            )
            for i in chosen
        ]
        sets.append(LabelSetRecord(kind="human", name=name, annotator=name, annotations=annotations))
    return sets


def _base_score(item: DemoItem, span: Range) -> int:
    gold = [(g.start, g.end) for g in item.description.gold_spans]
    if span in gold:
        return 4
    tokens = tokenize(item.text)
    st = token_interval(tokens, span)
    best = max((span_iou(st, token_interval(tokens, g)) for g in gold if overlaps(span, g)), default=0.0)
    if best == 0.0:
        return 1
    return 3 if best >= 0.5 else 2


def _noisy(base: int, rater: str, rng: random.Random) -> int:
    score = base
    if rng.random() < 0.15:
        score += rng.choice((-1, 1))
    if rater == "rater-3" and score == 3 and rng.random() < 0.3:
        score = 2
    ceiling = {4: 4, 3: 3, 2: 3, 1: 2}[base]
    floor = 3 if base == 4 else 1
    return max(floor, min(ceiling, score))


def rating_task(items: list[DemoItem], eager: LabelSetRecord, seed: int) -> RatingTaskRecord:
    """MHALO-style 1–4 ratings of the eager detector's predicted segments by three raters."""
    rng = random.Random(f"{seed}:ratings")
    spans_of = {a.item: [(s.start, s.end) for s in a.spans] for a in eager.annotations}
    silent = [i for i in items if not spans_of[i.external_id]]
    rest = [i for i in items if spans_of[i.external_id]]
    rated_ids = {i.external_id for i in silent + rest[: RATED_ITEMS - len(silent)]}
    ratings = []
    for item in items:
        if item.external_id not in rated_ids:
            continue
        spans = spans_of[item.external_id]
        for rater in RATERS:
            if not spans:
                ratings.append(
                    RatingRecord(item.external_id, rater, None, nothing_flagged_correct=item.clean)
                )
            for span in spans:
                score = _noisy(_base_score(item, span), rater, rng)
                ratings.append(RatingRecord(item.external_id, rater, float(score), span[0], span[1]))
    return RatingTaskRecord(
        name="MHALO segment ratings",
        detector="eager",
        granularity="segment",
        scale_min=1,
        scale_max=4,
        rubric=dict(MHALO_TABLE_4),
        ratings=ratings,
    )
