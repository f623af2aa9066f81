"""Gold and detector spans of a whole dataset, in token units, ready for the MHALO measures.

MHALO scores spans in whitespace tokens (section 2.3), so character offsets from the store are mapped
with :func:`metrics.token_spans` once per label set and item, then reused by the comparison page, the
failure finder and the dashboards. Plain reads and arrays: the pages cache the result per store
revision (see :mod:`components.span_cache`), the command line and the tests call it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import ItemIndex, format_flags, item_index, spans_by_label_set
from metrics import f1_iou_per_item, f1_m_per_item, pack_spans
from metrics.tagged_text import TokenBounds

CharSpan = tuple[int, int, str | None]


@dataclass(frozen=True)
class DatasetSpans:
    """Everything the span measures need, aligned with ``items`` (one entry per item, dataset order)."""

    items: ItemIndex
    gold: LabelSetView | None
    detectors: tuple[LabelSetView, ...]
    humans: tuple[LabelSetView, ...]
    # label set id → per item: character spans (start, end, type) and token spans (start, end)
    char_spans: dict[int, list[list[CharSpan]]] = field(default_factory=dict)
    token_spans: dict[int, list[list[tuple[int, int]]]] = field(default_factory=dict)
    # label set id → per item: whether the raw output followed the format (True when there is none)
    follows_format: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def gold_tokens(self) -> list[list[tuple[int, int]]]:
        if self.gold is None:
            return [[] for _ in self.items.ids]
        return self.token_spans[self.gold.id]

    def label_set(self, label_set_id: int) -> LabelSetView:
        for view in (self.gold, *self.detectors, *self.humans):
            if view is not None and view.id == label_set_id:
                return view
        raise KeyError(label_set_id)


def load_dataset_spans(engine: Engine, dataset_id: int) -> DatasetSpans:
    """The dataset's spans for every label set, in characters and in tokens, with the format flags."""
    items = item_index(engine, dataset_id)
    label_sets = list_label_sets(engine, dataset_id)
    spans = spans_by_label_set(engine, dataset_id)
    flags = format_flags(engine, dataset_id)
    char_spans: dict[int, list[list[CharSpan]]] = {}
    tokens: dict[int, list[list[tuple[int, int]]]] = {}
    follows: dict[int, np.ndarray] = {}
    bounds: dict[int, TokenBounds] = {}  # item row → its response's tokens, found once for all label sets
    for view in label_sets:
        by_item = spans.get(view.id, {})
        char_spans[view.id] = [by_item.get(item_id, []) for item_id in items.ids]
        per_item: list[list[tuple[int, int]]] = []
        for row, item_spans in enumerate(char_spans[view.id]):
            if not item_spans:
                per_item.append([])
                continue
            found = bounds.get(row)
            if found is None:
                found = bounds[row] = TokenBounds(items.responses[row])
            per_item.append(found.token_spans([(s, e) for s, e, _ in item_spans]))
        tokens[view.id] = per_item
        item_flags = flags.get(view.id, {})
        follows[view.id] = np.array([item_flags.get(item_id, True) for item_id in items.ids], dtype=bool)
    return DatasetSpans(
        items=items,
        gold=next((v for v in label_sets if v.kind == "gold"), None),
        detectors=tuple(v for v in label_sets if v.kind == "detector"),
        humans=tuple(v for v in label_sets if v.kind == "human"),
        char_spans=char_spans,
        token_spans=tokens,
        follows_format=follows,
    )


def per_item_scores(spans: DatasetSpans, threshold: float = 0.5) -> pd.DataFrame:
    """One row per (item, detector): F1_IoU and F1_M in tokens, the format flag and span counts.

    The F1 values here are the raw per-item scores; dataset-level tables score a format failure 0
    (MHALO section 4.1) via :func:`metrics.span_detection_table`.
    """
    gold = pack_spans(spans.gold_tokens, "gold spans")
    gold_types = [
        tuple(sorted({t or "untyped" for _, _, t in item_spans}))
        for item_spans in (spans.char_spans[spans.gold.id] if spans.gold else [[] for _ in spans.items.ids])
    ]
    frames = []
    for detector in spans.detectors:
        preds = spans.token_spans[detector.id]
        frames.append(
            pd.DataFrame(
                {
                    "item_id": spans.items.ids,
                    "external_id": spans.items.external_ids,
                    "subset": spans.items.subsets,
                    "source_model": spans.items.source_models,
                    "detector": detector.name,
                    "label_set_id": detector.id,
                    "f1_iou": f1_iou_per_item(preds, gold, threshold),
                    "f1_m": f1_m_per_item(preds, gold),
                    "follows_format": spans.follows_format[detector.id],
                    "n_pred": [len(p) for p in preds],
                    "n_gold": [len(g) for g in spans.gold_tokens],
                    "gold_types": gold_types,
                }
            )
        )
    if not frames:
        return pd.DataFrame(
            columns=[
                "item_id", "external_id", "subset", "source_model", "detector", "label_set_id",
                "f1_iou", "f1_m", "follows_format", "n_pred", "n_gold", "gold_types",
            ]
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)
