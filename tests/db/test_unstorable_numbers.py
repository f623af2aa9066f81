"""A NaN or an infinity in a JSON file's record is refused naming file, record and field, on both stores.

Python's json reads ``NaN`` and ``Infinity``, and SQLite would keep them, but PostgreSQL's JSON refuses
them mid-write; a file must import, or be refused, the same way on either store.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR
from db.repositories.datasets import list_datasets
from db.transfer import import_file

_DATASET = {"record": "dataset", "format_version": 1, "name": "numbers", "source_format": "canonical"}


@pytest.mark.parametrize(
    ("record", "field"),
    [
        (
            {"record": "item", "external_id": "a", "response": "One.", "meta": {"score": float("nan")}},
            "meta.score",
        ),
        (
            {"record": "item", "external_id": "a", "response": "One.", "meta": {"x": [1, float("-inf")]}},
            "meta.x[1]",
        ),
    ],
)
def test_a_non_finite_number_is_refused_by_name(engine: Engine, record: dict, field: str) -> None:
    data = "\n".join(json.dumps(r) for r in (_DATASET, record)).encode()
    outcome = import_file(engine, data, actor=OPERATOR, source="numbers.jsonl", format_name="canonical")
    assert not outcome.ok
    (error,) = outcome.errors
    assert (error.file, error.record, error.field) == ("numbers.jsonl", "line 2", field)
    assert "JSON cannot hold" in error.reason
    assert [d.name for d in list_datasets(engine)] == []


@pytest.mark.parametrize("value", ["NaN", "-Infinity", "1e999", "1" + "0" * 400 + ".5"])
def test_an_alignbench_json_row_with_a_number_past_a_float_is_refused_by_name(
    engine: Engine, value: str
) -> None:
    """AlignBench files are checked value by value only when their text may hold such a number: an
    overflowing number is read as an infinity though neither word is written."""
    sources = ['"coco"', value]
    rows = [
        f'{{"model": "m", "image_name": "a.jpg", "sentence_index": {k}, "caption": "One.", '
        f'"annotation": "correct", "image_source": {source}}}'
        for k, source in enumerate(sources)
    ]
    outcome = import_file(
        engine, "\n".join(rows).encode(), actor=OPERATOR, source="rows.jsonl", format_name="alignbench"
    )
    assert not outcome.ok
    (error,) = outcome.errors
    assert (error.file, error.field) == ("rows.jsonl", "image_source") and "JSON cannot hold" in error.reason
    assert [d.name for d in list_datasets(engine)] == []


@pytest.mark.parametrize(
    ("written", "field", "says"),
    [
        ('{"score": NaN}', "meta.score", "JSON cannot hold"),
        ('{"x": [1, -Infinity]}', "meta.x[1]", "JSON cannot hold"),
        ('{"x": 1e999}', "meta.x", "JSON cannot hold"),
        ('{"note": "a\\u0000b"}', "meta.note", "NUL"),
        ('{"note": "\\ud800"}', "meta.note", "surrogate"),
    ],
)
@pytest.mark.parametrize("from_disk", [False, True])
def test_a_canonical_file_read_in_batches_refuses_a_late_unstorable_value_by_name(
    engine: Engine, tmp_path, monkeypatch, written: str, field: str, says: str, from_disk: bool
) -> None:
    """The records of a file in batches are walked for such values only when its bytes may hold one;
    one on the 40th item, in a later batch, is still refused naming its line and field."""
    from db.transfer import import_path
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 8)
    lines = [json.dumps(_DATASET)] + [
        json.dumps({"record": "item", "external_id": f"i{k}", "response": "One.", "meta": {"k": k}})
        for k in range(60)
    ]
    lines[40] = f'{{"record": "item", "external_id": "i39", "response": "One.", "meta": {written}}}'
    data = ("\n".join(lines) + "\n").encode()
    if from_disk:
        path = tmp_path / "late.jsonl"
        path.write_bytes(data)
        outcome = import_path(engine, path, actor=OPERATOR, source="late.jsonl", format_name="canonical")
    else:
        outcome = import_file(engine, data, actor=OPERATOR, source="late.jsonl", format_name="canonical")
    assert not outcome.ok
    (error,) = outcome.errors
    assert (error.file, error.record, error.field) == ("late.jsonl", "line 41", field)
    assert says in error.reason
    assert [d.name for d in list_datasets(engine)] == []


def test_a_whole_number_past_a_floats_range_is_refused_by_name(engine: Engine) -> None:
    """JSON reads ``1`` followed by 400 zeros as an exact integer; a number field cannot hold it."""
    lines = [
        _DATASET,
        {"record": "item", "external_id": "a", "response": "One."},
        {"record": "label_set", "kind": "detector", "name": "scorer"},
        {
            "record": "annotations",
            "label_set": {"kind": "detector", "name": "scorer"},
            "item": "a",
            "sentence_scores": [{"index": 0, "score": 10**400}],
        },
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    outcome = import_file(engine, data, actor=OPERATOR, source="big.jsonl", format_name="canonical")
    assert not outcome.ok
    (error,) = outcome.errors
    assert (error.file, error.record, error.field) == ("big.jsonl", "line 4", "sentence_scores[0].score")
    assert "too large" in error.reason
    assert [d.name for d in list_datasets(engine)] == []
