"""The MMHal-Bench report on a small store, every number computed by hand."""

from __future__ import annotations

import json
import math

import pytest

from analysis.reports import ReportFilter, evaluate, mmhal, offered_sections
from db.access import OPERATOR
from db.repositories.report_inputs import annotation_counts
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from tests.formats.mmhal_sample import IDS, sample_bytes


@pytest.fixture
def rated(engine):
    """The sample (a judge rates items 0-2: 1 yes, 5 no, 2 unsaid) and gold ratings of items 0-3."""
    assert import_file(
        engine,
        sample_bytes(),
        source="mmhal.json",
        format_name="mmhal",
        options=ReadOptions(dataset="mm"),
        actor=OPERATOR,
    ).ok
    gold = {IDS[0]: 0, IDS[1]: 6, IDS[2]: {"rating": 3, "hallucination": False}, IDS[3]: 3}
    assert import_predictions(
        engine,
        json.dumps(gold).encode(),
        source="gold.json",
        dataset="mm",
        detector="gold",
        format_name="mmhal-ratings",
        options=ReadOptions(label_set_kind="gold"),
        actor=OPERATOR,
    ).ok
    return engine


def _report(engine, flt: ReportFilter | None = None, n_resamples: int = 200):
    return mmhal.build(mmhal.load(engine, 1), flt or ReportFilter(), n_resamples=n_resamples)


def test_scores_per_rater_overall_and_per_question_type(rated) -> None:
    report = _report(rated)
    rows = {r["rater"]: r for r in report.tables["scores"].to_records()}
    assert rows["gold"] == {
        "rater": "gold",
        "kind": "gold",
        "model": "(none)",
        "responses": 4,
        mmhal.OVERALL: 3.0,
        mmhal.RATE: 25.0,  # only the 0 is below 3
        "attribute": 1.5,
        "counting": 4.5,
    }
    judge = rows["gpt-4"]
    assert (judge["kind"], judge["responses"]) == ("detector", 3)
    assert judge[mmhal.OVERALL] == pytest.approx(8 / 3)
    assert judge[mmhal.RATE] == pytest.approx(200 / 3)
    assert (judge["attribute"], judge["counting"]) == (1.5, 5.0)
    assert report.provenance.n_items == 4 and report.provenance.label_sets == ("gold", "gpt-4")


def test_the_judge_against_gold(rated) -> None:
    (row,) = _report(rated).tables["agreement"].to_records()
    # Judge 1, 5, 2 against gold 0, 6, 3 on items 0-2.
    assert row["responses"] == 3
    assert row["Pearson r"] == pytest.approx(12 / math.sqrt(78 / 9 * 18))
    assert row["Spearman ρ"] == pytest.approx(1.0)
    assert row["Pearson low"] <= row["Pearson r"] <= row["Pearson high"]
    assert row["Score match (%)"] == 0.0
    # Flags: judge yes, no, (2 → yes); gold (0 → yes), (6 → no), no: two of three agree.
    assert row["Hallucination flag match (%)"] == pytest.approx(200 / 3)
    assert row["Average − gold average"] == pytest.approx(8 / 3 - 3)
    quick = _report(rated, n_resamples=0).tables["agreement"].to_records()[0]
    assert quick["Pearson r"] == pytest.approx(row["Pearson r"]) and quick["Pearson low"] is None


def test_filters_keep_question_types_and_judges(rated) -> None:
    counting = _report(rated, ReportFilter(subsets=("counting",)))
    rows = {r["rater"]: r for r in counting.tables["scores"].to_records()}
    assert (rows["gold"][mmhal.OVERALL], rows["gpt-4"][mmhal.OVERALL]) == (4.5, 5.0)
    assert "attribute" not in rows["gold"]
    (against,) = counting.tables["agreement"].to_records()
    assert against["Pearson r"] is None and against["Hallucination flag match (%)"] == 100.0
    no_judge = _report(rated, ReportFilter(detectors=("someone else",)))
    assert [r["rater"] for r in no_judge.tables["scores"].to_records()] == ["gold"]
    assert "agreement" not in no_judge.tables


def test_offered_and_evaluated_when_the_dataset_has_response_scores(rated) -> None:
    assert annotation_counts(rated, 1)["response_scores"] == {"gold": 4, "detector": 3}
    assert offered_sections(annotation_counts(rated, 1)) == [mmhal.KEY]
    (report,) = evaluate(rated, 1, n_resamples=0)
    assert report.key == mmhal.KEY
