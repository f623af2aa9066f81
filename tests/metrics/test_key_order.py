"""``lex_order`` must give exactly ``np.lexsort``'s order, whether it packs the keys or falls back."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from metrics.key_order import distinct_values, first_appearance_codes, lex_order

DTYPES = st.sampled_from([np.int64, np.int32, np.uint8, np.uint64, np.bool_])


@st.composite
def keys(draw: st.DrawFn) -> list[np.ndarray]:
    n = draw(st.integers(0, 60))
    out = []
    for _ in range(draw(st.integers(1, 5))):
        dtype = np.dtype(draw(DTYPES))
        if dtype.kind == "b":
            elements = st.booleans()
        else:
            info = np.iinfo(dtype)
            # narrow ranges pack into one int64; the full ranges make the product overflow and fall back
            low, high = draw(st.sampled_from([(0, 3), (0, 1000), (int(info.min), int(info.max))]))
            low = max(low, int(info.min))
            elements = st.integers(low, min(high, int(info.max)))
            if dtype.kind == "i" and draw(st.booleans()):
                elements = st.integers(max(-50, int(info.min)), 50)
        out.append(draw(hnp.arrays(dtype, n, elements=elements)))
    return out


@settings(max_examples=400, deadline=None)
@given(keys())
def test_lex_order_is_lexsort(found: list[np.ndarray]) -> None:
    assert lex_order(found).tolist() == np.lexsort(found).tolist()


def test_float_keys_and_wide_ranges_are_sorted_as_lexsort_does() -> None:
    floats = np.array([0.5, -1.0, 0.5, 2.0])
    wide = np.array([2**62, -(2**62), 0, 5], dtype=np.int64)
    small = np.array([1, 0, 1, 0])
    assert lex_order((small, floats)).tolist() == np.lexsort((small, floats)).tolist()
    assert lex_order((wide, small)).tolist() == np.lexsort((wide, small)).tolist()


def test_keys_must_be_one_dimensional_of_one_length() -> None:
    with pytest.raises(ValueError, match="same length"):
        lex_order((np.arange(3), np.arange(4)))
    with pytest.raises(ValueError, match="at least one key"):
        lex_order(())


int_values = st.one_of(
    hnp.arrays(np.int64, st.integers(0, 50), elements=st.integers(-5, 30)),
    hnp.arrays(np.uint8, st.integers(0, 50)),
    hnp.arrays(np.int64, st.integers(0, 50), elements=st.integers(-(2**62), 2**62)),  # too wide: sorted
    hnp.arrays(np.bool_, st.integers(0, 50)),
    hnp.arrays(np.int8, st.integers(0, 50)),  # from -128 to 127: the values come back in their own dtype
    hnp.arrays(np.uint64, st.integers(0, 50), elements=st.integers(2**64 - 40, 2**64 - 1)),
    st.lists(st.integers(-3, 3), max_size=20).map(np.array),
)


@settings(max_examples=300, deadline=None)
@given(int_values)
def test_distinct_values_are_uniques(values: np.ndarray) -> None:
    found = distinct_values(values)
    assert found.dtype == np.unique(values).dtype and found.tolist() == np.unique(values).tolist()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(int_values, hnp.arrays("U3", st.integers(0, 30), elements=st.sampled_from(["b", "a", "cc"])))
)
def test_first_appearance_codes_number_values_as_they_first_appear(values: np.ndarray) -> None:
    names, codes = first_appearance_codes(values)
    expected: dict[object, int] = {}
    for value in values.tolist():
        expected.setdefault(value, len(expected))
    assert names.tolist() == list(expected)
    assert codes.tolist() == [expected[v] for v in values.tolist()]


def test_distinct_values_of_a_list_are_uniques() -> None:
    assert distinct_values([3, 1, 3]).tolist() == [1, 3]
    names, codes = first_appearance_codes([3, 1, 3])
    assert (names.tolist(), codes.tolist()) == ([3, 1], [0, 1, 0])
