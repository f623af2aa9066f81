"""Report footers name each live detector run and flag a detector judging its own model family."""

from __future__ import annotations

from analysis.reports.base import Report
from analysis.reports.detector_runs import bias_note, run_line, self_judging, with_runs
from analysis.reports.provenance import Provenance
from detectors.judge_bias import model_family
from detectors.ledger import CUT_OUTPUTS

LIVE = {
    "settings": {
        "endpoint": "https://api.example.com/v1",
        "model": "gpt-4o-mini",
        "strategy": "mhalo-criteria",
        "prompt_hash": "0123456789ab",
        "temperature": 0.7,
        "samples": 5,
        "aggregation": "word majority",
        "images": "inline",
    },
    "updated": "2026-11-24T10:00:00+00:00",
    "complete": False,
}
SOURCES = {"gpt-4o": 3, "Qwen2.5-VL-32B": 5, None: 2}


def test_model_families_ignore_provider_version_and_size():
    assert [model_family(m) for m in ("gpt-4o-mini", "openai/gpt-4.1", "o3-mini", "ChatGPT-4o")] == [
        "gpt"
    ] * 4
    assert model_family("meta-llama/Llama-4-Scout") == "llama" and model_family("llava-1.5-7b") == "llava"
    assert (
        model_family("Qwen2.5-VL-32B") == "qwen" and model_family(None) is None and model_family("42") is None
    )


def test_a_run_line_says_how_the_run_was_made():
    assert run_line("judge", LIVE) == (
        "judge: gpt-4o-mini · mhalo-criteria #0123456789ab · T=0.7 · 5 samples (word majority) · "
        "api.example.com · 2026-11-24 · incomplete"
    )
    done = LIVE | {"complete": True, "settings": LIVE["settings"] | {"samples": 1, "images": "none"}}
    assert run_line("judge", done).endswith("T=0.7 · text only · api.example.com · 2026-11-24")
    assert run_line("judge", done | {CUT_OUTPUTS: 1}).endswith(
        "2026-11-24 · 1 answer cut at the token limit, scored as they stand"
    )
    assert run_line("judge", done | {CUT_OUTPUTS: 0}) == run_line("judge", done)


def test_judge_bias_counts_the_items_of_the_detectors_own_family():
    assert bias_note("gpt-4o-mini", SOURCES) == (
        "gpt-4o-mini judges 3 of the dataset's 10 items written by its own family (gpt-4o); "
        "AlignBench (Fig. 8) found detectors much worse on their own outputs"
    )
    assert bias_note("claude-3-5-sonnet", SOURCES) is None
    assert self_judging({"judge": LIVE, "other": {"settings": {"model": "qwen-vl"}}}, "gpt-4o") == {"judge"}
    assert self_judging({"judge": LIVE}, None) == frozenset()


def test_with_runs_adds_only_the_reports_own_live_detectors():
    report = Report("k", "T", Provenance("d", ("gold", "judge", "file-run"), 10, "abc"))
    shown = with_runs(report, {"judge": LIVE, "elsewhere": LIVE}, SOURCES)
    assert shown.provenance.runs == (run_line("judge", LIVE),)
    assert shown.provenance.biased == {"judge"}
    assert shown.provenance.details()[0].startswith("Detector run judge: gpt-4o-mini")
    assert shown.provenance.details()[1].startswith("† judge: gpt-4o-mini judges 3")
    assert shown.provenance.text() == report.provenance.text()  # the one-line footer of figures is unchanged
    assert shown.provenance.to_dict()["judge_bias"][0]["detector"] == "judge"
    assert with_runs(report, {}, SOURCES) is report
