"""What a report's footer says about detectors run live: how each was made, and whether it judges its own.

A live run records its settings on its label set (``meta["live_run"]``: endpoint, model, strategy and
prompt hash, temperature, samples, date, complete or not). :func:`with_runs` adds one line per such
detector to a report's provenance, and a judge-bias note (marked † in the tables) for a detector whose
model family also wrote some of the dataset's items — AlignBench (Fig. 8) found detectors much worse
at finding their own hallucinations, so those numbers are flattering.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from analysis.reports.base import Report
from detectors.judge_bias import model_family, same_family_models, self_judged
from detectors.ledger import CUT_OUTPUTS


def run_line(name: str, live: Mapping[str, Any]) -> str:
    """``name: model · strategy #hash · T=… · host · date`` (and ``incomplete`` until a run finished, and
    how many of its stored answers the endpoint cut at its token limit, when any was)."""
    settings = live.get("settings") if isinstance(live.get("settings"), Mapping) else {}
    assert isinstance(settings, Mapping)
    parts = [
        str(settings.get("model") or "?"),
        f"{settings.get('strategy') or '?'} #{settings.get('prompt_hash') or '?'}",
        f"T={settings.get('temperature', 0):g}",
    ]
    samples = settings.get("samples")
    if isinstance(samples, int) and samples > 1:
        parts.append(f"{samples} samples ({settings.get('aggregation')})")
    if settings.get("images") == "none":
        parts.append("text only")
    parts.append(urlsplit(str(settings.get("endpoint") or "")).netloc or "?")
    parts.append(str(live.get("updated") or live.get("started") or "")[:10] or "?")
    if not live.get("complete"):
        parts.append("incomplete")
    cut = live.get(CUT_OUTPUTS)
    if isinstance(cut, int) and cut > 0:
        answers = "answer" if cut == 1 else "answers"
        parts.append(f"{cut:,} {answers} cut at the token limit, scored as they stand")
    return f"{name}: " + " · ".join(parts)


def bias_note(model: str | None, sources: Mapping[str | None, int]) -> str | None:
    """The judge-bias note for a detector of ``model`` on items written by ``sources`` (counts), or None."""
    own = self_judged(model, sources)
    if not own:
        return None
    models = ", ".join(same_family_models(model, sources))
    return (
        f"{model} judges {own} of the dataset's {sum(sources.values())} items written by its own family "
        f"({models}); AlignBench (Fig. 8) found detectors much worse on their own outputs"
    )


def _model(live: Mapping[str, Any]) -> str | None:
    settings = live.get("settings")
    model = settings.get("model") if isinstance(settings, Mapping) else None
    return model if isinstance(model, str) and model_family(model) else None


def with_runs(
    report: Report, runs: Mapping[str, Mapping[str, Any]], sources: Mapping[str | None, int]
) -> Report:
    """``report`` with the live runs among its label sets, and their judge-bias notes, in its provenance."""
    names = [name for name in report.provenance.label_sets if name in runs]
    if not names:
        return report
    lines = tuple(run_line(name, runs[name]) for name in names)
    bias = tuple(
        (name, note) for name in names if (note := bias_note(_model(runs[name]), sources)) is not None
    )
    return replace(report, provenance=replace(report.provenance, runs=lines, judge_bias=bias))


def self_judging(runs: Mapping[str, Mapping[str, Any]], source_model: str | None) -> frozenset[str]:
    """The live-run detectors whose model family wrote an item of ``source_model`` (Compare marks them)."""
    family = model_family(source_model)
    if family is None:
        return frozenset()
    return frozenset(name for name, live in runs.items() if model_family(_model(live)) == family)
