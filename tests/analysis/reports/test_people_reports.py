"""Agreement and correlation reports on the demo's simulated annotators and raters."""

from __future__ import annotations

import pytest

from analysis.reports import agreement, correlation
from analysis.reports.data import ReportFilter
from metrics import cohen_kappa, f1_iou
from render import figures


@pytest.fixture(scope="module")
def people(demo_engine, demo_id):
    return agreement.load(demo_engine, demo_id)


def test_every_kind_is_offered(people) -> None:
    assert agreement.kinds_available(people) == ["spans", "sentences", "claims", "ratings"]
    assert agreement.default_raters(people, "sentences") == ["alice", "bob"]
    assert agreement.default_raters(people, "ratings") == ["rater-1", "rater-2", "rater-3"]
    # nobody labelled claims by hand: every rater of them (gold and detectors) is the default
    assert agreement.default_raters(people, "claims") == ["gold", "cautious", "eager"]


def test_sentence_agreement(people) -> None:
    report = agreement.build(people, ReportFilter(), "sentences")
    pairs = report.tables["pairs"].frame.iloc[0]
    assert (pairs["rater A"], pairs["rater B"]) == ("alice", "bob")
    # alice calls subjective sentences correct, bob keeps them unknown: high but imperfect agreement
    assert 0.5 < pairs["kappa"] < 1
    distribution = report.tables["distribution"].frame
    units = distribution.set_index(["rater", "label"])["units"]
    assert units[("alice", "unknown")] == 0  # a label alice never gave is counted 0, not left out
    assert units[("bob", "unknown")] > 0
    summary = report.tables["summary"].frame.set_index("measure")["value"]
    assert summary["Fleiss' kappa"] < summary["Observed agreement P̄"]
    worst = report.tables["disagreements"].frame
    assert len(worst) > 0 and (worst["disagreement"].diff().dropna() <= 0).all()
    assert report.provenance.n_items == 20


def test_span_agreement_counts_tokens(people) -> None:
    report = agreement.build(people, ReportFilter(), "spans")
    pair = report.tables["pairs"].frame.iloc[0]
    n_tokens = sum(
        len(text.split())
        for item_id, text in zip(
            people.spans.spans.items.ids, people.spans.spans.items.responses, strict=True
        )
        if item_id in agreement._items_of(people, next(v.id for v in people.label_sets if v.name == "alice"))
    )
    assert pair["units"] == n_tokens
    assert 0.6 < pair["kappa"] < 1
    disagreements = report.tables["disagreements"].frame
    assert disagreements["disagreeing units"].sum() > 0


def test_rating_agreement_is_interval(people) -> None:
    report = agreement.build(people, ReportFilter(), "ratings")
    summary = report.tables["summary"].frame.set_index("measure")["value"]
    assert 0.5 < summary["Krippendorff's alpha (interval)"] <= 1
    assert len(report.tables["pairs"].frame) == 3


def test_rating_labels_read_as_the_scale_does(people) -> None:
    """Ratings are numbers: their labels read "4", not "4.0", and stack from the lowest point up, not
    in the order of how often each was given."""
    report = agreement.build(people, ReportFilter(), "ratings")
    labels = set(report.tables["distribution"].frame["label"])
    assert labels and all(label.isdigit() for label in labels), labels
    figure = figures.agreement_distribution(report)
    assert [trace.name for trace in figure.data] == sorted(labels, key=int)
    assert figure.layout.legend.traceorder == "normal"  # listed left to right as stacked, not reversed


def test_pair_kappa_equals_the_metric(people) -> None:
    report = agreement.build(people, ReportFilter(), "claims", ("gold", "eager"))
    labels = people.claims.labels
    ids = {v.name: v.id for v in people.label_sets}
    gold = labels[labels["label_set_id"] == ids["gold"]].set_index("claim_id")["label"]
    eager = labels[labels["label_set_id"] == ids["eager"]].set_index("claim_id")["label"]
    shared = gold.index.intersection(eager.index)
    expected = cohen_kappa(gold.loc[shared].tolist(), eager.loc[shared].tolist())
    assert report.tables["pairs"].frame.iloc[0]["kappa"] == pytest.approx(expected)


def test_correlation_with_human_ratings(demo_engine, demo_id) -> None:
    inputs = correlation.load(demo_engine, demo_id)
    assert inputs.tasks() == ["MHALO segment ratings"]
    left_out = correlation.build(inputs, ReportFilter(), n_resamples=100)
    scored = correlation.build(
        inputs, ReportFilter(), nothing_flagged=correlation.NOTHING_SCORED, n_resamples=100
    )
    # the three items eager left silent have no segment to rate
    assert len(scored.tables["items"].frame) == len(left_out.tables["items"].frame) + 3 == 30
    items = left_out.tables["items"].frame
    assert items["human"].between(1, 4).all() and (items["raters"] == 3).all()
    table = left_out.tables["correlations"].frame.set_index(["metric", "method"])
    assert table.loc[("F1_IoU", "Pearson"), "r"] > 0.5
    assert set(table.index.get_level_values("method")) == {"Pearson", "Spearman", "Kendall"}
    row = table.loc[("F1_M", "Pearson")]
    assert row["low"] <= row["r"] <= row["high"]
    silent = scored.tables["items"].frame.query("f1_iou == 0 and human == 1")
    assert len(silent) >= 1  # a silent item that had a hallucination gets the bottom of the scale


def test_span_agreement_matches_whole_spans_with_the_metrics_engine(people) -> None:
    report = agreement.build(people, ReportFilter(), "spans", ("alice", "bob"))
    row = report.tables["span_matching"].frame.iloc[0]
    ids = {v.name: v.id for v in people.label_sets}
    both = agreement._items_of(people, ids["alice"]) & agreement._items_of(people, ids["bob"])
    dataset = people.spans.spans
    scores = [
        f1_iou(dataset.token_spans[ids["alice"]][k], dataset.token_spans[ids["bob"]][k])
        for k, item_id in enumerate(dataset.items.ids)
        if item_id in both
    ]
    assert (row["rater A"], row["rater B"], row["items"]) == ("alice", "bob", len(scores))
    assert row["F1_IoU"] == pytest.approx(100 * sum(scores) / len(scores))
    assert 0 < row["F1_IoU"] < 100  # the demo's annotators agree often, not always
    assert "span_matching" not in agreement.build(people, ReportFilter(), "sentences").tables


def test_correlation_leaves_out_rated_items_the_run_was_not_given(demo_engine, demo_id) -> None:
    """Items the rated run was not given have no output of its to score: they are left out, and said."""
    from dataclasses import replace

    import numpy as np

    inputs = correlation.load(demo_engine, demo_id)
    ev = inputs.spans.spans
    rated = int(correlation.build(inputs, ReportFilter(), n_resamples=0).tables["items"].frame.shape[0])
    eager = next(d for d in ev.detectors if d.name == "eager")
    given = np.ones(len(ev.items.ids), dtype=bool)
    given[:10] = False  # as if the run had been given all but the first ten items
    partial = replace(inputs, spans=replace(inputs.spans, spans=replace(ev, given={eager.id: given})))
    report = correlation.build(partial, ReportFilter(), n_resamples=0)
    items = report.tables["items"].frame
    first_ten = set(ev.items.ids[:10])
    assert not first_ten & set(items["item_id"]) and len(items) < rated
    assert f"{rated - len(items)} rated items left out: eager was not given them." in report.notes
