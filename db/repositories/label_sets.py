"""Label sets: gold, each annotator's work, each detector run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Select, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import require_in
from db.engine import hold_name, read_session, write_session


@dataclass(frozen=True)
class LabelSetView:
    id: int
    dataset_id: int
    kind: str
    name: str
    annotator: str | None
    detector_version: str | None
    prompt_strategy: str | None

    @property
    def title(self) -> str:
        """How the label set is named on screen."""
        if self.kind == "gold":
            return "Gold"
        if self.kind == "human":
            return f"Annotator · {self.name}"
        version = f" {self.detector_version}" if self.detector_version else ""
        return f"Detector · {self.name}{version}"


_KIND_ORDER = {"gold": 0, "human": 1, "detector": 2}


def list_label_sets(engine: Engine, dataset_id: int, kind: str | None = None) -> list[LabelSetView]:
    """The dataset's label sets: gold first, then annotators, then detectors, each by name."""
    with read_session(engine) as session:
        query = (
            select(m.LabelSet, m.Annotator.name)
            .outerjoin(m.Annotator, m.Annotator.id == m.LabelSet.annotator_id)
            .where(m.LabelSet.dataset_id == dataset_id)
        )
        if kind is not None:
            query = query.where(m.LabelSet.kind == kind)
        views = [
            LabelSetView(ls.id, ls.dataset_id, ls.kind, ls.name, who, ls.detector_version, ls.prompt_strategy)
            for ls, who in session.execute(query)
        ]
    return sorted(views, key=lambda v: (_KIND_ORDER.get(v.kind, 9), v.name.lower()))


def gold_label_set(engine: Engine, dataset_id: int) -> LabelSetView | None:
    found = list_label_sets(engine, dataset_id, kind="gold")
    return found[0] if found else None


def human_label_set(engine: Engine, dataset_id: int, annotator_id: int) -> LabelSetView:
    """The annotator's own label set on this dataset, created on first use (reads don't write).

    Creating it is the annotator's first labeling action: refused (:class:`~db.access.Forbidden`)
    unless they may label.
    """

    def find(session: Session) -> LabelSetView | None:
        row = session.execute(
            select(m.LabelSet, m.Annotator.name)
            .join(m.Annotator, m.Annotator.id == m.LabelSet.annotator_id)
            .where(
                m.LabelSet.dataset_id == dataset_id,
                m.LabelSet.kind == "human",
                m.Annotator.id == annotator_id,
            )
        ).first()
        if row is None:
            return None
        ls, who = row
        return LabelSetView(ls.id, dataset_id, "human", ls.name, who, None, None)

    with read_session(engine) as session:
        found = find(session)
    if found is not None:
        return found
    with write_session(engine) as session:
        named = session.get(m.Annotator, annotator_id)
        if named is not None:  # another tab of theirs making it now is waited for, and its label set found
            hold_name(session, "label set", dataset_id, "human", named.name)
        found = find(session)
        if found is not None:
            return found
        require_in(session, annotator_id, "label")
        annotator = session.get_one(m.Annotator, annotator_id)
        label_set = m.LabelSet(
            dataset_id=dataset_id, kind="human", name=annotator.name, annotator_id=annotator_id
        )
        session.add(label_set)
        session.flush()
        return LabelSetView(label_set.id, dataset_id, "human", label_set.name, annotator.name, None, None)


def label_set_meta(engine: Engine, dataset: str, kind: str, name: str) -> dict[str, Any] | None:
    """The stored meta of the dataset's label set ``kind:name``; None when there is no such label set."""
    with read_session(engine) as session:
        meta = session.scalar(
            select(m.LabelSet.meta)
            .join(m.Dataset, m.Dataset.id == m.LabelSet.dataset_id)
            .where(m.Dataset.name == dataset, m.LabelSet.kind == kind, m.LabelSet.name == name)
        )
        return None if meta is None else dict(meta)


def gold_raters() -> Select[int | None]:
    """The accounts holding adjudicated ratings: each gold label set names one (see
    ``db.repositories.adjudication``). Their ratings are gold, not one more rater's, so every view of
    the raters leaves them out."""
    return select(m.LabelSet.annotator_id).where(
        m.LabelSet.kind == "gold", m.LabelSet.annotator_id.is_not(None)
    )
