"""AlignBench (sentence-level detection): Table 3, Figures 7, 8 and 9, Table 5 / H.

Detectors give each sentence a *correctness* score 0-100 (higher = more likely correct). For AUROC the
positive class is a wrong ("incorrect") sentence and its score is ``100 - correctness``, so 50 is chance
and higher is better, as in the paper. Unparseable outputs keep the paper's default of 50. AUROC is
computed within each captioning model (the item's source model) and "Avg" is the plain mean over
captioners, as in Table 3. "Unknown" sentences are left out unless the filter counts them as correct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.dataset_spans import DatasetSpans
from analysis.reports.base import Report, Table
from analysis.reports.data import (
    UNKNOWN_AS_CORRECT,
    UNKNOWN_EXCLUDED,
    UNTYPED,
    ReportFilter,
    chosen_detectors,
    item_mask,
)
from analysis.reports.provenance import Provenance, fingerprint
from analysis.reports.sentences import INCORRECT, UNKNOWN, SentenceInputs, load_sentence_inputs
from analysis.reports.spans import SpanInputs, load_span_inputs
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import annotation_counts
from metrics import auroc_table, localization_precision, mean_iou, token_spans
from metrics.key_order import distinct_values

KEY, TITLE = "alignbench", "AlignBench · sentence-level detection"
AVG = "Avg"
LOCALIZATION_IOU = 0.3


@dataclass(frozen=True)
class AlignBenchInputs:
    sentences: SentenceInputs
    spans: SpanInputs | None  # only when gold and detector spans exist (Table 5 / H)


def load(engine: Engine, dataset_id: int) -> AlignBenchInputs:
    counts = annotation_counts(engine, dataset_id, kinds=("spans",))["spans"]
    with_spans = counts.get("gold", 0) > 0 and counts.get("detector", 0) > 0
    return AlignBenchInputs(
        load_sentence_inputs(engine, dataset_id, offsets=with_spans),
        load_span_inputs(engine, dataset_id) if with_spans else None,
    )


def available(inputs: AlignBenchInputs) -> bool:
    s = inputs.sentences
    return s.gold is not None and s.gold.id in s.labels and bool(s.scored_detectors())


@dataclass(frozen=True)
class _Slice:
    rows: np.ndarray  # sentence rows evaluated
    positive: np.ndarray  # 1 = incorrect
    captioner_code: np.ndarray  # the captioner's position in ``captioners``, per row
    captioners: list[Any]  # the items' source models (codes index this)
    # The chosen detectors' scores of these rows (label set id → scores): picked out of the million
    # once, not again by every table that reads them.
    scores: dict[int, np.ndarray]


def _gold_id(s: SentenceInputs) -> int:
    if s.gold is None:
        raise ValueError("the dataset has no gold sentence labels")
    return s.gold.id


def _captioner_codes(s: SentenceInputs) -> tuple[np.ndarray, list[Any]]:
    """Each item's captioner (source model) as its position among the captioners in order of first
    appearance, and those captioners: coded once per item, so per sentence they are integers (grouped
    in C, not by dict), and once per report rather than per slice."""
    codes, uniques = pd.factorize(s.items["source_model"], sort=False, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64), list(uniques.tolist())


def _slice(
    s: SentenceInputs,
    flt: ReportFilter,
    unknown: str,
    captioners: tuple[np.ndarray, list[Any]],
    detectors: list[LabelSetView],
) -> _Slice:
    """The sentences evaluated under ``flt`` with ``unknown``'s convention, with the ``detectors``'
    scores; ``captioners``: :func:`_captioner_codes` of ``s``."""
    gold = s.labels[_gold_id(s)]
    gold_types = s.error_types.get(_gold_id(s), np.full(gold.size, None, dtype=object))
    keep = (gold != -1) & item_mask(s.items, flt)[s.item_pos]
    if unknown == UNKNOWN_EXCLUDED:
        keep &= gold != UNKNOWN
    if flt.types:
        typed = np.isin(np.where(gold_types == None, UNTYPED, gold_types), list(flt.types))  # noqa: E711
        keep &= (gold != INCORRECT) | typed
    rows = np.flatnonzero(keep)
    item_code, names = captioners
    return _Slice(
        rows,
        (gold[rows] == INCORRECT).astype(np.int8),
        item_code[s.item_pos[rows]],
        names,
        {d.id: s.scores[d.id][rows] for d in detectors},
    )


def build(inputs: AlignBenchInputs, flt: ReportFilter, n_resamples: int = 1000, seed: int = 0) -> Report:
    s = inputs.sentences
    if not available(inputs):
        raise ValueError("the dataset has no gold sentence labels or no detector scores")
    detectors = [d for d in chosen_detectors(s.label_sets, flt) if d.id in s.scores]
    captioners = _captioner_codes(s)
    part = _slice(s, flt, flt.unknown, captioners, detectors)
    # Runs that only locate spans (Table 5 / H alone): named, and their spans in the digest, as well.
    ev = inputs.spans.spans if inputs.spans is not None else None
    locators = [
        d
        for d in chosen_detectors(s.label_sets, flt)
        if d.id not in s.scores and ev is not None and ev.has_spans(d.id)
    ]
    provenance = Provenance(
        dataset=s.dataset,
        label_sets=("gold", *(d.name for d in detectors), *(d.name for d in locators)),
        n_items=int(distinct_values(s.item_pos[part.rows]).size),
        digest=fingerprint(
            s.sentence_id[part.rows],
            part.positive,
            {d.name: (part.scores[d.id], s.parsed[d.id][part.rows]) for d in detectors},
            flt.unknown,
            n_resamples,
            seed,
            *([{d.name: _located(ev, d.id) for d in locators}] if ev is not None and locators else []),
        ),
        filters=_describe(flt),
    )
    if part.rows.size == 0 or not detectors:
        return Report(KEY, TITLE, provenance, notes=("No sentence or detector matches the filters.",))
    gold_types = s.error_types.get(_gold_id(s), np.full(s.sentence_id.size, None, dtype=object))
    cells = _auroc_cells(detectors, part, n_resamples, seed)
    ordered = _ordered_captioners(s, part)
    wide = cells.pivot(index="detector", columns="captioner", values="auroc").reindex(
        index=[d.name for d in detectors], columns=ordered
    )
    wide[AVG] = wide[ordered].mean(axis=1)
    table3 = wide.reset_index()
    table3.columns.name = None
    normalized = _self_preference(wide[ordered])
    # Runs that scored only some of the kept sentences (a run over a subset, or stopped half way): each
    # is measured on its own sentences, so best and second best would compare unlike runs.
    partly = [
        f"{d.name} {n:,}"
        for d in detectors
        if (n := int((~np.isnan(part.scores[d.id])).sum())) < part.rows.size
    ]
    provenance = replace(provenance, partial=_partial_runs(s, ev, detectors, locators, part))
    tables = {
        "table3": Table(
            "table3",
            "Table 3 · AUROC per detector and captioning model (%)",
            table3,
            caption=(
                "Positive class: incorrect sentences, scored 100 − correctness. Within each captioner; Avg is the "
                f"mean over captioners. Unknown sentences {_unknown_words(flt.unknown)}. "
                f"{int(part.positive.sum()):,} incorrect and {int((1 - part.positive).sum()):,} other sentences."
                + (
                    " Runs that scored only some of these sentences are measured on those alone (sentences): "
                    + ", ".join(partly)
                    + "; so no best value is marked."
                    if partly
                    else ""
                )
            ),
            mark_columns=() if partly else (*ordered, AVG),
        ),
        "table3_ci": Table(
            "table3_ci",
            f"Table 3 with {cells_confidence(n_resamples)} bootstrap intervals (%)",
            cells,
            caption="Percentile bootstrap over the sentences of each cell; n_incorrect / n_other count the cell's sentences.",
        ),
        "unknown": Table(
            "unknown",
            "AUROC with 'unknown' sentences left out and counted as correct (%)",
            _unknown_comparison(s, detectors, flt, cells, captioners),
            caption="Both conventions side by side: a large gap means the detector scores unknown sentences like wrong ones.",
        ),
        "positional": Table(
            "positional",
            "Figure 7 · mean correctness score by sentence position",
            _positional(s, detectors, part),
            caption="Scores averaged per position in the response (1 = first sentence), for correct and incorrect sentences.",
        ),
        "self_preference": Table(
            "self_preference",
            "Figure 8 · AUROC normalised by each detector's mean (self-preference)",
            normalized,
            caption="Each row divided by the detector's mean AUROC over captioners; below 1 on its own captions is self-preference.",
        ),
        "error_types": Table(
            "error_types",
            "Figure 9 · mean correctness score per error type (incorrect sentences; lower is better)",
            _by_error_type(s, detectors, part, gold_types),
        ),
    }
    if inputs.spans is not None:
        # Every chosen run that locates spans, not only the scorers: a localization run is a label set of
        # its own (a file of tagged outputs), which holds no sentence score.
        localization = _localization(s, inputs.spans, chosen_detectors(s.label_sets, flt), part)
        if localization is not None:
            tables["localization"] = localization
    return Report(KEY, TITLE, provenance, tables=tables)


def _ordered_captioners(s: SentenceInputs, part: _Slice) -> list[str]:
    """Image-to-text models first, then text-to-image ones (as Table 3), each by name."""
    pairs = s.items[["source_model", "task_type"]].drop_duplicates()
    task = dict(zip(pairs["source_model"].tolist(), pairs["task_type"].tolist(), strict=True))
    present = [part.captioners[k] for k in distinct_values(part.captioner_code).tolist()]
    return sorted(present, key=lambda name: (task.get(name) != "image-to-text", name))


def cells_confidence(n_resamples: int) -> str:
    return f"95 % ({n_resamples:,} resamples)" if n_resamples else "no"


def _describe(flt: ReportFilter) -> str:
    words = flt.describe()
    unknown = f"unknown {_unknown_words(flt.unknown)}"
    return f"{words}; {unknown}" if words else unknown


def _unknown_words(unknown: str) -> str:
    return "counted as correct" if unknown == UNKNOWN_AS_CORRECT else "left out"


def _coverage_groups(
    detectors: list[LabelSetView], part: _Slice
) -> list[tuple[np.ndarray | None, list[LabelSetView]]]:
    """Detectors grouped by the sentences they scored (None: every sentence of ``part``), so each group
    is one :func:`auroc_table` call.

    Usually every detector scored every sentence and there is a single group: the table then groups
    the sentences by captioner once, instead of once per detector.
    """
    groups: dict[bytes, tuple[np.ndarray | None, list[LabelSetView]]] = {}
    for detector in detectors:
        scored = ~np.isnan(part.scores[detector.id])
        if scored.all():
            groups.setdefault(b"all", (None, []))[1].append(detector)
        elif scored.any():
            groups.setdefault(np.packbits(scored).tobytes(), (scored, []))[1].append(detector)
    return list(groups.values())


def _auroc_cells(detectors: list[LabelSetView], part: _Slice, n_resamples: int, seed: int) -> pd.DataFrame:
    frames = []
    for scored, members in _coverage_groups(detectors, part):
        kept: Any = slice(None) if scored is None else scored  # (every row: a view, not a copy)
        table = auroc_table(
            part.positive[kept],
            {d.name: 100.0 - part.scores[d.id][kept] for d in members},
            part.captioner_code[kept],
            n_resamples=n_resamples,
            seed=seed,
        )
        frame = pd.DataFrame(table.to_records())
        frame["group"] = [part.captioners[k] for k in frame["group"]]
        frames.append(frame)
    cells = pd.concat(frames, ignore_index=True).rename(
        columns={"group": "captioner", "n_pos": "n_incorrect", "n_neg": "n_other"}
    )
    for column in ("auroc", "low", "high"):
        cells[column] = cells[column] * 100
    order = {d.name: k for k, d in enumerate(detectors)}
    cells = cells.sort_values("detector", key=lambda c: c.map(order), kind="stable")
    return cells[["detector", "captioner", "auroc", "low", "high", "n_incorrect", "n_other"]].reset_index(
        drop=True
    )


def _self_preference(wide: pd.DataFrame) -> pd.DataFrame:
    ratio = wide.div(wide.mean(axis=1), axis=0)
    tidy = ratio.reset_index().melt(id_vars="detector", var_name="captioner", value_name="normalized")
    tidy["self"] = [_same_model(d, c) for d, c in zip(tidy["detector"], tidy["captioner"], strict=True)]
    return tidy


def _same_model(detector: str, captioner: str) -> bool:
    """A detector judging its own captions: names equal up to case, spaces and punctuation."""
    return _letters(detector) == _letters(captioner)


def _letters(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def _unknown_comparison(
    s: SentenceInputs,
    detectors: list[LabelSetView],
    flt: ReportFilter,
    shown: pd.DataFrame,
    captioners: tuple[np.ndarray, list[Any]],
) -> pd.DataFrame:
    """``shown``: the cells of Table 3, computed under the filter's own convention (reused, not redone);
    ``captioners``: :func:`_captioner_codes` of ``s``."""
    gold = s.labels[_gold_id(s)]
    rows = {d.name: {"detector": d.name} for d in detectors}
    for unknown, label in ((UNKNOWN_EXCLUDED, "left out"), (UNKNOWN_AS_CORRECT, "as correct")):
        if unknown == flt.unknown:
            cells = shown  # the same sentences: the point estimates do not depend on the resamples
        else:
            other = _slice(s, flt, unknown, captioners, detectors)
            cells = _auroc_cells(detectors, other, n_resamples=0, seed=0)
        for name, mean in cells.groupby("detector", sort=False)["auroc"].mean().items():
            rows[str(name)][f"Avg · unknown {label}"] = mean
    n_unknown = int(((gold == UNKNOWN) & item_mask(s.items, flt)[s.item_pos]).sum())
    frame = pd.DataFrame([{**row, "n_unknown": n_unknown} for row in rows.values()])
    frame["difference"] = frame["Avg · unknown as correct"] - frame["Avg · unknown left out"]
    return frame


def _means(keys: np.ndarray, n_keys: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and count of ``values`` per integer key (NaN values ignored), by bincount."""
    scored = ~np.isnan(values)
    count = np.bincount(keys[scored], minlength=n_keys)
    total = np.bincount(keys[scored], weights=values[scored], minlength=n_keys)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count, count


