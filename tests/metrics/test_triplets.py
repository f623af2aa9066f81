"""HalluQ and HalluI (Tri-HE section 3.2)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import hallu_rates


def _answer(image, question, hallucinated, total):
    return {"image_id": image, "question_id": question, "hallucinated": hallucinated, "total": total}


def test_hand_example():
    records = [
        _answer("img1", "q1", 1, 2),  # 0.5
        _answer("img1", "q2", 0, 4),  # 0.0
        _answer("img2", "q3", 3, 3),  # 1.0
    ]
    result = hallu_rates(records)
    assert result["hallu_q"] == pytest.approx(100 * (0.5 + 0.0 + 1.0) / 3)
    assert result["hallu_i"] == pytest.approx(100 * (0.25 + 1.0) / 2)


def test_answers_without_triplets_are_skipped_and_so_are_emptied_images():
    records = [_answer("img1", "q1", 1, 4), _answer("img1", "q2", 0, 0), _answer("img2", "q3", 0, 0)]
    assert hallu_rates(records) == {"hallu_q": 25.0, "hallu_i": 25.0}


def test_no_triplets_at_all_raises():
    with pytest.raises(ValueError, match="no answer"):
        hallu_rates([_answer("a", "q", 0, 0)])
    with pytest.raises(ValueError, match="no answer"):
        hallu_rates([])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"image_id": "a", "hallucinated": 1}, "lacks total"),
        (_answer("a", "q", 3, 2), "more hallucinated"),
        (_answer("a", "q", -1, 2), "negative"),
        (_answer("a", "q", 0.5, 2), "integer"),
        (_answer(["a"], "q", 1, 2), "hashable"),
        ("a", "mapping"),
    ],
)
def test_invalid_records(record, message):
    with pytest.raises(ValueError, match=message):
        hallu_rates([record])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=20))
def test_one_answer_per_image_makes_both_rates_equal(rows):
    records = [_answer(i, i, min(h, t), t) for i, (_, t, h) in enumerate(rows)]
    result = hallu_rates(records)
    assert result["hallu_q"] == pytest.approx(result["hallu_i"])
    assert 0.0 <= result["hallu_q"] <= 100.0
