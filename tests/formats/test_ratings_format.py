"""Ratings files (CSV / JSONL): segments by index or offsets, every flaw reported by file, line and field,
written back unchanged, and imported all or nothing through the shared importer."""

from __future__ import annotations

import json

import pytest

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.rating_tasks import export_ratings, import_ratings, list_rating_tasks, task_ratings
from formats.ratings import COLUMNS, RatingsFormat, RatingTarget, read_ratings, write_ratings
from formats.records import RatingRecord
from tests.db.test_rating_tasks import _bundle

SEGMENTS = {"A": [(2, 5)], "B": [(0, 3), (14, 18)], "E": []}
TARGET = RatingTarget("tiny", "segments", "det", "segment", 1, 4, segments=SEGMENTS)
HEADER = "item_id,detector,segment_index,segment_start,segment_end,rater,score,nothing_flagged_correct\n"


def _read(text: str, target: RatingTarget = TARGET, source: str = "ratings.csv"):
    return read_ratings(text.encode(), source=source, target=target)


def test_csv_by_index_by_offsets_and_nothing_flagged() -> None:
    found = _read(
        HEADER
        + "A,det,0,,,ann,4,\n"
        + "B,,,14,18,ann,1.5,\n"
        + "B,det,0,0,3,bob,3,\n"
        + "E,det,,,,ann,,true\n"
    )
    assert found.problems == []
    (task,) = found.bundle.rating_tasks
    assert (task.name, task.detector, task.scale_min, task.scale_max) == ("segments", "det", 1, 4)
    assert task.ratings == [
        RatingRecord("A", "ann", 4.0, 2, 5),
        RatingRecord("B", "ann", 1.5, 14, 18),
        RatingRecord("B", "bob", 3.0, 0, 3),
        RatingRecord("E", "ann", None, -1, -1, True),
    ]
    assert found.bundle.dataset.name == "tiny" and found.bundle.items == []


def test_every_bad_row_is_reported_with_line_and_field() -> None:
    found = _read(
        HEADER
        + "Z,det,0,,,ann,4,\n"  # line 2: unknown item
        + "A,other,0,,,ann,4,\n"  # 3: another detector
        + "B,det,2,,,ann,4,\n"  # 4: B has 2 segments
        + "B,det,,1,3,ann,4,\n"  # 5: not a predicted segment
        + "B,det,1,0,3,ann,4,\n"  # 6: index and offsets disagree
        + "A,det,0,,,ann,5,\n"  # 7: off the scale
        + "A,det,0,,,,4,\n"  # 8: no rater
        + "A,det,,,,ann,4,\n"  # 9: A has segments: which one?
        + "E,det,,,,ann,,maybe\n"  # 10: not a boolean
        + "E,det,,,,ann,3,true\n"  # 11: nothing flagged has no segment to score
        + "A,det,0,,,ann,four,\n"  # 12: not a number
        + "A,det,0,2,,ann,4,\n"  # 13: one offset only
        + "A,det,0,,,ann,4,\n"  # 14: sound
        + "A,det,,2,5,ann,3,\n"  # 15: the same rater on the same segment again
    )
    got = [(p.file, p.record, p.field) for p in found.problems]
    assert got == [
        ("ratings.csv", "line 2 (id=Z)", "item_id"),
        ("ratings.csv", "line 3 (id=A)", "detector"),
        ("ratings.csv", "line 4 (id=B)", "segment_index"),
        ("ratings.csv", "line 5 (id=B)", "segment_start"),
        ("ratings.csv", "line 6 (id=B)", "segment_start"),
        ("ratings.csv", "line 7 (id=A)", "score"),
        ("ratings.csv", "line 8 (id=A)", "rater"),
        ("ratings.csv", "line 9 (id=A)", "segment_index"),
        ("ratings.csv", "line 10 (id=E)", "nothing_flagged_correct"),
        ("ratings.csv", "line 11 (id=E)", "score"),
        ("ratings.csv", "line 12 (id=A)", "score"),
        ("ratings.csv", "line 13 (id=A)", "segment_end"),
        ("ratings.csv", "line 15 (id=A)", "rater"),
    ]
    assert "its segments: 0-3, 14-18" in found.problems[3].reason
    assert "line 14" in found.problems[-1].reason
    assert len(found.bundle.rating_tasks[0].ratings) == 1


def test_unreadable_files_say_why() -> None:
    assert _read("item_id,rater,colour\nA,ann,red\n").errors[0].field == "colour"
    assert _read("rater,score\nann,4\n").errors[0].field == "item_id"
    assert "UTF-8" in read_ratings(b"\xff\xfe", source="r.csv", target=TARGET).errors[0].reason
    found = _read(
        '{"item_id": "A", "segment_index": 0, "rater": "ann", "score": 4}\n[1]\n{oops\n', source="r.jsonl"
    )
    assert [p.record for p in found.problems] == ["line 2", "line 3"]
    assert found.bundle.rating_tasks[0].ratings == [RatingRecord("A", "ann", 4.0, 2, 5)]


