"""Rating tasks: humans scoring one detector's predicted segments (MHALO Table 4) or whole responses
(Tri-HE Table 9), on a scale and rubric set per task.

Creating and changing a task is logged like every edit. A task's scale, granularity and detector are
fixed once it holds ratings (they would no longer mean what the raters saw); name and rubric wording
stay editable. A rater's scores go through :func:`db.repositories.labeling.set_rating` (scale-checked,
logged, undoable); :func:`rate` also files the log entry under the rater's own label set on the dataset,
so the annotation pages' Undo (which looks only at that label set) reaches ratings too.

Creating, changing and importing tasks needs the acting user's ``manage_data`` right, exporting their
ratings the ``export`` right; rating is labeling, checked like every label (:mod:`db.access`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Engine, Select, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, require_in, require_now
from db.column_lengths import refuse_too_long
from db.engine import hold_name, read_session, write_session
from db.import_changes import ReplaceRequired
from db.importer import ImportResult, import_bundle
from db.repositories import labeling
from db.repositories.label_sets import gold_raters
from db.repositories.report_inputs import Columns
from db.rubrics import MHALO_TABLE_4, TRI_HE_TABLE_9
from db.value_check import refuse_unstorable_text
from formats.problems import ImportRejected, Problem, quoted
from formats.ratings import RatingTarget, read_ratings, write_ratings

GRANULARITIES = ("segment", "response")
MAX_SCALE_POINTS = 11  # 0-10 at most: every point gets a button


@dataclass(frozen=True)
class Preset:
    title: str
    granularity: str
    scale_min: int
    scale_max: int
    rubric: Mapping[str, str]


PRESETS: dict[str, Preset] = {
    "mhalo": Preset("MHALO Table 4 (1–4, per segment)", "segment", 1, 4, MHALO_TABLE_4),
    "tri-he": Preset("Tri-HE Table 9 (1–5, per response)", "response", 1, 5, TRI_HE_TABLE_9),
}


@dataclass(frozen=True)
class RatingTaskView:
    id: int
    dataset_id: int
    name: str
    detector_label_set_id: int
    detector: str
    granularity: str
    scale_min: int
    scale_max: int
    rubric: dict[str, str]
    version: int
    n_ratings: int = 0

    @property
    def queue(self) -> str:
        """The task name of this campaign's work queue (``ItemStatus.page``): each task its own queue."""
        return f"rating:{self.id}"

    @property
    def points(self) -> list[int]:
        return list(range(self.scale_min, self.scale_max + 1))

    def rubric_for(self, score: int) -> str:
        return self.rubric.get(str(score), "")


@dataclass(frozen=True)
class MyRating:
    score: float | None
    nothing_flagged_correct: bool | None
    version: int


@dataclass(frozen=True)
class TaskSpec:
    """What a user sets when creating or editing a task."""

    name: str
    detector_label_set_id: int
    granularity: str = "segment"
    scale_min: int = 1
    scale_max: int = 4
    rubric: Mapping[str, str] = field(default_factory=dict)


class TaskLocked(ValueError):
    """The change would alter the meaning of ratings already given."""


# ----------------------------------------------------------------------------------------------- reading


def _view(task: m.RatingTask, detector: str, n_ratings: int) -> RatingTaskView:
    return RatingTaskView(
        id=task.id,
        dataset_id=task.dataset_id,
        name=task.name,
        detector_label_set_id=task.detector_label_set_id,
        detector=detector,
        granularity=task.granularity,
        scale_min=task.scale_min,
        scale_max=task.scale_max,
        rubric={str(k): str(v) for k, v in (task.rubric or {}).items()},
        version=task.version,
        n_ratings=n_ratings,
    )


def _query() -> Select[m.RatingTask, str, int]:
    counts = select(m.Rating.task_id, func.count().label("n")).group_by(m.Rating.task_id).subquery("counts")
    return (
        select(m.RatingTask, m.LabelSet.name, func.coalesce(counts.c.n, 0))
        .join(m.LabelSet, m.LabelSet.id == m.RatingTask.detector_label_set_id)
        .outerjoin(counts, counts.c.task_id == m.RatingTask.id)
    )


