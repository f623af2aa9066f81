"""The canonical reader builds a record the fast way when its JSON is plainly of the record's shape, and
the checked way otherwise: either way the record, or the refusal and the field it names, must be what
the checked way alone gives."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.canonical import _build, _checked_build
from formats.fields import RecordError
from formats.records import (
    Annotations,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
)

RECORDS = [DatasetRecord, ItemRecord, LabelSetRecord, Annotations, RatingTaskRecord, RatingRecord]

# JSON values as a parser gives them, numbers of every kind the checks tell apart among them.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0.0, 1.0, 2.5, -3.0, float("nan"), 10**400]),
    st.text(max_size=5),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def _outcome(build: Any, cls: type, value: Any) -> tuple[str, Any]:
    try:
        return "built", build(cls, value, "")
    except RecordError as error:
        return "refused", (error.field, error.reason)


def _valid(cls: type) -> dict[str, Any]:
    """One value of each record's shape, every field given: nested records as one plain example each."""
    examples: dict[type, dict[str, Any]] = {
        DatasetRecord: {
            "name": "d",
            "source_format": "canonical",
            "taxonomy": ["Object"],
            "is_synthetic": True,
        },
        ItemRecord: {
            "external_id": "a",
            "response": "One. Two.",
            "meta": {"n": 1, "x": [1.5]},
            "sentences": [{"start": 0, "end": 4}, {"start": 5, "end": 9}],
            "subset": None,
        },
        LabelSetRecord: {"kind": "gold", "name": "g", "meta": {}},
        Annotations: {
            "item": "a",
            "spans": [{"start": 0, "end": 3, "type": "Object"}],
            "sentence_labels": [{"index": 0, "label": "incorrect", "meta": {"w": 1}}],
            "sentence_scores": [{"index": 1, "score": 3}],
            "raw_output": {"text": "t", "follows_format": True},
        },
        RatingTaskRecord: {"name": "t", "detector": "d", "rubric": {"1": "bad"}},
        RatingRecord: {"item": "a", "rater": "r", "score": 2.5},
    }
    return examples[cls]


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_a_plain_record_is_built_as_the_checked_way_builds_it(cls: type) -> None:
    value = _valid(cls)
    built = _build(cls, value, "")
    assert built == _checked_build(cls, value, "")
    assert dataclasses.asdict(built) == dataclasses.asdict(_checked_build(cls, value, ""))


@pytest.mark.parametrize(
    ("cls", "value", "field", "message"),
    [
        (
            RatingRecord,
            {"item": "a", "rater": "r", "score": True},
            "score",
            "expected a number, got true/false",
        ),
        (ItemRecord, {"external_id": "a", "response": 3}, "response", "expected text, got int"),
        (
            ItemRecord,
            {"external_id": "a", "response": "r", "sentences": [{"start": 0, "end": 1.5}]},
            None,
            None,
        ),
        (Annotations, {"item": "a", "spans": [{"start": 0}]}, "spans[0].end", "missing"),
        (
            Annotations,
            {"item": "a", "sentence_labels": [{"index": 0, "label": "x", "colour": 1}]},
            None,
            None,
        ),
        (LabelSetRecord, {"kind": "gold"}, "name", "missing"),
    ],
)
def test_a_record_off_its_shape_is_refused_as_the_checked_way_refuses_it(
    cls: type, value: dict[str, Any], field: str | None, message: str | None
) -> None:
    outcome = _outcome(_build, cls, value)
    assert outcome == _outcome(_checked_build, cls, value)
    assert outcome[0] == "refused"
    if field is not None:
        assert outcome[1][0] == field
        assert message in outcome[1][1]


def test_whole_numbers_the_checked_way_takes_are_taken() -> None:
    """An integral float where an integer is asked for is the checked way's to take: it is, as an int."""
    value = {"item": "a", "spans": [{"start": 0.0, "end": 3.0}]}
    built = _build(Annotations, value, "")
    assert built == _checked_build(Annotations, value, "")
    assert type(built.spans[0].start) is int


@settings(max_examples=400, deadline=None)
@given(
    cls=st.sampled_from(RECORDS),
    changes=st.dictionaries(
        st.sampled_from(
            ["item", "name", "spans", "sentence_labels", "score", "meta", "sentences", "kind", "x"]
        ),
        JSON,
        max_size=3,
    ),
    drop=st.sets(st.sampled_from(["item", "name", "kind", "external_id", "response", "rater", "score"])),
)
def test_any_value_gives_what_the_checked_way_gives(
    cls: type, changes: dict[str, Any], drop: set[str]
) -> None:
    value = {k: v for k, v in {**_valid(cls), **changes}.items() if k not in drop}
    assert _outcome(_build, cls, value) == _outcome(_checked_build, cls, value)


@settings(max_examples=200, deadline=None)
@given(value=JSON)
def test_any_json_as_a_span_list_gives_what_the_checked_way_gives(value: Any) -> None:
    record = {"item": "a", "spans": value, "sentence_scores": [value] if isinstance(value, dict) else []}
    assert _outcome(_build, Annotations, record) == _outcome(_checked_build, Annotations, record)