def test_jsonl_types_are_checked() -> None:
    rows = [
        {"item_id": "A", "segment_index": 0, "rater": "ann", "score": 4, "task": "segments"},
        {"item_id": "A", "segment_index": "0", "rater": "bob", "score": 4},
        {"item_id": "A", "segment_index": 0, "rater": "cy", "score": True},
        {"item_id": "A", "segment_index": 0, "rater": "dee", "score": 2, "task": "other"},
        {"item_id": "A", "segment_index": 0, "rater": "eve", "score": 2, "colour": "red"},
    ]
    found = _read("".join(json.dumps(r) + "\n" for r in rows), source="r.jsonl")
    assert [(p.record, p.field) for p in found.problems] == [
        ("line 3 (id=A)", "score"),
        ("line 4 (id=A)", "task"),
        ("line 5 (id=A)", "colour"),
    ]
    assert [r.rater for r in found.bundle.rating_tasks[0].ratings] == ["ann", "bob"]


def test_response_tasks_take_no_segment() -> None:
    target = RatingTarget("tiny", "responses", "det", "response", 1, 5, segments=SEGMENTS)
    found = _read(HEADER + "A,det,,,,ann,5,\nB,det,0,,,ann,3,\nE,det,,,,bob,,\n", target)
    assert [(p.record, p.field) for p in found.problems] == [
        ("line 3 (id=B)", "segment_start"),
        ("line 4 (id=E)", "score"),
    ]
    assert found.bundle.rating_tasks[0].ratings == [RatingRecord("A", "ann", 5.0)]


@pytest.mark.parametrize("filename", ["out.csv", "out.jsonl"])
def test_written_files_read_back_unchanged(filename: str) -> None:
    rows = [
        {"external_id": "B", "rater": "ann", "segment_start": 14, "segment_end": 18, "score": 2.0},
        {"external_id": "A", "rater": 'b,=o"b', "segment_start": 2, "segment_end": 5, "score": 3.5},
        {"external_id": "E", "rater": "ann", "segment_start": -1, "segment_end": -1, "score": None},
    ]
    for row, judged in zip(rows, [None, None, False], strict=True):
        row["nothing_flagged_correct"] = judged
    data = write_ratings(rows, target=TARGET, filename=filename)
    if filename.endswith(".csv"):
        assert data.decode().splitlines()[0] == ",".join(COLUMNS)
        assert data.decode().splitlines()[1] == "B,det,segments,1,14,18,ann,2,"
    found = read_ratings(data, source=filename, target=TARGET)
    assert found.problems == []
    assert found.bundle.rating_tasks[0].ratings == [
        RatingRecord("B", "ann", 2.0, 14, 18),
        RatingRecord("A", 'b,=o"b', 3.5, 2, 5),
        RatingRecord("E", "ann", None, -1, -1, False),
    ]
    fmt = RatingsFormat(TARGET)
    assert fmt.sniff(data, filename) > 0.5 and fmt.sniff(b'{"id": 1}\n', "x.jsonl") == 0
    assert fmt.write(found.bundle, filename=filename) == data


def test_import_is_all_or_nothing_and_export_reads_back(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    task = list_rating_tasks(engine, 1)[0]
    before = task_ratings(engine, task.id)
    bad = (HEADER + "A,det,0,,,carol,4,\nB,det,5,,,carol,4,\n").encode()
    outcome = import_ratings(engine, task, bad, source="carol.csv", annotator="lead", actor=OPERATOR)
    assert not outcome.ok and outcome.written == 0
    assert [(p.file, p.record, p.field) for p in outcome.problems] == [
        ("carol.csv", "line 3 (id=B)", "segment_index")
    ]
    assert task_ratings(engine, task.id) == before

    outcome = import_ratings(engine, task, bad, source="carol.csv", allow_skip=True, actor=OPERATOR)
    assert outcome.ok and outcome.written == 1 and len(outcome.problems) == 1
    assert "carol" in task_ratings(engine, task.id)["rater"]
    assert not import_ratings(engine, task, HEADER.encode(), source="empty.csv", actor=OPERATOR).ok

    everything = task_ratings(engine, task.id)
    for name in ("all.csv", "all.jsonl"):
        exported = export_ratings(engine, task, filename=name, actor=OPERATOR)
        again = import_ratings(engine, task, exported, source=name, actor=OPERATOR)
        assert again.ok, [str(p) for p in again.problems]
        assert again.written == len(everything["rater"])
        assert task_ratings(engine, task.id) == everything
