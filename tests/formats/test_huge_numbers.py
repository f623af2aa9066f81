"""A whole number written in full past a float's range (JSON reads it as an exact integer) is refused
as the record's flaw, naming the field, by every reader that takes a number, never an internal error."""

from __future__ import annotations

import pytest

from formats import alignbench, canonical, halloc_probs, mmhal, ratings
from formats.base import ReadOptions
from formats.fields import RecordError, as_float
from formats.mapping_spec import ImportMapping, MappingError
from formats.preview import preview_file
from formats.registry import get_format, read_file

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


# A whole number longer than Python reads from text (``sys.get_int_max_str_digits()``, 4,300 digits).
OVERLONG = "1" + "0" * 5000
OVERLONG_FILES = {
    "mhalo": f'[{{"id": "a", "prompt": "p", "test_solution": "x", "hallucinated_solution": "x", "n": {OVERLONG}}}]',
    "trihe": f'{{"1": {{"instance": [], "triplets": [], "all_object": [{OVERLONG}], "object": []}}}}',
    "canonical": '{"record": "dataset", "format_version": 1, "name": "c", "source_format": "canonical"}\n'
    f'{{"record": "item", "external_id": "x", "response": "a b", "sentences": [{{"start": 0, "end": {OVERLONG}}}]}}\n',
    "alignbench": '{"model": "m", "image_name": "i.jpg", "sentence_index": 0, "caption": "One.", '
    f'"annotation": "correct", "n_correct": {OVERLONG}}}\n',
    "mmhal-ratings": f'[{{"id": "a", "rating": {OVERLONG}}}]',
}


@pytest.mark.parametrize("format_name", sorted(OVERLONG_FILES))
def test_a_whole_number_too_long_to_read_is_reported_where_it_stands(format_name: str) -> None:
    result = read_file(get_format(format_name), OVERLONG_FILES[format_name].encode(), "f.json", ReadOptions())
    reasons = [p.reason for p in result.errors]
    assert len(reasons) == 1 and "internal error" not in reasons[0], reasons
    assert "a whole number of 5,001 digits" in reasons[0] and "column" in reasons[0]


def test_the_preview_of_a_long_files_head_reports_an_overlong_number() -> None:
    head = OVERLONG_FILES["mhalo"].encode()
    preview = preview_file("mhalo", head, source="f.json", options=ReadOptions(), complete=False)
    assert preview.n_errors == 0 and preview.n_items == 0  # the head holds no whole record to show


def test_a_mapping_with_an_overlong_number_is_a_mapping_error() -> None:
    with pytest.raises(MappingError) as refused:
        ImportMapping.from_json('{"version": ' + OVERLONG + "}")
    assert "a whole number of 5,001 digits" in str(refused.value.problems)
