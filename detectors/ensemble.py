"""Self-ensemble: one item judged K times by the same model, the answers combined into one output.

AlignBench (appendix F, Table F) samples several reasoning paths from one detector and combines their
scores, which improved every captioner's AUROC. Here each sample is parsed on its own, exactly as a
single answer would be, and then:

* scores are averaged (a sample with no readable score is left out; none readable scores 50, unparsed);
* spans are voted word by word: a word is flagged when more than half of the K samples flag it, and
  neighbouring flagged words form one span, its ends cut to the characters more than half flagged
  (a sample that broke the format flags nothing);
* claim verdicts and triplet verdicts go to the majority; a tie counts as a hallucination (a claim
  ``hallucination``, a triplet ``no``), the side a detector is there to find.

The raw output keeps every sample's answer (``{"samples": [...]}``); it followed the format when at
least one sample did, and its parse error names each sample that did not.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from detectors.base import RunItem
from formats.alignbench_scores import UNPARSED_SCORE
from formats.records import (
    Annotations,
    ClaimLabelRecord,
    RawOutputRecord,
    SentenceScoreRecord,
    SpanRecord,
    TripletRecord,
)
from metrics import token_offsets, token_spans

AGGREGATION = {
    "spans": "word majority",
    "sentence scores": "mean",
    "claim labels": "majority",
    "triplet judgments": "majority",
}


def combine(produces: str, item: RunItem, samples: Sequence[Annotations]) -> Annotations:
    """One output of ``item`` from the parsed answers of its K samples (K ≥ 1; one is returned as is)."""
    if len(samples) == 1:
        return samples[0]
    combined = Annotations(item.external_id, raw_output=_raw(samples))
    if produces == "spans":
        combined.spans = _voted_spans(item.response, samples)
    elif produces == "sentence scores":
        combined.sentence_scores = _mean_scores(samples)
    elif produces == "claim labels":
        combined.claim_labels = _majority_claims(samples)
    elif produces == "triplet judgments":
        combined.triplets = _majority_triplets(samples)
    else:
        raise ValueError(f"cannot combine samples of {produces!r}")
    return combined


def _raw(samples: Sequence[Annotations]) -> RawOutputRecord:
    raws = [s.raw_output for s in samples]
    texts = [r.text if r is not None else "" for r in raws]
    errors = [
        f"sample {k + 1}: {(r.parse_error if r is not None else None) or 'format not followed'}"
        for k, r in enumerate(raws)
        if r is None or not r.follows_format
    ]
    return RawOutputRecord(
        json.dumps({"samples": texts}, ensure_ascii=False),
        follows_format=len(errors) < len(samples),
        parse_error="; ".join(errors) or None,
    )


def _voted_spans(response: str, samples: Sequence[Annotations]) -> list[SpanRecord]:
    """Words flagged by a majority of the samples, neighbours joined; each run's first and last word cut
    to the characters a majority flagged there, so that samples agreeing on "blue mat" give "blue mat",
    not the whole last word "mat." (a word is a run of non-whitespace, its punctuation included)."""
    words = token_offsets(response)
    votes = [0] * len(words)
    char_votes = [0] * len(response)
    for sample in samples:
        char_spans = [(s.start, s.end) for s in sample.spans]
        flagged: set[int] = set()
        for start, end in token_spans(response, char_spans):
            flagged.update(range(start, end))
        for k in flagged:
            votes[k] += 1
        chars: set[int] = set()
        for start, end in char_spans:
            chars.update(range(max(start, 0), min(end, len(response))))
        for c in chars:
            char_votes[c] += 1

    def held(c: int) -> bool:
        return 2 * char_votes[c] > len(samples)

    runs: list[list[int]] = []  # [first word, last word] of each run of voted words
    for k, n in enumerate(votes):
        if 2 * n <= len(samples):
            continue
        if runs and runs[-1][1] == k - 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    spans: list[SpanRecord] = []
    for first, last in runs:
        # A word may be voted while no character of it is (samples flagging different parts of it):
        # then the whole word stays.
        start = next((c for c in range(*words[first]) if held(c)), words[first][0])
        end = next((c + 1 for c in reversed(range(*words[last])) if held(c)), words[last][1])
        spans.append(SpanRecord(start, end))
    return spans


def _mean_scores(samples: Sequence[Annotations]) -> list[SentenceScoreRecord]:
    found: dict[int, list[float]] = {}
    for sample in samples:
        for score in sample.sentence_scores:
            values = found.setdefault(score.index, [])
            if score.parsed:
                values.append(score.score)
    return [
        SentenceScoreRecord(k, sum(v) / len(v), True) if v else SentenceScoreRecord(k, UNPARSED_SCORE, False)
        for k, v in sorted(found.items())
    ]


def _majority_claims(samples: Sequence[Annotations]) -> list[ClaimLabelRecord]:
    votes: dict[int, list[ClaimLabelRecord]] = {}
    for sample in samples:
        for label in sample.claim_labels:
            votes.setdefault(label.index, []).append(label)
    out = []
    for k, labels in sorted(votes.items()):
        counts = Counter(label.label for label in labels)
        winner = (
            "hallucination" if counts["hallucination"] >= counts["non-hallucination"] else "non-hallucination"
        )
        first = next(label for label in labels if label.label == winner)
        out.append(ClaimLabelRecord(k, winner, first.type, first.reason))
    return out


def _majority_triplets(samples: Sequence[Annotations]) -> list[TripletRecord]:
    judged = [s.triplets for s in samples if s.triplets]
    if not judged:
        return []
    out = []
    for k, triplet in enumerate(judged[0]):
        verdicts = [t[k] for t in judged if k < len(t)]
        counts = Counter(t.verdict for t in verdicts)
        verdict = "no" if counts["no"] >= counts["yes"] else "yes"
        parts = Counter(t.wrong_part for t in verdicts if t.verdict == "no" and t.wrong_part)
        wrong = parts.most_common(1)[0][0] if verdict == "no" and parts else None
        out.append(TripletRecord(triplet.subject, triplet.relation, triplet.object, verdict, wrong))
    return out
