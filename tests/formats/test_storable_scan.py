"""Whether an input may hold a value no store can keep is told from its bytes, in memory or read from
disk a part at a time, and never says "clean" of an input that holds one."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from formats.records import Annotations, ItemRecord, SentenceLabelRecord, SpanRecord
from formats.storable import (
    bytes_may_hold_unstorable,
    file_may_hold_unstorable,
    records_may_hold_unstorable,
    unstorable,
)

MARKS = ["\x00", "NaN", "-Infinity", "\\u0000", "\\ud800", "\\uDBff", "1e999", "2E+400", "9" * 200]


@given(
    st.lists(st.sampled_from(["a", " ", "0", "1", "e", "E", "+", ",", '"', "\\", "u", *MARKS]), max_size=60),
    st.integers(min_value=1, max_value=40),
    st.booleans(),
)
def test_a_file_read_in_parts_is_judged_as_its_whole_bytes(pieces: list[str], part: int, json_: bool) -> None:
    """A mark split across two parts is still seen: every part is searched with the end of the one before."""
    data = "".join(pieces).encode()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.jsonl"
        path.write_bytes(data)
        assert file_may_hold_unstorable(path, json=json_, part=part) == bytes_may_hold_unstorable(
            data, json=json_
        )


_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_VALUES)
def test_json_holding_an_unstorable_value_is_never_called_clean(value) -> None:
    """Sound for what ``json.dumps`` writes: NaN, infinities, and NUL and lone surrogates as escapes."""
    text = json.dumps(value)
    if unstorable(json.loads(text)) is not None:
        assert bytes_may_hold_unstorable(text.encode(), json=True)


_NUMBERS = st.builds(
    "{}{}{}{}".format,
    st.sampled_from(["", "-"]),
    st.one_of(  # short, or near the length past which a float overflows (309 digits)
        st.text("0123456789", min_size=1, max_size=20),
        st.integers(min_value=180, max_value=420).map(lambda n: "9" * n),
    ).map(lambda digits: digits.lstrip("0") or "0"),
    st.sampled_from(["", ".5", "." + "9" * 250]),
    st.sampled_from(["", "e", "E", "e+", "E-", "e-"]).flatmap(
        lambda e: st.just("") if not e else st.text("0123456789", min_size=1, max_size=4).map(lambda x: e + x)
    ),
)


@given(_NUMBERS)
def test_a_number_json_reads_as_an_infinity_is_never_called_clean(number: str) -> None:
    """Written as digits, with no word: a long mantissa or a large exponent overflows a float."""
    text = f'{{"x": [{number}]}}'
    if unstorable(json.loads(text)) is not None:
        assert bytes_may_hold_unstorable(text.encode(), json=True)


def test_numbers_json_reads_as_infinities_are_seen_though_no_word_is_written() -> None:
    for text in ("[1e999]", "[-1E+309]", '{"x": ' + "1" * 400 + ".5}"):
        assert unstorable(json.loads(text)) is not None
        assert bytes_may_hold_unstorable(text.encode(), json=True)
    assert not bytes_may_hold_unstorable(b'{"x": 1e99, "y": "caf\\u00e9"}', json=True)


_TEXT_WITH_MARKS = st.text() | st.builds(
    "{}{}{}".format,
    st.text(max_size=3),
    st.sampled_from(["\x00", "\ud800", "\udfff", "\\u0000"]),
    st.text(max_size=3),
)
_RECORDS = st.builds(
    Annotations,
    st.text(),
    spans=st.lists(
        st.builds(SpanRecord, st.integers(0, 9), st.integers(10, 20), type=st.none() | _TEXT_WITH_MARKS),
        max_size=3,
    ),
    sentence_labels=st.lists(
        st.builds(
            SentenceLabelRecord,
            st.integers(0, 5),
            _TEXT_WITH_MARKS,
            meta=st.dictionaries(_TEXT_WITH_MARKS, _VALUES | _TEXT_WITH_MARKS, max_size=3),
        ),
        max_size=3,
    ),
)


@given(
    st.lists(
        _RECORDS
        | st.builds(
            ItemRecord,
            _TEXT_WITH_MARKS,
            _TEXT_WITH_MARKS,
            meta=st.dictionaries(st.text(), _VALUES, max_size=3),
        ),
        max_size=4,
    )
)
def test_records_holding_an_unstorable_value_are_never_called_clean(records) -> None:
    """The screen of a bundle built in memory is sound: whatever the walk finds, the screen suspects."""
    if unstorable(records) is not None:
        assert records_may_hold_unstorable(records)


def test_the_walk_names_a_records_fields_as_a_dicts_keys() -> None:
    record = Annotations(
        "a", sentence_labels=[SentenceLabelRecord(0, "correct", meta={"p": [1.0, float("inf")]})]
    )
    assert unstorable([record], "run")[0] == "run[0].sentence_labels[0].meta.p[1]"
    assert records_may_hold_unstorable(record) and not records_may_hold_unstorable(Annotations("a"))


def test_records_with_slots_and_mappings_of_other_kinds_are_read_as_the_walk_reads_them() -> None:
    @dataclass(slots=True)
    class Slotted:
        text: str

    class Lazy(Mapping):  # a mapping whose items are not its attributes
        def __getitem__(self, key: str) -> str:
            return "a\x00b"

        def __iter__(self) -> Iterator[str]:
            return iter(["k"])

        def __len__(self) -> int:
            return 1

    for value, field in ((Slotted("a\x00b"), "text"), ({"outer": Lazy()}, "outer.k")):
        assert unstorable(value)[0] == field and records_may_hold_unstorable(value)
    assert not records_may_hold_unstorable(Slotted("fine"))
    deep: list = []
    for _ in range(5000):  # deeper than JSON's recursion: suspect, not an error
        deep = [deep]
    assert records_may_hold_unstorable(deep)
