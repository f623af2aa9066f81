"""What a user may see of a dataset's labels and items: blind annotation in team mode.

An annotator who sees gold, a detector's output or a colleague's labels while labeling is anchored by
them, and their labels stop being an independent judgment (agreement and the metrics built on it then
measure less than they claim). So in team mode, on a dataset whose settings say ``blind`` (the
default), an annotator sees only their own label set — plus the detectors' outputs when the dataset
allows pre-annotation. Reviewers and admins (``see_all_labels``) see everything; viewers see gold and
the detectors (what the dashboards show), not individual people's labels. A dataset that is not blind
shows everyone everything. Local mode shows everything.

Annotators also see only the items assigned to them when browsing.

Judging extracted triplets (Tri-HE) needs triplets from somewhere, and in Tri-HE the extraction (step
1, from the model's answer) is not the judge's verdict (step 2): a detector here is the judge. So where
the sight hides detectors, their extractions are still offered to judge, but nameless and without any
verdict (:func:`triplet_sources_to_judge`); gold's and other people's never are.

Pages ask here rather than deciding themselves, so every page hides the same things.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Select, select

from db import models as m
from db.access import Actor, may, team_mode
from db.engine import read_session
from db.repositories.annotations import triplet_sources
from db.repositories.datasets import DatasetSettings, dataset_settings
from db.repositories.label_sets import LabelSetView, list_label_sets


@dataclass(frozen=True)
class LabelSight:
    """Which kinds of label sets, besides one's own, a user may see on a dataset."""

    gold: bool
    detectors: bool
    other_people: bool

    def shows(self, label_set: LabelSetView, actor: Actor) -> bool:
        if label_set.kind == "gold":
            return self.gold
        if label_set.kind == "detector":
            return self.detectors
        return self.other_people or label_set.annotator == actor.name


EVERYTHING = LabelSight(gold=True, detectors=True, other_people=True)


def sight_for(actor: Actor, settings: DatasetSettings) -> LabelSight:
    """What the actor may see on a dataset with these settings (the rule in the module docstring)."""
    if may(actor, "see_all_labels") or not settings.blind:
        return EVERYTHING
    if may(actor, "view_reports"):
        return LabelSight(gold=True, detectors=True, other_people=False)
    return LabelSight(gold=False, detectors=settings.allow_preannotation, other_people=False)


def label_sight(engine: Engine, actor: Actor, dataset_id: int) -> LabelSight:
    """:func:`sight_for` with the dataset's stored settings (local mode: everything, without a read)."""
    if may(actor, "see_all_labels"):
        return EVERYTHING
    return sight_for(actor, dataset_settings(engine, dataset_id))


def visible_label_sets(
    engine: Engine, actor: Actor, dataset_id: int, kind: str | None = None
) -> list[LabelSetView]:
    """The dataset's label sets the actor may see, in :func:`list_label_sets`' order."""
    sight = label_sight(engine, actor, dataset_id)
    return [ls for ls in list_label_sets(engine, dataset_id, kind=kind) if sight.shows(ls, actor)]


@dataclass(frozen=True)
class TripletSource:
    """A label set whose extracted triplets a user may judge, named as that user may see it."""

    label_set_id: int
    title: str


def triplet_sources_to_judge(
    engine: Engine, actor: Actor, dataset_id: int, judge_label_set_id: int | None
) -> list[TripletSource]:
    """The label sets whose extracted triplets the actor may judge (not ``judge_label_set_id``, the
    label set their verdicts go to), in label set order.

    Those the actor's :class:`LabelSight` shows keep their names. A detector it hides is offered
    nameless ("Extracted triplets 1", …): its triplets are the answer's extraction, what Tri-HE has
    judged, and the judging page shows no verdict but the judge's own, so a blind annotator judges
    them unanchored. Gold and other people's label sets it hides are not offered at all: their
    triplets are their own labels.
    """
    sight = label_sight(engine, actor, dataset_id)
    label_sets = {ls.id: ls for ls in list_label_sets(engine, dataset_id)}
    out: list[TripletSource] = []
    nameless = 0
    for label_set_id in triplet_sources(engine, dataset_id):
        ls = label_sets.get(label_set_id)
        if ls is None or label_set_id == judge_label_set_id:
            continue
        if sight.shows(ls, actor):
            out.append(TripletSource(ls.id, ls.title))
        elif ls.kind == "detector":
            nameless += 1
            out.append(TripletSource(ls.id, f"Extracted triplets {nameless}"))
    return out


def gold_waits_for_finish(engine: Engine, actor: Actor, dataset_id: int) -> bool:
    """Whether gold shown to the actor where it overrode them (the Overridden labels page) must leave
    out the items they have still to finish: an annotator who may not see gold, working through the
    items assigned to them."""
    return sees_assigned_only(actor) and not label_sight(engine, actor, dataset_id).gold


def sees_assigned_only(actor: Actor) -> bool:
    """Whether the actor browses only the items assigned to them (annotators, in team mode)."""
    return team_mode() and actor.role == "annotator" and actor.id is not None


def assigned_items(dataset_id: int, annotator_id: int, task: str | None = None) -> Select[Any]:
    """The ids of the items assigned to the annotator on the dataset (on ``task``, or on any task),
    as a query to filter item queries with."""
    query = select(m.Assignment.item_id).where(
        m.Assignment.dataset_id == dataset_id, m.Assignment.annotator_id == annotator_id
    )
    if task is not None:
        query = query.where(m.Assignment.task == task)
    return query


def assigned_item_ids(
    engine: Engine, dataset_id: int, annotator_id: int, task: str | None = None
) -> set[int]:
    """The items assigned to the annotator on the dataset (on ``task``, or on any task)."""
    with read_session(engine) as session:
        return set(session.scalars(assigned_items(dataset_id, annotator_id, task)))


def detectors_wait_for_labels(settings: DatasetSettings) -> bool:
    """Whether an annotator of a dataset with these settings may see a detector's output on an item only
    once their labeling of it is done (team mode: the caller knows the user is an annotator there). A
    blind dataset shows annotators no detector while they label (:func:`sight_for`), unless it allows
    pre-annotation, which puts a detector's spans in front of them anyway."""
    return team_mode() and settings.blind and not settings.allow_preannotation
