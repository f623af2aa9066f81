"""Span-based inputs shared by the MHALO, HalLoc, correlation and agreement reports."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from analysis.dataset_spans import DatasetSpans, load_dataset_spans
from analysis.reports.data import UNTYPED, items_frame
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import dataset_name
from metrics import token_spans

TokenSpan = tuple[int, int]


@dataclass(frozen=True)
class SpanInputs:
    dataset: str
    items: pd.DataFrame  # aligned with ``spans.items`` (both in dataset order)
    spans: DatasetSpans

    @property
    def label_sets(self) -> tuple[LabelSetView, ...]:
        spans = self.spans
        return tuple(v for v in (spans.gold, *spans.humans, *spans.detectors) if v is not None)

    def has_spans(self, label_set: LabelSetView | None) -> bool:
        return label_set is not None and any(self.spans.char_spans.get(label_set.id, []))


def load_span_inputs(engine: Engine, dataset_id: int) -> SpanInputs:
    spans = load_dataset_spans(engine, dataset_id)
    items = items_frame(engine, dataset_id)
    if items["item_id"].tolist() != list(spans.items.ids):
        # A write landed between the two reads: read the items again from the spans' own index.
        items = items.set_index("item_id").loc[list(spans.items.ids)].reset_index()
    return SpanInputs(dataset_name(engine, dataset_id), items, spans)


def typed_token_spans(spans: DatasetSpans, label_set_id: int) -> list[list[tuple[int, int, str]]]:
    """Per item, the label set's spans in tokens with their type (``"untyped"`` when it has none).

    :attr:`DatasetSpans.token_spans` drops a span that covers no token (only whitespace); then the
    item's spans are mapped one by one so each token span keeps its own type.
    """
    out = []
    chars = spans.char_spans.get(label_set_id, [])
    tokens = spans.token_spans.get(label_set_id, [])
    for text, item_chars, item_tokens in zip(spans.items.responses, chars, tokens, strict=True):
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
