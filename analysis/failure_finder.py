"""Finding the items where detectors fail: a per-item table, presets, filters and a disagreement score.

Everything here is plain pandas on a :class:`analysis.dataset_spans.DatasetSpans` (spans in
tokens, as MHALO scores them), so it is unit-tested without Streamlit or a store. The failures page
builds the table once per store revision (:mod:`components.span_cache`); the comparison page rebuilds
the same filtered list from the URL, which is what lets a shared link step through the same failures.

Terms
-----
clean item
    The gold label set marks no span in it (a response with no hallucination).
false positive
    A prediction the F1_IoU matching leaves unmatched (see :mod:`metrics.matching`).
boundary error
    A prediction whose largest token IoU with a gold span lies in ``[0.2, 0.5)``: it points at a
    hallucination, but its boundaries are too far off to count at F1_IoU's usual threshold of 0.5.
found
    A gold span is found by a detector when that detector's F1_IoU matching pairs it with a prediction.
disagreement
    For every pair of detectors, ``1 − F1_IoU`` between their predictions (one treated as gold for the
    other; the measure is symmetric), averaged over the pairs: 0 when all detectors flag the same
    spans (or all flag nothing), 1 when no two of them share a single matching span. Detectors that
    broke the format count with no spans. Undefined (NaN) with fewer than two detectors.

A dataset without a gold label set has nothing to score against: its item table leaves out every
column measured against gold (the F1 values, false positives, clean items, boundary errors, the gold
spans and their types) and counts each detector's spans instead, and only the presets that need no
gold (:func:`presets`) apply. Disagreement is measured between detectors, so it stays.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.dataset_spans import DatasetSpans, gold_types, load_dataset_spans, per_item_scores, rows_of
from metrics import f1_iou_per_item
from metrics.key_order import distinct_values
from metrics.span_batches import matched_gold_spans

ANY = "any"
BOUNDARY_IOU = (0.2, 0.5)

PRESETS: dict[str, str] = {
    "misses": "Detector X misses what Y finds",
    "clean-flagged": "Clean responses flagged",
    "format": "Format failures",
    "boundary": "Boundary errors (IoU between 0.2 and 0.5)",
}
# The presets that look at nothing but the detectors' own outputs, and so apply without gold.
UNGRADED_PRESETS = ("format",)

# Columns of the item table besides the per-detector ones ("<detector> · F1_IoU", ...), in the order a
# table shows them: what identifies the item and how much the detectors disagree, then (after the
# per-detector scores) what the presets look at, then the facets.
LEAD_COLUMNS = ("item", "gold spans", "disagreement")
TAIL_COLUMNS = (
    "clean flagged by",
    "format failures",
    "boundary errors",
    "gold types",
    "subset",
    "source model",
    "clean",
)
ITEM_COLUMNS = LEAD_COLUMNS + TAIL_COLUMNS
PER_DETECTOR = ("F1_IoU", "F1_M", "FP")
# Without gold: each detector's number of spans on the item, the one per-detector count left.
UNGRADED_PER_DETECTOR = ("spans",)
# The item columns measured against gold, which a table without gold leaves out.
GOLD_COLUMNS = ("gold spans", "clean flagged by", "boundary errors", "gold types", "clean")
# Each per-detector measure and the column of :func:`detector_rows` it is taken from.
_MEASURE_OF = {"F1_IoU": "f1_iou", "F1_M": "f1_m", "FP": "n_false_positives", "spans": "n_pred"}
# The columns of :func:`detector_rows` after those of :func:`per_item_scores`, in this order.
MATCHING_COLUMNS = ("clean", "n_matched", "n_false_positives", "n_boundary")


def per_detector(graded: bool = True) -> tuple[str, ...]:
    """The per-detector measures of an item table with gold (``graded``) or without."""
    return PER_DETECTOR if graded else UNGRADED_PER_DETECTOR


def presets(graded: bool = True) -> list[str]:
    """The presets that apply to a dataset with gold (``graded``: all of them) or without."""
    return [p for p in PRESETS if graded or p in UNGRADED_PRESETS]


def table_columns(detectors: Sequence[str], graded: bool = True) -> list[str]:
    """The columns to show, with the scores of ``detectors`` after the leading ones; without gold
    (``graded`` False), their span counts and none of the columns measured against gold."""
    scores = [detector_column(d, m) for d in detectors for m in per_detector(graded)]
    columns = [*LEAD_COLUMNS, *scores, *TAIL_COLUMNS]
    return columns if graded else [c for c in columns if c not in GOLD_COLUMNS]


def detector_column(detector: str, measure: str) -> str:
    return f"{detector} · {measure}"


# --------------------------------------------------------------------------------------- the tables


def detector_rows(spans: DatasetSpans, threshold: float = 0.5) -> pd.DataFrame:
    """One row per (item, detector): :func:`per_item_scores` (with its matching columns, boundary errors
    at IoU in :data:`BOUNDARY_IOU`) plus ``clean`` and ``n_false_positives``."""
    rows = per_item_scores(spans, threshold, BOUNDARY_IOU)
    rows["clean"] = (rows["n_gold"] == 0) & (spans.gold is not None)
    # A prediction is a false positive exactly when the matching leaves it unmatched.
    rows["n_false_positives"] = rows["n_pred"].to_numpy(dtype=np.int64) - rows["n_matched"].to_numpy(
        dtype=np.int64
    )
    return rows[[*(c for c in rows.columns if c not in MATCHING_COLUMNS), *MATCHING_COLUMNS]]


def disagreement(spans: DatasetSpans, threshold: float = 0.5) -> np.ndarray:
    """Per item, the mean over detector pairs of ``1 − F1_IoU`` between their predictions: the pairs of
    runs both given the item (NaN where fewer than two were)."""
    n_items = len(spans.items.ids)
    detectors = spans.span_detectors
    if len(detectors) < 2:
        return np.full(n_items, np.nan)
    total = np.zeros(n_items)
    counted = np.zeros(n_items, dtype=np.int64)
    for a, b in itertools.combinations(detectors, 2):
        both = spans.ran_on(a.id) & spans.ran_on(b.id)
        apart = 1.0 - f1_iou_per_item(spans.packed[a.id].tokens, spans.packed[b.id].tokens, threshold)
        total += np.where(both, apart, 0.0)
        counted += both
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, total / counted, np.nan)


def _names(at: np.ndarray, detectors: np.ndarray, chosen: np.ndarray, n_items: int) -> list[tuple[str, ...]]:
    """Per item (0 … ``n_items`` − 1), the ``detectors`` of the rows for which ``chosen`` holds, in row
    order; ``at`` is each row's item (−1 for none).

    The chosen rows are put in item order by one stable sort and cut at each item's first: walking them
    one by one took a tenth of a second at 10 K items x 12 detectors, where most rows hold a boundary
    error."""
    at = at[chosen]
    order = np.argsort(at, kind="stable")
    # Sliced as a list: a tuple of an array's slice steps through its elements one by one, three times
    # slower.
    at, names = at[order], detectors[chosen][order].tolist()
    bounds = np.searchsorted(at, np.arange(n_items + 1)).tolist()  # rows of no item (-1) come first
    return [tuple(names[start:end]) for start, end in zip(bounds[:-1], bounds[1:], strict=True)]


def item_table(spans: DatasetSpans, rows: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame:
    """One row per item (dataset order, indexed by external id) with every detector's scores; on a
    dataset without gold, their span counts and no column measured against gold."""
    items = spans.items
    gold_counts = spans.gold_packed.counts
    table = pd.DataFrame(
        {
            "item": items.external_ids,
            "subset": items.subsets,
            "source model": items.source_models,
            "gold types": gold_types(spans),
            "gold spans": gold_counts,
            "clean": (gold_counts == 0) & (spans.gold is not None),
            "disagreement": disagreement(spans, threshold),
        },
        index=pd.Index(items.external_ids, name="external_id"),
    )
    # Each row's item (its position; -1 for none) and detector, found once for every column made of
    # the rows: by the items' integer ids, not their external ids' texts, and each detector's scores
    # put in place by position rather than aligned on an index of 10 K texts, a dozen times.
    ids = np.asarray(items.ids, dtype=np.int64)
    found, known = rows_of(ids, np.argsort(ids, kind="stable"), rows["item_id"].to_numpy(dtype=np.int64))
    at = np.full(len(rows), -1, dtype=np.int64)
    at[known] = found
    detectors, n_items = rows["detector"].to_numpy(dtype=object), len(table)

    def names(mask: pd.Series) -> list[tuple[str, ...]]:
        return _names(at, detectors, mask.to_numpy(dtype=bool), n_items)

    table["clean flagged by"] = names(rows["clean"] & (rows["n_pred"] > 0))
    table["format failures"] = names(~rows["follows_format"].astype(bool))
    table["boundary errors"] = names(rows["n_boundary"] > 0)
    codes, order = pd.factorize(detectors, sort=False)  # detectors in order of first appearance
    graded = spans.gold is not None
    for k, detector in enumerate(order.tolist()):
        mine = (codes == k) & (at >= 0)
        for measure in per_detector(graded):
            table[detector_column(str(detector), measure)] = _spread(
                rows[_MEASURE_OF[measure]].to_numpy()[mine], at[mine], n_items
            )
    return table if graded else table.drop(columns=list(GOLD_COLUMNS))


def _spread(values: np.ndarray, at: np.ndarray, n_items: int) -> np.ndarray:
    """One value per item: ``values`` at positions ``at`` (distinct), NaN at the others, as aligning
    them on the items' index gives (their own dtype when every item has one)."""
    out = np.empty(n_items, dtype=values.dtype) if at.size == n_items else np.full(n_items, np.nan)
    out[at] = values
    return out


