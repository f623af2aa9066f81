"""MMHal-Bench's measures on hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics import HALLUCINATION_BELOW, exact_agreement, response_score_summary


def test_average_and_hallucination_rate_overall_and_per_type() -> None:
    scores = [6, 5, 2, 3, 0, 1, 4, 2.5]
    types = [
        "attribute",
        "counting",
        "attribute",
        "counting",
        "relation",
        "attribute",
        "relation",
        "counting",
    ]
    summary = response_score_summary(scores, types)
    assert summary["n"] == 8
    assert summary["average"] == pytest.approx(23.5 / 8)
    # Rated below 3: 2, 0, 1 and 2.5 -> 4 of 8.
    assert summary["hallucination_rate"] == 0.5
    assert list(summary["by_group"]) == ["attribute", "counting", "relation"]
    assert summary["by_group"]["attribute"] == {
        "n": 3,
        "average": 3.0,
        "hallucination_rate": pytest.approx(2 / 3),
    }
    assert summary["by_group"]["counting"] == {
        "n": 3,
        "average": pytest.approx(10.5 / 3),
        "hallucination_rate": pytest.approx(1 / 3),
    }
    assert summary["by_group"]["relation"] == {"n": 2, "average": 2.0, "hallucination_rate": 0.5}


def test_three_is_not_a_hallucination_and_the_cut_can_move() -> None:
    assert HALLUCINATION_BELOW == 3
    assert response_score_summary([3, 3], [None, None])["hallucination_rate"] == 0.0
    assert (
        response_score_summary(np.array([3.0, 4.0]), ["a", "a"], hallucination_below=4)["hallucination_rate"]
        == 0.5
    )


@pytest.mark.parametrize(
    ("scores", "groups", "message"),
    [([], [], "no scores"), ([1, math.nan], ["a", "b"], "NaN"), ([1, 2], ["a"], "same length")],
)
def test_bad_input_is_refused(scores, groups, message) -> None:
    with pytest.raises(ValueError, match=message):
        response_score_summary(scores, groups)


def test_exact_agreement() -> None:
    assert exact_agreement([True, False, True, None], [True, True, True, None]) == 0.75
    assert exact_agreement([1.0, 2.0], [1, 3]) == 0.5
    with pytest.raises(ValueError, match="no pairs"):
        exact_agreement([], [])
    with pytest.raises(ValueError, match="same length"):
        exact_agreement([1], [1, 2])
