"""The stored items an import checks its records against, read a batch at a time.

An import needs, for each item its records name, whether the dataset has it and, if so, its id, its
response's hash, length, and sentence and claim counts. Holding those of every stored item for the whole
import took 86 MB for a million sentences (166 K items), and grew with the dataset. Here the items a
batch names are read when the batch comes, in chunks, so memory stays that of a batch.

Items this import wrote in earlier batches are read back the same way (they are in its transaction).
Two kinds of item are kept in memory instead: the ids this import wrote (a later record with such an id
is refused as a repeat, not compared with the text it wrote), and the sound new items of an import
refused already, which writes nothing more but checks the rest of its input against them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models as m

_CHUNK = 5_000  # external ids per query, well within every store's limit on bound values


@dataclass(slots=True)
class StoredItem:
    id: int  # -1: an item of a refused import, not written
    # "" for an item this import wrote: a later record with its id is refused as a repeat, text aside.
    text_hash: str
    length: int
    n_sentences: int
    n_claims: int
    prompt: str | None = None  # as stored (None: not read, for an item of a refused import)
    image_ref: str | None = None
    # (subject, relation, object) of each reference triplet, in order; None: not read (a batch giving none)
    reference: tuple[tuple[str, str, str], ...] | None = None


class StoredItems(Mapping[str, StoredItem]):
    """The items of one dataset that the current batch names (:meth:`load`), by external id, with the
    sound new items of a refused import's earlier batches (:meth:`remember`).

    As a mapping it holds only those: an item the batch does not name is not in it, stored or not."""

    def __init__(self, session: Session, dataset_id: int, *, new: bool = False) -> None:
        """``new``: the dataset is made by this import (in its transaction, which no other writer sees),
        so it holds no item but those this import writes; the store is asked about those only."""
        self._session = session
        self._dataset_id = dataset_id
        self._new = new
        self._batch: dict[str, StoredItem] = {}
        self._unwritten: dict[str, StoredItem] = {}
        self._written: set[str] = set()

    def load(self, external_ids: Collection[str], *, with_reference: bool = False) -> None:
        """Read the stored items among ``external_ids``, in place of the batch before's; with
        ``with_reference``, their reference triplets too (for a batch that gives some, to compare)."""
        wanted = sorted(
            {
                e
                for e in external_ids
                if isinstance(e, str) and e not in self._unwritten and (not self._new or e in self._written)
            }
        )
        found: dict[str, StoredItem] = {}
        for start in range(0, len(wanted), _CHUNK):
            found.update(self._read(wanted[start : start + _CHUNK]))
        if with_reference and found:
            found = self._with_reference(found)
        self._batch = found

    def _with_reference(self, found: dict[str, StoredItem]) -> dict[str, StoredItem]:
        by_id: dict[int, list[tuple[str, str, str]]] = {item.id: [] for item in found.values()}
        ids = list(by_id)
        for start in range(0, len(ids), _CHUNK):
            for item_id, subject, relation, object_ in self._session.execute(
                select(m.Triplet.item_id, m.Triplet.subject, m.Triplet.relation, m.Triplet.object)
                .where(m.Triplet.item_id.in_(ids[start : start + _CHUNK]), m.Triplet.label_set_id.is_(None))
                .order_by(m.Triplet.item_id, m.Triplet.index)
            ):
                by_id[item_id].append((subject, relation, object_))
        return {ext: replace(item, reference=tuple(by_id[item.id])) for ext, item in found.items()}

    def _read(self, chunk: list[str]) -> dict[str, StoredItem]:
        rows = self._session.execute(
            select(
                m.Item.external_id,
                m.Item.id,
                m.Item.text_hash,
                func.length(m.Item.response),
                m.Item.prompt,
                m.Item.image_ref,
            ).where(m.Item.dataset_id == self._dataset_id, m.Item.external_id.in_(chunk))
        ).all()
        if not rows:
            return {}
        ids = [row[1] for row in rows]
        sentences, claims = (
            {
                item_id: n
                for item_id, n in self._session.execute(
                    select(model.item_id, func.count()).where(model.item_id.in_(ids)).group_by(model.item_id)
                )
            }
            for model in (m.Sentence, m.Claim)
        )
        return {
            ext: StoredItem(
                item_id,
                "" if ext in self._written else text_hash,
                int(length or 0),
                sentences.get(item_id, 0),
                claims.get(item_id, 0),
                prompt,
                image_ref,
            )
            for ext, item_id, text_hash, length, prompt, image_ref in rows
        }

    def wrote(self, external_id: str) -> None:
        """This import wrote the item (its row is read back by the batches after, as its own)."""
        self._written.add(external_id)

    def remember(self, external_id: str, shape: tuple[int, int, int]) -> None:
        """A sound new item of an import refused already: not written, but the batches after check
        their records of it against its ``(length, sentences, claims)``."""
        self._unwritten[external_id] = StoredItem(-1, "", *shape)

    def ids(self) -> dict[str, int]:
        """The ids of the written items held, by external id."""
        return {ext: item.id for ext, item in self.items() if item.id >= 0}

    def __getitem__(self, external_id: str) -> StoredItem:
        found = self._batch.get(external_id)
        return found if found is not None else self._unwritten[external_id]

    def __contains__(self, external_id: object) -> bool:
        return external_id in self._batch or external_id in self._unwritten

    def __iter__(self) -> Iterator[str]:  # the two never share an id: an unwritten item is not read
        yield from self._batch
        yield from self._unwritten

    def __len__(self) -> int:
        return len(self._batch) + len(self._unwritten)
