"""MHALO and HalLoc reports on the demo: the values follow from the simulated detectors' guarantees."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from analysis.reports import calibration, mhalo
from analysis.reports.base import BEST
from analysis.reports.data import ReportFilter
from analysis.reports.spans import SpanInputs, load_span_inputs
from render import figures


@pytest.fixture(scope="module")
def spans(demo_engine, demo_id) -> SpanInputs:
    return load_span_inputs(demo_engine, demo_id)


@pytest.fixture(scope="module")
def report(spans):
    return mhalo.build(spans, ReportFilter())


def _clean_items(spans: SpanInputs) -> int:
    return sum(1 for g in spans.spans.gold_tokens if not g)


def test_table3_values_follow_the_guarantees(report, spans) -> None:
    table = report.tables["table3"].frame.set_index("detector")
    n_items, n_clean = len(spans.items), _clean_items(spans)
    assert report.provenance.n_items == n_items == 60
    # sloppy never reaches IoU 0.5 in tokens and never flags a clean item: only clean items score (1.0).
    assert table.at["sloppy", "Average · F1_IoU"] == pytest.approx(100 * n_clean / n_items)
    # exactly two of sloppy's outputs break the format; the others always follow it.
    assert table.at["sloppy", "Average · IF"] == pytest.approx(100 * 58 / 60)
    assert table.at["cautious", "Average · IF"] == table.at["eager", "Average · IF"] == 100
    assert min(table.at["cautious", "Average · F1_IoU"], table.at["eager", "Average · F1_IoU"]) > 60
    # cautious copies gold spans exactly, so F1_M and F1_IoU coincide on every item.
    assert table.at["cautious", "Average · F1_M"] == pytest.approx(table.at["cautious", "Average · F1_IoU"])


def test_table3_marks_best_and_second(report) -> None:
    table = report.tables["table3"]
    marks = table.marks().set_index(table.frame["detector"])
    column = "Average · F1_IoU"
    best = table.frame.set_index("detector")[column].idxmax()
    assert marks.at[best, column] == BEST
    assert marks.at["sloppy", column] == ""
    assert set(table.mark_columns) == set(table.frame.columns) - {"detector"}


def test_threshold_curve_shapes(report) -> None:
    curve = report.tables["curve"].frame.pivot(index="iou_threshold", columns="detector", values="f1_iou")
    assert np.allclose(curve["cautious"], curve["cautious"].iloc[0])  # exact copies: flat
    assert np.allclose(
        curve.loc[[0.1, 0.2, 0.3, 0.4, 0.5], "eager"], curve.at[0.5, "eager"]
    )  # all IoU >= 0.5
    assert curve.at[0.2, "sloppy"] > curve.at[0.5, "sloppy"]  # 0.2 <= IoU < 0.5 counts only below 0.5


def test_figure5_per_type(report) -> None:
    by_type = report.tables["by_type"].frame
    sloppy = by_type[by_type["detector"] == "sloppy"]
    assert (sloppy["detected"] == 0).all()
    eager = by_type[by_type["detector"] == "eager"]
    recall = (eager["detected"] * eager["n_gold_spans"]).sum() / eager["n_gold_spans"].sum()
    assert recall >= 80


def test_figure6_clean_responses(report, spans) -> None:
    clean = report.tables["clean"].frame
    overall = clean[clean["subset"] == mhalo.ALL_CLEAN].set_index("detector")
    n_clean = _clean_items(spans)
    assert overall.at["cautious", "accuracy"] == overall.at["sloppy", "accuracy"] == 100
    # eager stays silent on exactly the first two clean items.
    assert overall.at["eager", "accuracy"] == pytest.approx(100 * 2 / n_clean)
    assert int(overall.at["eager", "n_clean"]) == n_clean


def test_filters_narrow_items_detectors_and_types(spans) -> None:
    only = mhalo.build(spans, ReportFilter(subsets=("shapes",), detectors=("eager",)))
    assert only.provenance.n_items == int((spans.items["subset"] == "shapes").sum())
    assert list(only.tables["table3"].frame["detector"]) == ["eager"]
    assert [c for c in only.tables["table3"].frame.columns if c.endswith("F1_IoU")] == [
        "shapes · F1_IoU",
        "Average · F1_IoU",
    ]
    typed = mhalo.build(spans, ReportFilter(types=("Color Attribute",)))
    assert set(typed.tables["by_type"].frame["type"]) == {"Color Attribute"}
    assert typed.provenance.n_items < 60
    assert typed.provenance.digest != only.provenance.digest


def test_same_data_same_digest(spans) -> None:
    first = mhalo.build(spans, ReportFilter())
    again = mhalo.build(spans, ReportFilter())
    assert first.provenance.digest == again.provenance.digest
    assert mhalo.build(spans, ReportFilter(), threshold=0.3).provenance.digest != first.provenance.digest


def test_halloc_calibration_follows_the_guarantees(demo_engine, demo_id) -> None:
    report = calibration.build(calibration.load(demo_engine, demo_id), ReportFilter())
    errors = report.tables["calibration"].frame.set_index("detector")
    assert errors.at["cautious", "ECE"] < 3  # calibrated by construction
    assert errors.at["sloppy", "ECE"] > 15
    every = report.tables["reliability"].frame
    bins = every[every["type"] == calibration.ALL_TYPES]
    top = bins[(bins["detector"] == "eager") & (bins["lower"] >= 0.9) & (bins["count"] > 0)]
    assert (top["accuracy"] < 0.75).all()  # over-confident inside its spans
    assert bins.groupby("detector")["count"].sum().eq(errors["tokens"]).all()
    by_type = report.tables["by_type"].frame
    assert set(by_type["detector"]) == {"cautious", "eager", "sloppy"}
    assert (by_type["positive tokens"] > 0).all()
    # one reliability diagram per type: its gold tokens against the tokens outside every gold span
    ocr = every[(every["type"] == "OCR") & (every["detector"] == "cautious")]
    negatives = int(errors.at["cautious", "tokens"] - errors.at["cautious", "hallucinated tokens"])
    ocr_tokens = by_type[(by_type["type"] == "OCR") & (by_type["detector"] == "cautious")][
        "positive tokens"
    ].iloc[0]
    assert ocr["count"].sum() == negatives + ocr_tokens
    typed = calibration.build(calibration.load(demo_engine, demo_id), ReportFilter(types=("OCR",)))
    assert set(typed.tables["by_type"].frame["type"]) == {"OCR"}
    assert set(typed.tables["reliability"].frame["type"]) == {calibration.ALL_TYPES, "OCR"}


def test_items_read_while_a_write_landed_are_read_again_after_the_spans(
    demo_engine, demo_id, monkeypatch
) -> None:
    from analysis.reports import spans as span_reports

    fresh = span_reports.items_frame
    calls = []

    def stale_first(engine, dataset_id):
        calls.append(dataset_id)
        frame = fresh(engine, dataset_id)
        return frame.iloc[:-1] if len(calls) == 1 else frame  # the first read missed the newest item

    monkeypatch.setattr(span_reports, "items_frame", stale_first)
    inputs = load_span_inputs(demo_engine, demo_id)
    assert len(calls) == 2
    assert inputs.items["item_id"].tolist() == list(inputs.spans.items.ids)


def test_halloc_figures_name_a_run_with_probabilities_on_only_some_items(demo_engine, demo_id) -> None:
    """A run that gave token probabilities for some items only is calibrated on those: both figures
    name it with how many, beside the runs that gave them for every item."""
    inputs = calibration.load(demo_engine, demo_id)
    sloppy = next(d.id for d in inputs.spans.spans.detectors if d.name == "sloppy")
    tokens = inputs.tokens
    items = sorted(set(tokens["item_id"]))
    dropped = (tokens["label_set_id"] == sloppy) & tokens["item_id"].isin(items[: len(items) // 3])
    report = calibration.build(replace(inputs, tokens=tokens[~dropped]), ReportFilter())
    kept = len(items) - len(items) // 3
    note = f"{kept:,} of {len(items):,} items"
    assert dict(report.provenance.partial) == {"sloppy": note}
    legend = [trace.name for trace in figures.halloc_reliability(report).data]
    assert any(name.startswith(f"sloppy ({note}) (ECE") for name in legend)
    assert any(name.startswith("cautious (ECE") for name in legend)
    assert f"sloppy ({note})" in {trace.name for trace in figures.halloc_types(report).data}
    assert calibration.build(inputs, ReportFilter()).provenance.partial == ()