# ------------------------------------------------------------------------------------------ queries


def _one(params: Mapping[str, object], key: str, default: str | None = None) -> str | None:
    value = params.get(key)
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    return default if value in (None, "") else str(value)


def _many(params: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = params.get(key)
    if value is None:
        return ()
    values = value if isinstance(value, list | tuple) else [value]
    return tuple(dict.fromkeys(str(v) for v in values if str(v) != ""))


def _number(text: str | None, default: float, low: float, high: float) -> float:
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return min(high, max(low, value)) if np.isfinite(value) else default


# The URL parameters a query is written to and read from (``FinderQuery.to_params``/``from_params``).
PARAMS = ("preset", "detector", "other", "subset", "model", "type", "min_dis", "sort", "order", "iou")


@dataclass(frozen=True)
class FinderQuery:
    """The finder's preset and filters; round-trips through URL query parameters."""

    preset: str | None = None
    detector: str = ANY  # X: the detector the preset is about ("any" where the preset allows it)
    other: str = ANY  # Y of "X misses what Y finds"
    subsets: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    min_disagreement: float = 0.0
    sort: str = "item"
    descending: bool = False
    threshold: float = 0.5

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> FinderQuery:
        """Read the query from URL parameters (``st.query_params.to_dict()`` or lists of values)."""
        preset = _one(params, "preset")
        return cls(
            preset=preset if preset in PRESETS else None,
            detector=_one(params, "detector", ANY) or ANY,
            other=_one(params, "other", ANY) or ANY,
            subsets=_many(params, "subset"),
            models=_many(params, "model"),
            types=_many(params, "type"),
            min_disagreement=_number(_one(params, "min_dis"), 0.0, 0.0, 1.0),
            sort=_one(params, "sort", "item") or "item",
            descending=_one(params, "order") == "desc",
            threshold=_number(_one(params, "iou"), 0.5, 0.05, 1.0),
        )

    def to_params(self) -> dict[str, str | list[str]]:
        """The URL parameters of this query, leaving out defaults."""
        out: dict[str, str | list[str]] = {}
        if self.preset:
            out["preset"] = self.preset
        if self.detector != ANY:
            out["detector"] = self.detector
        if self.other != ANY:
            out["other"] = self.other
        for key, values in (("subset", self.subsets), ("model", self.models), ("type", self.types)):
            if values:
                out[key] = list(values)
        if self.min_disagreement > 0:
            out["min_dis"] = f"{self.min_disagreement:g}"
        if self.sort != "item":
            out["sort"] = self.sort
        if self.descending:
            out["order"] = "desc"
        if self.threshold != 0.5:
            out["iou"] = f"{self.threshold:g}"
        return out

    def with_(self, **changes: Any) -> FinderQuery:
        return replace(self, **changes)


def problems(query: FinderQuery, detectors: Sequence[str]) -> list[str]:
    """What is wrong with ``query`` for a dataset with these detectors (empty: nothing)."""
    found = []
    for key in ("detector", "other"):
        name = getattr(query, key)
        if name != ANY and name not in detectors:
            found.append(f"There is no detector named {name!r} in this dataset.")
    if query.preset == "misses":
        if query.detector == ANY:
            found.append("Choose the detector X whose misses you want to see.")
        elif query.detector == query.other:
            found.append("X and Y must be different detectors.")
    return found


def preset_mask(
    query: FinderQuery, rows: pd.DataFrame, table: pd.DataFrame, spans: DatasetSpans
) -> pd.Series:
    """Which items (indexed like ``table``) the query's preset selects; all of them without a preset.
    ``rows`` and ``table`` are :func:`failure_tables` of ``spans`` at the query's threshold."""
    everything = pd.Series(True, index=table.index)
    if query.preset is None:
        return everything
    if query.preset == "misses":
        return _misses(query, table, spans)
    chosen = rows if query.detector == ANY else rows[rows["detector"] == query.detector]
    if query.preset == "clean-flagged":
        hit = chosen["clean"] & (chosen["n_pred"] > 0)
    elif query.preset == "format":
        hit = ~chosen["follows_format"].astype(bool)
    elif query.preset == "boundary":
        hit = chosen["n_boundary"] > 0
    else:  # pragma: no cover - from_params only lets known presets through
        raise ValueError(f"unknown preset {query.preset!r}")
    return _per_item(chosen["external_id"][hit], table)


def _per_item(external_ids: Iterable[str], table: pd.DataFrame) -> pd.Series:
    """Which rows of ``table`` (indexed by external id) are among ``external_ids``."""
    index = table.index
    if not index.is_unique:
        return pd.Series(index.isin(set(external_ids)), index=index)
    # Looked up in the index's hash table: ``isin`` on the string index walks it in Python (30 ms at
    # 10 K items, a sixth of the misses view).
    at = index.get_indexer(pd.Index(list(external_ids), dtype=object))
    keep = np.zeros(len(index), dtype=bool)
    keep[at[at >= 0]] = True
    return pd.Series(keep, index=index)


def found_gold_spans(spans: DatasetSpans, detectors: Iterable[str], threshold: float = 0.5) -> np.ndarray:
    """The gold spans that at least one of ``detectors`` found at this F1_IoU threshold, as sorted
    indices into ``spans.gold_packed`` (whose ``item_of_span`` names their items).

    Worked out only when a view asks, as the "misses" preset does: in items where spans compete it needs
    each item's matching itself (:func:`metrics.span_batches.matched_gold_spans`), which would be most
    of the time the per-item tables take.
    """
    wanted = set(detectors)
    found = [
        matched_gold_spans(spans.packed[d.id].tokens, spans.gold_packed, threshold)
        for d in spans.span_detectors
        if d.name in wanted
    ]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


def _misses(query: FinderQuery, table: pd.DataFrame, spans: DatasetSpans) -> pd.Series:
    """Items with a gold span that Y (or, for "any", another detector) found and X did not, among the
    items X was given."""
    if query.detector == ANY or query.detector == query.other:
        return pd.Series(False, index=table.index)
    others = [d.name for d in spans.span_detectors if d.name != query.detector]
    if query.other != ANY:
        others = [d for d in others if d == query.other]
    gold = spans.gold_packed
    open_ = np.ones(gold.starts.size, dtype=bool)  # gold spans X missed that no Y has found yet
    open_[found_gold_spans(spans, [query.detector], query.threshold)] = False
    missed = np.zeros(gold.starts.size, dtype=bool)
    wanted = set(others)
    for y in (d for d in spans.span_detectors if d.name in wanted):
        # Each Y is matched only on the items where such a span is still open: a matching is per item,
        # so what it finds there is what it finds on every item. At 10 K items x 12 detectors the Ys
        # find most of them, and the later ones are matched on a tenth of the items.
        items = distinct_values(gold.item_of_span[open_])
        if items.size == 0:
            break
        found = gold.span_rows(items)[
            matched_gold_spans(spans.packed[y.id].tokens.take(items), gold.take(items), query.threshold)
        ]
        missed[found] |= open_[found]
        open_[found] = False
    items = distinct_values(gold.item_of_span[missed])
    x = next((d for d in spans.span_detectors if d.name == query.detector), None)
    if x is not None:
        items = items[spans.ran_on(x.id)[items]]
    return _per_item(np.asarray(spans.items.external_ids, dtype=object)[items].tolist(), table)


def select_items(
    query: FinderQuery, rows: pd.DataFrame, table: pd.DataFrame, spans: DatasetSpans
) -> pd.DataFrame:
    """The rows of ``table`` the preset and filters keep, sorted as the query asks. ``rows`` and
    ``table`` are :func:`failure_tables` of ``spans`` at the query's threshold."""
    keep = preset_mask(query, rows, table, spans)
    if query.subsets:
        keep &= table["subset"].isin(query.subsets)
    if query.models:
        keep &= table["source model"].isin(query.models)
    if query.types and "gold types" in table.columns:  # without gold no item has a type
        wanted = set(query.types)
        keep &= table["gold types"].apply(lambda present: bool(wanted.intersection(present)))
    if query.min_disagreement > 0:
        keep &= table["disagreement"].fillna(0) >= query.min_disagreement
    found = table[keep]
    if query.sort != "item" and query.sort in table.columns:
        found = found.sort_values(
            query.sort, ascending=not query.descending, kind="stable", na_position="last"
        )
    elif query.descending:
        found = found.iloc[::-1]
    return found


def sort_options(table: pd.DataFrame) -> list[str]:
    numeric = [
        c for c in table.columns if c not in ("item", "clean") and pd.api.types.is_numeric_dtype(table[c])
    ]
    return ["item", *numeric]


# ----------------------------------------------------------------------------------- links, exports

COMPARE_FROM = "failures"  # ?from=failures: the comparison page steps through the finder's list


def compare_params(
    query: FinderQuery, dataset: str, item: str, detectors: Sequence[str]
) -> dict[str, str | list[str]]:
    """URL parameters of the comparison page for ``item`` that keep the finder's list to step through."""
    return {
        "dataset": dataset,
        "item": item,
        "detectors": ",".join(detectors),
        "from": COMPARE_FROM,
        **query.to_params(),
    }


def tracks_for(query: FinderQuery, detectors: Sequence[str]) -> list[str]:
    """The detectors to compare for the query: the preset's X and Y first, then the others."""
    first = [name for name in (query.detector, query.other) if name != ANY and name in detectors]
    return list(dict.fromkeys([*first, *detectors]))


def step(ids: Sequence[str], current: str) -> tuple[str | None, str | None, int | None]:
    """The ids before and after ``current`` in ``ids`` and its 0-based position (None if absent)."""
    if current not in ids:
        return None, (ids[0] if ids else None), None
    k = list(ids).index(current)
    return (ids[k - 1] if k > 0 else None), (ids[k + 1] if k + 1 < len(ids) else None), k


def _plain(value: object) -> object:
    if isinstance(value, tuple | list):
        return list(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def to_csv(found: pd.DataFrame) -> str:
    """The filtered list as CSV; list cells are joined with "; "."""
    flat = found.copy()
    for column in flat.columns:
        if flat[column].map(lambda v: isinstance(v, tuple | list)).any():
            flat[column] = flat[column].map(
                lambda v: "; ".join(map(str, v)) if isinstance(v, tuple | list) else v
            )
    return flat.to_csv(index=False)


def to_jsonl(found: pd.DataFrame) -> str:
    """The filtered list as JSON lines, one object per item; per-detector scores nested by detector."""
    lines = []
    for _, row in found.iterrows():
        record: dict[str, object] = {}
        per_detector: dict[str, dict[str, object]] = {}
        for column, value in row.items():
            if " · " in str(column):
                detector, measure = str(column).rsplit(" · ", 1)
                per_detector.setdefault(detector, {})[measure] = _plain(value)
            else:
                record[str(column)] = _plain(value)
        record["detectors"] = per_detector
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + ("\n" if lines else "")


def failure_tables(spans: DatasetSpans, threshold: float = 0.5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(detector_rows, item_table)`` of the dataset's spans at this F1_IoU threshold."""
    rows = detector_rows(spans, threshold)
    return rows, item_table(spans, rows, threshold)


def finder_tables(
    engine: Engine, dataset_id: int, threshold: float = 0.5
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`failure_tables` of a stored dataset, read afresh (the pages cache theirs per store revision)."""
    return failure_tables(load_dataset_spans(engine, dataset_id), threshold)
