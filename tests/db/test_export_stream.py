"""An export read from the store in batches and written a batch at a time gives the very bytes of the
whole dataset written at once, on SQLite and PostgreSQL; the batches hold the same content as the whole."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR
from db.export_files import export_file, export_to
from db.exporter import UnknownDataset, export_batches, export_bundle
from db.transfer import import_file
from demo.build import DEMO_DATASET_NAME
from demo.load import load_demo
from formats.alignbench import COLUMNS
from formats.base import FormatError, ReadOptions
from formats.export_check import export_refusal
from formats.records import Bundle
from formats.registry import get_format

WRITTEN = [
    ("canonical", "d.jsonl"),
    ("alignbench", "d.csv"),
    ("alignbench", "d.jsonl"),
    ("alignbench", "d.parquet"),  # written whole (the default write_stream): Parquet types need every row
]


def alignbench_csv(captions: int) -> bytes:
    """AlignBench rows: three sentences per caption, some incorrect with their error words."""
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for c in range(captions):
        for s in range(3):
            wrong = (c + s) % 4 == 0
            writer.writerow(
                {
                    "model": f"m{c % 2}",
                    "image_name": f"img{c}.jpg",
                    "sentence_index": s,
                    "caption": f"A red cube number {c} sits on table {s}.",
                    "annotation": "incorrect" if wrong else "correct",
                    "error_type": "Object" if wrong else "",
                    "error_words": '["red cube"]' if wrong else "",
                }
            )
    return out.getvalue().encode()


def streamed(engine: Engine, dataset: str, fmt: str, filename: str, batch_items: int) -> bytes:
    out = io.BytesIO()
    size = export_to(engine, dataset, fmt, out, actor=OPERATOR, filename=filename, batch_items=batch_items)
    assert size == len(out.getvalue())
    return out.getvalue()


@pytest.mark.parametrize("batch_items", [1, 7, 60, 2000])
def test_the_demo_streamed_in_batches_is_byte_for_byte_the_whole_write(engine: Engine, batch_items: int):
    load_demo(engine, actor=OPERATOR)
    whole = export_bundle(engine, DEMO_DATASET_NAME, actor=OPERATOR, batch_items=100_000)
    assert len(whole.items) == 60 and whole.rating_tasks and len(whole.label_sets) == 6
    batches = list(export_batches(engine, DEMO_DATASET_NAME, actor=OPERATOR, batch_items=batch_items))
    assert len(batches) == 60 // batch_items + 1
    assert all(len(b.label_sets) == 6 for b in batches)
    assert [bool(b.rating_tasks) for b in batches] == [False] * (len(batches) - 1) + [True]
    for name, filename in WRITTEN:
        fmt = get_format(name)
        assert streamed(engine, DEMO_DATASET_NAME, name, filename, batch_items) == fmt.write(
            whole, filename=filename
        ), (name, filename)


def test_the_items_written_are_told_after_each_batch_is_written(engine: Engine):
    load_demo(engine, actor=OPERATOR)
    out = io.BytesIO()
    told: list[tuple[int, int]] = []  # (items so far, bytes written by then)
    export_to(
        engine,
        DEMO_DATASET_NAME,
        "canonical",
        out,
        actor=OPERATOR,
        batch_items=25,
        items_done=lambda done: told.append((done, len(out.getvalue()))),
    )
    assert [done for done, _ in told] == [25, 50, 60]
    sizes = [size for _, size in told]
    assert 0 < sizes[0] < sizes[1] < sizes[2] <= len(out.getvalue())


def test_an_alignbench_dataset_streamed_in_batches_is_byte_for_byte_the_whole_write(engine: Engine):
    data = alignbench_csv(25)
    outcome = import_file(
        engine,
        data,
        source="ab.csv",
        format_name="alignbench",
        options=ReadOptions(dataset="ab"),
        actor=OPERATOR,
    )
    assert outcome.ok, outcome.problems
    whole = export_bundle(engine, "ab", actor=OPERATOR, batch_items=100_000)
    assert len(whole.items) == 25
    assert streamed(engine, "ab", "alignbench", "ab.csv", 4) == data  # the file it was imported from
    for name, filename in WRITTEN:
        expected = get_format(name).write(whole, filename=filename)
        assert streamed(engine, "ab", name, filename, 4) == expected, (name, filename)
        assert export_file(engine, "ab", name, actor=OPERATOR, filename=filename) == expected


def test_batches_merged_are_the_whole_dataset(engine: Engine):
    load_demo(engine, actor=OPERATOR)
    whole = export_bundle(engine, DEMO_DATASET_NAME, actor=OPERATOR, batch_items=100_000)
    chosen = ["gold:gold", "eager"]
    some = export_bundle(engine, DEMO_DATASET_NAME, chosen, actor=OPERATOR, batch_items=100_000)
    assert export_bundle(engine, DEMO_DATASET_NAME, actor=OPERATOR, batch_items=9) == whole
    assert export_bundle(engine, DEMO_DATASET_NAME, chosen, actor=OPERATOR, batch_items=9) == some
    assert [ls.name for ls in some.label_sets] == ["gold", "eager"] and some.rating_tasks
    for batch in export_batches(engine, DEMO_DATASET_NAME, actor=OPERATOR, batch_items=9):
        mine = {item.external_id for item in batch.items}
        assert all(a.item in mine for ls in batch.label_sets for a in ls.annotations)


def test_the_streaming_formats_write_before_the_last_batch_is_read(engine: Engine):
    load_demo(engine, actor=OPERATOR)

    def watched(out: io.BytesIO, sizes: list[int]) -> Iterator[Bundle]:
        for batch in export_batches(engine, DEMO_DATASET_NAME, actor=OPERATOR, batch_items=10):
            sizes.append(len(out.getvalue()))
            yield batch

    for name, filename in WRITTEN[:3]:
        out = io.BytesIO()
        sizes: list[int] = []
        get_format(name).write_stream(watched(out, sizes), out, filename=filename)
        assert len(sizes) == 7 and 0 < sizes[1] < sizes[-1], (name, filename, sizes)


def test_a_refusal_is_the_same_across_batches_and_nothing_is_written(engine: Engine, tmp_path):
    records = [
        {
            "id": f"r{k}",
            "test_solution": "A red cube.",
            "hallucinated_solution": "A <hallucination>red</hallucination> cube.",
        }
        for k in range(5)
    ]
    data = json.dumps(records).encode()
    assert import_file(engine, data, source="b.json", options=ReadOptions(dataset="spans"), actor=OPERATOR).ok
    fmt = get_format("alignbench")
    refusal = export_refusal(fmt, export_bundle(engine, "spans", actor=OPERATOR))
    assert refusal and "5 spans" in refusal
    exports = tmp_path / "exports"  # (the store is in tmp_path too)
    exports.mkdir()
    out = exports / "new" / "folder" / "out.csv"
    with pytest.raises(FormatError) as refused:
        export_to(engine, "spans", "alignbench", out, actor=OPERATOR, batch_items=2)
    assert str(refused.value) == refusal
    with pytest.raises(UnknownDataset):
        export_to(engine, "nope", "canonical", out, actor=OPERATOR, batch_items=2)
    assert list(exports.iterdir()) == []  # not even the folders made for the file
    kept = exports / "kept"
    kept.mkdir()
    with pytest.raises(FormatError):
        export_to(engine, "spans", "alignbench", kept / "out.csv", actor=OPERATOR, batch_items=2)
    assert list(exports.iterdir()) == [kept] and list(kept.iterdir()) == []  # a folder that was there stays


def test_the_canonical_lines_are_dataclasses_asdict_of_every_record(engine: Engine):
    load_demo(engine, actor=OPERATOR)
    whole = export_bundle(engine, DEMO_DATASET_NAME, actor=OPERATOR)
    expected = [{"record": "dataset", "format_version": 1, **dataclasses.asdict(whole.dataset)}]
    expected += [{"record": "item", **dataclasses.asdict(item)} for item in whole.items]
    for label_set in whole.label_sets:
        head = dataclasses.asdict(label_set)
        del head["annotations"]
        expected.append({"record": "label_set", **head})
        key = {"kind": label_set.kind, "name": label_set.name}
        # (Verdicts on other label sets' triplets and statuses only where there are some, and a raw
        # output's cut mark only where it was cut: see _annotations_rows.)
        for a in label_set.annotations:
            row = {
                k: v
                for k, v in dataclasses.asdict(a).items()
                if v or k not in ("triplet_judgments", "statuses")
            }
            if row["raw_output"] is not None and not row["raw_output"]["cut"]:
                del row["raw_output"]["cut"]
            expected.append({"record": "annotations", "label_set": key, **row})
    for task in whole.rating_tasks:
        head = dataclasses.asdict(task)
        del head["ratings"]
        expected.append({"record": "rating_task", **head})
        expected += [{"record": "rating", "task": task.name, **dataclasses.asdict(r)} for r in task.ratings]
    assert len(expected) > 400
    written = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in expected).encode()
    assert get_format("canonical").write(whole) == written  # the same keys in the same order