def list_rating_tasks(engine: Engine, dataset_id: int) -> list[RatingTaskView]:
    """The dataset's rating tasks by name, each with its detector's name and number of ratings."""
    with read_session(engine) as session:
        rows = session.execute(_query().where(m.RatingTask.dataset_id == dataset_id)).all()
    return sorted((_view(t, d, n) for t, d, n in rows), key=lambda v: (v.name.lower(), v.id))


def get_rating_task(engine: Engine, task_id: int) -> RatingTaskView | None:
    with read_session(engine) as session:
        row = session.execute(_query().where(m.RatingTask.id == task_id)).first()
    return None if row is None else _view(*row)


def my_ratings(
    engine: Engine, task_id: int, item_id: int, annotator_id: int
) -> dict[tuple[int, int] | None, MyRating]:
    """This rater's own ratings of one item: segment ``(start, end)`` (None: the whole response) → rating.

    Never anyone else's: raters work blind to each other.
    """
    with read_session(engine) as session:
        rows = session.scalars(
            select(m.Rating).where(
                m.Rating.task_id == task_id,
                m.Rating.item_id == item_id,
                m.Rating.annotator_id == annotator_id,
            )
        )
        return {
            (None if r.segment_start < 0 else (r.segment_start, r.segment_end)): MyRating(
                r.score, r.nothing_flagged_correct, r.version
            )
            for r in rows
        }


def task_ratings(engine: Engine, task_id: int) -> Columns:
    """Every rating of one task as columns: item (id and external id), rater, segment, score, judgment.

    Only the raters' own ratings: adjudicated gold ratings (held by the account the dataset's gold label
    set names) are a decision about the raters, not one more rater, so they would distort the task's
    agreement, its per-rater table and its export.
    """
    names = [
        "item_id",
        "external_id",
        "position",
        "rater",
        "segment_start",
        "segment_end",
        "score",
        "nothing_flagged_correct",
    ]
    out: Columns = {name: [] for name in names}
    with read_session(engine) as session:
        for row in session.execute(
            select(
                m.Rating.item_id,
                m.Item.external_id,
                m.Item.position,
                m.Annotator.name,
                m.Rating.segment_start,
                m.Rating.segment_end,
                m.Rating.score,
                m.Rating.nothing_flagged_correct,
            )
            .join(m.Item, m.Item.id == m.Rating.item_id)
            .join(m.Annotator, m.Annotator.id == m.Rating.annotator_id)
            .where(m.Rating.task_id == task_id, m.Rating.annotator_id.not_in(gold_raters()))
            .order_by(m.Item.position, m.Annotator.name, m.Rating.segment_start, m.Rating.segment_end)
        ):
            for name, value in zip(names, row, strict=True):
                out[name].append(value)
    return out


def detector_segments(engine: Engine, task: RatingTaskView) -> dict[str, list[tuple[int, int]]]:
    """External id → the rated detector's predicted segments on that item (distinct offsets, in text
    order), for every item of the dataset (an empty list where it flagged nothing)."""
    out: dict[str, list[tuple[int, int]]] = {}
    with read_session(engine) as session:
        for (external_id,) in session.execute(
            select(m.Item.external_id).where(m.Item.dataset_id == task.dataset_id).order_by(m.Item.position)
        ):
            out[external_id] = []
        for external_id, start, end in session.execute(
            select(m.Item.external_id, m.Span.start, m.Span.end)
            .join(m.Item, m.Item.id == m.Span.item_id)
            .where(m.Span.label_set_id == task.detector_label_set_id)
            .distinct()
            .order_by(m.Item.external_id, m.Span.start, m.Span.end)
        ):
            out[external_id].append((start, end))
    return out


def segments_of(spans: Any) -> list[tuple[int, int]]:
    """Distinct ``(start, end)`` of a detector's spans on one item, in text order: what raters score.

    Two spans on the same characters (say with different types) are one segment to rate.
    """
    return sorted({(s.start, s.end) for s in spans})


# ----------------------------------------------------------------------------------------------- writing


