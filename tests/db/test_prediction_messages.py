"""What a detector-run import says about a flawed record: the record column escapes an id's line break
as the reason column does, a null output is called null (not missing), a word-index span says whether it
is reversed, empty or negative, and an empty list says it holds no outputs. Real SQLite and PostgreSQL."""

from __future__ import annotations

import json

from db.access import OPERATOR
from db.transfer import import_predictions
from formats.problems import record_label
from tests.db.test_name_trimming import _tiny

GOOD = {"id": "t2", "output": "<Tagged_Text>The cat sits on a red mat.</Tagged_Text>"}  # the format's cue


def _said(engine, records: object) -> list[str]:
    _tiny(engine)
    outcome = import_predictions(
        engine, json.dumps(records).encode(), actor=OPERATOR, source="run.json", dataset="tiny", detector="d"
    )
    return [f"{p.record}|{p.field}|{p.reason}" for p in outcome.problems]


def test_an_id_with_a_line_break_is_escaped_in_the_record_column(engine) -> None:
    said = _said(engine, [GOOD, {"id": "t2\n", "output": "x"}])
    assert said == ["#1 (id='t2\\n')|id|no item 't2\\n' in dataset 'tiny'"]
    assert record_label(3, "plain id") == "#3 (id=plain id)"


def test_a_null_output_is_called_null(engine) -> None:
    said = _said(engine, [GOOD, {"id": "t1", "output": None}])
    assert said == ["#1 (id=t1)|output|is null; expected text"]


def test_word_spans_say_what_is_wrong_with_them(engine) -> None:
    said = _said(
        engine,
        [
            {"id": "t1", "spans": [{"start": 3, "end": 2}]},
            {"id": "t2", "spans": [{"start": -1, "end": 0}]},
        ],
    )
    assert [line.split("|", 2)[2] for line in said] == [
        "kept without spans: start 3, end 2: a reversed range (end is one past the last word, so after start)",
        "kept without spans: start -1, end 0: a word index is negative (words count from 0)",
    ]


def test_an_empty_list_says_it_holds_no_outputs(engine) -> None:
    assert _said(engine, []) == ["-|-|the file holds no outputs for this dataset"]
