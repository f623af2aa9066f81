"""Three simulated hallucination detectors with deliberately different, documented behaviour.

Each one produces, per item, what a real detector run gives Spanlight: a raw MHALO-style output (a
header line, then the response inside ``<Tagged_Text>…</Tagged_Text>`` with ``<hallucination>`` tags;
the Analyze-then-Judge detector writes an ``<Analysis>…</Analysis>`` part first), the spans parsed from
it (character offsets into the response, untyped, as detectors give them), a 0–100 correctness score
per sentence (AlignBench style) and a hallucination probability per whitespace token (HalLoc style).
The cautious and eager detectors also label claims (on items with claims) and judge extracted triplets
(on items with triplets) — a prediction is "hallucination" / "no" exactly when one of the detector's
spans overlaps the words the claim or triplet part was made from.

Guarantees. "Tokens" are whitespace tokens; a character span covers every token it overlaps; token IoU
is as in the metrics contract. Structural ones hold for every seed (with ``n_scenes >= 20``):

``cautious`` (prompt strategy "vanilla")
    - every predicted span is character-for-character one of the item's gold spans (precision 1);
    - it never flags an item without gold spans;
    - every raw output follows the format and parses back to exactly its spans; no analysis;
    - token probabilities are calibrated by construction (drawn from Beta laws whose posterior
      P(gold token | p) equals p), in [0.001, 0.999].

``eager`` (prompt strategy "analyze-then-judge"; ``raw_output.analysis`` is set on every item and the
raw text starts with the ``<Analysis>`` part)
    - every predicted span either overlaps no gold token (a false positive) or overlaps exactly one
      gold span with token IoU >= 0.5 (most are exact; about a quarter take in one neighbouring token);
    - it flags nothing on exactly three items: the first two clean items (in item order) and the first
      item with exactly one gold span; it flags at least one span on every other item, hence on every
      other clean item;
    - every raw output follows the format and parses back to exactly its spans;
    - token probabilities are over-confident: in [0.90, 0.99] inside its spans, [0.01, 0.06] elsewhere.

``sloppy`` (prompt strategy "vanilla")
    - every predicted span overlaps exactly one gold span, with 0.2 <= token IoU < 0.5 (boundaries
      stretched or shifted over neighbouring words of the same sentence), so no prediction counts at
      F1_IoU's 0.5 threshold measured in tokens (in characters some do); it never flags an item
      without gold spans;
    - exactly two raw outputs break the format (``follows_format=False``, ``parse_error`` set, no
      spans): the first item (in order) with a predicted span and more than one sentence has an
      unclosed tag (``metrics.parse_tagged`` raises), the second drops the response's last sentence
      (parses, but does not match the response);
    - exactly three of its sentence scores are unparseable (``parsed=False``, score 50);
    - token probabilities in [0.55, 0.85] inside its spans, [0.05, 0.35] elsewhere.

Sentence scores (all detectors; a sentence is "flagged" when one of the detector's parsed spans
overlaps it, and the other bands use the gold sentence label):

    ==========  =======  =======  =======  ==================
    detector    flagged  correct  unknown  incorrect, missed
    ==========  =======  =======  =======  ==================
    cautious    3–25     62–98    45–75    50–85
    eager       2–30     60–95    40–70    40–75
    sloppy      15–65    35–95    30–80    30–85
    ==========  =======  =======  =======  ==================

Measured on the default build (60 scenes, seed 7), and what tests may rely on with margin:
cautious span recall 0.5–0.8; eager span recall (token IoU >= 0.5) >= 0.8 with >= 15 false
positives; ECE (10 bins) of cautious < 0.03, of sloppy > 0.15; eager tokens with p >= 0.9 are gold
in fewer than 75 % of cases; sentence AUROC (incorrect vs correct) > 0.85 for cautious and eager and
between 0.7 and 0.88 for sloppy.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from demo.responses import DemoItem
from demo.tokens import Range, char_range, overlaps, token_interval, tokenize
from formats.records import (
    Annotations,
    ClaimLabelRecord,
    LabelSetRecord,
    RawOutputRecord,
    SentenceScoreRecord,
    SpanRecord,
    TokenProbabilityRecord,
    TripletRecord,
)
from metrics.matching import span_iou

HEADER = "Here is the response with hallucinated content tagged:"
TAG_OPEN, TAG_CLOSE = "<hallucination>", "</hallucination>"
DETECTOR_VERSION = "simulated-1"

# Sentence score ranges: (flagged, correct, unknown, incorrect but missed).
_SCORES: dict[str, tuple[Range, Range, Range, Range]] = {
    "cautious": ((3, 25), (62, 98), (45, 75), (50, 85)),
    "eager": ((2, 30), (60, 95), (40, 70), (40, 75)),
    "sloppy": ((15, 65), (35, 95), (30, 80), (30, 85)),
}


# --------------------------------------------------------------------------------------------- spans


def _gold_ranges(item: DemoItem) -> list[Range]:
    return [(s.start, s.end) for s in item.description.gold_spans]


def cautious_spans(item: DemoItem, rng: random.Random) -> list[Range]:
    """Exact copies of about two thirds of the gold spans; nothing else."""
    return [g for g in _gold_ranges(item) if rng.random() < 0.65]


def _sentence_of(item: DemoItem, span: Range) -> Range:
    return next(s for s in item.description.sentences if overlaps(s, span))


def eager_spans(item: DemoItem, rng: random.Random) -> list[Range]:
    """Nearly every gold span (a quarter widened by one word), plus false alarms on true slots."""
    tokens = tokenize(item.text)
    gold = _gold_ranges(item)
    gold_tok = [token_interval(tokens, g) for g in gold]
    taken: list[Range] = list(gold_tok)  # token intervals nobody else may touch
    preds: list[Range] = []
    for g, gt in zip(gold, gold_tok, strict=True):
        if rng.random() >= 0.9:
            continue
        span = g
        if rng.random() < 0.25:
            lo, hi = token_interval(tokens, _sentence_of(item, g))
            options = [k for k in (gt[0] - 1, gt[1]) if lo <= k < hi]
            options = [k for k in options if not any(overlaps((k, k + 1), t) for t in taken)]
            if options:
                k = rng.choice(options)
                span = (tokens[k][0], g[1]) if k < gt[0] else (g[0], tokens[k][1])
                taken.append((k, k + 1))
        preds.append(span)
    n_false = rng.choice((1, 1, 2)) if item.clean else int(rng.random() < 0.4)
    candidates = [(s, e) for s, e, _ in item.description.true_slots]
    rng.shuffle(candidates)
    for cand in candidates:
        if n_false == 0:
            break
        ct = token_interval(tokens, cand)
        if any(overlaps(ct, t) for t in taken):
            continue
        preds.append(cand)
        taken.append(ct)
        n_false -= 1
    if not preds and gold:  # eager never stays silent on its own (see _silent_for_eager)
        preds.append(gold[0])
    return sorted(preds)


def sloppy_spans(item: DemoItem, rng: random.Random) -> list[Range]:
    """Most gold spans, each replaced by a token window with 0.2 <= IoU < 0.5 inside its sentence."""
    tokens = tokenize(item.text)
    gold_tok = [token_interval(tokens, g) for g in _gold_ranges(item)]
    chosen: list[Range] = []
    for g, gt in zip(_gold_ranges(item), gold_tok, strict=True):
        if rng.random() >= 0.85:
            continue
        lo, hi = token_interval(tokens, _sentence_of(item, g))
        others = [t for t in gold_tok if t != gt] + chosen
        windows = [
            (s, e)
            for s in range(lo, hi)
            for e in range(s + 1, hi + 1)
            if overlaps((s, e), gt)
            and 0.2 <= span_iou((s, e), gt) < 0.5
            and not any(overlaps((s, e), o) for o in others)
        ]
        if windows:
            chosen.append(rng.choice(windows))
    return sorted(char_range(tokens, w) for w in chosen)


# ------------------------------------------------------------------------------------------ raw output


def tag(text: str, spans: list[Range]) -> str:
    """``text`` with each span wrapped in ``<hallucination>`` markers (spans must not overlap)."""
    out, cursor = [], 0
    for s, e in sorted(spans):
        out += [text[cursor:s], TAG_OPEN, text[s:e], TAG_CLOSE]
        cursor = e
    out.append(text[cursor:])
    return "".join(out)


def wrap(tagged: str, analysis: str | None = None) -> str:
    """The full raw output: optional analysis part, header line, tagged text."""
    body = f"{HEADER}\n<Tagged_Text>\n{tagged}\n</Tagged_Text>"
    return f"<Analysis>\n{analysis}\n</Analysis>\n\n{body}" if analysis is not None else body


def _analysis(item: DemoItem, spans: list[Range]) -> str:
    gold = item.description.gold_spans
    lines = [f"The image shows {item.scene.summary()}."]
    if not spans:
        lines.append("Every statement in the response matches the image, so nothing is tagged.")
        return "\n".join(lines)
    lines.append("Compared with the response:")
    for n, span in enumerate(spans, 1):
        match = next((g for g in gold if overlaps((g.start, g.end), span)), None)
        if match is None:
            why = "this does not seem to match the image."
        elif match.note and match.note.startswith("image shows: "):
            why = f'the image shows "{match.note.removeprefix("image shows: ")}" here.'
        else:
            why = "there is no such thing in the image."
        lines.append(f'{n}. "{item.text[span[0] : span[1]]}": {why}')
    lines.append("Therefore the tagged parts are hallucinations.")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ scores and probs


def sentence_scores(item: DemoItem, spans: list[Range], detector: str, rng: random.Random) -> list[float]:
    flagged_r, correct_r, unknown_r, missed_r = _SCORES[detector]
    scores = []
    for (s, e), label in zip(item.description.sentences, item.description.sentence_labels, strict=True):
        if any(overlaps((s, e), p) for p in spans):
            low, high = flagged_r
        elif label.label == "correct":
            low, high = correct_r
        elif label.label == "unknown":
            low, high = unknown_r
        else:
            low, high = missed_r
        scores.append(float(rng.randint(low, high)))
    return scores


def calibrated_probabilities(
    item: DemoItem, rng: random.Random, base_rate: float, concentration: float = 4.0
) -> list[float]:
    """Probabilities with P(token is gold | p) = p in expectation.

    If p ~ Beta(a, b) with a / (a + b) = base rate, drawing positives from Beta(a + 1, b) and negatives
    from Beta(a, b + 1) makes the posterior of a positive given p exactly p (Bayes with densities
    proportional to p·g(p) and (1 − p)·g(p)).
    """
    a, b = base_rate * concentration, (1 - base_rate) * concentration
    gold = _gold_ranges(item)
    return [
        # Clamped to [0.001, 0.999] so a display rounded to 3 places never shows a certain 0 or 1.
        min(
            0.999,
            max(0.001, round(rng.betavariate(a + 1, b) if _in(t, gold) else rng.betavariate(a, b + 1), 3)),
        )
        for t in tokenize(item.text)
    ]


def _in(token: Range, spans: list[Range]) -> bool:
    return any(overlaps(token, s) for s in spans)


def banded_probabilities(
    item: DemoItem,
    spans: list[Range],
    rng: random.Random,
    inside: tuple[float, float],
    outside: tuple[float, float],
) -> list[float]:
    """``uniform(inside)`` for tokens the detector flagged, ``uniform(outside)`` for the rest."""
    return [round(rng.uniform(*(inside if _in(t, spans) else outside)), 3) for t in tokenize(item.text)]


def gold_token_rate(items: list[DemoItem]) -> float:
    hits = total = 0
    for item in items:
        gold = _gold_ranges(item)
        for t in tokenize(item.text):
            total += 1
            hits += any(overlaps(t, g) for g in gold)
    return hits / total


# ------------------------------------------------------------------------------------ claims, triplets


def claim_predictions(item: DemoItem, spans: list[Range]) -> list[ClaimLabelRecord]:
    d = item.description
    out = []
    for k, ranges in enumerate(d.claim_ranges):
        hit = [p for p in spans for r in ranges if overlaps(p, r)]
        gold_type = d.claim_labels[k].type
        if hit:
            quote = item.text[hit[0][0] : hit[0][1]]
            out.append(ClaimLabelRecord(k, "hallucination", gold_type, f'The detector tagged "{quote}".'))
        else:
            out.append(ClaimLabelRecord(k, "non-hallucination", gold_type, None))
    return out


def triplet_predictions(item: DemoItem, spans: list[Range]) -> list[TripletRecord]:
    d = item.description
    out = []
    for triplet, ranges in zip(d.triplets, d.triplet_ranges, strict=True):
        wrong = next(
            (part for part, rs in ranges.items() if any(overlaps(p, r) for p in spans for r in rs)), None
        )
        out.append(
            TripletRecord(
                triplet.subject,
                triplet.relation,
                triplet.object,
                verdict="no" if wrong else "yes",
                wrong_part=wrong,
            )
        )
    return out


# ------------------------------------------------------------------------------------------ assembly


def _token_records(item: DemoItem, probs: list[float]) -> list[TokenProbabilityRecord]:
    return [
        TokenProbabilityRecord(k, s, e, p)
        for k, ((s, e), p) in enumerate(zip(tokenize(item.text), probs, strict=True))
    ]


def _annotations(
    item: DemoItem,
    spans: list[Range],
    raw: RawOutputRecord,
    scores: list[float],
    probs: list[float],
    with_claims_and_triplets: bool,
) -> Annotations:
    ann = Annotations(
        item=item.external_id,
        spans=[SpanRecord(s, e) for s, e in spans] if raw.follows_format else [],
        raw_output=raw,
        sentence_scores=[SentenceScoreRecord(k, v) for k, v in enumerate(scores)],
        token_probabilities=_token_records(item, probs),
    )
    if with_claims_and_triplets and item.has_claims:
        ann.claim_labels = claim_predictions(item, spans)
    if with_claims_and_triplets and item.has_triplets:
        ann.triplets = triplet_predictions(item, spans)
    return ann


def _silent_for_eager(items: list[DemoItem]) -> set[str]:
    clean = [i.external_id for i in items if i.clean][:2]
    single = [i.external_id for i in items if len(i.description.gold_spans) == 1][:1]
    return {*clean, *single}


def _break_format(item: DemoItem, spans: list[Range], how: str) -> RawOutputRecord:
    tagged = tag(item.text, spans)
    if how == "unclosed":
        cut = tagged.rindex(TAG_CLOSE)
        tagged = tagged[:cut] + tagged[cut + len(TAG_CLOSE) :]
        error = "unclosed <hallucination> tag"
    else:
        last_start = item.description.sentences[-1][0]
        tagged = tag(item.text[: last_start - 1], [p for p in spans if p[1] < last_start])
        error = "the tagged text does not match the response: its last sentence is missing"
    return RawOutputRecord(wrap(tagged), follows_format=False, parse_error=error)


def run_detectors(items: list[DemoItem], seed: int) -> list[LabelSetRecord]:
    """The three detector label sets for ``items`` (see the module docstring for their behaviour)."""
    base_rate = gold_token_rate(items)
    silent = _silent_for_eager(items)
    span_rules: dict[str, Callable[[DemoItem, random.Random], list[Range]]] = {
        "cautious": cautious_spans,
        "eager": lambda item, rng: [] if item.external_id in silent else eager_spans(item, rng),
        "sloppy": sloppy_spans,
    }
    sets = []
    for name, rule in span_rules.items():
        rng = random.Random(f"{seed}:detector:{name}")
        per_item = [rule(item, rng) for item in items]
        broken: dict[int, str] = {}
        if name == "sloppy":
            flagged = [
                k for k, spans in enumerate(per_item) if spans and len(items[k].description.sentences) > 1
            ]
            broken = {flagged[0]: "unclosed", flagged[1]: "truncated"}
        annotations = []
        for k, (item, spans) in enumerate(zip(items, per_item, strict=True)):
            if k in broken:
                raw = _break_format(item, spans, broken[k])
            elif name == "eager":
                analysis = _analysis(item, spans)
                raw = RawOutputRecord(wrap(tag(item.text, spans), analysis), True, analysis=analysis)
            else:
                raw = RawOutputRecord(wrap(tag(item.text, spans)), True)
            used = spans if raw.follows_format else []
            scores = sentence_scores(item, used, name, rng)
            if name == "cautious":
                probs = calibrated_probabilities(item, rng, base_rate)
            elif name == "eager":
                probs = banded_probabilities(item, used, rng, (0.90, 0.99), (0.01, 0.06))
            else:
                probs = banded_probabilities(item, used, rng, (0.55, 0.85), (0.05, 0.35))
            annotations.append(_annotations(item, used, raw, scores, probs, name != "sloppy"))
        if name == "sloppy":
            _mark_unparseable(annotations, rng, n=3)
        sets.append(
            LabelSetRecord(
                kind="detector",
                name=name,
                detector_version=DETECTOR_VERSION,
                prompt_strategy="analyze-then-judge" if name == "eager" else "vanilla",
                meta={"simulated": True},
                annotations=annotations,
            )
        )
    return sets


def _mark_unparseable(annotations: list[Annotations], rng: random.Random, n: int) -> None:
    """AlignBench scores an output it cannot parse as 50; make ``n`` sentence outputs unparseable."""
    slots = [(a, k) for a in annotations for k in range(len(a.sentence_scores))]
    for ann, k in rng.sample(slots, n):
        ann.sentence_scores[k] = SentenceScoreRecord(k, 50.0, parsed=False)
