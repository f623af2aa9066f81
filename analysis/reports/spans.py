"""Span-based inputs shared by the MHALO, HalLoc, correlation and agreement reports."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pandas as pd
from sqlalchemy import Engine

from analysis.dataset_spans import DatasetSpans, load_dataset_spans, per_item
from analysis.reports.data import UNTYPED, items_frame
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import dataset_label_kinds, dataset_name, read_at_once


@dataclass(frozen=True)
class SpanInputs:
    dataset: str
    items: pd.DataFrame  # aligned with ``spans.items`` (both in dataset order)
    spans: DatasetSpans
    label_kinds: tuple[str, ...]  # the dataset's, as imported (:class:`DatasetInfo.label_kinds`)

    @property
    def label_sets(self) -> tuple[LabelSetView, ...]:
        spans = self.spans
        return tuple(v for v in (spans.gold, *spans.humans, *spans.detectors) if v is not None)

    def has_spans(self, label_set: LabelSetView | None) -> bool:
        return label_set is not None and self.spans.has_spans(label_set.id)

    @property
    def gold_marks_spans(self) -> bool:
        """Whether the dataset has a gold label set and it labels spans, with or without any: a gold that
        labels spans alone and marks none says every response is clean (MHALO's untagged responses),
        which the span measures score. A gold of sentence or claim labels says nothing of spans; nor
        does one that labels sentences and spans (AlignBench's error words) and marks no span: its
        incorrect sentences may name error words no span was made of, and would be scored as clean."""
        gold = self.spans.gold
        return gold is not None and (self.has_spans(gold) or set(self.label_kinds) == {"span"})


def load_span_inputs(engine: Engine, dataset_id: int) -> SpanInputs:
    spans, items, name, kinds = read_at_once(
        engine,
        partial(load_dataset_spans, engine, dataset_id),
        partial(items_frame, engine, dataset_id),
        partial(dataset_name, engine, dataset_id),
        partial(dataset_label_kinds, engine, dataset_id),
    )
    if items["item_id"].tolist() != list(spans.items.ids):
        # A write landed while they were read: read the items again, now after the spans, and take
        # those of the spans' own index.
        items = items_frame(engine, dataset_id)
        if items["item_id"].tolist() != list(spans.items.ids):
            items = items.set_index("item_id").loc[list(spans.items.ids)].reset_index()
    return SpanInputs(name, items, spans, kinds)


def typed_token_spans(spans: DatasetSpans, label_set_id: int) -> list[list[tuple[int, int, str]]]:
    """Per item, the label set's spans in tokens with their type (``"untyped"`` when it has none).

    A character span that covers no token (only whitespace) has no token span, as in
    :attr:`DatasetSpans.token_spans`; every other keeps its own type.
    """
    found = spans.packed.get(label_set_id)
    if found is None:
        return [[] for _ in spans.items.ids]
    tokens = found.tokens
    typed: list[tuple[int, int, str]] = list(
        zip(
            tokens.starts.tolist(),
            tokens.ends.tolist(),
            [t or UNTYPED for t in found.token_types.tolist()],
            strict=True,
        )
    )
    return per_item(typed, tokens.offsets)
