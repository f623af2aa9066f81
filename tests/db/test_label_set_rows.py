"""Which label sets hold rows of a table, asked one label set at a time with its id in the query: right
on both stores, and on PostgreSQL answered by the index even where one label set holds nearly every row
(a correlated EXISTS was planned for that one and scanned the whole table for each label set holding
none)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select, text

from bench.make_import_files import write_alignbench
from db import models as m
from db.access import OPERATOR
from db.engine import read_session
from db.importer import import_bundle
from db.label_set_rows import holding, holds_rows, probe
from db.transfer import import_path
from formats.base import ReadOptions
from formats.records import Annotations, Bundle, DatasetRecord, LabelSetRecord, SpanRecord


@pytest.fixture
def label_sets(engine: Engine, tmp_path) -> dict[str, int]:
    """Dataset ``ab`` with gold (3,000 sentence labels and its spans), a detector with one span, and a
    detector holding nothing."""
    source = tmp_path / "ab.csv"
    write_alignbench(source, 3_000)
    outcome = import_path(
        engine,
        source,
        actor=OPERATOR,
        source="ab.csv",
        format_name="alignbench",
        options=ReadOptions(dataset="ab"),
    )
    assert outcome.ok, outcome.problems
    with read_session(engine) as session:
        first = session.scalars(select(m.Item.external_id).order_by(m.Item.id)).first()
    assert first is not None
    detectors = [
        LabelSetRecord(
            kind="detector", name="spotter", annotations=[Annotations(first, spans=[SpanRecord(0, 4)])]
        ),
        LabelSetRecord(kind="detector", name="silent", annotations=[Annotations(first)]),
    ]
    import_bundle(
        engine, Bundle(DatasetRecord(name="ab", source_format="canonical"), [], detectors), actor=OPERATOR
    )
    with read_session(engine) as session:
        return {
            name: label_set_id
            for name, label_set_id in session.execute(select(m.LabelSet.name, m.LabelSet.id))
        }


def test_the_label_sets_holding_rows_of_each_table(engine: Engine, label_sets: dict[str, int]) -> None:
    ids = sorted(label_sets.values())
    with read_session(engine) as session:
        assert holding(session, m.SentenceLabel.label_set_id, ids) == [label_sets["gold"]]
        assert holding(session, m.Span.label_set_id, ids) == sorted(
            [label_sets["gold"], label_sets["spotter"]]
        )
        assert not any(holds_rows(session, m.ClaimLabel.label_set_id, i) for i in ids)
        assert holding(session, m.SentenceLabel.label_set_id, []) == []


def test_on_postgresql_a_label_set_without_rows_is_probed_through_the_index(
    engine: Engine, label_sets: dict[str, int]
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite plans without statistics: it takes the index for any label set")
    with engine.begin() as connection:
        connection.execute(text("ANALYZE sentence_labels"))
        statement = probe(m.SentenceLabel.label_set_id, label_sets["silent"])
        sql = str(statement.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True}))
        plan = "\n".join(row[0] for row in connection.execute(text(f"EXPLAIN {sql}")))
    assert "Index" in plan and "Seq Scan" not in plan, plan
