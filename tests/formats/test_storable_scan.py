"""Whether an input may hold a value no store can keep is told from its bytes, in memory or read from
disk a part at a time, and never says "clean" of an input that holds one."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from formats.storable import bytes_may_hold_unstorable, file_may_hold_unstorable, unstorable

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
