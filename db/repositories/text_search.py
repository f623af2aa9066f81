"""The browser's search, answered from each dataset's texts held in memory (``db.text_index``).

Items are only ever added to a dataset, at the positions after its last (``db.importer``), and leave it
only with the dataset: their texts are never edited. So an app process reads a dataset's texts once and
then only the items whose position is past the last it holds; the dataset's creation time tells a
dataset from a later one given the same id. Reading and indexing take about a second at a million
sentences, so they run on a thread of their own, started when the browser opens (or by a search); until
they are done the store's own search (``LIKE``) answers, as it always did.

SQLite's ``LIKE`` ignores the case of ASCII letters only, as the index does: there the index names the
items that hold the word. PostgreSQL's ``ILIKE`` folds every letter by the database's locale: there the
index names the items that may hold it, and the store's search, kept to those, says which do. (Which of
the two searches a page then runs: ``db.repositories.items._first_matches``.) (On both stores imports
appending to one dataset take turns, so items are committed in the order of their positions.)
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
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
class _State:
    """What tells one state of a dataset's items from another."""

    created_at: Any  # the dataset's: another dataset given the same id is another dataset
    last_position: int  # of its last item (-1: none)


@dataclass(frozen=True)
class _Held:
    state: _State  # of the items the index holds
    index: TextIndex


_held: OrderedDict[tuple[str, int], _Held] = OrderedDict()
_reading: dict[tuple[str, int], threading.Thread] = {}
_lock = threading.Lock()


def _state(session: Session, dataset_id: int) -> _State | None:
    """The state of the dataset's items as ``session`` sees it (None: no such dataset)."""
    created_at = session.scalar(select(m.Dataset.created_at).where(m.Dataset.id == dataset_id))
    if created_at is None:
        return None
    last = session.scalar(select(func.max(m.Item.position)).where(m.Item.dataset_id == dataset_id))
    return _State(created_at, -1 if last is None else last)


def _texts(
    session: Session, dataset_id: int, after: int, up_to: int
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """The id and texts of each of the dataset's items at positions after ``after`` up to ``up_to``."""
    rows = session.execute(
        select(m.Item.id, m.Item.external_id, m.Item.prompt, m.Item.response)
        .where(m.Item.dataset_id == dataset_id, m.Item.position > after, m.Item.position <= up_to)
        .order_by(m.Item.position, m.Item.id)
    )
    return ((row[0], (row[1], row[2] or "", row[3])) for row in rows)


def _read(engine: Engine, key: tuple[str, int]) -> None:
    """Bring the dataset's texts up to date: read the items past those held, and index them."""
    dataset_id = key[1]
    try:
        with read_session(engine) as session:
            if engine.dialect.name != "sqlite":  # one snapshot for the last position and the texts
                session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            state = _state(session, dataset_id)
            if state is None:
                return
            with _lock:
                held = _held.get(key)
            if (
                held is None
                or held.state.created_at != state.created_at
                or held.state.last_position > state.last_position
            ):
                held = _Held(_State(state.created_at, -1), TextIndex.empty(every_case=_every_case(engine)))
            index = held.index.extended(
                _texts(session, dataset_id, held.state.last_position, state.last_position)
            )
        with _lock:
            _held[key] = _Held(state, index)
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


def _every_case(engine: Engine) -> bool:
    """Whether the store's search ignores the case of every letter (PostgreSQL's ``ILIKE``), not only
    of the ASCII ones (SQLite's ``LIKE``)."""
    return engine.dialect.name != "sqlite"


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
    state = _state(session, dataset_id)
    if state is None:
        return None
    key = (engine.url.render_as_string(hide_password=False), dataset_id)
    with _lock:
        held = _held.get(key)
        if held is not None:
            _held.move_to_end(key)
    if held is not None and held.state == state:
        return held.index
    if (
        held is None
        or held.state.created_at != state.created_at
        or held.state.last_position < state.last_position
    ):
        _start_reading(engine, key)
    return None


def prepare(engine: Engine, dataset_id: int) -> None:
    """Start reading the dataset's texts unless they are held: the browser calls it as it opens, so that
    its first search, a few seconds later, finds them read."""
    with read_session(engine) as session:
        _held_as(engine, session, dataset_id)


@dataclass(frozen=True)
class Found:
    """What the texts held say of a search: the ids, in dataset order, of the items that hold the word
    (``exact``, on SQLite), or of those that may hold it (on PostgreSQL: the store's search, kept to
    them, says which do). All of them when ``complete``; else those among the dataset's first ``read``
    items, and more may follow."""

    ids: list[int]
    exact: bool
    complete: bool
    read: int


def matching_items(
    engine: Engine, session: Session, dataset_id: int, needle: str, at_most: int
) -> Found | None:
    """The items whose id, prompt or response holds ``needle`` as the store's search finds it (ASCII
    case ignored on SQLite, as its ``LIKE``; every letter's case, by the locale, on PostgreSQL, where the
    items that may hold it are given: :meth:`TextIndex.candidates`), as ``session`` (the caller's read
    transaction) sees them: all of them, or the first ``at_most + 1`` when more hold it, or may (a
    common word, found in the first blocks of texts).

    None when the store's own search should answer: while the dataset's texts are being read (this
    starts reading them); on PostgreSQL, for a word of no ASCII character but i and k.
    """
    index = _held_as(engine, session, dataset_id)
    if index is None:
        return None
    exact = not index.every_case
    hits = index.matching(needle, at_most) if exact else index.candidates(needle, at_most)
    return None if hits is None else Found(hits.ids, exact, len(hits.ids) <= at_most, hits.read)


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
