"""MHALO on a span gold that marks no span: every response is clean, and that is what gets measured.

Per item F1_IoU and F1_M are 1 when neither the prediction nor gold has a span and 0 when only the
prediction has; IF needs no gold; Figure 6 is the share of clean responses a run leaves unflagged. A gold
of sentence labels alone says nothing of spans, so MHALO is not offered on it.

Expected numbers are worked out by hand below from those rules. Items a, b are in subset MC, c, d in OC:

- quiet flags nothing anywhere: 100 on every measure;
- eager flags "red" on a and b: MC 0, OC 100, Average 50 (F1 and clean accuracy), IF 100;
- broken breaks the format on a (0 there, counted against IF) and flags nothing on b, c, d:
  MC 50, OC 100, Average 75, on every measure.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from sqlalchemy import Engine

from analysis.reports import SECTIONS, mhalo, offered_sections
from analysis.reports.data import ReportFilter
from analysis.reports.spans import load_span_inputs
from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.datasets import get_dataset
from db.repositories.report_inputs import annotation_counts
from db.transfer import import_predictions
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
)
from metrics import DEFAULT_CURVE_THRESHOLDS

RESPONSE = "A man is sitting on a red bench."
SUBSETS = {"a": "MC", "b": "MC", "c": "OC", "d": "OC"}
UNTAGGED = f"<Tagged_Text>{RESPONSE}</Tagged_Text>"
TAGGED = "<Tagged_Text>A man is sitting on a <hallucination>red</hallucination> bench.</Tagged_Text>"
JOINED = "<Tagged_Text>A man is<hallucination>sitting</hallucination> on a red bench.</Tagged_Text>"
RUNS = {
    "quiet": {"a": UNTAGGED, "b": UNTAGGED, "c": UNTAGGED, "d": UNTAGGED},
    "eager": {"a": TAGGED, "b": TAGGED, "c": UNTAGGED, "d": UNTAGGED},
    "broken": {"a": JOINED, "b": UNTAGGED, "c": UNTAGGED, "d": UNTAGGED},
}
# detector → subset → (F1_M, F1_IoU, IF), by hand from the per-item rules in the docstring
EXPECTED = {
    "quiet": {"MC": (100, 100, 100), "OC": (100, 100, 100), "Average": (100, 100, 100)},
    "eager": {"MC": (0, 0, 100), "OC": (100, 100, 100), "Average": (50, 50, 100)},
    "broken": {"MC": (50, 50, 50), "OC": (100, 100, 100), "Average": (75, 75, 75)},
}
# detector → share of clean responses flagged nothing (a broken output counts as wrong)
CLEAN = {"quiet": (100, 100, 100), "eager": (0, 100, 50), "broken": (50, 100, 75)}


def _store(engine: Engine, name: str, gold: LabelSetRecord, label_kinds: list[str]) -> int:
    items = [ItemRecord(external_id=ext, response=RESPONSE, subset=s) for ext, s in SUBSETS.items()]
    dataset = DatasetRecord(name=name, source_format="canonical", label_kinds=label_kinds)
    import_bundle(engine, Bundle(dataset, items=items, label_sets=[gold]), actor=OPERATOR)
    for detector, outputs in RUNS.items():
        run = import_predictions(
            engine,
            json.dumps([{"id": ext, "output": text} for ext, text in outputs.items()]).encode(),
            actor=OPERATOR,
            source=f"{detector}.json",
            dataset=name,
            detector=detector,
            format_name="mhalo-outputs",
        )
        assert run.ok, run.problems
    found = get_dataset(engine, name)
    assert found is not None
    return found.id


def all_clean_store(engine: Engine) -> int:
    """A span dataset whose gold checked every item and marked no span."""
    gold = LabelSetRecord(kind="gold", name="gold", annotations=[Annotations(ext) for ext in SUBSETS])
    return _store(engine, "all clean", gold, ["span"])


def sentence_store(engine: Engine, label_kinds: tuple[str, ...] = ("sentence",)) -> int:
    """AlignBench-like: gold labels sentences (one incorrect), marks no span; the runs tag spans."""
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                ext, sentence_labels=[SentenceLabelRecord(0, "incorrect" if ext == "a" else "correct")]
            )
            for ext in SUBSETS
        ],
    )
    return _store(engine, "sentences", gold, list(label_kinds))


def _offered(engine: Engine, dataset_id: int) -> list[str]:
    inputs = load_span_inputs(engine, dataset_id)
    return offered_sections(
        annotation_counts(engine, dataset_id),
        lambda key: bool(SECTIONS[key].available(inputs)) if key == mhalo.KEY else True,
    )


def test_mhalo_is_offered_on_a_span_gold_without_spans(engine: Engine) -> None:
    dataset_id = all_clean_store(engine)
    assert mhalo.available(load_span_inputs(engine, dataset_id))
    assert _offered(engine, dataset_id) == [mhalo.KEY]


def test_table3_scores_every_run_against_all_clean_gold(engine: Engine) -> None:
    report = mhalo.build(load_span_inputs(engine, all_clean_store(engine)), ReportFilter())
    table = report.tables["table3"].frame.set_index("detector")
    assert sorted(table.index) == sorted(RUNS)
    for detector, by_subset in EXPECTED.items():
        for subset, (f1_m, f1_iou, if_rate) in by_subset.items():
            assert table.at[detector, f"{subset} · F1_M"] == pytest.approx(f1_m), (detector, subset)
            assert table.at[detector, f"{subset} · F1_IoU"] == pytest.approx(f1_iou), (detector, subset)
            assert table.at[detector, f"{subset} · IF"] == pytest.approx(if_rate), (detector, subset)


def test_the_curve_is_flat_at_the_runs_scores(engine: Engine) -> None:
    report = mhalo.build(load_span_inputs(engine, all_clean_store(engine)), ReportFilter())
    curve = report.tables["curve"].frame
    assert len(curve) == len(RUNS) * len(DEFAULT_CURVE_THRESHOLDS)
    for detector, by_subset in EXPECTED.items():
        part = curve[curve["detector"] == detector]
        assert part["iou_threshold"].tolist() == pytest.approx(list(DEFAULT_CURVE_THRESHOLDS))
        assert part["f1_iou"].tolist() == pytest.approx([by_subset["Average"][1]] * len(part))


def test_figure6_counts_every_response_as_clean(engine: Engine) -> None:
    report = mhalo.build(load_span_inputs(engine, all_clean_store(engine)), ReportFilter())
    clean = report.tables["clean"].frame
    expected = pd.DataFrame(
        [
            {"detector": d, "subset": s, "n_clean": n, "accuracy": float(a)}
            for d, shares in CLEAN.items()
            for s, n, a in zip(("MC", "OC", mhalo.ALL_CLEAN), (2, 2, 4), shares, strict=True)
        ]
    )
    pd.testing.assert_frame_equal(
        clean.sort_values(["detector", "subset"], ignore_index=True),
        expected.sort_values(["detector", "subset"], ignore_index=True),
        check_dtype=False,
    )


def test_no_per_type_figure_and_a_note_says_why(engine: Engine) -> None:
    report = mhalo.build(load_span_inputs(engine, all_clean_store(engine)), ReportFilter())
    assert report.tables["by_type"].frame.empty
    assert report.notes == (
        "No Figure 5 (gold hallucinations detected, per type): gold marks no span on these items.",
    )


@pytest.mark.parametrize("label_kinds", [("sentence",), ("sentence", "span")])
def test_a_sentence_gold_without_spans_offers_no_mhalo(engine: Engine, label_kinds: tuple[str, ...]) -> None:
    """Nor does AlignBench's gold, which labels sentences and spans (the error words of an incorrect
    sentence): with no span found, its incorrect sentence would have been scored as a clean response."""
    dataset_id = sentence_store(engine, label_kinds)
    inputs = load_span_inputs(engine, dataset_id)
    assert sorted(d.name for d in inputs.spans.span_detectors) == sorted(RUNS)  # they locate spans
    assert not mhalo.available(inputs)
    assert mhalo.KEY not in _offered(engine, dataset_id)
    with pytest.raises(ValueError):
        mhalo.build(inputs, ReportFilter())


@pytest.mark.parametrize("label_kinds", [("sentence",), ("sentence", "span")])
def test_the_dataset_kinds_leave_mhalo_out_without_reading_spans(
    engine: Engine, label_kinds: tuple[str, ...]
) -> None:
    """The Metrics page gives the dataset's label kinds: a gold without spans that labels more than spans
    cannot make MHALO available, so every label set's spans are not read to find that out."""
    dataset_id = sentence_store(engine, label_kinds)
    asked: list[str] = []

    def check(key: str) -> bool:
        asked.append(key)
        return True

    offered = offered_sections(annotation_counts(engine, dataset_id), check, label_kinds=label_kinds)
    assert mhalo.KEY not in offered
    assert asked == []


def test_a_spans_only_dataset_still_asks_its_inputs(engine: Engine) -> None:
    dataset_id = all_clean_store(engine)
    asked: list[str] = []

    def check(key: str) -> bool:
        asked.append(key)
        return SECTIONS[key].available(load_span_inputs(engine, dataset_id))

    offered = offered_sections(annotation_counts(engine, dataset_id), check, label_kinds=("span",))
    assert offered == [mhalo.KEY]
    assert asked == [mhalo.KEY]
