"""The importer on real SQLite and PostgreSQL: atomic, idempotent, precise about bad input."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.engine import store_revision
from db.importer import import_bundle
from db.repositories.annotations import item_annotations
from db.repositories.items import get_item
from formats.problems import ImportRejected
from formats.records import (
    Annotations,
    Bundle,
    ClaimLabelRecord,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SentenceLabelRecord,
    SentenceScoreRecord,
    SpanRecord,
    TripletRecord,
)

RESPONSE = "A red cube sits left of a blue ball. The sign says OPEN. Two 🐱 cats sleep."


def _bundle(**overrides) -> Bundle:
    item = ItemRecord(
        external_id="x1",
        response=RESPONSE,
        prompt="Describe the image.",
        claims=[ClaimRecord("The cube is red."), ClaimRecord("There are two cats.")],
        reference_triplets=[TripletRecord("cube", "left of", "ball")],
    )
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                item="x1",
                spans=[SpanRecord(2, 5, "Color Attribute"), SpanRecord(57, 60, "Numerical Attribute")],
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect", "Color Attribute"),
                    SentenceLabelRecord(1, "correct"),
                ],
                claim_labels=[ClaimLabelRecord(0, "hallucination", "attribute")],
                triplets=[TripletRecord("cube", "left of", "ball", verdict="yes")],
            )
        ],
    )
    detector = LabelSetRecord(
        kind="detector",
        name="eager",
        annotations=[
            Annotations(
                item="x1",
                spans=[SpanRecord(2, 10)],
                raw_output=RawOutputRecord(
                    "<Tagged_Text>A <hallucination>red cube</hallucination></Tagged_Text>", False
                ),
                sentence_scores=[SentenceScoreRecord(0, 12.5), SentenceScoreRecord(1, 50, parsed=False)],
            )
        ],
    )
    values = {"dataset": DatasetRecord("tiny", "canonical"), "items": [item], "label_sets": [gold, detector]}
    values.update(overrides)
    return Bundle(**values)


def _count(engine, model) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(model))


def test_import_writes_everything(engine) -> None:
    result = import_bundle(engine, _bundle(), source="tiny.jsonl", actor=OPERATOR)
    assert result.items_created == 1
    assert result.rows["spans"] == 3
    assert _count(engine, m.Sentence) == 3
    assert store_revision(engine) == 1
    item = get_item(engine, 1, "x1")
    assert item is not None and item.response == RESPONSE
    assert [s.text for s in item.sentences] == [
        "A red cube sits left of a blue ball.",
        "The sign says OPEN.",
        "Two 🐱 cats sleep.",
    ]
    found = item_annotations(engine, item.id, [1, 2])
    gold = found[1]
    assert [(s.start, s.end, s.type) for s in gold.spans] == [
        (2, 5, "Color Attribute"),
        (57, 60, "Numerical Attribute"),
    ]
    assert RESPONSE[57:60] == "Two"
    assert gold.sentence_labels[0].label == "incorrect"
    assert gold.claim_labels[0].type == "attribute"
    assert gold.triplets[0].verdict == "yes"
    assert found[2].raw_output is not None and not found[2].raw_output.follows_format
    assert found[2].sentence_scores == {0: (12.5, True), 1: (50.0, False)}


def test_reimport_is_idempotent(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    second = import_bundle(engine, _bundle(), actor=OPERATOR)
    assert second.items_created == 0 and second.items_existing == 1
    assert _count(engine, m.Item) == 1
    assert _count(engine, m.Span) == 3
    assert _count(engine, m.Triplet) == 2
    assert _count(engine, m.LabelSet) == 2


def test_bad_record_rejects_the_whole_file(engine) -> None:
    bundle = _bundle()
    bundle.items.append(ItemRecord(external_id="x2", response="Fine text."))
    bundle.label_sets[0].annotations.append(Annotations(item="x2", spans=[SpanRecord(3, 99)]))
    with pytest.raises(ImportRejected) as raised:
        import_bundle(engine, bundle, source="bad.jsonl", actor=OPERATOR)
    problem = raised.value.problems[0]
    assert (problem.file, problem.record, problem.field) == ("bad.jsonl", "#1 (id=x2)", "gold.spans[0]")
    assert "outside the response" in problem.reason
    assert _count(engine, m.Item) == 0
    assert _count(engine, m.Dataset) == 0
    assert store_revision(engine) == 0


@pytest.mark.parametrize(
    ("start", "end", "said"),
    [
        (5, 2, "offsets 5-2 end before they start"),
        (3, 3, "offsets 3-3 are empty"),
        (3, 99, "offsets 3-99 outside the response (0-10)"),
    ],
)
def test_a_bad_spans_reason_says_what_is_wrong_with_it(engine, start: int, end: int, said: str) -> None:
    bundle = _bundle()
    bundle.items.append(ItemRecord(external_id="x2", response="Fine text."))
    bundle.label_sets[0].annotations.append(Annotations(item="x2", spans=[SpanRecord(start, end)]))
    with pytest.raises(ImportRejected) as raised:
        import_bundle(engine, bundle, source="bad.jsonl", actor=OPERATOR)
    assert [p.reason for p in raised.value.problems] == [said]
    assert _count(engine, m.Item) == 0


def test_allow_skip_imports_the_sound_records(engine) -> None:
    bundle = _bundle()
    bundle.items.append(ItemRecord(external_id="x2", response="Fine text."))
    bundle.label_sets[0].annotations.append(
        Annotations(item="x2", sentence_labels=[SentenceLabelRecord(5, "correct")])
    )
    result = import_bundle(engine, bundle, allow_skip=True, actor=OPERATOR)
    assert [p.record for p in result.skipped] == ["#1 (id=x2)"]
    assert _count(engine, m.Item) == 1


def test_changed_response_text_is_refused(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    changed = _bundle()
    changed.items[0].response = RESPONSE + " Extra."
    with pytest.raises(ImportRejected, match="differs from the stored item"):
        import_bundle(engine, changed, actor=OPERATOR)


def test_predictions_for_existing_items_add_a_label_set(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    run = LabelSetRecord(
        kind="detector", name="cautious", annotations=[Annotations(item="x1", spans=[SpanRecord(2, 5)])]
    )
    import_bundle(
        engine, Bundle(dataset=DatasetRecord("tiny", "canonical"), label_sets=[run]), actor=OPERATOR
    )
    assert _count(engine, m.LabelSet) == 3
    unknown = LabelSetRecord(kind="detector", name="other", annotations=[Annotations(item="nope")])
    with pytest.raises(ImportRejected, match="no item with id 'nope'"):
        import_bundle(
            engine, Bundle(dataset=DatasetRecord("tiny", "canonical"), label_sets=[unknown]), actor=OPERATOR
        )


def test_annotations_are_checked_against_a_stored_items_own_sentences_and_claims(engine) -> None:
    """An item stored with no sentences and no claims keeps none when a file gives it some (an import
    adds none to a stored item): labels of its sentences or claims are refused by name, not written."""
    bare = ItemRecord(external_id="x1", response=RESPONSE, sentences=[], claims=[])
    import_bundle(engine, Bundle(dataset=DatasetRecord("tiny", "canonical"), items=[bare]), actor=OPERATOR)
    before = (_count(engine, m.Sentence), _count(engine, m.Claim), _count(engine, m.LabelSet))
    assert before == (0, 0, 0)
    fuller = _bundle()
    fuller.items[0].sentences = None  # split by Spanlight: two sentences in a new item
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, fuller, actor=OPERATOR)
    fields = {(p.record, p.field) for p in refused.value.problems}
    assert ("#0 (id=x1)", "gold.sentence_labels[0].index") in fields
    assert ("#0 (id=x1)", "gold.claim_labels[0].index") in fields
    assert (_count(engine, m.Sentence), _count(engine, m.Claim), _count(engine, m.LabelSet)) == before


def test_metadata_survives_the_bulk_insert(engine) -> None:
    """``meta`` is stored in the column "metadata": the bulk path must not drop it."""
    bundle = _bundle()
    bundle.items[0].meta = {"gt_answer": "yes", "nested": {"k": [1, 2]}}
    bundle.label_sets[0].annotations[0].sentence_labels[0].meta = {"agreement_ratio": 0.8}
    import_bundle(engine, bundle, actor=OPERATOR)
    assert get_item(engine, 1, "x1").meta == {"gt_answer": "yes", "nested": {"k": [1, 2]}}
    with Session(engine) as session:
        stored = session.scalar(select(m.SentenceLabel.meta).where(m.SentenceLabel.label == "incorrect"))
    assert stored == {"agreement_ratio": 0.8}
