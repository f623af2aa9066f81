"""Recognising a file whose first record is longer than what sniffers look at: its keys sit after its
long values, past any fixed head, and a sound file was "not recognised"."""

from __future__ import annotations

import json

import pytest

from formats.registry import best_guess, choose_format, get_format
from formats.text import SNIFF_RUN, data_parts, sniff_head, sniff_view

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


def _localization_csv(first_output: str) -> bytes:
    rows = [f'm,s,a.jpg,0,"{first_output}"', "m,s,a.jpg,1,A [red]dog sits.", "m,s,b.jpg,0,Two cats."]
    return ("model,image_source,image_name,sentence_index,output\n" + "\n".join(rows) + "\n").encode()


@pytest.mark.parametrize("part", [1000, 1 << 16])
def test_a_csv_whose_first_row_holds_a_long_cell_is_seen_past_it(part: int) -> None:
    """An AlignBench localization CSV whose first output holds 100,000 characters: its [red] marks lay past
    what sniffers look at, and the file was taken for scores, its outputs read as numbers."""
    data = _localization_csv("A cat, on a mat; " * 6000 + "on a [red]mat.")
    view = sniff_head(data, data_parts(data, part))
    assert view.startswith(data[:80]) and len(view) < 4 * SNIFF_RUN
    assert view.endswith(b'on a [red]mat."\nm,s,a.jpg,1,A [red]dog sits.\nm,s,b.jpg,0,Two cats.\n')
    assert best_guess(data, "outputs.csv", "predictions") == get_format("alignbench-localization")
    short = _localization_csv("A cat on a [red]mat.")
    assert sniff_head(short, data_parts(short, part)) == short


def test_a_csv_view_cuts_long_unquoted_cells_and_keeps_rows_of_short_ones() -> None:
    rows = "".join(f"m,s,i{k}.jpg,{k},A cat.\n" for k in range(50_000))
    data = (
        "model,image_source,image_name,sentence_index,output\nm,s,a.jpg,0," + "x" * 300_000 + "\n"
    ).encode()
    for part in (999, 1 << 16):
        assert sniff_head(rows.encode(), data_parts(rows.encode(), part)) == rows.encode()[: 1 << 20]
        view = sniff_head(data + rows.encode(), data_parts(data + rows.encode(), part))
        assert view.startswith(data[:1000]) and b"x" * SNIFF_RUN not in view and len(view) == 1 << 20
        assert rows.encode().startswith(view[view.index(b"\nm,s,i0.jpg") + 1 :])
