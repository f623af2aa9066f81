"""Snapping a marked span to whole words, as the span selector does and the store enforces."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.word_spans import snap_to_words
from metrics import token_spans

# ------------------------------------------------------------------------------------- snap_to_words


def _snapped(text: str, start: int, end: int) -> str | None:
    found = snap_to_words(text, start, end)
    return None if found is None else text[found[0] : found[1]]


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        ("ts in th", "sits in the"),  # a drag from mid-word to mid-word
        ("sits", "sits"),  # whole words stay as they are
        (" in ", "in"),  # outer white space goes
        ("left", "left"),  # punctuation the span stopped short of stays out …
        ("left.", "left."),  # … and what it reached stays in
        ("lef", "left."),  # a cut word gets its whole token
        ("2.5c", "2.5cm"),
        ("n't", "don't"),
        ("cube", "<b>cube</b>."),  # not "b>cube</b": the left-out part is more than punctuation
    ],
)
def test_snap_to_words_widens_to_whole_tokens(marked: str, expected: str) -> None:
    text = "A cat sits in the bottom left. It is 2.5cm and I don't see 🐱x <b>cube</b>."
    start = text.index(marked)
    assert _snapped(text, start, start + len(marked)) == expected


def test_snap_to_words_counts_code_points_and_refuses_white_space() -> None:
    text = "a🐱b cd"
    assert _snapped(text, 2, 3) == "a🐱b"  # "b": the third code point
    assert snap_to_words(text, 3, 4) is None
    with pytest.raises(ValueError, match="outside"):
        snap_to_words(text, 0, 99)


@given(st.text(alphabet="ab .,\n🐱", max_size=30), st.data())
@settings(max_examples=200, deadline=None)
def test_snapping_keeps_the_tokens_mhalo_scores(text: str, data: st.DataObject) -> None:
    """The snapped span covers exactly the tokens the marked one touches, and snaps to itself."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    found = snap_to_words(text, start, end)
    if found is None:
        assert start == end or token_spans(text, [(start, end)]) == []
        return
    assert token_spans(text, [found]) == token_spans(text, [(start, end)])
    assert snap_to_words(text, *found) == found
