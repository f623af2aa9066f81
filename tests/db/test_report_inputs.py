"""Bulk reads used by comparison and dashboards return whole label sets, on both databases."""

from __future__ import annotations

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories import report_inputs as reads
from tests.db.test_importer import _bundle


def test_bulk_reads_return_columns(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    index = reads.item_index(engine, 1)
    assert index.external_ids == ["x1"]
    spans = reads.spans_by_label_set(engine, 1)
    assert spans[1][index.ids[0]] == [(2, 5, "Color Attribute"), (57, 60, "Numerical Attribute")]
    assert spans[2][index.ids[0]] == [(2, 10, None)]
    assert reads.format_flags(engine, 1) == {2: {index.ids[0]: False}}
    assert reads.sentence_rows(engine, 1)["index"] == [0, 1, 2]
    labels = reads.sentence_labels(engine, 1, [1])
    assert sorted(labels["label"]) == ["correct", "incorrect"]
    scores = reads.sentence_scores(engine, 1)
    assert sorted(zip(scores["score"], scores["parsed"], strict=True)) == [(12.5, True), (50.0, False)]
    assert reads.claim_labels(engine, 1)["type"] == ["attribute"]
    triplets = reads.triplet_judgments(engine, 1)
    assert triplets["verdict"] == ["yes"] and triplets["subject"] == ["cube"]
    assert reads.sentence_labels(engine, 1, [2]) == {k: [] for k in labels}
