"""AlignBench's detectors (appendix E): a 0-100 correctness score per sentence, and ``[red]`` localization.

Each sentence is judged alone with the image, one call per sentence, as the paper does (its appendix F
found that giving the preceding sentences does not help). Three prompts, worded as in the appendix:
the score prompt (score first, then the reason), its chain-of-thought variant (reason first; the one the
paper samples for self-ensembles) and the localization prompt (the sentence back with ``[red]`` before
each wrong word).

Answers are read by :mod:`formats.alignbench_scores`: :func:`~formats.alignbench_scores.parse_score`
(an answer with no score from 0 to 100 scores 50 and counts as unparsed, as in the paper) and
:func:`~formats.alignbench_scores.localized_spans`. The answers are kept per item as one JSON object
``{sentence number: answer}``, the shape the AlignBench predictions formats store and export.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from detectors.base import Call, Outputs, RunItem, Strategy, fill
from formats.alignbench_scores import UNPARSED_SCORE, localized_spans, parse_score
from formats.records import Annotations, RawOutputRecord, SentenceScoreRecord, SpanRecord

SCORE = """You are given an image and a caption describing the given image. Your task is to judge if the caption describes the image correctly. If you think the sentence does not describe the image correctly, return low the score. If you think there is no mistake in the caption, return high score. Judge the correctness from 0-100 points. Return the output in the form of dictionary, e.g., "score": 50. Please first output the correctness points before explaining the reason for the score.

Caption: {sentence}"""

CHAIN_OF_THOUGHT = """You are given an image and a caption describing the given image. Your task is to judge if the caption describes the image correctly. If you think the sentence does not describe the image correctly, return low the score. If you think there is no mistake in the caption, return high score. Judge the correctness from 0-100 points. Return the output in the form of dictionary, e.g., "score": 50. Please first explain the reason of scoring in two or three sentences and output the correctness points as shown above.

Caption: {sentence}"""

LOCALIZE = """You are given an image and a caption describing the given image. Your task is to localize the segment of the caption, which describes the image incorrectly. Please output the segment by marking the incorrect parts by [red], e.g., A [red] bird singing in a tree. Return the output in the form of a dictionary. Example format.

```json
{
  "output": "A [red] bird singing in a tree."
}
```

Caption: {sentence}"""


def _unit(k: int) -> str:
    return f"sentence {k}"


def _raw(item: RunItem, outputs: Outputs, failures: list[str]) -> RawOutputRecord:
    """The answers as ``{sentence number: answer}``, as the AlignBench predictions formats keep them."""
    texts = {str(item.sentence_number(k)): outputs[_unit(k)] for k in range(len(item.sentences))}
    return RawOutputRecord(
        json.dumps(texts, ensure_ascii=False), not failures, parse_error="; ".join(failures) or None
    )


class _PerSentence(Strategy):
    paper = "AlignBench"
    template = SCORE

    def templates(self) -> Sequence[str]:
        return (self.template,)

    def unsuitable(self, item: RunItem) -> str | None:
        return None if item.sentences else "the item has no sentences to judge"

    def calls(self, item: RunItem, stage: int, outputs: Outputs) -> list[Call]:
        return [
            Call(_unit(k), fill(self.template, sentence=item.response[start:end]))
            for k, (start, end) in enumerate(item.sentences)
        ]


class SentenceScore(_PerSentence):
    name = "alignbench-score"
    title = "AlignBench · 0-100 score per sentence"
    produces = "sentence scores"

    def parse(self, item: RunItem, outputs: Outputs) -> Annotations:
        annotations = Annotations(item.external_id)
        failures = []
        for k in range(len(item.sentences)):
            value = parse_score(outputs[_unit(k)])
            if value is None:
                failures.append(f"sentence {item.sentence_number(k)}: no score from 0 to 100 in the answer")
            annotations.sentence_scores.append(
                SentenceScoreRecord(k, UNPARSED_SCORE if value is None else value, value is not None)
            )
        annotations.raw_output = _raw(item, outputs, failures)
        return annotations


class ChainOfThoughtScore(SentenceScore):
    name = "alignbench-cot-score"
    title = "AlignBench · 0-100 score per sentence, reasoning first (chain of thought)"
    template = CHAIN_OF_THOUGHT


class Localization(_PerSentence):
    name = "alignbench-localization"
    title = "AlignBench · [red] before the wrong words of each sentence"
    produces = "spans"
    template = LOCALIZE

    def parse(self, item: RunItem, outputs: Outputs) -> Annotations:
        annotations = Annotations(item.external_id)
        failures = []
        for k, (start, end) in enumerate(item.sentences):
            spans, failure = localized_spans(outputs[_unit(k)], item.response[start:end])
            if failure:
                failures.append(f"sentence {item.sentence_number(k)}: {failure}")
            annotations.spans += [SpanRecord(start + s, start + e) for s, e in spans]
        annotations.raw_output = _raw(item, outputs, failures)
        return annotations


STRATEGIES: tuple[Strategy, ...] = (SentenceScore(), ChainOfThoughtScore(), Localization())
