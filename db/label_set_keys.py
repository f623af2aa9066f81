"""Label sets as a file names them: by kind and name, which mean the same in every store (an id does not)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models as m

Key = tuple[str, str]  # a label set's (kind, name)


def label_set_id(session: Session, dataset_id: int, key: Key) -> int | None:
    """The id of the dataset's label set ``key``, or None when it has none."""
    return session.scalar(
        select(m.LabelSet.id).where(
            m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == key[0], m.LabelSet.name == key[1]
        )
    )


def label_set_ids(session: Session, dataset_id: int) -> dict[Key, int]:
    """The dataset's label sets' ids by kind and name."""
    query = select(m.LabelSet.id, m.LabelSet.kind, m.LabelSet.name).where(m.LabelSet.dataset_id == dataset_id)
    return {(kind, name): ls_id for ls_id, kind, name in session.execute(query)}
