"""What a rating campaign says: each item's human score, and how far the raters agree.

MHALO (section 5.1) scores every predicted segment of a detector on its 1–4 scale and takes "the
average of the scores of all predicted hallucination segments" as the item's score. With several raters
the mean is taken per rater first and then across raters, so a rater who rated more of an item's
segments does not weigh more than one who rated fewer. Agreement is Krippendorff's alpha at the interval
level (as Tri-HE section 5.3 reports for its 5-point scale), with each rated segment (or whole response)
a unit and each rater a coder.

Inputs are plain columns, as :func:`db.repositories.report_inputs.ratings` returns them; a NULL score (a
"nothing flagged" judgment) is not a score and is left out of means and agreement.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from metrics import krippendorff_alpha

Item = TypeVar("Item", bound=Hashable)


def _scored(
    items: Sequence[Item], raters: Sequence[Hashable], scores: Sequence[float | None]
) -> list[tuple[Item, Hashable, float]]:
    if not len(items) == len(raters) == len(scores):
        raise ValueError(
            f"items, raters and scores must have one entry per rating, got {len(items)}, "
            f"{len(raters)} and {len(scores)}"
        )
    return [(i, r, float(s)) for i, r, s in zip(items, raters, scores, strict=True) if s is not None]


def rater_item_means(
    items: Sequence[Item], raters: Sequence[Hashable], scores: Sequence[float | None]
) -> dict[tuple[Item, Hashable], float]:
    """``(item, rater) → mean`` of that rater's segment scores on the item (MHALO's per-item average).

    >>> rater_item_means(["a", "a", "a"], ["r1", "r1", "r2"], [4, 1, 3])
    {('a', 'r1'): 2.5, ('a', 'r2'): 3.0}
    """
    grouped: dict[tuple[Item, Hashable], list[float]] = defaultdict(list)
    for item, rater, score in _scored(items, raters, scores):
        grouped[(item, rater)].append(score)
    return {key: math.fsum(values) / len(values) for key, values in grouped.items()}


def item_means(
    items: Sequence[Item], raters: Sequence[Hashable], scores: Sequence[float | None]
) -> dict[Item, float]:
    """``item → human score``: the mean over raters of each rater's mean segment score.

    Items with no numeric score (nothing rated, or only "nothing flagged" judgments) are absent.

    >>> item_means(["a", "a", "a"], ["r1", "r1", "r2"], [4, 1, 3])  # (2.5 + 3) / 2, not 8 / 3
    {'a': 2.75}
    """
    per_item: dict[Item, list[float]] = defaultdict(list)
    for (item, _), mean in rater_item_means(items, raters, scores).items():
        per_item[item].append(mean)
    return {item: math.fsum(means) / len(means) for item, means in per_item.items()}


def segment_units(
    items: Sequence[Hashable],
    starts: Sequence[int],
    ends: Sequence[int],
    raters: Sequence[Hashable],
    scores: Sequence[float | None],
) -> list[list[float]]:
    """The ratings grouped by unit — one rated segment (``-1/-1``: the whole response) of one item —
    with one value per rater who scored it, in a stable order (for :func:`interval_alpha`)."""
    if not len(starts) == len(ends) == len(items):
        raise ValueError("items, starts and ends must have one entry per rating")
    units: dict[tuple[Hashable, int, int], dict[Hashable, float]] = defaultdict(dict)
    for item, start, end, rater, score in zip(items, starts, ends, raters, scores, strict=True):
        if score is not None:
            units[(item, int(start), int(end))][rater] = float(score)
    return [
        [by_rater[r] for r in sorted(by_rater, key=str)]
        for _, by_rater in sorted(units.items(), key=lambda kv: tuple(map(str, kv[0])))
    ]


def interval_alpha(
    items: Sequence[Hashable],
    starts: Sequence[int],
    ends: Sequence[int],
    raters: Sequence[Hashable],
    scores: Sequence[float | None],
) -> float | None:
    """Krippendorff's alpha (interval) over the rated segments, raters as coders; None when no segment
    has two or more scores (nothing to compare)."""
    units = segment_units(items, starts, ends, raters, scores)
    if not any(len(unit) >= 2 for unit in units):
        return None
    return krippendorff_alpha(units, level="interval")


def nothing_flagged_judgments(values: Sequence[bool | None]) -> tuple[int, int]:
    """``(right, judged)``: how many "the detector rightly flagged nothing" answers among those given."""
    given = [v for v in values if v is not None]
    return sum(1 for v in given if v), len(given)


@dataclass(frozen=True)
class TaskSummary:
    """What a rating task's page shows: who rated how much, each item's score, and agreement."""

    n_ratings: int
    raters: pd.DataFrame  # rater, scores, items, mean_score, nothing_flagged_right, nothing_flagged_judged
    items: pd.DataFrame  # external_id, "mean · <rater>" per rater, human_score, n_raters, n_segments
    alpha: float | None  # Krippendorff's alpha (interval); None when no segment has two scores
    paired_units: int  # segments (or responses) scored by two or more raters
    nothing_flagged: tuple[int, int]  # (judged right, judged) over "the detector flagged nothing" answers


def summarise(columns: Mapping[str, Sequence[Any]]) -> TaskSummary:
    """Summarise one task's ratings (:func:`db.repositories.rating_tasks.task_ratings` columns)."""
    frame = pd.DataFrame({name: list(values) for name, values in columns.items()})
    if frame.empty:
        empty = pd.DataFrame(columns=["rater", "scores", "items", "mean_score"])
        return TaskSummary(0, empty, pd.DataFrame(columns=["external_id", "human_score"]), None, 0, (0, 0))
    frame = frame.sort_values(["position", "rater", "segment_start", "segment_end"], kind="stable")
    scored = frame[frame["score"].notna()]
    raters = []
    for rater, group in frame.groupby("rater", sort=True):
        right, judged = nothing_flagged_judgments(list(group["nothing_flagged_correct"]))
        with_score = group[group["score"].notna()]
        raters.append(
            {
                "rater": rater,
                "scores": len(with_score),
                "items": group["item_id"].nunique(),
                "mean_score": float(with_score["score"].mean()) if len(with_score) else None,
                "nothing_flagged_right": right,
                "nothing_flagged_judged": judged,
            }
        )
    per_rater = rater_item_means(list(scored["external_id"]), list(scored["rater"]), list(scored["score"]))
    means = item_means(list(scored["external_id"]), list(scored["rater"]), list(scored["score"]))
    order = list(dict.fromkeys(scored["external_id"]))
    names = sorted(set(scored["rater"]), key=str)
    items = pd.DataFrame(
        {
            "external_id": order,
            **{f"mean · {r}": [per_rater.get((e, r)) for e in order] for r in names},
            "human_score": [means[e] for e in order],
            "n_raters": [sum((e, r) in per_rater for r in names) for e in order],
            "n_segments": [
                len(set(zip(g["segment_start"], g["segment_end"], strict=True)))
                for _, g in scored.groupby("external_id", sort=False)
            ],
        }
    )
    args = (
        list(scored["external_id"]),
        list(scored["segment_start"]),
        list(scored["segment_end"]),
        list(scored["rater"]),
        list(scored["score"]),
    )
    units = segment_units(*args)
    return TaskSummary(
        n_ratings=len(frame),
        raters=pd.DataFrame(raters),
        items=items,
        alpha=interval_alpha(*args),
        paired_units=sum(len(u) >= 2 for u in units),
        nothing_flagged=nothing_flagged_judgments(list(frame["nothing_flagged_correct"])),
    )
