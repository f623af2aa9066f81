"""Per-item human scores (mean per rater, then across raters) and rater agreement on rated segments."""

from __future__ import annotations

import math

import pytest

from analysis.rating_scores import (
    interval_alpha,
    item_means,
    nothing_flagged_judgments,
    rater_item_means,
    segment_units,
    summarise,
)

# Krippendorff (2011), section C: 4 observers (raters) x 12 units (here: segments of 3 items).
_OBSERVERS = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _columns(rows: list[tuple]) -> dict[str, list]:
    names = ["item_id", "rater", "segment_start", "segment_end", "score"]
    return {name: [row[k] for row in rows] for k, name in enumerate(names)}


def test_mean_per_rater_then_across_raters() -> None:
    # r1 rates both segments (4 and 1), r2 only the first (3): (2.5 + 3) / 2, not the pooled 8 / 3.
    items, raters, scores = ["a", "a", "a", "b"], ["r1", "r1", "r2", "r1"], [4.0, 1.0, 3.0, 2.0]
    assert rater_item_means(items, raters, scores) == {("a", "r1"): 2.5, ("a", "r2"): 3.0, ("b", "r1"): 2.0}
    assert item_means(items, raters, scores) == {"a": 2.75, "b": 2.0}


def test_nothing_flagged_judgments_are_not_scores() -> None:
    items, raters, scores = ["a", "a", "b"], ["r1", "r2", "r1"], [None, 4.0, None]
    assert item_means(items, raters, scores) == {"a": 4.0}
    assert nothing_flagged_judgments([True, None, False, True]) == (2, 3)
    with pytest.raises(ValueError, match="one entry per rating"):
        item_means(["a"], ["r1", "r2"], [1.0])


def test_units_are_segments_with_one_value_per_rater() -> None:
    rows = [
        ("x", "r2", 0, 4, 3.0),
        ("x", "r1", 0, 4, 4.0),
        ("x", "r1", 5, 9, 1.0),
        ("y", "r1", -1, -1, None),  # a "nothing flagged" answer: no score
    ]
    c = _columns(rows)
    units = segment_units(c["item_id"], c["segment_start"], c["segment_end"], c["rater"], c["score"])
    assert units == [[4.0, 3.0], [1.0]]


def test_alpha_over_segments_matches_krippendorffs_worked_example() -> None:
    rows = []
    for rater, values in _OBSERVERS.items():
        for unit, value in enumerate(values):
            item = f"item-{unit // 4}"  # four segments per item
            start = (unit % 4) * 10
            rows.append((item, rater, start, start + 5, None if value is None else float(value)))
    c = _columns(rows)
    alpha = interval_alpha(c["item_id"], c["segment_start"], c["segment_end"], c["rater"], c["score"])
    assert round(alpha, 3) == 0.849


def test_alpha_is_none_without_a_doubly_rated_segment() -> None:
    c = _columns([("x", "r1", 0, 4, 4.0), ("x", "r2", 5, 9, 2.0)])
    assert interval_alpha(c["item_id"], c["segment_start"], c["segment_end"], c["rater"], c["score"]) is None


def _ratings_columns() -> dict[str, list]:
    rows = [
        # task, item, rater, start, end, score, nothing flagged right
        (1, 10, "r1", 0, 4, 4.0, None),
        (1, 10, "r1", 6, 9, 1.0, None),
        (1, 10, "r2", 0, 4, 3.0, None),
        (1, 11, "r1", -1, -1, None, True),
        (2, 10, "r1", -1, -1, 5.0, None),
        (2, 10, "r2", -1, -1, 4.0, None),
    ]
    names = [
        "task_id",
        "item_id",
        "rater",
        "segment_start",
        "segment_end",
        "score",
        "nothing_flagged_correct",
    ]
    columns = {name: [row[k] for row in rows] for k, name in enumerate(names)}
    columns["task"] = ["segments" if t == 1 else "responses" for t in columns["task_id"]]
    columns["detector_label_set_id"] = [7] * len(rows)
    columns["granularity"] = ["segment" if t == 1 else "response" for t in columns["task_id"]]
    return columns


def test_summary_of_a_task() -> None:
    c = _ratings_columns()
    keep = [k for k, t in enumerate(c["task_id"]) if t == 1]
    columns = {name: [values[k] for k in keep] for name, values in c.items()}
    columns["external_id"] = [f"item-{i}" for i in columns["item_id"]]
    columns["position"] = columns["item_id"]
    found = summarise(columns)
    assert found.n_ratings == 4
    assert found.raters[["rater", "scores", "items", "nothing_flagged_judged"]].values.tolist() == [
        ["r1", 2, 2, 1],
        ["r2", 1, 1, 0],
    ]
    assert found.items.to_dict("records") == [
        {
            "external_id": "item-10",
            "mean · r1": 2.5,
            "mean · r2": 3.0,
            "human_score": 2.75,
            "n_raters": 2,
            "n_segments": 2,
        }
    ]
    assert found.paired_units == 1
    assert found.nothing_flagged == (1, 1)
    assert found.alpha is not None and math.isfinite(found.alpha)
    assert summarise({name: [] for name in columns}).alpha is None
