"""Gold and detector spans of a whole dataset, in token units, ready for the MHALO measures.

MHALO scores spans in whitespace tokens (section 2.3), so character offsets from the store are mapped
to tokens once, every label set's spans in one vectorised pass, then reused by the comparison page, the
failure finder and the dashboards. Plain reads and arrays: the pages cache the result per store
revision (see :mod:`components.span_cache`), the command line and the tests call it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import (
    ItemIndex,
    SpanColumns,
    format_flags,
    item_index,
    other_answer_label_sets,
    read_at_once,
    run_coverage,
    span_columns,
)
from metrics import PackedSpans
from metrics.key_order import lex_order
from metrics.span_batches import item_matchings
from metrics.token_batches import token_spans_many

CharSpan = tuple[int, int, str | None]
TokenSpan = tuple[int, int]


@dataclass(frozen=True)
class LabelSetSpans:
    """One label set's spans on the dataset's items (in dataset order), packed (:class:`PackedSpans`)."""

    chars: PackedSpans  # character spans, per item sorted by offsets
    types: np.ndarray  # object: each character span's type, None when untyped
    tokens: PackedSpans  # those character spans that cover a token, in tokens
    token_types: np.ndarray  # object: each token span's type


class _PerItem(Mapping[int, list[list[Any]]]):
    """label set id → per item, a list of its spans, made from the packed spans when first asked for."""

    def __init__(self, packed: Mapping[int, LabelSetSpans], make: Callable[[LabelSetSpans], list[list[Any]]]):
        self._packed, self._make = packed, make
        self._made: dict[int, list[list[Any]]] = {}

    def __getitem__(self, label_set_id: int) -> list[list[Any]]:
        made = self._made.get(label_set_id)
        if made is None:  # two sessions racing here both make the same lists; either is kept
            made = self._made[label_set_id] = self._make(self._packed[label_set_id])
        return made

    def __iter__(self) -> Iterator[int]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)


def per_item(values: list[Any], offsets: np.ndarray) -> list[list[Any]]:
    """``values`` (one per span, packed order) split into one list per item at packed ``offsets``."""
    bounds = offsets.tolist()
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _char_lists(spans: LabelSetSpans) -> list[list[CharSpan]]:
    chars = spans.chars
    return per_item(
        list(zip(chars.starts.tolist(), chars.ends.tolist(), spans.types.tolist(), strict=True)),
        chars.offsets,
    )


def _token_lists(spans: LabelSetSpans) -> list[list[TokenSpan]]:
    tokens = spans.tokens
    return per_item(list(zip(tokens.starts.tolist(), tokens.ends.tolist(), strict=True)), tokens.offsets)


@dataclass(frozen=True)
class DatasetSpans:
    """Everything the span measures need, aligned with ``items`` (one entry per item, dataset order).

    ``packed`` holds every label set's spans as arrays, which the dataset-wide measures use as they are;
    :attr:`char_spans` and :attr:`token_spans` give them per item as lists, for the pages that show a
    few items (made for a label set when first asked for).
    """

    items: ItemIndex
    gold: LabelSetView | None
    detectors: tuple[LabelSetView, ...]
    humans: tuple[LabelSetView, ...]
    packed: dict[int, LabelSetSpans] = field(default_factory=dict)
    # label set id → per item: whether the raw output followed the format (True when there is none)
    follows_format: dict[int, np.ndarray] = field(default_factory=dict)
    # the label sets holding raw outputs (a detector's answers as text)
    with_outputs: frozenset[int] = frozenset()
    # the label sets holding answers of another kind than spans (sentence scores, token probabilities,
    # claim labels, …), whose raw outputs are those answers' texts
    other_answers: frozenset[int] = frozenset()
    # detector label set id → per item: whether the run was given the item, for the runs given only some
    # (see :meth:`ran_on`)
    given: dict[int, np.ndarray] = field(default_factory=dict)

    def ran_on(self, label_set_id: int) -> np.ndarray:
        """Per item, whether the detector run was given it: an item it has a coverage mark, a raw output
        or a span on. A run recording neither marks nor outputs (imported before runs were marked) is
        taken as given every item. An item a run was not given is left out of its scores, not scored as
        one where it flagged nothing: a run over one subset read as missing every hallucination of the
        rest."""
        found = self.given.get(label_set_id)
        return found if found is not None else np.ones(len(self.items.ids), dtype=bool)

    @property
    def span_detectors(self) -> tuple[LabelSetView, ...]:
        """The detector runs that may locate spans: those holding a span, or a raw output that is not an
        answer of another kind. A run of sentence scores, token probabilities or claim labels is left out
        of the span measures rather than scored as a detector that flagged nothing (a scorer's texts read
        its score per sentence, and it stood in MHALO's Table 3 with F1 0)."""
        return tuple(
            d
            for d in self.detectors
            if self.has_spans(d.id) or (d.id in self.with_outputs and d.id not in self.other_answers)
        )

    @cached_property
    def char_spans(self) -> Mapping[int, list[list[CharSpan]]]:
        """label set id → per item: character spans ``(start, end, type)``."""
        return _PerItem(self.packed, _char_lists)

    @cached_property
    def token_spans(self) -> Mapping[int, list[list[TokenSpan]]]:
        """label set id → per item: token spans ``(start, end)``."""
        return _PerItem(self.packed, _token_lists)

    @cached_property
    def gold_type_sets(self) -> list[tuple[str, ...]]:
        """:func:`gold_types`, made once: both of the failure finder's tables show them (read-only)."""
        return _gold_types(self)

    @property
    def gold_tokens(self) -> list[list[TokenSpan]]:
        if self.gold is None:
            return [[] for _ in self.items.ids]
        return self.token_spans[self.gold.id]

    @property
    def gold_packed(self) -> PackedSpans:
        """The gold token spans, packed (no spans at all without a gold label set)."""
        if self.gold is None:
            return _no_spans(len(self.items.ids))
        return self.packed[self.gold.id].tokens

    def has_spans(self, label_set_id: int) -> bool:
        found = self.packed.get(label_set_id)
        return found is not None and found.chars.starts.size > 0

    def label_set(self, label_set_id: int) -> LabelSetView:
        for view in (self.gold, *self.detectors, *self.humans):
            if view is not None and view.id == label_set_id:
                return view
        raise KeyError(label_set_id)


def _no_spans(n_items: int) -> PackedSpans:
    empty = np.zeros(0, dtype=np.int64)
    return PackedSpans(empty, empty, np.zeros(n_items + 1, dtype=np.int64))


def load_dataset_spans(engine: Engine, dataset_id: int) -> DatasetSpans:
    """The dataset's spans for every label set, in characters and in tokens, with the format flags."""
    items, label_sets, columns, flags, other_answers, coverage = read_at_once(
        engine,
        partial(item_index, engine, dataset_id),
        partial(list_label_sets, engine, dataset_id),
        partial(span_columns, engine, dataset_id),
        partial(format_flags, engine, dataset_id),
        partial(other_answer_label_sets, engine, dataset_id),
        partial(run_coverage, engine, dataset_id),
    )
    return dataset_spans(items, label_sets, columns, flags, other_answers, coverage)


def dataset_spans(
    items: ItemIndex,
    label_sets: Sequence[LabelSetView],
    columns: SpanColumns,
    flags: Mapping[int, Mapping[int, bool]],
    other_answers: frozenset[int] = frozenset(),
    coverage: Mapping[int, np.ndarray | None] | None = None,
) -> DatasetSpans:
    """The :class:`DatasetSpans` of what :func:`load_dataset_spans` reads: every span placed on its item
    and mapped to tokens in one vectorised pass (:func:`metrics.token_batches.token_spans_many`).
    Spans of items missing from ``items`` (written between the reads) are left out. ``coverage``: per
    detector label set, the item ids its run is marked as given, None for every item
    (:func:`run_coverage`)."""
    ids = np.asarray(items.ids, dtype=np.int64)
    n_items = ids.size
    by_id = np.argsort(ids, kind="stable")
    rows, known = rows_of(ids, by_id, columns.item_ids)
    label_set_of = columns.label_set_ids[known]
    starts, ends, types = columns.starts[known], columns.ends[known], columns.types[known]
    order = lex_order((ends, starts, rows, label_set_of))  # per label set, per item in dataset order
    rows, label_set_of, starts, ends, types = (a[order] for a in (rows, label_set_of, starts, ends, types))
    first, stop, kept = token_spans_many(items.responses, rows, starts, ends)

    packed: dict[int, LabelSetSpans] = {}
    follows: dict[int, np.ndarray] = {}
    given: dict[int, np.ndarray] = {}
    for view in label_sets:
        lo, hi = np.searchsorted(label_set_of, [view.id, view.id + 1]).tolist()
        part = slice(lo, hi)
        mapped = kept[part]
        packed[view.id] = LabelSetSpans(
            chars=PackedSpans(starts[part], ends[part], _offsets(rows[part], n_items)),
            types=types[part],
            tokens=PackedSpans(
                first[part][mapped], stop[part][mapped], _offsets(rows[part][mapped], n_items)
            ),
            token_types=types[part][mapped],
        )
        follows[view.id] = _follows_format(flags.get(view.id, {}), ids, by_id)
        if view.kind == "detector":
            marks = coverage or {}
            mask = (
                None  # marked on every item
                if view.id in marks and marks[view.id] is None
                else _given(marks.get(view.id), flags.get(view.id, {}), packed[view.id], ids, by_id)
            )
            if mask is not None:
                given[view.id] = mask
    return DatasetSpans(
        items=items,
        gold=next((v for v in label_sets if v.kind == "gold"), None),
        detectors=tuple(v for v in label_sets if v.kind == "detector"),
        humans=tuple(v for v in label_sets if v.kind == "human"),
        packed=packed,
        follows_format=follows,
        with_outputs=frozenset(ls for ls, found in flags.items() if found),
        other_answers=other_answers,
        given=given,
    )


def _given(
    marked: np.ndarray | None,
    flags: Mapping[int, bool],
    spans: LabelSetSpans,
    ids: np.ndarray,
    by_id: np.ndarray,
) -> np.ndarray | None:
    """Per item of ``ids``, whether a detector run was given it: it is ``marked`` (item ids), has a raw
    output (``flags``' keys) or a span. None when the run was given every item, or records neither marks
    nor outputs (a run imported before runs were marked: every item, as it was read then)."""
    outputs = np.fromiter(flags.keys(), dtype=np.int64, count=len(flags))
    if (marked is None or not marked.size) and not outputs.size:
        return None
    mask = spans.chars.counts > 0
    for found in (marked, outputs):
        if found is not None and found.size:
            mask[rows_of(ids, by_id, found)[0]] = True
    return None if mask.all() else mask


def rows_of(ids: np.ndarray, by_id: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``keys`` (item ids) stands in ``ids`` (unique; ``by_id`` sorts them): the rows of
    the keys found, and which keys were found (an item written after ``ids`` was read is not)."""
    if not ids.size:
        return np.zeros(0, dtype=np.int64), np.zeros(keys.size, dtype=bool)
    at = np.minimum(np.searchsorted(ids[by_id], keys), ids.size - 1)
    known = ids[by_id][at] == keys
    return by_id[at][known], known


def _follows_format(flags: Mapping[int, bool], ids: np.ndarray, by_id: np.ndarray) -> np.ndarray:
    """Per item of ``ids`` (``by_id`` sorts them), its flag in ``flags`` (item id → flag), True where
    it has none: an item without a raw output broke no format. (Whether the run was given the item at
    all is :meth:`DatasetSpans.ran_on`.)"""
    follows = np.ones(ids.size, dtype=bool)
    if flags:
        rows, known = rows_of(ids, by_id, np.fromiter(flags.keys(), dtype=np.int64, count=len(flags)))
        follows[rows] = np.fromiter(flags.values(), dtype=bool, count=len(flags))[known]
    return follows


def _offsets(rows: np.ndarray, n_items: int) -> np.ndarray:
    offsets = np.zeros(n_items + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_items), out=offsets[1:])
    return offsets


def gold_types(spans: DatasetSpans) -> list[tuple[str, ...]]:
    """Per item, the sorted hallucination types of its gold spans ("untyped" for a span without one)."""
    return list(spans.gold_type_sets)


def _gold_types(spans: DatasetSpans) -> list[tuple[str, ...]]:
    """:func:`gold_types`, found from the packed spans, each item's distinct (item, type) pairs at once:
    making every item's span list and a set of it cost a tenth of a second at 10 K items."""
    if spans.gold is None:
        return [() for _ in spans.items.ids]
    chars = spans.packed[spans.gold.id].chars
    named = [t or "untyped" for t in spans.packed[spans.gold.id].types.tolist()]
    names = sorted(set(named))
    code_of = {name: k for k, name in enumerate(names)}
    codes = np.fromiter(map(code_of.__getitem__, named), dtype=np.int64, count=len(named))
    # Each item's distinct types in name order: the distinct keys, sorted by item, then name.
    present = np.unique(chars.item_of_span * max(len(names), 1) + codes)
    items, kinds = np.divmod(present, max(len(names), 1))
    bounds = np.searchsorted(items, np.arange(chars.n_items + 1)).tolist()
    found = [names[k] for k in kinds.tolist()]
    return [tuple(found[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def per_item_scores(
    spans: DatasetSpans, threshold: float = 0.5, boundary: tuple[float, float] = (0.2, 0.5)
) -> pd.DataFrame:
    """One row per (item, span detector): F1_IoU and F1_M in tokens, the format flag, span counts and what
    the F1_IoU matching says (:func:`metrics.span_batches.item_matchings`).

    Matching columns: ``n_matched`` (size of the maximum matching) and ``n_boundary`` (predictions whose
    largest IoU with a gold span lies in ``boundary``); which gold spans the matching pairs is
    :func:`metrics.span_batches.matched_gold_spans`. The F1 values here are the raw per-item scores;
    dataset-level tables score a format failure 0 (MHALO section 4.1) via
    :func:`metrics.span_detection_table`. An item a run was not given (:meth:`DatasetSpans.ran_on`) has
    no row for that detector.
    """
    gold = spans.gold_packed
    n_items = len(spans.items.ids)
    # The item's own columns are made once and taken for every detector's rows (made per detector,
    # twelve frames of 10 K rows cost more than the scores themselves).
    per_item = pd.DataFrame(
        {
            "item_id": spans.items.ids,
            "external_id": spans.items.external_ids,
            "subset": spans.items.subsets,
            "source_model": spans.items.source_models,
        }
    )
    n_gold = gold.counts
    types = np.empty(n_items, dtype=object)
    types[:] = gold_types(spans)
    rows: list[np.ndarray] = []
    columns: dict[str, list[np.ndarray]] = {
        name: []
        for name in ("label_set_id", "f1_iou", "f1_m", "follows_format", "n_pred", "n_matched", "n_boundary")
    }
    names: list[str] = []
    for detector in spans.span_detectors:  # all items of a detector at once, as match_spans finds them
        preds = spans.packed[detector.id].tokens
        matchings = item_matchings(preds, gold, threshold, boundary)
        given = spans.given.get(detector.id)
        kept = np.arange(n_items) if given is None else np.flatnonzero(given)
        rows.append(kept)
        names += [detector.name] * kept.size
        for name, values in (
            ("label_set_id", np.full(n_items, detector.id, dtype=np.int64)),
            ("f1_iou", matchings.f1_iou),
            ("f1_m", matchings.f1_m),
            ("follows_format", spans.follows_format[detector.id]),
            ("n_pred", preds.counts),
            ("n_matched", matchings.n_matched),
            ("n_boundary", matchings.n_boundary),
        ):
            columns[name].append(values[kept])
    if not rows:
        return pd.DataFrame(
            columns=[
                "item_id", "external_id", "subset", "source_model", "detector", "label_set_id",
                "f1_iou", "f1_m", "follows_format", "n_pred", "n_gold", "gold_types",
                "n_matched", "n_boundary",
            ]
        )  # fmt: skip
    at = np.concatenate(rows)
    frame = per_item.take(at).reset_index(drop=True)
    frame["detector"] = names
    for name in ("label_set_id", "f1_iou", "f1_m", "follows_format", "n_pred"):
        frame[name] = np.concatenate(columns[name])
    frame["n_gold"] = n_gold[at]
    frame["gold_types"] = types[at]
    for name in ("n_matched", "n_boundary"):
        frame[name] = np.concatenate(columns[name])
    return frame
