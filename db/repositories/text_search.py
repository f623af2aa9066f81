"""The browser's search on SQLite, answered from each dataset's texts held in memory (``db.text_index``).

Items are only ever added to a dataset, at the positions after its last (``db.importer``), and leave it
only with the dataset: their texts are never edited. So an app process reads a dataset's texts once and
then only the items whose position is past the last it holds; the dataset's creation time tells a
dataset from a later one given the same id. Reading and indexing take about a second at a million
sentences, so they run on a thread of their own, started when the browser opens (or by a search); until
they are done the store's own search (``LIKE``) answers, as it always did.

SQLite's ``LIKE`` ignores the case of ASCII letters only, as the index does. PostgreSQL's ``ILIKE``
folds every letter by the database's locale: there the store always answers.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.engine import read_session
from db.text_index import TextIndex

log = logging.getLogger(__name__)

#: Bytes of texts held in all (the dataset searched last is always held): the captions of a million
#: AlignBench sentences take 47 MB, and their filters 12 MB.
MAX_BYTES = 512 * 1024 * 1024
MAX_DATASETS = 16


@dataclass(frozen=True)
class _Held:
    created_at: Any  # the dataset's: another dataset given the same id is another dataset
    last_position: int  # the index holds the items up to this position (-1: none)
    index: TextIndex


_held: OrderedDict[tuple[str, int], _Held] = OrderedDict()
_reading: dict[tuple[str, int], threading.Thread] = {}
_lock = threading.Lock()


def _where(session: Session, dataset_id: int) -> tuple[Any, int] | None:
    """The dataset's creation time and last position as ``session`` sees them (None: no such dataset)."""
    created_at = session.scalar(select(m.Dataset.created_at).where(m.Dataset.id == dataset_id))
    if created_at is None:
        return None
    last = session.scalar(select(func.max(m.Item.position)).where(m.Item.dataset_id == dataset_id))
    return created_at, -1 if last is None else last


def _read(engine: Engine, key: tuple[str, int]) -> None:
    """Bring the dataset's texts up to date: read the items past those held, and index them."""
    dataset_id = key[1]
    try:
        with read_session(engine) as session:
            where = _where(session, dataset_id)
            if where is None:
                return
            created_at, last = where
            with _lock:
                held = _held.get(key)
            if held is None or held.created_at != created_at or held.last_position > last:
                held = _Held(created_at, -1, TextIndex.empty())
            rows = session.execute(
                select(m.Item.id, m.Item.external_id, m.Item.prompt, m.Item.response)
                .where(
                    m.Item.dataset_id == dataset_id,
                    m.Item.position > held.last_position,
                    m.Item.position <= last,
                )
                .order_by(m.Item.position, m.Item.id)
            )
            index = held.index.extended((row[0], (row[1], row[2] or "", row[3])) for row in rows)
        with _lock:
            _held[key] = _Held(created_at, last, index)
            _held.move_to_end(key)
            while len(_held) > MAX_DATASETS or (
                len(_held) > 1 and sum(h.index.n_bytes for h in _held.values()) > MAX_BYTES
            ):
                _held.popitem(last=False)
    except Exception:  # the store's own search answers meanwhile; the next search tries again
        log.warning("reading the texts of dataset %s for search failed", dataset_id, exc_info=True)
    finally:
        with _lock:
            _reading.pop(key, None)


def _start_reading(engine: Engine, key: tuple[str, int]) -> None:
    with _lock:
        if key in _reading:
            return
        thread = threading.Thread(target=_read, args=(engine, key), name="text-search", daemon=True)
        _reading[key] = thread
    thread.start()


def _held_as(engine: Engine, session: Session, dataset_id: int) -> TextIndex | None:
    """The dataset's texts as ``session`` sees them, if held; if not, they are read on a thread of their
    own (unless ``session`` sees an older state than the texts held: those answer the later readers)."""
    where = _where(session, dataset_id)
    if where is None:
        return None
    key = (engine.url.render_as_string(hide_password=False), dataset_id)
    with _lock:
        held = _held.get(key)
        if held is not None:
            _held.move_to_end(key)
    if held is not None and (held.created_at, held.last_position) == where:
        return held.index
    if held is None or held.created_at != where[0] or held.last_position < where[1]:
        _start_reading(engine, key)
    return None


def prepare(engine: Engine, dataset_id: int) -> None:
    """Start reading the dataset's texts unless they are held: the browser calls it as it opens, so that
    its first search, a few seconds later, finds them read."""
    if engine.dialect.name == "sqlite":
        with read_session(engine) as session:
            _held_as(engine, session, dataset_id)


def matching_items(
    engine: Engine, session: Session, dataset_id: int, needle: str, at_most: int
) -> list[int] | None:
    """The ids, in dataset order, of the items whose id, prompt or response holds ``needle`` (ASCII case
    ignored, as SQLite's ``LIKE``), as ``session`` (the caller's read transaction) sees them.

    None when the store's own search should answer: on PostgreSQL; when more than ``at_most`` items
    hold it (a common word, which that search finds early, stopping at the page it needs); or while
    the dataset's texts are being read (this starts reading them).
    """
    if engine.dialect.name != "sqlite":
        return None
    index = _held_as(engine, session, dataset_id)
    return None if index is None else index.matching(needle, at_most)


def settle(timeout: float | None = None) -> None:
    """Wait for the texts being read (a measurement or a test that wants the index's answer)."""
    with _lock:
        threads = list(_reading.values())
    for thread in threads:
        thread.join(timeout)


def held_bytes() -> int:
    """About the memory the texts held take, in all."""
    with _lock:
        return sum(h.index.n_bytes for h in _held.values())


def forget() -> None:
    """Drop every dataset's texts: the next search reads them again."""
    settle()
    with _lock:
        _held.clear()
