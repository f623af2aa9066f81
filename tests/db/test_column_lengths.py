"""A value longer than the store's column for it is refused by record and field before anything is
written, on both stores. PostgreSQL failed such an import mid-write with its own error (an MMHal file
whose image id made an item id of 301 characters); SQLite kept the value."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from sqlalchemy import Engine

from db import models as m
from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset, set_taxonomy
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from db.repositories.rating_tasks import TaskSpec, create_rating_task
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from formats.problems import ImportRejected
from formats.records import (
    Annotations,
    Bundle,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    SpanRecord,
)
from tests.db.test_in_memory_values import _count


def _mhalo(ext: str) -> bytes:
    return json.dumps(
        [
            {
                "id": ext,
                "test_solution": "A cat.",
                "hallucinated_solution": "A <hallucination>cat</hallucination>.",
            }
        ]
    ).encode()


def test_an_item_id_longer_than_its_column_is_named(engine: Engine) -> None:
    long_id = "x" * 301
    outcome = import_file(engine, _mhalo(long_id), source="long.json", format_name="mhalo", actor=OPERATOR)
    assert not outcome.ok
    (problem,) = outcome.errors
    assert (problem.file, problem.field) == ("long.json", "external_id")
    assert problem.reason == "is 301 characters long; at most 300 can be stored"
    assert _count(engine, m.Item) == 0
    assert import_file(engine, _mhalo("x" * 300), source="ok.json", format_name="mhalo", actor=OPERATOR).ok


def test_with_skipping_the_other_items_are_written(engine: Engine) -> None:
    records = [
        {
            "id": "a",
            "test_solution": "A cat.",
            "hallucinated_solution": "A <hallucination>cat</hallucination>.",
        },
        {"id": "b" * 400, "test_solution": "A dog.", "hallucinated_solution": "A dog."},
    ]
    outcome = import_file(
        engine,
        json.dumps(records).encode(),
        source="two.json",
        format_name="mhalo",
        allow_skip=True,
        actor=OPERATOR,
    )
    assert outcome.ok
    assert [p.field for p in outcome.errors] == ["external_id"]
    assert _count(engine, m.Item) == 1


def test_a_span_type_longer_than_its_column_is_named(engine: Engine) -> None:
    bundle = Bundle(
        DatasetRecord("lengths", "canonical"),
        [ItemRecord("a", "A cat.")],
        [LabelSetRecord("gold", "gold", annotations=[Annotations("a", spans=[SpanRecord(2, 5, "T" * 101)])])],
    )
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, bundle, actor=OPERATOR)
    (problem,) = refused.value.problems
    assert (problem.record, problem.field) == ("#0 (id=a)", "gold.spans[0].type")
    assert problem.reason == "is 101 characters long; at most 100 can be stored"
    assert _count(engine, m.Span) == 0 and _count(engine, m.Item) == 0


def test_a_detector_name_typed_too_long_refuses_the_whole_input(engine: Engine) -> None:
    assert import_file(engine, _mhalo("a"), source="gold.json", format_name="mhalo", actor=OPERATOR).ok
    outputs = json.dumps([{"id": "a", "output": "A <hallucination>cat</hallucination>."}]).encode()
    outcome = import_predictions(
        engine,
        outputs,
        source="run.json",
        dataset="gold",
        detector="d" * 201,
        format_name="mhalo-outputs",
        options=ReadOptions(),
        allow_skip=True,
        actor=OPERATOR,
    )
    assert not outcome.ok
    (problem,) = outcome.errors
    assert problem.record == "label set " + repr("d" * 201)[:59] + "…"
    assert (problem.field, problem.reason) == ("name", "is 201 characters long; at most 200 can be stored")
    assert _count(engine, m.LabelSet) == 1  # gold's alone


def test_a_rating_by_a_rater_named_too_long_is_left_out_alone(engine: Engine) -> None:
    bundle = Bundle(
        DatasetRecord("lengths", "canonical"),
        [ItemRecord("a", "A cat.")],
        [LabelSetRecord("detector", "det", annotations=[Annotations("a", spans=[SpanRecord(2, 5)])])],
        rating_tasks=[
            RatingTaskRecord(
                "task",
                "det",
                ratings=[RatingRecord("a", "r" * 201, 3), RatingRecord("a", "ann", 4)],
            )
        ],
    )
    result = import_bundle(engine, bundle, actor=OPERATOR, allow_skip=True)
    assert [(p.field, p.reason) for p in result.skipped] == [
        ("rater", "is 201 characters long; at most 200 can be stored")
    ]
    assert _count(engine, m.Rating) == 1


def test_a_taxonomy_type_longer_than_a_span_type_is_refused(engine: Engine) -> None:
    bundle = Bundle(
        DatasetRecord("lengths", "canonical", taxonomy=["Object", "T" * 101]), [ItemRecord("a", "A.")]
    )
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, bundle, actor=OPERATOR)
    assert [(p.record, p.field) for p in refused.value.problems] == [("dataset", "taxonomy[1]")]
    assert _count(engine, m.Dataset) == 0

    assert import_bundle(
        engine, replace(bundle, dataset=DatasetRecord("lengths", "canonical")), actor=OPERATOR
    )
    dataset = get_dataset(engine, "lengths")
    assert dataset is not None
    with pytest.raises(
        ValueError, match=r"^The type 'TTTT.*…' is 101 characters long; at most 100 can be stored"
    ):
        set_taxonomy(engine, dataset.id, ["Object", "T" * 101], actor=OPERATOR)
    unchanged = get_dataset(engine, "lengths")
    assert unchanged is not None and not unchanged.taxonomy


def test_typed_labels_longer_than_their_columns_are_refused_with_a_message(engine: Engine) -> None:
    bundle = Bundle(
        DatasetRecord("lengths", "canonical"),
        [ItemRecord("a", "A cat. A dog.", claims=[ClaimRecord("There is a cat.")])],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    dataset = get_dataset(engine, "lengths")
    assert dataset is not None
    item = get_item(engine, dataset.id, "a")
    assert item is not None
    who = get_or_create_annotator(engine, "ann").id
    own = human_label_set(engine, dataset.id, who).id
    with pytest.raises(ValueError, match="^The type is 101 characters long; at most 100 can be stored"):
        labeling.add_span(engine, own, item.id, 2, 5, "T" * 101, who)
    with pytest.raises(ValueError, match="^The error type is 101 characters long"):
        labeling.set_sentence_label(engine, own, item.id, 0, "incorrect", who, error_type="E" * 101)
    claim_id = item.claims[0].id
    with pytest.raises(ValueError, match="^The type is 51 characters long; at most 50 can be stored"):
        labeling.set_claim_label(engine, own, claim_id, "hallucination", who, type_="C" * 51)
    assert _count(engine, m.Span) + _count(engine, m.SentenceLabel) + _count(engine, m.ClaimLabel) == 0
    labeling.add_span(engine, own, item.id, 2, 5, "T" * 100, who)
    assert _count(engine, m.Span) == 1


def test_a_rating_task_name_is_measured_as_it_is_stored(engine: Engine) -> None:
    """Spaces around and between words are dropped before the name is stored, so they do not count."""
    bundle = Bundle(
        DatasetRecord("lengths", "canonical"),
        [ItemRecord("a", "A cat.")],
        [LabelSetRecord("detector", "det", annotations=[Annotations("a", spans=[SpanRecord(2, 5)])])],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    dataset = get_dataset(engine, "lengths")
    assert dataset is not None
    (det,) = [ls for ls in list_label_sets(engine, dataset.id) if ls.name == "det"]
    spaced = TaskSpec(name="  " + "x" * 195 + " " * 10, detector_label_set_id=det.id)
    assert create_rating_task(engine, dataset.id, spaced, None, actor=OPERATOR)
    long = TaskSpec(name="y" * 201, detector_label_set_id=det.id)
    with pytest.raises(
        ValueError, match="^The task's name is 201 characters long; at most 200 can be stored"
    ):
        create_rating_task(engine, dataset.id, long, None, actor=OPERATOR)
