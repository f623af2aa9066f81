"""A dataset's spans, placed on their items and mapped to tokens in one pass, must give every page the
per-item lists that mapping each item's spans one by one gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.dataset_spans import dataset_spans
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import ItemIndex, SpanColumns
from metrics import token_spans

GOLD = LabelSetView(7, 1, "gold", "gold", None, None, None)
DETECTOR = LabelSetView(3, 1, "detector", "d", None, "v1", "vanilla")
words = st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", "\u3000"]), max_size=25)
span = st.tuples(st.integers(0, 30), st.integers(1, 8), st.sampled_from([None, "Object", "Color"]))


def _index(texts: list[str], ids: list[int]) -> ItemIndex:
    n = len(texts)
    return ItemIndex(ids, [f"x{i}" for i in ids], ["s"] * n, ["m"] * n, ["image-to-text"] * n, texts)


def _columns(rows: list[tuple[int, int, int, int, str | None]]) -> SpanColumns:
    types = np.empty(len(rows), dtype=object)
    types[:] = [row[4] for row in rows]
    return SpanColumns(*(np.array([row[k] for row in rows], dtype=np.int64) for k in range(4)), types)


@settings(max_examples=150, deadline=None)
@given(st.lists(words, min_size=1, max_size=5), st.data())
def test_per_item_lists_equal_mapping_each_item_alone(texts, data):
    ids = data.draw(st.permutations([10 * k + 5 for k in range(len(texts))]))  # ids not in dataset order
    chosen = data.draw(
        st.lists(st.tuples(st.sampled_from([GOLD.id, DETECTOR.id]), st.integers(0, len(texts) - 1), span))
    )
    rows = [(ls, ids[k], s, s + n, t) for ls, k, (s, n, t) in chosen]
    rows.append((DETECTOR.id, 999, 0, 1, None))  # an item written after the index was read
    flags = data.draw(st.dictionaries(st.sampled_from([*ids, 0, 999, 10**6]), st.booleans()))
    spans = dataset_spans(
        _index(texts, ids), [GOLD, DETECTOR], _columns(rows), {DETECTOR.id: {ids[0]: False}, GOLD.id: flags}
    )

    def key(span: tuple[int, int, str | None]) -> tuple[int, int, str]:
        return span[0], span[1], str(span[2])

    for view in (GOLD, DETECTOR):
        for k, text in enumerate(texts):
            mine = sorted(
                ((s, e, t) for ls, item, s, e, t in rows if ls == view.id and item == ids[k]), key=key
            )
            assert sorted(spans.char_spans[view.id][k], key=key) == mine
            assert spans.token_spans[view.id][k] == token_spans(text, [(s, e) for s, e, _ in mine])
    assert spans.follows_format[DETECTOR.id].tolist() == [False] + [True] * (len(texts) - 1)
    # Flags of items outside the index (0, 999, 10**6) are left out; an item without a flag followed it.
    assert spans.follows_format[GOLD.id].tolist() == [flags.get(i, True) for i in ids]
    assert spans.with_outputs == ({DETECTOR.id, GOLD.id} if flags else {DETECTOR.id})
    assert spans.has_spans(GOLD.id) == any(ls == GOLD.id for ls, *_ in chosen)
    assert spans.gold_packed.n_items == len(texts)
