"""FaithScore annotations (hand-made records of the release's shape): sub-sentences located as labelled
sentence rows, atomic facts as labelled claims, the polarity chosen at import, repeats reported, and
import → export → import identical (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest

import cli
from db.access import OPERATOR
from db.export_files import export_file
from db.exporter import export_bundle
from db.transfer import import_file
from formats.base import ReadOptions
from formats.faithscore import FORMAT as FAITHSCORE
from formats.registry import best_guess

ANSWER_1 = "A brown dog sits on a red sofa, with a cat sleeping beside it. The owner is probably at work."
RECORDS = [
    {
        "id": "000000000042",
        "answer": ANSWER_1,
        "stage 1": {
            "A brown dog sits on a red sofa": 1,
            " with a cat sleeping beside it": 1,
            " The owner is probably at work": 0,
        },
        "stage 2": {
            "There is a dog.": 1,
            "The dog is brown.": 1,
            "There is a cat.": 0,
            "The sofa is red.": 1,
        },
    },
    {
        "id": "000000000042",
        "answer": "Two animals rest indoors.",
        "stage 1": {"Two animals rest indoors": 1},
        "stage 2": {"There are two animals.": 1},
    },
    {
        "id": "000000001337",
        "answer": "In the image, a tram passes a bakery.",
        "stage 1": {"In the image": 0, " a tram passes a bakery": 1},
        "stage 2": {},
    },
]


def jsonl(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def lines(exported: bytes) -> list[dict]:
    return [json.loads(line) for line in exported.decode().splitlines()]


def test_sub_sentences_become_labelled_rows_and_facts_labelled_claims(round_trip):
    data = jsonl(RECORDS)
    assert best_guess(data, "annotation.jsonl") is FAITHSCORE
    content, exported = round_trip("faithscore", data, source="annotation.jsonl")
    assert lines(exported) == RECORDS
    first, second, third = content["items"]
    assert [i["external_id"] for i in content["items"]] == [
        "000000000042-0",
        "000000000042-1",
        "000000001337-0",
    ]
    assert first["image_ref"] == "COCO_val2014_000000000042.jpg"
    assert [first["response"][s["start"] : s["end"]] for s in first["sentences"]] == [
        "A brown dog sits on a red sofa",
        "with a cat sleeping beside it",
        "The owner is probably at work",
    ]
    assert [c["text"] for c in first["claims"]] == list(RECORDS[0]["stage 2"])
    assert all(c["start"] is None for c in first["claims"])
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    # Analytical sub-sentences (0) are "unknown"; descriptive ones (1) carry no sentence label.
    assert [(lab["index"], lab["label"]) for lab in gold["000000000042-0"]["sentence_labels"]] == [
        (2, "unknown")
    ]
    assert [lab["label"] for lab in gold["000000000042-0"]["claim_labels"]] == [
        "non-hallucination",
        "non-hallucination",
        "hallucination",
        "non-hallucination",
    ]
    assert gold["000000001337-0"]["claim_labels"] == [] and third["claims"] == []
    assert [(lab["index"], lab["label"]) for lab in gold["000000001337-0"]["sentence_labels"]] == [
        (0, "unknown")
    ]
    assert second["sentences"] == [{"start": 0, "end": 24}]


def test_the_readme_polarity_flips_both_stages_and_exports_the_same_digits(engine):
    data = jsonl(RECORDS[:1])
    options = ReadOptions(dataset="readme", faithscore_polarity="readme")
    assert import_file(
        engine, data, source="a.jsonl", format_name="faithscore", options=options, actor=OPERATOR
    ).ok
    (gold,) = export_bundle(engine, "readme", actor=OPERATOR).label_sets
    (said,) = gold.annotations
    assert [lab.index for lab in said.sentence_labels] == [0, 1]  # the 1s are the analytical ones now
    assert [lab.label for lab in said.claim_labels] == [
        "hallucination",
        "hallucination",
        "non-hallucination",
        "hallucination",
    ]
    assert lines(export_file(engine, "readme", "faithscore", actor=OPERATOR)) == RECORDS[:1]


def test_an_unknown_polarity_is_one_clear_problem():
    result = FAITHSCORE.read(
        jsonl(RECORDS), source="a.jsonl", options=ReadOptions(faithscore_polarity="upside")
    )
    (problem,) = result.problems
    assert result.bundle is None and problem.field == "polarity" and "data or readme" in problem.reason


def test_repeats_are_reported_by_record_and_field():
    same = dict(RECORDS[1])
    conflicting = {**RECORDS[1], "stage 2": {"There are two animals.": 0}}
    repeated_keys = (
        '{"id": "7", "answer": "A cat, a cat, a cat, a dog.", '
        '"stage 1": {"A cat": 1, " a cat": 1, " a cat": 1, " a dog": 0}, '
        '"stage 2": {"There is a cat.": 1, "There is a cat.": 1}}'
    )
    clashing_keys = (
        '{"id": "8", "answer": "A cat.", "stage 1": {"A cat": 1}, "stage 2": {"A cat.": 1, "A cat.": 0}}'
    )
    data = jsonl([RECORDS[1], same, conflicting]) + f"{repeated_keys}\n{clashing_keys}\n".encode()
    result = FAITHSCORE.read(data, source="f.jsonl")
    problems = [(p.record, p.field, p.severity) for p in result.problems]
    assert problems == [
        ("#1 (id=000000000042)", "id", "warning"),
        ("#2 (id=000000000042)", "stage 2", "error"),
        ("#3 (id=7)", "stage 1", "warning"),
        ("#3 (id=7)", "stage 2", "warning"),
        ("#4 (id=8)", "stage 2", "error"),
    ]
    reasons = [p.reason for p in result.problems]
    assert "exact copy of record #0" in reasons[0]
    assert "as record #0" in reasons[1] and "'There are two animals.' is 1 there and 0 here" in reasons[1]
    assert "listed twice" in reasons[2] and "next occurrence" in reasons[2]
    assert "'A cat.' is listed twice, with 1 and with 0" in reasons[4]
    items = {i.external_id: i for i in result.bundle.items}
    assert list(items) == ["000000000042-0", "7-0"]
    cats = items["7-0"]
    assert [cats.response[s.start : s.end] for s in cats.sentences] == ["A cat", "a cat", "a cat", "a dog"]
    assert [s.start for s in cats.sentences] == [0, 7, 14, 21]
    assert [c.text for c in cats.claims] == ["There is a cat."]


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (
            {"stage 1": {"A brown dog sits on a blue sofa": 1}},
            "stage 1",
            "'A brown dog sits on a blue sofa' is not in",
        ),
        (
            {"stage 1": {" with a cat sleeping beside it": 1, "A brown dog sits on a red sofa": 1}},
            "stage 1",
            "is not in the answer after character",
        ),
        ({"stage 2": {"There is a dog.": 2}}, "stage 2", "expected 0 or 1"),
        ({"stage 2": {"There is a dog.": True}}, "stage 2", "expected 0 or 1"),
        ({"stage 2": ["There is a dog."]}, "stage 2", "expected an object"),
        ({"answer": ""}, "answer", "is empty"),
        ({"id": None}, "id", "COCO image id"),
    ],
)
def test_bad_records_are_rejected_naming_the_field(change, field, reason):
    record = {**RECORDS[0], **change}
    result = FAITHSCORE.read(jsonl([RECORDS[2], record]), source="f.jsonl")
    (problem,) = result.problems
    assert problem.record.startswith("#1") and problem.field == field
    assert reason in problem.reason, problem.reason
    assert len(result.bundle.items) == 1


def test_an_id_that_is_no_coco_number_leaves_the_item_without_an_image():
    result = FAITHSCORE.read(jsonl([{**RECORDS[2], "id": "street-7"}]), source="f.jsonl")
    (warning,) = result.problems
    assert warning.severity == "warning" and warning.field == "id"
    assert result.bundle.items[0].image_ref is None and result.bundle.items[0].external_id == "street-7-0"


def test_item_names_survive_an_export_after_a_rejected_record(engine):
    broken = {**RECORDS[0], "stage 2": {"There is a dog.": 5}}
    data = jsonl([broken, *RECORDS])
    first = import_file(
        engine,
        data,
        source="a.jsonl",
        format_name="faithscore",
        options=ReadOptions(dataset="one"),
        allow_skip=True,
        actor=OPERATOR,
    )
    assert first.ok and [p.record for p in first.errors] == ["#0 (id=000000000042)"]
    ids = [i.external_id for i in export_bundle(engine, "one", actor=OPERATOR).items]
    assert ids == ["000000000042-1", "000000000042-2", "000000001337-0"]
    exported = export_file(engine, "one", "faithscore", actor=OPERATOR)
    assert [r.get("item_id") for r in lines(exported)] == ["000000000042-1", "000000000042-2", None]
    again = import_file(
        engine,
        exported,
        source="b.jsonl",
        format_name="faithscore",
        options=ReadOptions(dataset="two"),
        actor=OPERATOR,
    )
    assert again.ok and [i.external_id for i in export_bundle(engine, "two", actor=OPERATOR).items] == ids
    assert export_file(engine, "two", "faithscore", actor=OPERATOR) == exported


def test_the_command_line_takes_the_polarity(db_url, tmp_path, capsys):
    path = tmp_path / "annotation.jsonl"
    path.write_bytes(jsonl(RECORDS[:1]))
    code = cli.main(
        ["import", "--db", db_url, "--faithscore-polarity", "readme", "--dataset", "r", str(path)]
    )
    assert code == 0, capsys.readouterr()
    assert cli.main(["import", "--db", db_url, "--faithscore-polarity", "upside", str(path)]) == 2
    assert "--faithscore-polarity" in capsys.readouterr().err
    exported = tmp_path / "out.jsonl"
    assert (
        cli.main(
            ["export", "--db", db_url, "--dataset", "r", "--format", "faithscore", "--out", str(exported)]
        )
        == 0
    )
    assert lines(exported.read_bytes()) == RECORDS[:1]
