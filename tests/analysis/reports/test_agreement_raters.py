"""Agreement counts, for each kind, only the label sets holding labels of that kind.

A rater who only scored detector outputs on the Rate page has a human label set (their ratings' log
entries are filed under it) and "done" statuses on the rating task's page; before the fix they were
counted as a span and sentence annotator who found nothing, with kappa 0.00 against everyone, and the
demo's span Fleiss' kappa fell from 0.86 to below 0.5.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from analysis.reports import agreement
from analysis.reports.data import ReportFilter
from db.repositories import labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item, item_at
from db.repositories.label_sets import human_label_set
from db.repositories.rating_tasks import list_rating_tasks, rate, segments_of


def rate_like_the_page(engine: Engine, dataset_id: int, name: str, n_items: int) -> None:
    """``name`` scores every segment of the first items of the demo's rating task, as the Rate page does
    (own label set, log filed under it, the item marked done on the task's page)."""
    task = list_rating_tasks(engine, dataset_id)[0]
    who = get_or_create_annotator(engine, name).id
    own = human_label_set(engine, dataset_id, who).id
    for position in range(n_items):
        item = get_item(engine, dataset_id, item_at(engine, dataset_id, position) or "")
        assert item is not None
        detector = task.detector_label_set_id
        segments = segments_of(item_annotations(engine, item.id, [detector])[detector].spans)
        if not segments:
            rate(engine, task.id, item.id, who, own, score=None, nothing_flagged_correct=True)
        for segment in segments:
            rate(engine, task.id, item.id, who, own, score=3, segment=segment)
        labeling.sync_done(engine, own, item.id, task.queue, True, who)


def _fleiss(inputs: agreement.AgreementInputs, kind: str) -> float:
    summary = agreement.build(inputs, ReportFilter(), kind).tables["summary"].frame
    return float(summary.set_index("measure").loc["Fleiss' kappa", "value"])


def test_a_rater_who_only_rates_is_no_span_or_sentence_annotator(demo) -> None:
    engine, dataset_id = demo
    before = agreement.load(engine, dataset_id)
    spans_before, sentences_before = _fleiss(before, "spans"), _fleiss(before, "sentences")
    assert spans_before == pytest.approx(0.8598, abs=1e-3)

    rate_like_the_page(engine, dataset_id, "dave", 20)
    after = agreement.load(engine, dataset_id)
    assert _fleiss(after, "spans") == pytest.approx(spans_before)
    assert _fleiss(after, "sentences") == pytest.approx(sentences_before)
    for kind in ("spans", "sentences", "claims"):
        assert "dave" not in agreement.raters_for(after, kind)
    assert agreement.default_raters(after, "spans") == ["alice", "bob"]
    # … but they are a rater of ratings, next to the demo's three
    assert agreement.raters_for(after, "ratings") == ["dave", "rater-1", "rater-2", "rater-3"]

    reasons = {who.name: who.reason for who in agreement.left_out(after, "spans")}
    assert reasons == {name: "no spans (only ratings)" for name in ("dave", "rater-1", "rater-2", "rater-3")}
    on_ratings = {who.name: who.reason for who in agreement.left_out(after, "ratings")}
    assert on_ratings == {
        "alice": "no ratings (only spans, sentence labels)",
        "bob": "no ratings (only spans, sentence labels)",
    }


def test_who_labelled_sentences_only_is_no_span_annotator(demo) -> None:
    engine, dataset_id = demo
    who = get_or_create_annotator(engine, "erin").id
    own = human_label_set(engine, dataset_id, who).id
    item = get_item(engine, dataset_id, item_at(engine, dataset_id, 0) or "")
    assert item is not None
    labeling.set_sentence_label(engine, own, item.id, 0, "unknown", who)
    inputs = agreement.load(engine, dataset_id)
    assert "erin" in agreement.raters_for(inputs, "sentences")
    assert "erin" not in agreement.raters_for(inputs, "spans")
    assert {w.name: w.reason for w in agreement.left_out(inputs, "spans")}["erin"] == (
        "no spans (only sentence labels)"
    )


def test_who_found_no_span_but_finished_items_is_a_span_annotator(demo) -> None:
    """Marking items done on the spans page is a span label ("nothing here"): such an annotator counts,
    on exactly the items they finished."""
    engine, dataset_id = demo
    who = get_or_create_annotator(engine, "frank").id
    own = human_label_set(engine, dataset_id, who).id
    finished = []
    for position in range(3):
        item = get_item(engine, dataset_id, item_at(engine, dataset_id, position) or "")
        assert item is not None
        labeling.sync_done(engine, own, item.id, "spans", True, who)
        finished.append(item.id)
    inputs = agreement.load(engine, dataset_id)
    assert "frank" in agreement.raters_for(inputs, "spans")
    assert agreement._items_of(inputs, own) == set(finished)
    report = agreement.build(inputs, ReportFilter(), "spans", ("alice", "frank"))
    responses = dict(zip(inputs.spans.spans.items.ids, inputs.spans.spans.items.responses, strict=True))
    # the units both rated: every token of the three finished items (alice labelled them all)
    assert report.tables["pairs"].frame.iloc[0]["units"] == sum(len(responses[i].split()) for i in finished)
    assert "frank" not in {w.name for w in agreement.left_out(inputs, "spans")}
