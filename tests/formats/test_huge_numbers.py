"""A whole number written in full past a float's range (JSON reads it as an exact integer) is refused
as the record's flaw, naming the field, by every reader that takes a number, never an internal error."""

from __future__ import annotations

import pytest

from formats import alignbench, canonical, halloc_probs, mmhal, ratings
from formats.fields import RecordError, as_float

HUGE = 10**400


@pytest.mark.parametrize(
    ("convert", "field"),
    [
        (lambda: as_float(HUGE, "score"), "score"),
        (lambda: canonical._number(HUGE, "sentence_scores[0].score"), "sentence_scores[0].score"),
        (
            lambda: alignbench.typed_cell({"agreement_ratio": HUGE}, "agreement_ratio", float),
            "agreement_ratio",
        ),
        (lambda: mmhal._number(HUGE, "rating"), "rating"),
        (lambda: ratings._opt_score({"score": HUGE}), "score"),
        (lambda: halloc_probs._probability(HUGE, "tokens[0].probability"), "tokens[0].probability"),
    ],
)
def test_a_number_past_a_floats_range_is_the_records_flaw(convert, field: str) -> None:
    with pytest.raises(RecordError) as refused:
        convert()
    assert refused.value.field == field


def test_numbers_in_range_are_taken_as_before() -> None:
    assert as_float(10**300, "x") == 1e300 and as_float(2.5, "x") == 2.5
    assert (
        alignbench.typed_cell({"a": 3}, "a", float) == 3.0
        and alignbench.typed_cell({"a": "0.5"}, "a", float) == 0.5
    )
    assert halloc_probs._probability(1, "p") == 1.0
