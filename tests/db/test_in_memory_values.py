"""A bundle built in memory (a live detector run, a caller of ``import_bundle``) is checked for values no
store can keep, as a file's reader checks its lines: refused naming record and field, nothing written,
on both stores. Unchecked, broken Unicode failed mid-write on either store, a NUL or a NaN on
PostgreSQL, and SQLite kept the NaN."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select

from db import models as m
from db.access import OPERATOR
from db.importer import import_bundle
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


def test_a_bad_label_set_name_refuses_the_whole_input_even_when_skipping(engine: Engine) -> None:
    bundle = _bundle([ItemRecord("a", "One.")], [_output("a", "fine")], name="det\x00")
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, bundle, actor=OPERATOR, source="run", allow_skip=True)
    assert [(p.record, p.field) for p in refused.value.problems] == [("label set 'det\\x00'", "name")]
    assert _count(engine, m.Dataset) == 0


def test_a_rating_with_an_unstorable_rater_leaves_out_its_item(engine: Engine) -> None:
    bundle = _bundle(
        [ItemRecord("a", "One."), ItemRecord("b", "Two.")], [_output("a", "x"), _output("b", "y")]
    )
    bundle.rating_tasks = [
        RatingTaskRecord(
            "quality",
            "det",
            granularity="response",
            ratings=[RatingRecord("a", "ann", 3), RatingRecord("b", "an\ud800n", 2)],
        )
    ]
    result = import_bundle(engine, bundle, actor=OPERATOR, source="ratings", allow_skip=True)
    assert [(p.record, p.field) for p in result.skipped] == [("rating task 'quality' #1 (id=b)", "rater")]
    assert _count(engine, m.Rating) == 1 and _count(engine, m.Item) == 1


def test_a_clean_bundle_is_written_whole(engine: Engine) -> None:
    result = import_bundle(
        engine,
        _bundle([ItemRecord("a", "Ünïcode ✓ and 𝔘. Two.", meta={"x": 1.5})], [_output("a", "→ fine")]),
        actor=OPERATOR,
    )
    assert result.problems == [] and _count(engine, m.RawOutput) == 1
