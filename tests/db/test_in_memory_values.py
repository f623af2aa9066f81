"""A bundle built in memory (a live detector run, a caller of ``import_bundle``) is checked for values no
store can keep, as a file's reader checks its lines: refused naming record and field, nothing written,
on both stores. Unchecked, broken Unicode failed mid-write on either store, a NUL or a NaN on
PostgreSQL, and SQLite kept the NaN."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine, func, select

from db import models as m
from db.access import OPERATOR
from db.importer import import_bundle, import_bundles
from formats.problems import ImportRejected
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    RawOutputRecord,
    SentenceLabelRecord,
)


def _count(engine: Engine, model: type[m.Base]) -> int:
    with engine.connect() as connection:
        return connection.scalar(select(func.count()).select_from(model)) or 0


def _bundle(items: list[ItemRecord], annotations: list[Annotations], name: str = "det") -> Bundle:
    return Bundle(
        DatasetRecord("values", "canonical"),
        items,
        [LabelSetRecord("detector", name, annotations=annotations)],
    )


def _output(item: str, text: str) -> Annotations:
    return Annotations(item, raw_output=RawOutputRecord(text, True))


@pytest.mark.parametrize(
    ("item", "annotation", "field", "says"),
    [
        (ItemRecord("a", "One. Two.", prompt="\ud800"), _output("a", "ok"), "prompt", "surrogate"),
        (ItemRecord("a", "One. Two.", meta={"k": "a\x00b"}), _output("a", "ok"), "meta.k", "NUL"),
        (ItemRecord("a", "One. Two."), _output("a", "bad\x00reply"), "det.raw_output.text", "NUL"),
        (
            ItemRecord("a", "One. Two."),
            Annotations("a", sentence_labels=[SentenceLabelRecord(1, "correct", meta={"p": float("nan")})]),
            "det.sentence_labels[0].meta.p",
            "JSON cannot hold",
        ),
    ],
)
def test_an_unstorable_value_is_refused_by_record_and_field(
    engine: Engine, item: ItemRecord, annotation: Annotations, field: str, says: str
) -> None:
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, _bundle([item], [annotation]), actor=OPERATOR, source="live run det")
    (problem,) = refused.value.problems
    assert (problem.file, problem.record, problem.field) == ("live run det", "#0 (id=a)", field)
    assert says in problem.reason
    assert _count(engine, m.Dataset) == 0 and _count(engine, m.Item) == 0


def test_with_skipping_only_the_sound_items_are_written(engine: Engine) -> None:
    """A live run keeps going past one bad reply: the other items and outputs are written, the bad
    one is reported and left out (its item too, as for any unsound annotation)."""
    items = [ItemRecord("a", "One."), ItemRecord("b", "Two."), ItemRecord("c", "Three.")]
    outputs = [_output("a", "fine"), _output("b", "half\ud800"), _output("c", "also fine")]
    result = import_bundle(engine, _bundle(items, outputs), actor=OPERATOR, source="run", allow_skip=True)
    assert [(p.record, p.field) for p in result.skipped] == [("#1 (id=b)", "det.raw_output.text")]
    with engine.connect() as connection:
        written = connection.execute(
            select(m.Item.external_id, m.RawOutput.text).join(m.RawOutput, m.RawOutput.item_id == m.Item.id)
        ).all()
    assert sorted(written) == [("a", "fine"), ("c", "also fine")]
    assert _count(engine, m.Item) == 2


@pytest.mark.parametrize(
    ("dataset", "label_set", "record", "field"),
    [
        (DatasetRecord("values\x00", "canonical"), None, "dataset", "name"),
        (DatasetRecord("values", "canonical", description="\ud800"), None, "dataset", "description"),
        (None, LabelSetRecord("detector", "det\x00"), "label set 'det\\x00'", "name"),
        (None, LabelSetRecord("detector\x00", "det"), "label set 'det'", "kind"),
        (None, LabelSetRecord("detector", "det", meta={"t": float("inf")}), "label set 'det'", "meta.t"),
    ],
)
def test_a_bad_header_refuses_the_whole_input_even_when_skipping(
    engine: Engine, dataset: DatasetRecord | None, label_set: LabelSetRecord | None, record: str, field: str
) -> None:
    """Checked before the dataset is looked up or made: PostgreSQL refused a NUL in its name mid-write."""
    bundle = _bundle([ItemRecord("a", "One.")], [_output("a", "fine")])
    if dataset is not None:
        bundle.dataset = dataset
    if label_set is not None:
        bundle.label_sets = [replace(label_set, annotations=bundle.label_sets[0].annotations)]
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, bundle, actor=OPERATOR, source="run", allow_skip=True)
    assert [(p.record, p.field) for p in refused.value.problems] == [(record, field)]
    assert _count(engine, m.Dataset) == 0


def test_only_the_settings_an_import_keeps_are_checked(engine: Engine) -> None:
    bundle = _bundle([ItemRecord("a", "One.")], [_output("a", "fine")])
    bundle.dataset_settings = {"not kept": float("nan")}
    assert import_bundle(engine, bundle, actor=OPERATOR).problems == []
    bundle.dataset_settings = {"import_mapping": {"x": float("nan")}}
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, bundle, actor=OPERATOR)
    assert [(p.record, p.field) for p in refused.value.problems] == [("dataset", "settings.import_mapping.x")]


def test_a_rating_with_an_unstorable_rater_is_left_out_alone(engine: Engine) -> None:
    """As a rating with any other flaw: the item, its outputs and its other ratings are written."""
    bundle = _bundle(
        [ItemRecord("a", "One."), ItemRecord("b", "Two.")], [_output("a", "x"), _output("b", "y")]
    )
    bundle.rating_tasks = [
        RatingTaskRecord(
            "quality",
            "det",
            granularity="response",
            ratings=[
                RatingRecord("a", "ann", 3),
                RatingRecord("b", "an\ud800n", 2),
                RatingRecord("b", "bo", 1),
            ],
        )
    ]
    result = import_bundle(engine, bundle, actor=OPERATOR, source="ratings", allow_skip=True)
    assert [(p.record, p.field) for p in result.skipped] == [("rating task 'quality' #1 (id=b)", "rater")]
    assert _count(engine, m.Rating) == 2 and _count(engine, m.Item) == 2


def test_records_are_numbered_across_batches_as_the_other_checks_number_them(engine: Engine) -> None:
    batches = [
        _bundle([ItemRecord("a", "One."), ItemRecord("b", "Two.")], [_output("a", "x"), _output("b", "y")]),
        _bundle(
            [ItemRecord("c", "Three."), ItemRecord("d", "Fo\x00ur.")],
            [Annotations("c", sentence_labels=[SentenceLabelRecord(0, "maybe")]), _output("d", "bad\x00")],
        ),
    ]
    with pytest.raises(ImportRejected) as refused:
        import_bundles(engine, batches, actor=OPERATOR, source="run", problems=[], check_values=True)
    assert sorted((p.record, p.field) for p in refused.value.problems) == [
        ("#2 (id=c)", "det.sentence_labels[0].label"),
        ("#3 (id=d)", "det.raw_output.text"),
        ("#3 (id=d)", "response"),
    ]
    assert _count(engine, m.Item) == 0


def test_a_clean_bundle_is_written_whole(engine: Engine) -> None:
    result = import_bundle(
        engine,
        _bundle([ItemRecord("a", "Ünïcode ✓ and 𝔘. Two.", meta={"x": 1.5})], [_output("a", "→ fine")]),
        actor=OPERATOR,
    )
    assert result.problems == [] and _count(engine, m.RawOutput) == 1
