"""Span-based inputs shared by the MHALO, HalLoc, correlation and agreement reports."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from components.reports.data import UNTYPED, items_frame
from components.span_evaluation import SpanEvaluation, load_span_evaluation
from db.repositories.label_sets import LabelSetView
from db.repositories.measures import dataset_name
from metrics import token_spans

TokenSpan = tuple[int, int]


@dataclass(frozen=True)
class SpanInputs:
    dataset: str
    items: pd.DataFrame  # aligned with ``spans.items`` (both in dataset order)
    spans: SpanEvaluation

    @property
    def label_sets(self) -> tuple[LabelSetView, ...]:
        ev = self.spans
        return tuple(v for v in (ev.gold, *ev.humans, *ev.detectors) if v is not None)

    def has_spans(self, label_set: LabelSetView | None) -> bool:
        return label_set is not None and any(self.spans.char_spans.get(label_set.id, []))


def load_span_inputs(engine: Engine, dataset_id: int) -> SpanInputs:
    evaluation = load_span_evaluation(engine, dataset_id)
    items = items_frame(engine, dataset_id)
    if items["item_id"].tolist() != list(evaluation.items.ids):
        # A write landed between the two reads: read the items again from the evaluation's own index.
        items = items.set_index("item_id").loc[list(evaluation.items.ids)].reset_index()
    return SpanInputs(dataset_name(engine, dataset_id), items, evaluation)


def typed_token_spans(evaluation: SpanEvaluation, label_set_id: int) -> list[list[tuple[int, int, str]]]:
    """Per item, the label set's spans in tokens with their type (``"untyped"`` when it has none).

    :attr:`SpanEvaluation.token_spans` drops a span that covers no token (only whitespace); then the
    item's spans are mapped one by one so each token span keeps its own type.
    """
    out = []
    chars = evaluation.char_spans.get(label_set_id, [])
    tokens = evaluation.token_spans.get(label_set_id, [])
    for text, item_chars, item_tokens in zip(evaluation.items.responses, chars, tokens, strict=True):
        if len(item_chars) == len(item_tokens):
            out.append(
                [(s, e, t or UNTYPED) for (s, e), (_, _, t) in zip(item_tokens, item_chars, strict=True)]
            )
            continue
        typed = []
        for start, end, type_ in item_chars:
            for s, e in token_spans(text, [(start, end)]):
                typed.append((s, e, type_ or UNTYPED))
        out.append(typed)
    return out
