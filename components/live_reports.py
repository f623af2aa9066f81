"""Reports of :mod:`analysis.reports` for the pages, cached per store revision.

Two layers, both keyed by (database, store revision, arguments), so a label saved anywhere is visible
on the next rerun and nothing is recomputed while the store is unchanged:

- inputs (the bulk reads) are kept once per revision in ``st.cache_resource`` and shared, not copied:
  at AlignBench scale they are half a million numbers every report of that kind reuses;
- reports (small tables) are cached with :func:`components.store_cache.cached`, per filter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from sqlalchemy import Engine

from analysis.reports import SECTIONS, agreement, correlation
from analysis.reports.base import Report
from analysis.reports.data import ReportFilter
from analysis.reports.detector_runs import with_runs
from components.store_cache import cached, shared
from db.detector_runs import run_provenance
from db.engine import store_revision
from db.repositories.report_inputs import annotation_counts


def shared_inputs(load: Callable[[Engine, int], Any], engine: Engine, dataset_id: int) -> Any:
    """``load(engine, dataset_id)`` once per store revision; the result is shared (treat it as read-only)."""
    return shared(load, engine, dataset_id)


def counts(engine: Engine, dataset_id: int) -> dict[str, dict[str, int]]:
    return cached(annotation_counts, engine, dataset_id)


def _section(
    engine: Engine, key: str, dataset_id: int, flt: ReportFilter, options: tuple[tuple[str, Any], ...]
) -> Report:
    section = SECTIONS[key]
    report = section.build(shared_inputs(section.load, engine, dataset_id), flt, **dict(options))
    return with_runs(report, *run_provenance(engine, dataset_id))


def section_available(engine: Engine, key: str, dataset_id: int) -> bool:
    section = SECTIONS[key]
    return section.available(shared_inputs(section.load, engine, dataset_id))


@st.cache_resource(show_spinner=False)
def _computed() -> set[tuple[Any, ...]]:
    """Which reports are in the cache (for every session of this server)."""
    return set()


def _token(engine: Engine, *args: Any) -> tuple[Any, ...]:
    return (engine.url.render_as_string(hide_password=False), store_revision(engine), *args)


def _done(token: tuple[Any, ...]) -> None:
    done = _computed()
    if len(done) > 4096:  # old revisions' entries are useless; start again rather than grow
        done.clear()
    done.add(token)


def section_report(engine: Engine, key: str, dataset_id: int, flt: ReportFilter, **options: Any) -> Report:
    """The section's report for this filter, computed once per store revision."""
    frozen = tuple(sorted(options.items()))
    report = cached(_section, engine, key, dataset_id, flt, frozen)
    _done(_token(engine, "section", key, dataset_id, flt, frozen))
    return report


def section_ready(engine: Engine, key: str, dataset_id: int, flt: ReportFilter, **options: Any) -> bool:
    """True when :func:`section_report` with these arguments would be served from the cache."""
    return _token(engine, "section", key, dataset_id, flt, tuple(sorted(options.items()))) in _computed()


def _correlation(
    engine: Engine,
    dataset_id: int,
    flt: ReportFilter,
    task: str | None,
    nothing_flagged: str,
    n_resamples: int,
) -> Report:
    return correlation.build(
        shared_inputs(correlation.load, engine, dataset_id), flt, task, nothing_flagged, n_resamples
    )


def correlation_inputs(engine: Engine, dataset_id: int) -> correlation.RatingInputs:
    inputs: correlation.RatingInputs = shared_inputs(correlation.load, engine, dataset_id)
    return inputs


def correlation_report(
    engine: Engine,
    dataset_id: int,
    flt: ReportFilter,
    task: str | None = None,
    nothing_flagged: str = correlation.NOTHING_EXCLUDED,
    n_resamples: int = 1000,
) -> Report:
    report = cached(_correlation, engine, dataset_id, flt, task, nothing_flagged, n_resamples)
    _done(_token(engine, "correlation", dataset_id, flt, task, nothing_flagged, n_resamples))
    return report


def correlation_ready(
    engine: Engine,
    dataset_id: int,
    flt: ReportFilter,
    task: str | None = None,
    nothing_flagged: str = correlation.NOTHING_EXCLUDED,
    n_resamples: int = 1000,
) -> bool:
    """True when :func:`correlation_report` with these arguments would be served from the cache."""
    return _token(engine, "correlation", dataset_id, flt, task, nothing_flagged, n_resamples) in _computed()


def agreement_inputs(engine: Engine, dataset_id: int) -> agreement.AgreementInputs:
    inputs: agreement.AgreementInputs = shared_inputs(agreement.load, engine, dataset_id)
    return inputs


def _agreement(
    engine: Engine, dataset_id: int, flt: ReportFilter, kind: str, raters: tuple[str, ...] | None
) -> Report:
    return agreement.build(agreement_inputs(engine, dataset_id), flt, kind, raters)


def agreement_report(
    engine: Engine, dataset_id: int, flt: ReportFilter, kind: str, raters: tuple[str, ...] | None = None
) -> Report:
    return cached(_agreement, engine, dataset_id, flt, kind, raters)
