"""Reports: the papers' tables computed on whatever the store holds, as plain DataFrames.

Computation is separate from rendering. Each module of this package takes the bulk reads of one
kind of annotation (its ``load``), a :class:`~analysis.reports.data.ReportFilter` and options, and
returns a :class:`~analysis.reports.base.Report`: named tables with the provenance of the data they
were computed from. Pages plot these tables (:mod:`render.figures`) and cache them per store revision
(:mod:`components.live_reports`); the CLI prints them (``cli.py evaluate``, via :mod:`render.report_text`).
Nothing here imports Streamlit or caches: data in, tables out.

Sections, by paper: :mod:`.mhalo` (spans), :mod:`.alignbench` (sentences), :mod:`.claims` (MHaluBench),
:mod:`.triplets` (Tri-HE), :mod:`.calibration` (HalLoc), :mod:`.mmhal` (MMHal-Bench, response
ratings); and per page: :mod:`.correlation`, :mod:`.agreement`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from analysis.reports import (
    agreement,
    alignbench,
    calibration,
    claims,
    correlation,
    mhalo,
    mmhal,
    triplets,
)
from analysis.reports.base import Report, Table
from analysis.reports.data import ReportFilter
from analysis.reports.detector_runs import with_runs
from analysis.reports.spans import load_span_inputs
from db.detector_runs import run_provenance
from db.repositories.report_inputs import annotation_counts

Counts = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Section:
    """One paper's part of the metrics page."""

    key: str
    title: str
    load: Callable[[Engine, int], Any]
    available: Callable[[Any], bool]
    build: Callable[..., Report]
    offered: Callable[[Counts], bool]  # decided from row counts alone, before reading anything


def _n(counts: Counts, kind: str, owner: str | None = None) -> int:
    found = counts.get(kind, {})
    return sum(found.values()) if owner is None else found.get(owner, 0)


SECTIONS: dict[str, Section] = {
    s.key: s
    for s in (
        Section(
            mhalo.KEY,
            "MHALO",
            load_span_inputs,
            mhalo.available,
            mhalo.build,
            # A span gold may hold no span at all (every response clean): the counts cannot tell it from
            # no span gold, so without gold spans :func:`offered_sections` asks the inputs.
            lambda c: (_n(c, "spans", "detector") + _n(c, "raw_outputs", "detector")) > 0,
        ),
        Section(
            alignbench.KEY,
            "AlignBench",
            alignbench.load,
            alignbench.available,
            alignbench.build,
            lambda c: _n(c, "sentence_labels", "gold") > 0 and _n(c, "sentence_scores", "detector") > 0,
        ),
        Section(
            claims.KEY,
            "MHaluBench",
            claims.load,
            claims.available,
            claims.build,
            lambda c: _n(c, "claim_labels", "gold") > 0 and _n(c, "claim_labels", "detector") > 0,
        ),
        Section(
            triplets.KEY,
            "Tri-HE",
            triplets.load,
            triplets.available,
            triplets.build,
            lambda c: _n(c, "triplet_judgments") > 0,
        ),
        Section(
            calibration.KEY,
            "HalLoc",
            calibration.load,
            calibration.available,
            calibration.build,
            lambda c: _n(c, "token_probabilities", "detector") > 0 and _n(c, "spans", "gold") > 0,
        ),
        Section(
            mmhal.KEY,
            "MMHal-Bench",
            mmhal.load,
            mmhal.available,
            mmhal.build,
            lambda c: _n(c, "response_scores") > 0,
        ),
    )
}


# Sections whose tables carry bootstrap intervals (their builders take ``n_resamples``).
RESAMPLED = (alignbench.KEY, mmhal.KEY)


def offered_sections(
    counts: Counts,
    check: Callable[[str], bool] | None = None,
    *,
    label_kinds: Sequence[str] | None = None,
) -> list[str]:
    """Keys of the sections the dataset has data for, in page order.

    The counts cannot tell whether detectors' raw outputs locate spans or are a scorer's texts (an
    AlignBench run keeps its outputs), nor whether a gold without spans is a span gold marking every
    response clean or one of sentence labels alone: MHALO offered on outputs alone, or without gold
    spans, is kept only if ``check`` (given: whether the section's inputs are available) says so. Offered
    first and then found empty, it opened the Metrics page of an AlignBench dataset on "this paper's
    data is gone". Without ``check`` the caller checks availability itself (:func:`evaluate`).

    ``label_kinds`` (the dataset's, when the caller has them) answer the second question without the
    inputs: a gold without spans marks every response clean only when spans are all it labels
    (:attr:`SpanInputs.gold_marks_spans`), so otherwise MHALO is left out before ``check`` would load
    every label set's spans to say so."""
    keys = []
    for key, section in SECTIONS.items():
        if not section.offered(counts):
            continue
        gold_spans = _n(counts, "spans", "gold")
        if key == mhalo.KEY and not gold_spans and label_kinds is not None and set(label_kinds) != {"span"}:
            continue
        counted = _n(counts, "spans", "detector") and gold_spans
        if check is not None and key == mhalo.KEY and not counted and not check(key):
            continue
        keys.append(key)
    return keys


def evaluate(
    engine: Engine, dataset_id: int, flt: ReportFilter | None = None, n_resamples: int = 1000
) -> list[Report]:
    """Every report the dataset has data for, computed without any cache (the command line's view)."""
    flt = flt or ReportFilter()
    counts = annotation_counts(engine, dataset_id)
    runs = run_provenance(engine, dataset_id)
    reports = []
    for key in offered_sections(counts):
        section = SECTIONS[key]
        inputs = section.load(engine, dataset_id)
        if not section.available(inputs):
            continue
        options = {"n_resamples": n_resamples} if key in RESAMPLED else {}
        reports.append(with_runs(section.build(inputs, flt, **options), *runs))
    if _n(counts, "ratings") and _n(counts, "spans", "gold"):
        rated = correlation.load(engine, dataset_id)
        if correlation.available(rated):
            reports.extend(
                correlation.build(rated, flt, task=task, n_resamples=n_resamples) for task in rated.tasks()
            )
    together = agreement.load(engine, dataset_id)
    reports.extend(agreement.build(together, flt, kind) for kind in agreement.kinds_available(together))
    return reports


__all__ = [
    "RESAMPLED",
    "SECTIONS",
    "ReportFilter",
    "Report",
    "Section",
    "Table",
    "evaluate",
    "offered_sections",
]
