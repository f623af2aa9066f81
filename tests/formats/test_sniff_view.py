"""Recognising a file whose first record is longer than what sniffers look at: its keys sit after its
long values, past any fixed head, and a sound file was "not recognised"."""

from __future__ import annotations

import json

import pytest

from formats.registry import best_guess, choose_format
from formats.text import SNIFF_RUN, data_parts, sniff_view

TAGGED = "A <hallucination>red</hallucination> cat."


def _mhalo(prompt: str = "p", response: str = "A red cat.") -> bytes:
    record = {"id": "big1", "prompt": prompt, "image": "a.jpg", "test_solution": response}
    record["hallucinated_solution"] = TAGGED if response == "A red cat." else response + TAGGED
    return json.dumps([record, {**record, "id": "small"}]).encode()


@pytest.mark.parametrize(
    "data",
    [_mhalo(prompt="p" * 100_000), _mhalo(response="word " * 400_000)],
    ids=["100,000-character prompt", "2 MB response"],
)
def test_a_first_record_longer_than_the_head_is_recognised(data: bytes) -> None:
    assert len(data) > 1 << 16
    guess = best_guess(data, "long.json", "benchmark")
    assert guess is not None and guess.name == "mhalo"
    assert choose_format(data, "long.json", None, "benchmark").name == "mhalo"


def test_the_view_keeps_every_quote_and_the_ends_of_long_runs() -> None:
    text = '[{"a": "' + "x" * 10 + "y" * 100_000 + "z" * 10 + '", "b": [' + "1, " * 5000 + '2], "c": "d"}]'
    for part in (7, 1000, 1 << 16):  # a run split over parts is cut as one
        view = sniff_view(data_parts(text.encode(), part)).decode()
        assert view.count('"') == text.count('"')
        assert view.startswith('[{"a": "xxxxxxxxxxyyy') and '"c": "d"}]' in view
        assert 'yyyzzzzzzzzzz", "b": [1, 1' in view and len(view) < 3 * SNIFF_RUN + 100


def test_a_file_of_short_values_is_seen_as_it_is() -> None:
    data = json.dumps([{"id": str(k), "text": "short " * 50} for k in range(20_000)]).encode()
    assert sniff_view(data_parts(data), 1 << 20) == data[: 1 << 20]
    assert sniff_view(data_parts(data[:1000]), 1 << 20) == data[:1000]
