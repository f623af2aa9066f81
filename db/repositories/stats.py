"""Counts per dataset, for `cli.py stats` and health checks."""

from __future__ import annotations

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.engine import read_session, store_revision


def dataset_stats(engine: Engine) -> list[dict[str, object]]:
    """For every dataset: items, spans, sentence labels and label sets (per kind)."""

    def per_dataset(
        session: Session, model: type[m.Span] | type[m.SentenceLabel] | type[m.ClaimLabel]
    ) -> dict[int, int]:
        query = (
            select(m.Item.dataset_id, func.count())
            .select_from(model)
            .join(m.Item, m.Item.id == model.item_id)
            .group_by(m.Item.dataset_id)
        )
        return dict(session.execute(query).all())

    with read_session(engine) as session:
        datasets = session.execute(
            select(m.Dataset.id, m.Dataset.name, m.Dataset.source_format).order_by(m.Dataset.name)
        ).all()
        items = dict(
            session.execute(select(m.Item.dataset_id, func.count()).group_by(m.Item.dataset_id)).all()
        )
        spans = per_dataset(session, m.Span)
        sentence_labels = per_dataset(session, m.SentenceLabel)
        claim_labels = per_dataset(session, m.ClaimLabel)
        kinds: dict[int, dict[str, int]] = {}
        for dataset_id, kind, n in session.execute(
            select(m.LabelSet.dataset_id, m.LabelSet.kind, func.count()).group_by(
                m.LabelSet.dataset_id, m.LabelSet.kind
            )
        ):
            kinds.setdefault(dataset_id, {})[kind] = n
    return [
        {
            "name": name,
            "source_format": source_format,
            "items": items.get(dataset_id, 0),
            "spans": spans.get(dataset_id, 0),
            "sentence_labels": sentence_labels.get(dataset_id, 0),
            "claim_labels": claim_labels.get(dataset_id, 0),
            "label_sets": sum(kinds.get(dataset_id, {}).values()),
            "label_sets_by_kind": kinds.get(dataset_id, {}),
        }
        for dataset_id, name, source_format in datasets
    ]


def revision(engine: Engine) -> int:
    return store_revision(engine)