def _positional(s: SentenceInputs, detectors: list[LabelSetView], part: _Slice) -> pd.DataFrame:
    position = s.index[part.rows].astype(np.int64)
    n_positions = int(position.max()) + 1 if position.size else 0
    keys = position * 2 + part.positive
    frames = []
    for detector in detectors:
        mean, count = _means(keys, 2 * n_positions, part.scores[detector.id])
        present = np.flatnonzero(count)
        frames.append(
            pd.DataFrame(
                {
                    "detector": detector.name,
                    "position": present // 2 + 1,
                    "label": np.where(present % 2 == 1, "incorrect", "correct"),
                    "mean_score": mean[present],
                    "n": count[present],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _by_error_type(
    s: SentenceInputs, detectors: list[LabelSetView], part: _Slice, gold_types: np.ndarray
) -> pd.DataFrame:
    wrong = part.rows[part.positive == 1]
    types = np.where(gold_types[wrong] == None, UNTYPED, gold_types[wrong]).astype(str)  # noqa: E711
    names, keys = np.unique(types, return_inverse=True)
    frames = []
    for detector in detectors:
        mean, count = _means(keys, names.size, s.scores[detector.id][wrong])
        present = np.flatnonzero(count)
        frames.append(
            pd.DataFrame(
                {
                    "detector": detector.name,
                    "type": names[present],
                    "mean_score": mean[present],
                    "n": count[present],
                }
            )
        )
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["detector", "type", "mean_score", "n"])
    )


def _localization(
    s: SentenceInputs, spans: SpanInputs, detectors: list[LabelSetView], part: _Slice
) -> Table | None:
    ev = spans.spans
    if s.start is None or s.end is None:
        return None
    if ev.gold is None or list(spans.items["item_id"]) != list(s.items["item_id"]):
        return None
    with_spans = [d for d in detectors if spans.has_spans(d)]
    wrong = part.rows[part.positive == 1]
    if not with_spans or wrong.size == 0:
        return None
    sentence_tokens = []
    for sentence in wrong.tolist():
        text = ev.items.responses[s.item_pos[sentence]]
        found = token_spans(text, [(int(s.start[sentence]), int(s.end[sentence]))])
        sentence_tokens.append(found[0] if found else (0, 0))
    item_rows = s.item_pos[wrong]
    captioner = part.captioner_code[part.positive == 1]
    gold = [_clip(ev.token_spans[ev.gold.id][i], t) for i, t in zip(item_rows, sentence_tokens, strict=True)]
    records = []
    partly = []  # runs given only some of these sentences' items
    for detector in with_spans:
        preds = [
            _clip(ev.token_spans[detector.id][i], t) for i, t in zip(item_rows, sentence_tokens, strict=True)
        ]
        ran = ev.ran_on(detector.id)[item_rows]  # a run given only some items: the sentences of those
        if not ran.all():
            partly.append(f"{detector.name} {int(ran.sum()):,}")
        row: dict[str, object] = {"detector": detector.name}
        ap: list[float] = []
        miou: list[float] = []
        for name in _ordered_captioners(s, part):
            idx = np.flatnonzero((captioner == part.captioners.index(name)) & ran)
            if idx.size == 0:
                continue
            ap.append(
                localization_precision([preds[i] for i in idx], [gold[i] for i in idx], LOCALIZATION_IOU)
                * 100
            )
            miou.append(mean_iou([preds[i] for i in idx], [gold[i] for i in idx]) * 100)
            row[f"{name} · AP"], row[f"{name} · mIoU"] = ap[-1], miou[-1]
        row[f"{AVG} · AP"] = float(np.mean(ap)) if ap else np.nan
        row[f"{AVG} · mIoU"] = float(np.mean(miou)) if miou else np.nan
        records.append(row)
    frame = pd.DataFrame(records)
    return Table(
        "localization",
        "Table 5 / H · localization of the hallucinated segment (%)",
        frame,
        caption=(
            f"On the {wrong.size:,} incorrect sentences, spans clipped to the sentence, in tokens. AP: share of "
            f"predicted spans with IoU ≥ {LOCALIZATION_IOU:g} with a gold span; mIoU: mean IoU of covered tokens."
            + (
                " Runs given only some of the items are scored on their sentences alone (sentences): "
                + ", ".join(partly)
                + "; so no best value is marked."
                if partly
                else ""
            )
        ),
        # Best and second best compare runs scored on the same sentences only.
        mark_columns=() if partly else tuple(c for c in frame.columns if c != "detector"),
    )


def _partial_runs(
    s: SentenceInputs,
    ev: DatasetSpans | None,
    scorers: list[LabelSetView],
    locators: list[LabelSetView],
    part: _Slice,
) -> tuple[tuple[str, str], ...]:
    """The runs the figures name with what they were scored on, when that is only some of it: a scorer
    by the kept sentences it scored, a run that only locates spans by the kept items it was given."""
    total = part.rows.size
    out = [
        (d.name, f"{n:,} of {total:,} sentences")
        for d in scorers
        if (n := int((~np.isnan(part.scores[d.id])).sum())) < total
    ]
    if ev is not None and locators:
        items = distinct_values(s.item_pos[part.rows])
        for d in locators:
            ran = ev.ran_on(d.id)[items]
            if not ran.all():
                out.append((d.name, f"{int(ran.sum()):,} of {items.size:,} items"))
    return tuple(out)


def _located(ev: DatasetSpans, label_set_id: int) -> tuple[np.ndarray, ...]:
    """A locating run's token spans and the items it was given, for the provenance digest."""
    tokens = ev.packed[label_set_id].tokens
    return tokens.starts, tokens.ends, tokens.offsets, ev.ran_on(label_set_id)


def _clip(spans: list[tuple[int, int]], window: tuple[int, int]) -> list[tuple[int, int]]:
    lo, hi = window
    return [(max(a, lo), min(b, hi)) for a, b in spans if a < hi and b > lo]