def _check_spec(session: Session, dataset_id: int, spec: TaskSpec, task_id: int | None) -> TaskSpec:
    refuse_unstorable_text(spec.name, "task's name")
    refuse_unstorable_text(spec.rubric, "rubric")
    name = " ".join(spec.name.split())
    if not name:
        raise ValueError("A rating task needs a name.")
    refuse_too_long(name, m.RatingTask.name, "task's name")
    # Two managers naming a task alike at once wait for each other here, so the second finds the first's
    # task and is told so (it got the unique constraint's raw error).
    hold_name(session, "rating task", dataset_id, name)
    clash = session.scalar(
        select(m.RatingTask.id).where(m.RatingTask.dataset_id == dataset_id, m.RatingTask.name == name)
    )
    if clash is not None and clash != task_id:
        raise ValueError(f"This dataset already has a rating task named {quoted(name)}.")
    detector = session.get(m.LabelSet, spec.detector_label_set_id)
    if detector is None or detector.dataset_id != dataset_id or detector.kind != "detector":
        raise ValueError("Choose one of this dataset's detector runs to rate.")
    if spec.granularity not in GRANULARITIES:
        raise ValueError(f"Granularity is 'segment' or 'response', not {quoted(str(spec.granularity))}.")
    low, high = spec.scale_min, spec.scale_max
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (low, high)):
        raise ValueError("A scale runs between two whole numbers.")
    if not 0 <= low < high or high - low + 1 > MAX_SCALE_POINTS:
        raise ValueError(
            f"A scale runs from a lower to a higher whole number of 0 or more, with at most "
            f"{MAX_SCALE_POINTS} points; got {low}–{high}."
        )
    rubric: dict[str, str] = {}
    for key, text in spec.rubric.items():
        if not str(key).strip().isdigit() or not low <= int(key) <= high:
            raise ValueError(
                f"The rubric describes score {quoted(str(key))}, which is not on the scale {low}–{high}."
            )
        if str(text).strip():
            rubric[str(int(key))] = str(text).strip()
    return replace(spec, name=name, rubric=rubric)


def _snapshot(task: m.RatingTask) -> dict[str, Any]:
    return {
        "name": task.name,
        "detector_label_set_id": task.detector_label_set_id,
        "granularity": task.granularity,
        "scale_min": task.scale_min,
        "scale_max": task.scale_max,
        "rubric": dict(task.rubric or {}),
    }


def create_rating_task(
    engine: Engine, dataset_id: int, spec: TaskSpec, annotator_id: int | None, *, actor: Actor
) -> int:
    """Create a task and return its id; raises ValueError with a message for the user."""
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        spec = _check_spec(session, dataset_id, spec, None)
        task = m.RatingTask(
            dataset_id=dataset_id,
            detector_label_set_id=spec.detector_label_set_id,
            name=spec.name,
            granularity=spec.granularity,
            scale_min=spec.scale_min,
            scale_max=spec.scale_max,
            rubric=dict(spec.rubric),
        )
        session.add(task)
        session.flush()
        session.add(
            m.EditLog(
                annotator_id=annotator_id,
                action="create",
                entity="rating_tasks",
                entity_id=task.id,
                after={**_snapshot(task), "description": f"created rating task {quoted(task.name)}"},
            )
        )
        return task.id


def update_rating_task(
    engine: Engine,
    task_id: int,
    spec: TaskSpec,
    annotator_id: int | None,
    expected_version: int | None = None,
    *,
    actor: Actor,
) -> None:
    """Change a task. Scale, granularity and detector are locked once the task holds ratings
    (:class:`TaskLocked`); a colleague's newer change is never overwritten (:class:`labeling.StaleEdit`)."""
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        task = session.get(m.RatingTask, task_id)
        if task is None:
            raise labeling.StaleEdit("This rating task no longer exists.")
        if expected_version is not None and task.version != expected_version:
            raise labeling.StaleEdit("This rating task was changed by someone else meanwhile. Reload.")
        spec = _check_spec(session, task.dataset_id, spec, task.id)
        n_ratings = session.scalar(select(func.count()).where(m.Rating.task_id == task.id)) or 0
        fixed = (task.detector_label_set_id, task.granularity, task.scale_min, task.scale_max)
        wanted = (spec.detector_label_set_id, spec.granularity, spec.scale_min, spec.scale_max)
        if n_ratings and fixed != wanted:
            raise TaskLocked(
                f"The task holds {n_ratings} rating(s): its detector, granularity and scale can no longer "
                "change (the ratings would mean something else). Create a new task instead."
            )
        before = _snapshot(task)
        task.name, task.rubric = spec.name, dict(spec.rubric)
        (task.detector_label_set_id, task.granularity, task.scale_min, task.scale_max) = wanted
        session.flush()
        session.add(
            m.EditLog(
                annotator_id=annotator_id,
                action="update",
                entity="rating_tasks",
                entity_id=task.id,
                before=before,
                after={**_snapshot(task), "description": f"changed rating task {quoted(task.name)}"},
            )
        )


