"""Sentence-level inputs (AlignBench and sentence agreement): numpy columns aligned with the sentences."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.reports.data import items_frame
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import dataset_name, read_at_once, sentence_parts
from metrics.key_order import lex_order

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
    start: np.ndarray | None  # character offsets, when read
    end: np.ndarray | None
    labels: dict[int, np.ndarray]  # label set id → code per sentence (NO_LABEL where it has none)
    error_types: dict[int, np.ndarray]  # label set id → error type per sentence (object, None)
    scores: dict[int, np.ndarray]  # label set id → correctness score 0-100 per sentence (NaN: none)
    parsed: dict[int, np.ndarray]  # label set id → False where the score defaulted to 50

    @property
    def gold(self) -> LabelSetView | None:
        return next((v for v in self.label_sets if v.kind == "gold"), None)

    def scored_detectors(self) -> list[LabelSetView]:
        return [v for v in self.label_sets if v.kind == "detector" and v.id in self.scores]


def load_sentence_inputs(engine: Engine, dataset_id: int, *, offsets: bool = True) -> SentenceInputs:
    """Every sentence of the dataset with every label set's labels and scores; ``offsets=False`` leaves
    the sentences' character offsets unread (``start``/``end`` None) when no table needs them."""
    items, arrays, label_sets = read_at_once(
        engine,
        partial(items_frame, engine, dataset_id),
        partial(sentence_parts, engine, dataset_id, offsets=offsets),
        lambda: tuple(list_label_sets(engine, dataset_id)),
    )
    table = arrays["sentences"]  # in sentence-id order
    sorted_ids = table["sentence_id"]
    n = sorted_ids.size

    def positions(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows (sentence-id order) of ``ids`` and which of the ids are known (a write between reads may add some)."""
        found = np.minimum(np.searchsorted(sorted_ids, ids), max(n - 1, 0))
        known = (sorted_ids[found] == ids) if n else np.zeros(ids.size, dtype=bool)
        return found[known], known

    labels: dict[int, np.ndarray] = {}
    for label_set_id, part in arrays["labels"].items():
        rows, known = positions(part["sentence_id"])
        codes = np.full(n, NO_LABEL, dtype=np.int8)
        codes[rows] = part["code"][known]
        labels[label_set_id] = codes
    error_types: dict[int, np.ndarray] = {}
    for label_set_id, part in arrays["error_types"].items():
        rows, known = positions(part["sentence_id"])
        types = np.full(n, None, dtype=object)
        types[rows] = part["error_type"][known]
        error_types[label_set_id] = types
    scores: dict[int, np.ndarray] = {}
    parsed: dict[int, np.ndarray] = {}
    for label_set_id, part in arrays["scores"].items():
        if part["sentence_id"].size == n and np.array_equal(part["sentence_id"], sorted_ids):
            scores[label_set_id], parsed[label_set_id] = part["score"], part["parsed"]
            continue  # a run that scored every sentence arrives aligned with them
        rows, known = positions(part["sentence_id"])
        values = np.full(n, np.nan)
        values[rows] = part["score"][known]
        ok = np.ones(n, dtype=bool)
        ok[rows] = part["parsed"][known]
        scores[label_set_id] = values
        parsed[label_set_id] = ok
    # Dataset order: by the item's row in ``items`` (its position), then by the sentence's index.
    # Sentences of items the item read did not see (written while the reads ran) are left out.
    item_ids = items["item_id"].to_numpy()
    by_item = np.argsort(item_ids, kind="stable")
    found = np.minimum(np.searchsorted(item_ids[by_item], table["item_id"]), max(item_ids.size - 1, 0))
    known = item_ids[by_item][found] == table["item_id"] if item_ids.size else np.zeros(n, dtype=bool)
    item_row = np.where(known, by_item[found], -1)
    start, end = table.get("start"), table.get("end")
    if _in_dataset_order(item_row, table["index"]):
        # Sentence ids given in dataset order (as an import writes them): every column is already in
        # place, and putting a million sentences' columns in order would copy them all for nothing.
        def ordered(values: np.ndarray) -> np.ndarray:
            return values
    else:
        order = lex_order((table["index"], item_row))
        order = order[item_row[order] >= 0]

        def ordered(values: np.ndarray) -> np.ndarray:
            taken: np.ndarray = values[order]
            return taken

    return SentenceInputs(
        dataset=dataset_name(engine, dataset_id),
        items=items,
        label_sets=label_sets,
        sentence_id=ordered(sorted_ids),
        item_pos=ordered(item_row),
        index=ordered(table["index"]),
        start=None if start is None else ordered(start),
        end=None if end is None else ordered(end),
        labels={k: ordered(v) for k, v in labels.items()},
        error_types={k: ordered(v) for k, v in error_types.items()},
        scores={k: ordered(v) for k, v in scores.items()},
        parsed={k: ordered(v) for k, v in parsed.items()},
    )


def _in_dataset_order(item_row: np.ndarray, index: np.ndarray) -> bool:
    """Whether the sentences already stand by their item's row, then their index (the order
    ``lex_order((index, item_row))`` would give), every one of an item that was read."""
    if item_row.size and int(item_row.min()) < 0:
        return False
    step = np.diff(item_row)
    return bool(((step > 0) | ((step == 0) & (np.diff(index) >= 0))).all())
