"""Fuzzing every reader and the import path: broken JSON, wrong types, huge strings, invalid UTF-8, NUL and
lone surrogates, out-of-range and overlapping offsets, HTML/JS in text. The answer must always be a clear
report — never an exception, never a half-written store."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.transfer import import_file, import_predictions
from formats.base import KnownItem, ReadOptions, ReadResult
from formats.problems import Problem
from formats.registry import FORMATS

RESPONSE = "A red cube sits left of a <script>alert(1)</script> ball. Two 🐱 cats."
KNOWN = {
    "a": KnownItem(
        RESPONSE, ((0, 58), (59, len(RESPONSE))), ("The cube is red.",), {"sentence_index": [0, 1]}
    ),
    "m/i.jpg": KnownItem("One. Two.", ((0, 4), (5, 9)), (), {"sentence_index": [0, 1]}),
}

# One small valid file per format; the fuzzer breaks them.
SAMPLES: dict[str, Any] = {
    "mhalo": [
        {
            "id": "a",
            "prompt": "p",
            "test_solution": RESPONSE,
            "hallucinated_solution": RESPONSE.replace("red", "<hallucination>red</hallucination>"),
        },
    ],
    "mhaldetect": [
        {
            "id": "a",
            "question": "q",
            "response": "One. Two.",
            "annotations": [{"start": 0, "end": 4, "text": "One.", "label": "INACCURATE"}],
        }
    ],
    "alignbench": [
        {
            "model": "m",
            "image_name": "i.jpg",
            "sentence_index": 0,
            "caption": "One.",
            "annotation": "incorrect",
            "error_words": ["One"],
        },
        {
            "model": "m",
            "image_name": "i.jpg",
            "sentence_index": 1,
            "caption": "Two.",
            "annotation": "correct",
        },
    ],
    "mhalubench": [
        {
            "id": 1,
            "claim_list": ["A cat."],
            "ref_claim_label": ["hallucination"],
            "ref_reason": [{"claim1": "hallucination", "reason": "r"}],
        },
        {
            "response": "A cat.",
            "segments": [
                {
                    "segment": "A cat.",
                    "claims": [{"claim": "A cat.", "label": "non-hallucination", "type": "object"}],
                }
            ],
        },
    ],
    "trihe": {
        "1": {
            "instance": [{"question": "q", "answer": "a", "triplet": ["(a, b, c)"]}],
            "triplets": ["(a, b, c)"],
            "all_object": ["a"],
            "object": [],
        }
    },
    "halloc": [
        {
            "id": "h",
            "hallucinated_text": "The man is left.",
            "annotations": {"object": [{"obj": {"name": "man", "char_index": "4:7"}}]},
        }
    ],
    "typed-tags": [{"id": "t", "tagged": "There are <number>three</number> cats."}],
    "label-studio": [
        {
            "id": 1,
            "data": {"text": RESPONSE},
            "annotations": [
                {
                    "result": [
                        {
                            "type": "labels",
                            "value": {"start": 2, "end": 5, "text": "red", "labels": ["Color"]},
                        }
                    ]
                }
            ],
        }
    ],
    "canonical": None,  # built from the records below
    "mhalo-outputs": [
        {"id": "a", "output": "<Tagged_Text>A <hallucination>red</hallucination> cube</Tagged_Text>"}
    ],
    "word-index": [{"id": "a", "spans": [{"start": 1, "end": 2, "text": "red"}]}],
    "alignbench-scores": [{"model": "m", "image_name": "i.jpg", "sentence_index": 0, "score": 80}],
    "alignbench-localization": [
        {"model": "m", "image_name": "i.jpg", "sentence_index": 1, "output": "[red] Two."}
    ],
    "mhalubench-predictions": [
        {"id": "a", "claims": [{"claim": "The cube is red.", "label": "hallucination"}]}
    ],
    "trihe-judgments": {
        "1": {
            "instance": [
                {"question": "q", "answer": "a", "x_triplets": ["(a, b, c)"], "x_triplets_judgements": ["no"]}
            ]
        }
    },
    "halloc-probs": [{"id": "a", "probabilities": [0.5] * 13}],
    "mmhal": [
        {
            "question_type": "attribute",
            "image_id": "i",
            "image_src": "https://example.org/i.jpg",
            "image_content": ["Cat"],
            "question": "q",
            "gt_answer": "g",
            "model_answer": RESPONSE,
            "gpt4_review": "Fine. Rating: 2",
        }
    ],
    "mmhal-ratings": [{"id": "a", "rating": 4, "hallucination": True, "rationale": "r"}],
}
SAMPLES["canonical"] = [
    {"record": "dataset", "format_version": 1, "name": "c", "source_format": "canonical"},
    {"record": "item", "external_id": "x", "response": RESPONSE, "sentences": [{"start": 0, "end": 5}]},
    {"record": "label_set", "kind": "gold", "name": "gold"},
    {
        "record": "annotations",
        "label_set": {"kind": "gold", "name": "gold"},
        "item": "x",
        "spans": [{"start": 2, "end": 5}],
    },
]
LINE_FORMATS = {
    "canonical",
    "alignbench",
    "alignbench-scores",
    "alignbench-localization",
    "typed-tags",
    "word-index",
    "mmhal-ratings",
}

NASTY_TEXT = st.sampled_from(
    [
        "",
        " ",
        "<script>alert('x')</script>",
        '<img src=x onerror="alert(1)">',
        "**bold** [link](javascript:alert(1))",
        "\x00",
        "\ud800",
        "a\udfffb",
        "🐱" * 3,
        "x" * 200_000,
        "<hallucination>",
        "</Tagged_Text>",
        "[red]",
        "(a, b)",
        "NaN",
    ]
)
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
)
LEAVES = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=30), NASTY_TEXT)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for k, inner in enumerate(value):
            found += _paths(inner, (*prefix, k))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return copy


def _encode(name: str, value: Any) -> bytes:
    if name in LINE_FORMATS and isinstance(value, list):
        return "".join(json.dumps(v) + "\n" for v in value).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode("utf-8", "surrogatepass")


@st.composite
def broken_files(draw: st.DrawFn, names: tuple[str, ...] = tuple(SAMPLES)) -> tuple[str, bytes]:
    name = draw(st.sampled_from(names))
    sample = SAMPLES[name]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(sample)))
        sample = _replace(sample, path, draw(VALUES))
    data = _encode(name, sample)
    damage = draw(st.sampled_from(["none", "none", "truncate", "bad-utf8", "garbage", "empty"]))
    if damage == "truncate" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == "bad-utf8":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + data[at:]
    elif damage == "garbage":
        data = draw(st.binary(max_size=64))
    elif damage == "empty":
        data = b""
    return name, data


def _check_report(result: ReadResult) -> None:
    assert isinstance(result, ReadResult)
    for problem in result.problems:
        assert isinstance(problem, Problem)
        assert problem.severity in ("error", "warning")
        assert isinstance(problem.reason, str) and problem.reason.strip()
        assert "internal error" not in problem.reason
    if result.bundle is None:
        assert result.errors, "a file that cannot be read must say why"


@settings(max_examples=400, deadline=None)
@given(broken_files())
def test_every_reader_answers_with_a_report(case):
    name, data = case
    fmt = FORMATS[name]
    options = ReadOptions(dataset="d", detector="x", known=KNOWN)
    _check_report(fmt.read(data, source="fuzz", options=options))
    # Any reader given any other format's bytes must also answer, not raise.
    for other in FORMATS.values():
        _check_report(other.read(data, source="fuzz", options=options))


def _counts(engine: Engine) -> dict[str, int]:
    with Session(engine) as session:
        return {
            table.name: session.scalar(select(func.count()).select_from(table))
            for table in m.Base.metadata.sorted_tables
            if table.name not in ("store_revision", "edit_log")
        }


@pytest.fixture
def seeded(engine: Engine) -> Engine:
    """A store holding the items the prediction samples speak about."""
    mhalo = _encode("mhalo", SAMPLES["mhalo"])
    assert import_file(
        engine, mhalo, source="seed", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    ).ok
    return engine


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(broken_files(), st.booleans())
def test_imports_are_all_or_nothing(seeded, case, allow_skip):
    name, data = case
    before = _counts(seeded)
    fmt = FORMATS[name]
    if fmt.kind == "predictions":
        outcome = import_predictions(
            seeded,
            data,
            source="fuzz",
            dataset="d",
            detector="x",
            format_name=name,
            allow_skip=allow_skip,
            actor=OPERATOR,
        )
    else:
        outcome = import_file(
            seeded,
            data,
            source="fuzz",
            format_name=name,
            options=ReadOptions(dataset="f"),
            allow_skip=allow_skip,
            actor=OPERATOR,
        )
    assert all("internal error" not in p.reason for p in outcome.problems)
    if not outcome.ok:
        assert outcome.errors, "a refused import must say why"
        assert _counts(seeded) == before, "a refused import must leave the store untouched"
    elif not allow_skip:
        assert not outcome.errors


def test_a_header_cell_past_the_csv_field_limit_gets_a_report_from_every_reader():
    # Found by the test above: the CSV readers took the header row with the csv module, which raised.
    data = b'"' + b"x" * 200_000 + b'"\nmodel,image_name\n'
    options = ReadOptions(dataset="d", detector="x", known=KNOWN)
    for fmt in FORMATS.values():
        _check_report(fmt.read(data, source="fuzz", options=options))
