"""The canonical format is JSON Lines: a file of another shape is told so once (with the format it looks
like), and every problem of a canonical file names its line the same way."""

from __future__ import annotations

import json

import pytest

from db.access import OPERATOR
from db.export_files import export_file
from db.exporter import UnknownDataset, export_bundle
from db.transfer import import_file
from formats.base import ReadOptions
from formats.canonical import FORMAT as CANONICAL
from formats.registry import read_file

MHALO_RECORDS = [
    {
        "id": f"r{k}",
        "test_solution": "A red cube.",
        "hallucinated_solution": "A <hallucination>red</hallucination> cube.",
    }
    for k in range(200)
]


def test_a_pretty_printed_json_array_is_one_problem_naming_json_lines_and_the_format_it_looks_like():
    data = json.dumps(MHALO_RECORDS, indent=2).encode()
    assert data.count(b"\n") > 1000
    result = read_file(CANONICAL, data, "bench.json", ReadOptions())
    assert result.bundle is None
    (problem,) = result.problems
    assert problem.record == "line 1"
    assert "JSON Lines" in problem.reason and "one JSON array over" in problem.reason
    assert "it looks like MHALO (tagged JSON): choose the format 'mhalo'" in problem.reason


def test_a_pretty_printed_canonical_export_is_told_to_be_one_object_per_line(engine):
    import_file(
        engine,
        json.dumps(MHALO_RECORDS[:3]).encode(),
        source="b.json",
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    )
    rows = [json.loads(line) for line in export_file(engine, "d", "canonical", actor=OPERATOR).splitlines()]
    pretty = "\n".join(json.dumps(row, indent=2) for row in rows).encode()
    outcome = import_file(
        engine,
        pretty,
        source="d.jsonl",
        format_name="canonical",
        options=ReadOptions(dataset="e"),
        actor=OPERATOR,
    )
    assert not outcome.ok
    (problem,) = outcome.problems
    assert (
        problem.record == "line 1"
        and "JSON Lines" in problem.reason
        and "one JSON object per line" in problem.reason
    )
    assert "looks like" not in problem.reason  # no other format claims it
    with pytest.raises(UnknownDataset):
        export_bundle(engine, "e", actor=OPERATOR)


def test_every_problem_of_a_canonical_file_names_its_line():
    lines = [
        '{"record": "dataset", "format_version": 1, "name": "d", "source_format": "c"}',
        "",
        '{"record": "item", "external_id": "x", "response": 5}',
        "not json",
        '["a", "list"]',
        '{"record": "rating", "task": "nope"}',
    ]
    result = CANONICAL.read("\n".join(lines).encode(), source="c.jsonl")
    assert [p.record for p in result.problems] == ["line 3", "line 4", "line 5", "line 6"]
    assert (
        result.problems[1].reason.startswith("not valid JSON") and "at column 1" in result.problems[1].reason
    )


def test_a_cut_string_is_reported_once_at_its_place() -> None:
    """A file cut inside a string said "Unterminated string starting at at line …"."""
    from formats.json_documents import iter_jsonl, load_json

    document, problems = load_json(b'{"a": "cut', "cut.json")
    assert document is None
    assert [p.reason for p in problems] == ["not valid JSON: Unterminated string starting at line 1 column 7"]
    lines: list = []
    list(iter_jsonl('{"a": "cut\n', "cut.jsonl", lines))
    assert [p.reason for p in lines] == ["not valid JSON: Unterminated string starting at column 7"]
