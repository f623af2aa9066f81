"""The slides of presenter mode: every figure the dataset has something to draw for, in page order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    report: Report  # enough to know the slide exists and name it
    # The report to draw, when it costs more than the one above (the correlation's bootstrap intervals).
    complete: Callable[[], Report] | None = None

    @property
    def title(self) -> str:
        return f"{self.section} · {self.spec.title}"

    def shown(self) -> Report:
        """The report the slide's figure is drawn from."""
        return self.report if self.complete is None else self.complete()


def iter_slides(engine: Engine, dataset_id: int, flt: ReportFilter) -> Iterator[Slide]:
    """Each report's figures, computed (once per store revision) with the presenter's filter, one report
    at a time: a page can draw the slide it shows before the later reports are computed."""
    for key in offered_sections(live.counts(engine, dataset_id)):
        if not live.section_available(engine, key, dataset_id):
            continue
        report = live.section_report(engine, key, dataset_id, flt)
        yield from (Slide(SECTIONS[key].title, spec, report) for spec in figures.slides_for(report))
    rated = live.correlation_inputs(engine, dataset_id)
    if correlation.available(rated):
        # The slides are listed from the point estimates; the intervals are resampled only to be shown.
        by_item = ReportFilter(flt.subsets, flt.source_models)
        listed = live.correlation_report(engine, dataset_id, by_item, n_resamples=0)

        def resampled() -> Report:
            return live.correlation_report(engine, dataset_id, by_item)

        yield from (Slide("Correlation", spec, listed, resampled) for spec in figures.slides_for(listed))
    together = live.agreement_inputs(engine, dataset_id)
    for kind in agreement.kinds_available(together):
        report = live.agreement_report(engine, dataset_id, ReportFilter(flt.subsets, flt.source_models), kind)
        yield from (
            Slide(f"Agreement · {agreement.KINDS[kind]}", spec, report) for spec in figures.slides_for(report)
        )
