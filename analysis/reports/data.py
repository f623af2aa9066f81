"""The slice of the store a report looks at: filters, and the dataset's items as one small frame.

Filters mean the same thing in every report. Subset, source model and detector keep what they name
(an empty choice keeps everything). A hallucination-type choice removes the gold hallucinations of
the other types from the evaluation: span and token measures keep the items that are clean or carry a
gold span of a chosen type, sentence and claim measures keep the correct ones and the wrong ones of
a chosen type. ``unknown`` says what AlignBench's "unknown" sentences become: left out (as the paper
does) or counted as correct (they are not shown to be wrong).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import item_facets

#: How an item without a subset or source model is shown and filtered.
NO_VALUE = "(none)"
UNKNOWN_EXCLUDED = "exclude"
UNKNOWN_AS_CORRECT = "correct"
# How each choice reads on screen and in the page address (``?unknown=as+correct``).
UNKNOWN_CHOICES = {UNKNOWN_EXCLUDED: "left out", UNKNOWN_AS_CORRECT: "as correct"}


def unknown_choice(text: str | None) -> str:
    """The ``unknown`` setting named by ``text`` (its key or its label); left out when unrecognised."""
    for key, label in UNKNOWN_CHOICES.items():
        if text in (key, label):
            return key
    return UNKNOWN_EXCLUDED


UNTYPED = "untyped"


@dataclass(frozen=True)
class ReportFilter:
    subsets: tuple[str, ...] = ()
    source_models: tuple[str, ...] = ()
    detectors: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    unknown: str = UNKNOWN_EXCLUDED

    def __post_init__(self) -> None:
        if self.unknown not in UNKNOWN_CHOICES:
            raise ValueError(f"unknown must be one of {sorted(UNKNOWN_CHOICES)}, got {self.unknown!r}")

    def describe(self) -> str:
        """The active filters in a few words ("" when nothing is filtered)."""
        parts = []
        for name, values in (
            ("subset", self.subsets),
            ("model", self.source_models),
            ("detector", self.detectors),
            ("type", self.types),
        ):
            if values:
                parts.append(f"{name}: {', '.join(values)}")
        return "; ".join(parts)

    def keeps_detector(self, name: str) -> bool:
        return not self.detectors or name in self.detectors

    def keeps_type(self, type_: str | None) -> bool:
        return not self.types or (type_ or UNTYPED) in self.types


def items_frame(engine: Engine, dataset_id: int) -> pd.DataFrame:
    """One row per item in dataset order: ids, subset, source model, task type and image."""
    facets = item_facets(engine, dataset_id)
    return pd.DataFrame(
        {
            "item_id": np.asarray(facets["id"], dtype=np.int64),
            "external_id": facets["external_id"],
            "subset": [s if s is not None else NO_VALUE for s in facets["subset"]],
            "source_model": [s if s is not None else NO_VALUE for s in facets["source_model"]],
            "task_type": facets["task_type"],
            "image": [i or e for i, e in zip(facets["image_ref"], facets["external_id"], strict=True)],
        }
    )


def item_mask(items: pd.DataFrame, flt: ReportFilter) -> np.ndarray:
    """Items kept by the subset and source-model filters."""
    keep = np.ones(len(items), dtype=bool)
    if flt.subsets:
        keep &= items["subset"].isin(flt.subsets).to_numpy()
    if flt.source_models:
        keep &= items["source_model"].isin(flt.source_models).to_numpy()
    return keep


def typed_item_mask(gold_types: Sequence[Iterable[str | None]], flt: ReportFilter) -> np.ndarray:
    """Items kept by the type filter: clean, or with a gold span of a chosen type."""
    if not flt.types:
        return np.ones(len(gold_types), dtype=bool)
    wanted = set(flt.types)
    return np.array(
        [not types or bool({t or UNTYPED for t in types} & wanted) for types in map(list, gold_types)],
        dtype=bool,
    )


def chosen_detectors(label_sets: Iterable[LabelSetView], flt: ReportFilter) -> list[LabelSetView]:
    return [v for v in label_sets if v.kind == "detector" and flt.keeps_detector(v.name)]


def gold_of(label_sets: Iterable[LabelSetView]) -> LabelSetView | None:
    return next((v for v in label_sets if v.kind == "gold"), None)