def rate(
    engine: Engine,
    task_id: int,
    item_id: int,
    annotator_id: int,
    label_set_id: int,
    *,
    score: float | None,
    segment: tuple[int, int] | None = None,
    nothing_flagged_correct: bool | None = None,
    expected_version: int | None = None,
) -> labeling.Action:
    """One rater's score of a segment (or the whole response), via :func:`labeling.set_rating`.

    ``label_set_id`` is the rater's own label set on the dataset: the log entry is filed under it so the
    annotation pages' Undo, which is scoped to that label set, can revert the rating.
    """
    return labeling.set_rating(
        engine,
        task_id,
        item_id,
        annotator_id,
        score=score,
        segment=segment,
        nothing_flagged_correct=nothing_flagged_correct,
        expected_version=expected_version,
        label_set_id=label_set_id,
    )


# ----------------------------------------------------------------------------------- import and export


def rating_target(engine: Engine, task: RatingTaskView) -> RatingTarget:
    """What the ratings file reader and writer need to know about the task."""
    with read_session(engine) as session:
        dataset = session.get_one(m.Dataset, task.dataset_id).name
    return RatingTarget(
        dataset=dataset,
        task=task.name,
        detector=task.detector,
        granularity=task.granularity,
        scale_min=task.scale_min,
        scale_max=task.scale_max,
        rubric=dict(task.rubric),
        segments=detector_segments(engine, task),
    )


@dataclass
class RatingsImport:
    ok: bool
    problems: list[Problem]
    result: ImportResult | None = None

    @property
    def written(self) -> int:
        """Ratings of the file now stored: those written and those the store held already."""
        if self.result is None:
            return 0
        return self.result.rows.get("ratings", 0) + self.result.changes.unchanged.get("ratings", 0)


def import_ratings(
    engine: Engine,
    task: RatingTaskView,
    data: bytes,
    *,
    actor: Actor,
    source: str,
    annotator: str | None = None,
    allow_skip: bool = False,
    replace_existing: bool = False,
) -> RatingsImport:
    """Read a ratings CSV/JSONL for ``task`` and write it through the atomic importer: all or nothing
    (unless ``allow_skip``), every flaw reported with file, record, field and reason. Ratings that would
    change stored ones are refused, with a report of what would change, unless ``replace_existing``.
    Refused (:class:`~db.access.Forbidden`) before the file is read unless ``actor`` may manage data."""
    require_now(engine, actor, "manage_data")
    read = read_ratings(data, source=source, target=rating_target(engine, task))
    if read.bundle is None:
        return RatingsImport(False, read.problems)
    if not any(t.ratings for t in read.bundle.rating_tasks) and not read.errors:
        return RatingsImport(False, [*read.problems, Problem(source, "-", "-", "the file holds no ratings")])
    try:
        result = import_bundle(
            engine,
            read.bundle,
            actor=actor,
            source=source,
            problems=read.problems,
            allow_skip=allow_skip,
            annotator=annotator,
            replace_existing=replace_existing,
        )
    except ImportRejected as rejected:
        return RatingsImport(False, list(rejected.problems))
    except ReplaceRequired as refused:
        return RatingsImport(False, [*read.problems, refused.problem(source)])
    return RatingsImport(True, result.problems, result)


def export_ratings(engine: Engine, task: RatingTaskView, *, filename: str, actor: Actor) -> bytes:
    """The task's ratings as CSV or JSONL (chosen by ``filename``), segments by offsets and by index;
    every rater's, so only for an ``actor`` who may export (else :class:`~db.access.Forbidden`)."""
    require_now(engine, actor, "export")
    target = rating_target(engine, task)
    columns = task_ratings(engine, task.id)
    rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    return write_ratings(rows, target=target, filename=filename)
