"""The slides of presenter mode: every figure the dataset has data for, in page order."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from analysis.reports import SECTIONS, agreement, correlation, offered_sections
from analysis.reports.base import Report
from analysis.reports.data import ReportFilter
from components import live_reports as live
from render import figures


@dataclass(frozen=True)
class Slide:
    section: str
    spec: figures.FigureSpec
    report: Report


def slides_for(engine: Engine, dataset_id: int, flt: ReportFilter) -> list[Slide]:
    """Each report's figures, computed (once per store revision) with the presenter's filter."""
    slides: list[Slide] = []
    for key in offered_sections(live.counts(engine, dataset_id)):
        if not live.section_available(engine, key, dataset_id):
            continue
        report = live.section_report(engine, key, dataset_id, flt)
        slides.extend(Slide(SECTIONS[key].title, spec, report) for spec in figures.figures_for(report))
    rated = live.correlation_inputs(engine, dataset_id)
    if correlation.available(rated):
        report = live.correlation_report(engine, dataset_id, ReportFilter(flt.subsets, flt.source_models))
        slides.extend(Slide("Correlation", spec, report) for spec in figures.figures_for(report))
    together = live.agreement_inputs(engine, dataset_id)
    for kind in agreement.kinds_available(together):
        report = live.agreement_report(engine, dataset_id, ReportFilter(flt.subsets, flt.source_models), kind)
        slides.extend(
            Slide(f"Agreement · {agreement.KINDS[kind]}", spec, report)
            for spec in figures.figures_for(report)
        )
    return slides
