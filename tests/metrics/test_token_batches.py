"""Mapping many texts' character spans to tokens at once must equal :func:`metrics.token_spans` text by
text, whatever the whitespace (Unicode's included), the spans' positions and the block size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import token_batches, token_spans
from metrics.token_batches import token_spans_many

# Word characters and every kind of separator str.isspace() knows, astral and lone surrogates included.
CHARS = [
    "a",
    "é",
    "字",
    "\U0001f600",
    "\ud800",
    " ",
    "\t",
    "\n",
    "\x1c",
    "\x85",
    "\u00a0",
    "\u2028",
    "\u3000",
]
texts = st.lists(st.text(alphabet=st.sampled_from(CHARS), max_size=30), min_size=1, max_size=6)


def test_no_code_point_past_the_table_is_whitespace():
    assert not any(chr(c).isspace() for c in range(token_batches._LAST_SPACE + 1, 0x110000))


@settings(max_examples=300, deadline=None)
@given(texts, st.data(), st.sampled_from([1, 7, 40, token_batches.BLOCK_CHARS]))
def test_equals_token_spans_text_by_text(many_texts, data, block):
    spans = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(many_texts) - 1), st.integers(0, 35), st.integers(1, 12)),
            max_size=25,
        )
    )
    of = np.array([t for t, _, _ in spans], dtype=np.int64)
    starts = np.array([s for _, s, _ in spans], dtype=np.int64)
    ends = starts + np.array([n for _, _, n in spans], dtype=np.int64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(token_batches, "BLOCK_CHARS", block)
        first, stop, kept = token_spans_many(many_texts, of, starts, ends)
    for k, (t, s, _) in enumerate(spans):
        expected = token_spans(many_texts[t], [(s, int(ends[k]))])
        assert ([(int(first[k]), int(stop[k]))] if kept[k] else []) == expected


def test_no_spans():
    first, stop, kept = token_spans_many(["a b"], np.zeros(0), np.zeros(0), np.zeros(0))
    assert first.size == stop.size == kept.size == 0
