"""What imports and exports need from the store besides the bundle importer and exporter.

A predictions file is read against the items already stored: its reader places spans on their exact
response text and maps sentence and claim numbers onto theirs.
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import models as m
from db.engine import read_session
from formats.base import KnownItem


def _dataset_id(session: Session, dataset_name: str) -> int | None:
    return session.scalar(select(m.Dataset.id).where(m.Dataset.name == dataset_name))


def responses_by_external_id(engine: Engine, dataset_name: str) -> dict[str, str]:
    """External id -> stored response text, in dataset order (empty when there is no such dataset)."""
    with read_session(engine) as session:
        dataset_id = _dataset_id(session, dataset_name)
        if dataset_id is None:
            return {}
        rows = session.execute(
            select(m.Item.external_id, m.Item.response)
            .where(m.Item.dataset_id == dataset_id)
            .order_by(m.Item.position)
        )
        return {ext: value for ext, value in rows}


def item_units(
    session: Session, dataset_id: int
) -> tuple[dict[int, list[tuple[int, int]]], dict[int, list[str]]]:
    """Every item's sentence offsets and claim texts in the dataset, by item id and in order: what a
    detector's output is read against (two queries for the whole dataset, not two per item)."""
    in_dataset = select(m.Item.id).where(m.Item.dataset_id == dataset_id)
    sentences: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for item_id, start, end in session.execute(
        select(m.Sentence.item_id, m.Sentence.start, m.Sentence.end)
        .where(m.Sentence.item_id.in_(in_dataset))
        .order_by(m.Sentence.item_id, m.Sentence.index)
    ):
        sentences[item_id].append((start, end))
    claims: dict[int, list[str]] = defaultdict(list)
    for item_id, text in session.execute(
        select(m.Claim.item_id, m.Claim.text)
        .where(m.Claim.item_id.in_(in_dataset))
        .order_by(m.Claim.item_id, m.Claim.index)
    ):
        claims[item_id].append(text)
    return sentences, claims


def known_items(engine: Engine, dataset_name: str) -> dict[str, KnownItem]:
    """Every stored item of the dataset with its sentence offsets, claim texts and meta, in dataset order."""
    with read_session(engine) as session:
        dataset_id = _dataset_id(session, dataset_name)
        if dataset_id is None:
            return {}
        items = session.execute(
            select(m.Item.id, m.Item.external_id, m.Item.response, m.Item.meta)
            .where(m.Item.dataset_id == dataset_id)
            .order_by(m.Item.position)
        ).all()
        sentences, claims = item_units(session, dataset_id)
    return {
        ext: KnownItem(response, tuple(sentences[item_id]), tuple(claims[item_id]), dict(meta or {}))
        for item_id, ext, response, meta in items
    }


def dataset_image_root(engine: Engine, dataset_name: str) -> tuple[int, str | None] | None:
    """``(dataset id, image root)`` of the dataset, or None when there is no such dataset."""
    with read_session(engine) as session:
        row = session.execute(
            select(m.Dataset.id, m.Dataset.image_root).where(m.Dataset.name == dataset_name)
        ).first()
        return None if row is None else (row[0], row[1])


def image_refs(engine: Engine, dataset_name: str) -> dict[str, str]:
    """External id -> image reference of every item that has one."""
    with read_session(engine) as session:
        dataset_id = _dataset_id(session, dataset_name)
        if dataset_id is None:
            return {}
        rows = session.execute(
            select(m.Item.external_id, m.Item.image_ref).where(
                m.Item.dataset_id == dataset_id, m.Item.image_ref.is_not(None)
            )
        )
        return {ext: value for ext, value in rows if value is not None}
