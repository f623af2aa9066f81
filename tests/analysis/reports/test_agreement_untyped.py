"""Span agreement compares types only where every rater of the item gave them: a rater whose spans carry
no type (a detector's tags, a person who left the type out) is compared on where the spans are. Before,
"untyped" was a label of its own, so identical spans without their types counted as disagreements on
every token of them."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from analysis.reports import agreement
from analysis.reports.data import ReportFilter
from db.repositories import labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item, item_at
from db.repositories.label_sets import human_label_set, list_label_sets


def _copy_untyped(engine: Engine, dataset_id: int, source: str, name: str, n_items: int) -> None:
    """``name`` marks exactly the spans ``source`` marked on the first items, without their types."""
    (alice,) = [ls for ls in list_label_sets(engine, dataset_id, kind="human") if ls.name == source]
    who = get_or_create_annotator(engine, name).id
    own = human_label_set(engine, dataset_id, who).id
    for position in range(n_items):
        item = get_item(engine, dataset_id, item_at(engine, dataset_id, position) or "")
        assert item is not None
        for span in item_annotations(engine, item.id, [alice.id])[alice.id].spans:
            labeling.add_span(engine, own, item.id, span.start, span.end, None, who)
        labeling.sync_done(engine, own, item.id, "spans", True, who)


def test_the_same_spans_without_types_agree(demo) -> None:
    engine, dataset_id = demo
    _copy_untyped(engine, dataset_id, "alice", "carol", 20)
    inputs = agreement.load(engine, dataset_id)
    report = agreement.build(inputs, ReportFilter(), "spans", ("alice", "carol"))
    (pair,) = report.tables["pairs"].frame.to_dict("records")
    assert pair["units"] > 0
    assert pair["agreement"] == pytest.approx(100.0)
    assert pair["kappa"] == pytest.approx(1.0)
    assert any("compared on where their spans are" in note for note in report.notes)


def test_typed_raters_are_still_compared_on_types(demo) -> None:
    engine, dataset_id = demo
    inputs = agreement.load(engine, dataset_id)
    report = agreement.build(inputs, ReportFilter(), "spans", ("alice", "bob"))
    labels = set(
        agreement._units(inputs, "spans", ["alice", "bob"], set(inputs.spans.items["item_id"])).frame["label"]
    )
    assert len(labels - {agreement.OUTSIDE}) > 2, labels  # the demo's types, not just "inside"
    assert not any("compared on where their spans are" in note for note in report.notes)


def test_items_one_rater_labelled_are_not_counted_as_compared(demo) -> None:
    engine, dataset_id = demo
    _copy_untyped(engine, dataset_id, "alice", "carol", 5)
    inputs = agreement.load(engine, dataset_id)
    units = agreement._units(inputs, "spans", ["carol"], set(inputs.spans.items["item_id"]))
    assert units.untyped_items == 0
    both = agreement._units(inputs, "spans", ["alice", "carol"], set(inputs.spans.items["item_id"]))
    assert both.untyped_items == 5
