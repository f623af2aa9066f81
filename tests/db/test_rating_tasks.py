"""Rating tasks: definition rules, blind per-rater reads, undoable ratings, importer checks, and the
correlation of F1_IoU with human ratings against a hand-computed Pearson value."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from analysis.dataset_spans import load_dataset_spans, per_item_scores
from analysis.reports import correlation as correlation_report
from analysis.reports.data import ReportFilter
from db import models as m
from db.access import OPERATOR
from db.import_changes import ReplaceRequired
from db.importer import import_bundle
from db.repositories import labeling, report_inputs
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from db.repositories.rating_tasks import (
    PRESETS,
    TaskLocked,
    TaskSpec,
    create_rating_task,
    get_rating_task,
    list_rating_tasks,
    my_ratings,
    rate,
    task_ratings,
    update_rating_task,
)
from formats.problems import ImportRejected
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    SpanRecord,
)
from metrics import correlations

# Five items whose per-item F1_IoU (whitespace tokens, threshold 0.5) is known by construction:
#   A  pred = gold                                   -> 1
#   B  2 pred, 2 gold, one pair matches             -> 2·1 / (2 + 2) = 1/2
#   C  1 pred, 1 gold elsewhere                      -> 0
#   D  2 pred, 1 gold, one pair matches             -> 2·1 / (2 + 1) = 2/3
#   E  nothing predicted, nothing in gold            -> 1, but no segment to score: no human score
TEXTS = {
    "A": "a red cat sits",
    "B": "one two three four",
    "C": "blue sky above",
    "D": "big dog small cat",
    "E": "all fine here",
}
GOLD = {"A": [(2, 5)], "B": [(0, 3), (8, 13)], "C": [(0, 4)], "D": [(4, 7)], "E": []}
PRED = {"A": [(2, 5)], "B": [(0, 3), (14, 18)], "C": [(9, 14)], "D": [(4, 7), (14, 17)], "E": []}
# (item, rater, segment, score); r2 skipped B's second segment, so B is (2.5 + 3) / 2 = 2.75.
SCORES = [
    ("A", "r1", (2, 5), 4),
    ("A", "r2", (2, 5), 4),
    ("B", "r1", (0, 3), 4),
    ("B", "r1", (14, 18), 1),
    ("B", "r2", (0, 3), 3),
    ("C", "r1", (9, 14), 1),
    ("C", "r2", (9, 14), 2),
    ("D", "r1", (4, 7), 4),
    ("D", "r1", (14, 17), 1),
    ("D", "r2", (4, 7), 3),
    ("D", "r2", (14, 17), 1),
]


def _ratings() -> list[RatingRecord]:
    out = [RatingRecord(i, r, float(s), a, b) for i, r, (a, b), s in SCORES]
    out += [RatingRecord("E", r, None, nothing_flagged_correct=True) for r in ("r1", "r2")]
    return out


def _bundle(ratings: list[RatingRecord] | None = None, **task: object) -> Bundle:
    return Bundle(
        DatasetRecord("tiny", "test"),
        items=[ItemRecord(k, text) for k, text in TEXTS.items()],
        label_sets=[
            LabelSetRecord(
                "gold", "gold", annotations=[Annotations(k, [SpanRecord(*s) for s in GOLD[k]]) for k in TEXTS]
            ),
            LabelSetRecord(
                "detector",
                "det",
                annotations=[Annotations(k, [SpanRecord(*s) for s in PRED[k]]) for k in TEXTS],
            ),
        ],
        rating_tasks=[
            RatingTaskRecord(
                **{"name": "segments", "detector": "det", "rubric": dict(PRESETS["mhalo"].rubric), **task},
                ratings=_ratings() if ratings is None else ratings,
            )
        ],
    )


def _rating_count(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(m.Rating))


def test_f1_iou_correlates_with_ratings_as_computed_by_hand(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    dataset_id = 1
    f1 = per_item_scores(load_dataset_spans(engine, dataset_id))
    humans = correlation_report.human_scores(correlation_report.load(engine, dataset_id), "segments")
    joined = f1.merge(humans, on="item_id").sort_values("external_id")
    assert joined["external_id"].tolist() == ["A", "B", "C", "D"]  # E has no segment, so no score
    x, y = joined["f1_iou"].tolist(), joined["human"].tolist()
    assert x == pytest.approx([1, 1 / 2, 0, 2 / 3], abs=1e-15)
    assert y == [4.0, 2.75, 1.5, 2.25]
    # By hand: mean x = 13/24, mean y = 21/8; deviations x: 11/24, -1/24, -13/24, 3/24;
    # y: 11/8, 1/8, -9/8, -3/8. Sxy = 228/192 = 19/16, Sxx = 300/576 = 25/48, Syy = 212/64 = 53/16.
    # r = (19/16) / sqrt(25/48 · 53/16) = 19·sqrt(3) / (5·sqrt(53)) ≈ 0.904083.
    by_hand = 19 * math.sqrt(3) / (5 * math.sqrt(53))
    assert abs(correlations(x, y, n_resamples=10)["pearson"]["r"] - by_hand) < 1e-12

    # The correlation page's own data function reads the same ratings and gets the same value.
    report = correlation_report.build(
        correlation_report.load(engine, dataset_id), ReportFilter(), "segments", n_resamples=10
    )
    rows = report.tables["correlations"].frame
    pearson = rows[(rows["metric"] == "F1_IoU") & (rows["method"] == "Pearson")]
    assert abs(float(pearson["r"].iloc[0]) - by_hand) < 1e-12
    assert report.tables["items"].frame.sort_values("item")["human"].tolist() == y


def test_tasks_are_checked_logged_and_locked_once_rated(engine) -> None:
    import_bundle(engine, _bundle(ratings=[]), actor=OPERATOR)
    who = get_or_create_annotator(engine, "lead").id
    det = next(v.id for v in list_label_sets(engine, 1, kind="detector"))
    gold = next(v.id for v in list_label_sets(engine, 1, kind="gold"))
    tri_he = PRESETS["tri-he"]
    spec = TaskSpec("  whole  responses ", det, "response", 1, 5, tri_he.rubric)
    task_id = create_rating_task(engine, 1, spec, who, actor=OPERATOR)
    view = get_rating_task(engine, task_id)
    assert (view.name, view.detector, view.granularity, view.points) == (
        "whole responses",
        "det",
        "response",
        [1, 2, 3, 4, 5],
    )
    assert view.rubric_for(5) == "No hallucination exists in the generated response."
    assert view.queue == f"rating:{task_id}" and len(view.queue) <= 30  # fits ItemStatus.page
    for bad, message in [
        (TaskSpec("segments", det), "already has a rating task"),
        (TaskSpec("x", gold), "detector runs"),
        (TaskSpec("x", det, "sentence"), "Granularity"),
        (TaskSpec("x", det, scale_min=3, scale_max=3), "scale"),
        (TaskSpec("x", det, scale_min=0, scale_max=11), "at most 11 points"),
        (TaskSpec("x", det, rubric={"7": "too high"}), "not on the scale"),
        (TaskSpec("   ", det), "needs a name"),
    ]:
        with pytest.raises(ValueError, match=message):
            create_rating_task(engine, 1, bad, who, actor=OPERATOR)
    assert [t.name for t in list_rating_tasks(engine, 1)] == ["segments", "whole responses"]

    item = get_item(engine, 1, "A")
    rate(engine, task_id, item.id, who, human_label_set(engine, 1, who).id, score=4)
    with pytest.raises(TaskLocked, match="1 rating"):
        update_rating_task(
            engine, task_id, TaskSpec("whole responses", det, "response", 1, 4), who, actor=OPERATOR
        )
    update_rating_task(
        engine,
        task_id,
        TaskSpec("Tri-HE", det, "response", 1, 5, {"5": "clean"}),
        who,
        view.version,
        actor=OPERATOR,
    )
    assert get_rating_task(engine, task_id).rubric == {"5": "clean"}
    with pytest.raises(labeling.StaleEdit):
        update_rating_task(
            engine,
            task_id,
            TaskSpec("again", det, "response", 1, 5),
            who,
            expected_version=view.version,
            actor=OPERATOR,
        )
    with Session(engine) as session:
        logged = session.scalars(
            select(m.EditLog.action).where(m.EditLog.entity == "rating_tasks").order_by(m.EditLog.id)
        ).all()
    assert logged == ["create", "update"]


def test_ratings_are_blind_undoable_and_reach_the_correlation_source(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    task = list_rating_tasks(engine, 1)[0]
    carol = get_or_create_annotator(engine, "carol").id
    own = human_label_set(engine, 1, carol)
    item = get_item(engine, 1, "B")
    assert my_ratings(engine, task.id, item.id, carol) == {}  # r1's and r2's scores stay hidden
    rate(engine, task.id, item.id, carol, own.id, score=2, segment=(0, 3))
    rate(engine, task.id, item.id, carol, own.id, score=3, segment=(0, 3), expected_version=1)
    assert {k: v.score for k, v in my_ratings(engine, task.id, item.id, carol).items()} == {(0, 3): 3.0}
    with pytest.raises(labeling.StaleEdit):
        rate(engine, task.id, item.id, carol, own.id, score=1, segment=(0, 3), expected_version=1)
    with pytest.raises(ValueError, match="from 1 to 4"):
        rate(engine, task.id, item.id, carol, own.id, score=5, segment=(0, 3))

    columns = report_inputs.ratings(engine, 1)
    mine = [s for r, s in zip(columns["rater"], columns["score"], strict=True) if r == "carol"]
    assert mine == [3.0]
    # The annotation pages' Undo looks at the rater's own label set: it reaches the rating.
    assert labeling.last_undoable(engine, carol, [own.id]) == "rated segment “one”: 3"
    labeling.undo_last(engine, carol, [own.id])
    assert my_ratings(engine, task.id, item.id, carol)[(0, 3)].score == 2.0
    labeling.undo_last(engine, carol, [own.id])
    assert my_ratings(engine, task.id, item.id, carol) == {}
    assert "carol" not in task_ratings(engine, task.id)["rater"]


def test_importer_rejects_bad_ratings_with_file_record_field(engine) -> None:
    import_bundle(engine, _bundle(ratings=[]), actor=OPERATOR)
    bad = [
        RatingRecord("A", "r1", 5.0, 2, 5),  # off the 1-4 scale
        RatingRecord("Z", "r1", 3.0, 0, 1),  # no such item
        RatingRecord("A", "r1", 3.0, 2, 99),  # outside the response
        RatingRecord("A", "", 3.0, 2, 5),  # no rater
        RatingRecord("E", "r1", None),  # neither score nor judgment
        RatingRecord("A", "r2", 4.0, 2, 5),
        RatingRecord("A", "r2", 3.0, 2, 5),  # the same rater twice on one segment
    ]
    with pytest.raises(ImportRejected) as rejected:
        import_bundle(engine, _bundle(ratings=bad), source="ratings.jsonl", actor=OPERATOR)
    found = {(p.record, p.field) for p in rejected.value.problems}
    assert found == {
        ("rating task 'segments' #0 (id=A)", "score"),
        ("rating task 'segments' #1 (id=Z)", "item"),
        ("rating task 'segments' #2 (id=A)", "segment_start"),
        ("rating task 'segments' #3 (id=A)", "rater"),
        ("rating task 'segments' #4 (id=E)", "score"),
        ("rating task 'segments' #6 (id=A)", "rater"),
    }
    assert all(p.file == "ratings.jsonl" for p in rejected.value.problems)
    assert _rating_count(engine) == 0  # all or nothing

    result = import_bundle(engine, _bundle(ratings=bad), allow_skip=True, actor=OPERATOR)
    assert result.rows["ratings"] == 1 and len(result.skipped) == 6

    for task, field in [
        ({"detector": "nobody"}, "detector"),
        ({"scale_max": 5}, "scale_min"),  # the stored task of that name runs 1-4
        ({"granularity": "sentence"}, "granularity"),
    ]:
        with pytest.raises(ImportRejected) as rejected:
            import_bundle(engine, _bundle(**task), actor=OPERATOR)
        problems = rejected.value.problems
        assert field in {p.field for p in problems}
        assert {p.record for p in problems} == {"rating task 'segments'"}
    with pytest.raises(ImportRejected, match="whole responses"):
        import_bundle(engine, _bundle(name="responses", granularity="response", scale_max=5), actor=OPERATOR)


def test_reimport_replaces_only_the_raters_and_items_it_holds(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    task = list_rating_tasks(engine, 1)[0]
    carol = get_or_create_annotator(engine, "carol").id
    rate(
        engine,
        task.id,
        get_item(engine, 1, "A").id,
        carol,
        human_label_set(engine, 1, carol).id,
        score=2,
        segment=(2, 5),
    )
    before = _rating_count(engine)
    with pytest.raises(ReplaceRequired, match="1 changed"):  # r1's 4 on A becomes 1: only when asked
        import_bundle(engine, _bundle(ratings=[RatingRecord("A", "r1", 1.0, 2, 5)]), actor=OPERATOR)
    import_bundle(
        engine, _bundle(ratings=[RatingRecord("A", "r1", 1.0, 2, 5)]), replace_existing=True, actor=OPERATOR
    )
    columns = task_ratings(engine, task.id)
    rows = set(zip(columns["external_id"], columns["rater"], columns["score"], strict=True))
    assert ("A", "r1", 1.0) in rows and ("A", "r1", 4.0) not in rows
    assert ("A", "carol", 2.0) in rows and ("B", "r1", 4.0) in rows
    assert _rating_count(engine) == before
