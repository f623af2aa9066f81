"""Figures name a run scored on only some of the items with what it was scored on.

A run given outputs for only some items is scored on those alone. The tables said so in their caption,
but the Metrics page's figures and the presenter slides drew its bar beside the complete runs under a
footer counting every item, so a run missing an output could look better than the complete run it came
from. Each figure comparing runs now draws such a run as "name (k of n items)" (sentences on AlignBench's
scores); complete runs keep their plain names.
"""

from __future__ import annotations

from sqlalchemy import Engine

from analysis.reports import SECTIONS, mhalo
from analysis.reports.data import ReportFilter
from analysis.reports.spans import load_span_inputs
from render import figures
from tests.alignbench_store import alignbench_dataset
from tests.analysis.reports.test_partial_runs import RED, _dataset, _run


def _names(fig) -> set[str]:
    """Every run name a figure draws: trace names, categories and subplot titles."""
    found: set[str] = set()
    for trace in fig.data:
        found.add(str(trace.name))
        for axis in ("x", "y"):
            values = getattr(trace, axis, None)
            if values is not None:
                found.update(str(v) for v in values if isinstance(v, str))
    found.update(str(a.text) for a in fig.layout.annotations or ())
    return found


def test_mhalo_figures_name_a_run_given_some_items_with_its_count(engine: Engine) -> None:
    dataset_id = _dataset(engine)
    _run(engine, "half", {"a": [RED], "c": []})
    _run(engine, "full", {"a": [RED], "b": [RED], "c": [], "d": []})
    report = mhalo.build(load_span_inputs(engine, dataset_id), ReportFilter())
    specs = figures.figures_for(report)
    assert {s.key for s in specs} == {"mhalo-table3", "mhalo-curve", "mhalo-types", "mhalo-clean"}
    for spec in specs:
        for fig in (spec.make(report), figures.enlarge(spec.make(report))):  # page and slide
            names = _names(fig)
            assert "half (2 of 4 items)" in names, (spec.key, names)
            assert "half" not in names and "full" in names, (spec.key, names)
    assert report.provenance.partial == (("half", "2 of 4 items"),)


def test_a_complete_run_keeps_its_name(engine: Engine) -> None:
    dataset_id = _dataset(engine)
    _run(engine, "full", {"a": [RED], "b": [RED], "c": [], "d": []})
    report = mhalo.build(load_span_inputs(engine, dataset_id), ReportFilter())
    assert [trace.name for trace in figures.mhalo_subsets(report).data] == ["full"]


def _alignbench(engine: Engine) -> int:
    """Two captions of three sentences, the second of each incorrect; "all" scores every sentence,
    "some" every sentence but one."""
    return alignbench_dataset(
        engine,
        "partly",
        captions=2,
        sentences=3,
        label=lambda s: "incorrect" if s[1] == 1 else "correct",
        runs={
            "all": lambda s: 20 if s[1] == 1 else 80,
            "some": lambda s: None if s == (1, 2) else 20 if s[1] == 1 else 80,
        },
    )


def test_alignbench_figures_name_a_run_that_scored_some_sentences(engine: Engine) -> None:
    section = SECTIONS["alignbench"]
    report = section.build(section.load(engine, _alignbench(engine)), ReportFilter(), n_resamples=20)
    for make in (
        figures.alignbench_auroc,
        figures.alignbench_self_preference,
        figures.alignbench_error_types,
    ):
        names = _names(make(report))
        assert "some (5 of 6 sentences)" in names and "all" in names, (make.__name__, names)
    assert report.provenance.partial == (("some", "5 of 6 sentences"),)
