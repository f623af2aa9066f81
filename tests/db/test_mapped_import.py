"""Mapped imports into the real stores (SQLite and PostgreSQL): everything the importer promises holds
for them too — all or nothing, idempotent, every problem with file, record and field — and the mapping
is saved with the dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import Engine, func, select

from db import models as m
from db.access import OPERATOR
from db.engine import read_session
from db.exporter import export_bundle
from db.repositories.datasets import import_mapping, import_mappings
from db.transfer import import_table
from formats.base import ReadOptions
from formats.dataset_folders import open_dataset_folder
from formats.mapping import ImportMapping, open_file

RECORDS = [
    {
        "qid": "q1",
        "answer": "A red cube and a ball.",
        "spans": [{"start": 2, "end": 5, "text": "red", "t": "Color"}],
    },
    {
        "qid": "q2",
        "answer": "Two cats sleep.",
        "spans": [{"start": 0, "end": 3, "text": "Two", "t": "Number"}],
    },
    {"qid": "q3", "answer": "A sign says STOP.", "spans": []},
]
MAPPING = ImportMapping.from_dict(
    {
        "version": 1,
        "fields": {"id": "qid", "response": "answer"},
        "gold": {"shape": "offsets", "field": "spans", "keys": {"label": "t"}},
    }
)


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def counts(engine: Engine) -> dict[str, int]:
    with read_session(engine) as session:
        return {
            table.__tablename__: session.scalar(select(func.count()).select_from(table)) or 0
            for table in (m.Dataset, m.Item, m.Span, m.LabelSet)
        }


def test_mapped_import_writes_saves_its_mapping_and_is_idempotent(engine: Engine) -> None:
    first = import_table(engine, open_file(jsonl(RECORDS), "bench.jsonl"), mapping=MAPPING, actor=OPERATOR)
    assert first.ok, [str(p) for p in first.problems]
    assert first.format == "mapped" and first.dataset == "bench"
    assert first.result is not None and first.result.items_created == 3
    assert import_mapping(engine, "bench") == MAPPING.to_dict()
    assert import_mappings(engine) == {"bench": MAPPING.to_dict()}
    bundle = export_bundle(engine, "bench", actor=OPERATOR)
    (gold,) = bundle.label_sets
    assert {a.item: [(s.start, s.end, s.type) for s in a.spans] for a in gold.annotations} == {
        "q1": [(2, 5, "Color")],
        "q2": [(0, 3, "Number")],
        "q3": [],  # gold looked at it and found nothing: its spans are marked done
    }
    assert {a.item: [(s.task, s.status) for s in a.statuses] for a in gold.annotations}["q3"] == [
        ("spans", "done")
    ]
    before = counts(engine)
    again = import_table(engine, open_file(jsonl(RECORDS), "bench.jsonl"), mapping=MAPPING, actor=OPERATOR)
    assert again.ok and again.result is not None
    assert (again.result.items_created, again.result.items_existing) == (0, 3)
    assert not again.result.changes.needs_replace
    assert counts(engine) == before
    assert import_mapping(engine, "bench") == MAPPING.to_dict()


def test_a_refused_mapped_import_writes_nothing_not_even_the_mapping(engine: Engine) -> None:
    bad = [*RECORDS, {"qid": "q4", "answer": "A dog.", "spans": [{"start": 2, "end": 5, "text": "cat"}]}]
    outcome = import_table(engine, open_file(jsonl(bad), "bench.jsonl"), mapping=MAPPING, actor=OPERATOR)
    assert not outcome.ok
    assert [(p.file, p.record, p.field) for p in outcome.errors] == [
        ("bench.jsonl", "#3 (id=q4)", "spans[0].text")
    ]
    assert counts(engine) == {"datasets": 0, "items": 0, "spans": 0, "label_sets": 0}
    assert import_mapping(engine, "bench") is None
    skipped = import_table(
        engine,
        open_file(jsonl(bad), "bench.jsonl"),
        mapping=MAPPING,
        allow_skip=True,
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    )
    assert skipped.ok and skipped.result is not None and skipped.result.items_created == 3
    assert import_mapping(engine, "d") == MAPPING.to_dict()


def test_a_store_level_problem_is_named_too(engine: Engine) -> None:
    assert import_table(engine, open_file(jsonl(RECORDS), "bench.jsonl"), mapping=MAPPING, actor=OPERATOR).ok
    changed = [{**RECORDS[0], "answer": "A blue cube and a ball."}]
    items_only = ImportMapping.from_dict({**MAPPING.to_dict(), "gold": None})
    outcome = import_table(
        engine, open_file(jsonl(changed), "bench.jsonl"), mapping=items_only, actor=OPERATOR
    )
    assert not outcome.ok
    assert [(p.record, p.field) for p in outcome.errors] == [("#0 (id=q1)", "response")]


def test_a_dataset_folder_imports_with_a_mapping_and_a_recognised_one_without(
    engine: Engine, tmp_path: Path
) -> None:
    folder = tmp_path / "hf-bench"
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(RECORDS[:2]), folder / "data" / "test-00000-of-00002.parquet")
    pq.write_table(pa.Table.from_pylist(RECORDS[2:]), folder / "data" / "test-00001-of-00002.parquet")
    (folder / "dataset_info.json").write_text(json.dumps({"description": "three items"}))
    source = open_dataset_folder(folder).source
    outcome = import_table(engine, source, mapping=MAPPING, actor=OPERATOR)
    assert outcome.ok, [str(p) for p in outcome.problems]
    bundle = export_bundle(engine, "hf-bench", actor=OPERATOR)
    assert [(i.external_id, i.split) for i in bundle.items] == [
        ("q1", "test"),
        ("q2", "test"),
        ("q3", "test"),
    ]

    segments = [
        {
            "id": "s1",
            "question": "Describe.",
            "response": "A cat. It is red.",
            "image": "1.jpg",
            "annotations": [
                {"start": 0, "end": 6, "text": "A cat.", "label": "ACCURATE"},
                {"start": 7, "end": 17, "text": "It is red.", "label": "INACCURATE"},
            ],
        }
    ]
    mhal = tmp_path / "mhal"
    mhal.mkdir()
    pq.write_table(pa.Table.from_pylist(segments), mhal / "train.parquet")
    outcome = import_table(engine, open_dataset_folder(mhal).source, actor=OPERATOR)
    assert outcome.ok and outcome.format == "mhaldetect"
    assert import_mapping(engine, "mhal") is None
    bundle = export_bundle(engine, "mhal", actor=OPERATOR)
    assert [lab.label for lab in bundle.label_sets[0].annotations[0].sentence_labels] == [
        "correct",
        "incorrect",
    ]


def test_mapped_response_scores_become_the_gold_response_scores(engine: Engine) -> None:
    """A mapped rating column is a first-class response score (the MMHal-Bench label kind), on its scale."""
    scored = ImportMapping.from_dict(
        {
            "version": 1,
            "fields": {"id": "id", "response": "answer"},
            "gold": {"shape": "response_score", "field": "rating", "scale": [0, 6]},
        }
    )
    rows = [{"id": "q1", "answer": "A red bus.", "rating": 2}, {"id": "q2", "answer": "A cat.", "rating": 6}]
    outcome = import_table(
        engine,
        open_file(jsonl(rows), "ratings.jsonl"),
        mapping=scored,
        options=ReadOptions(dataset="rated"),
        actor=OPERATOR,
    )
    assert outcome.ok, outcome.summary()
    with read_session(engine) as session:
        stored = sorted(
            session.execute(
                select(m.Item.external_id, m.ResponseScore.score, m.ResponseScore.scale_max).join(
                    m.Item, m.Item.id == m.ResponseScore.item_id
                )
            ).all()
        )
    assert [tuple(row) for row in stored] == [("q1", 2.0, 6), ("q2", 6.0, 6)]
