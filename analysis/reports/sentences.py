"""Sentence-level inputs (AlignBench and sentence agreement): numpy columns aligned with the sentences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.reports.data import items_frame
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import dataset_name, sentence_columns, sentence_table

CORRECT, INCORRECT, UNKNOWN, NO_LABEL = 0, 1, 2, -1
LABEL_NAMES = {CORRECT: "correct", INCORRECT: "incorrect", UNKNOWN: "unknown"}


@dataclass(frozen=True)
class SentenceInputs:
    """Every sentence of a dataset (dataset order) with each label set's label, type and score."""

    dataset: str
    items: pd.DataFrame
    label_sets: tuple[LabelSetView, ...]
    sentence_id: np.ndarray
    item_pos: np.ndarray  # row of the sentence's item in ``items``
    index: np.ndarray  # 0-based position of the sentence in its response
    start: np.ndarray
    end: np.ndarray
    labels: dict[int, np.ndarray]  # label set id → code per sentence (NO_LABEL where it has none)
    error_types: dict[int, np.ndarray]  # label set id → error type per sentence (object, None)
    scores: dict[int, np.ndarray]  # label set id → correctness score 0-100 per sentence (NaN: none)
    parsed: dict[int, np.ndarray]  # label set id → False where the score defaulted to 50

    @property
    def gold(self) -> LabelSetView | None:
        return next((v for v in self.label_sets if v.kind == "gold"), None)

    def scored_detectors(self) -> list[LabelSetView]:
        return [v for v in self.label_sets if v.kind == "detector" and v.id in self.scores]


def load_sentence_inputs(engine: Engine, dataset_id: int) -> SentenceInputs:
    items = items_frame(engine, dataset_id)
    table = sentence_table(engine, dataset_id)
    columns = sentence_columns(engine, dataset_id)
    label_sets = tuple(list_label_sets(engine, dataset_id))
    sentence_id = table["sentence_id"]
    n = sentence_id.size
    order = np.argsort(sentence_id, kind="stable")
    sorted_ids = sentence_id[order]

    def positions(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sentence rows of ``ids`` and which of the ids are known (a write between reads may add some)."""
        found = np.searchsorted(sorted_ids, ids)
        found = np.minimum(found, max(n - 1, 0))
        known = (sorted_ids[found] == ids) if n else np.zeros(ids.size, dtype=bool)
        return order[found[known]], known

    labels: dict[int, np.ndarray] = {}
    block = columns["labels"]
    for label_set_id in np.unique(block["label_set_id"]).tolist():
        mine = block["label_set_id"] == label_set_id
        rows, known = positions(block["sentence_id"][mine])
        codes = np.full(n, NO_LABEL, dtype=np.int8)
        codes[rows] = block["code"][mine][known]
        labels[label_set_id] = codes
    error_types: dict[int, np.ndarray] = {}
    block = columns["error_types"]
    for label_set_id in np.unique(block["label_set_id"]).tolist():
        mine = block["label_set_id"] == label_set_id
        rows, known = positions(block["sentence_id"][mine])
        types = np.full(n, None, dtype=object)
        types[rows] = block["error_type"][mine][known]
        error_types[label_set_id] = types
    scores: dict[int, np.ndarray] = {}
    parsed: dict[int, np.ndarray] = {}
    block = columns["scores"]
    for label_set_id in np.unique(block["label_set_id"]).tolist():
        mine = block["label_set_id"] == label_set_id
        rows, known = positions(block["sentence_id"][mine])
        values = np.full(n, np.nan)
        values[rows] = block["score"][mine][known]
        ok = np.ones(n, dtype=bool)
        ok[rows] = block["parsed"][mine][known]
        scores[label_set_id] = values
        parsed[label_set_id] = ok
    item_row = pd.Series(np.arange(len(items)), index=items["item_id"].to_numpy())
    item_pos = item_row.reindex(table["item_id"]).fillna(-1).to_numpy(dtype=np.int64)
    present = item_pos >= 0  # sentences of items added after the item read are left out
    return SentenceInputs(
        dataset=dataset_name(engine, dataset_id),
        items=items,
        label_sets=label_sets,
        sentence_id=sentence_id[present],
        item_pos=item_pos[present],
        index=table["index"][present],
        start=table["start"][present],
        end=table["end"][present],
        labels={k: v[present] for k, v in labels.items()},
        error_types={k: v[present] for k, v in error_types.items()},
        scores={k: v[present] for k, v in scores.items()},
        parsed={k: v[present] for k, v in parsed.items()},
    )
