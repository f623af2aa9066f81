"""Items: browsing a dataset (search, filters, pages) and opening one item with its structure."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ARRAY, Engine, Integer, Select, any_, bindparam, exists, false, func, or_, select
from sqlalchemy.orm import Session

from db import models as m
from db.engine import read_session
from db.repositories.text_search import Found, matching_items
from db.repositories.visibility import assigned_items
from formats.storable import unstorable


@dataclass(frozen=True)
class ItemRow:
    """One line of the dataset browser."""

    id: int
    external_id: str
    position: int
    subset: str | None
    source_model: str | None
    task_type: str
    prompt: str
    response_preview: str
    n_gold_spans: int


@dataclass(frozen=True)
class SentenceView:
    index: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ClaimView:
    id: int
    index: int
    text: str
    start: int | None
    end: int | None
    segment: int | None
    segment_text: str | None
    source: str


@dataclass(frozen=True)
class TripletView:
    id: int
    index: int
    subject: str
    relation: str
    object: str
    label_set_id: int | None


@dataclass(frozen=True)
class ItemView:
    id: int
    dataset_id: int
    external_id: str
    position: int
    subset: str | None
    split: str | None
    source_model: str | None
    task_type: str
    prompt: str
    response: str
    reference: str | None
    image_ref: str | None
    meta: dict[str, Any]
    sentences: tuple[SentenceView, ...] = ()
    claims: tuple[ClaimView, ...] = ()
    reference_triplets: tuple[TripletView, ...] = ()


@dataclass(frozen=True)
class ItemFilter:
    text: str = ""
    subsets: tuple[str, ...] = ()
    source_models: tuple[str, ...] = ()
    # None: any; True: gold marks a hallucination; False: gold marks none.
    hallucinated: bool | None = None
    external_ids: tuple[str, ...] = field(default=())
    # Only the items assigned to this annotator (on any task): what an annotator browses in team mode.
    assigned_to: int | None = None


@dataclass(frozen=True)
class Facets:
    subsets: tuple[str, ...]
    source_models: tuple[str, ...]
    task_types: tuple[str, ...]


def _gold_span_exists() -> Any:
    gold = select(m.LabelSet.id).where(m.LabelSet.kind == "gold", m.LabelSet.dataset_id == m.Item.dataset_id)
    incorrect = exists().where(
        m.SentenceLabel.item_id == m.Item.id,
        m.SentenceLabel.label == "incorrect",
        m.SentenceLabel.label_set_id.in_(gold),
    )
    claim = exists().where(
        m.ClaimLabel.item_id == m.Item.id,
        m.ClaimLabel.label == "hallucination",
        m.ClaimLabel.label_set_id.in_(gold),
    )
    span = exists().where(m.Span.item_id == m.Item.id, m.Span.label_set_id.in_(gold))
    return or_(span, incorrect, claim)


def _filtered(
    query: Select[Any], dataset_id: int, flt: ItemFilter, dialect: str, found: Found | None = None
) -> Select[Any]:
    """``query`` kept to the dataset's items matching ``flt``; ``found``, when known, the items whose
    texts hold ``flt.text``, or may (:func:`db.repositories.text_search.matching_items`)."""
    if unstorable([flt.text, flt.subsets, flt.source_models, flt.external_ids]) is not None:
        # Typed or from the address: text no store holds matches nothing (PostgreSQL refused the query).
        return query.where(false())
    if found is not None:
        # Looked up by id: asked for the dataset too, SQLite would walk its index past every item.
        query = query.where(_among(m.Item.id, found.ids, dialect))
    else:
        query = query.where(m.Item.dataset_id == dataset_id)
    if (needle := flt.text.strip()) and (found is None or not found.exact):
        columns = (m.Item.external_id, m.Item.prompt, m.Item.response)
        query = query.where(or_(*(_holds(column, needle, dialect) for column in columns)))
    if flt.subsets:
        query = query.where(m.Item.subset.in_(flt.subsets))
    if flt.source_models:
        query = query.where(m.Item.source_model.in_(flt.source_models))
    if flt.external_ids:
        query = query.where(m.Item.external_id.in_(flt.external_ids))
    if flt.assigned_to is not None:
        query = query.where(m.Item.id.in_(assigned_items(dataset_id, flt.assigned_to)))
    if flt.hallucinated is not None:
        condition = _gold_span_exists()
        query = query.where(condition if flt.hallucinated else ~condition)
    return query


def _among(column: Any, ids: list[int], dialect: str) -> Any:
    """``column`` is one of ``ids``: on PostgreSQL one array bound as a whole (``= ANY``), as a thousand
    values bound one by one took 5-10 ms of building and sending beside the query's 4 ms."""
    if dialect == "postgresql":
        return column == any_(bindparam(None, ids, type_=ARRAY(Integer)))
    return column.in_(ids)


def _holds(column: Any, needle: str, dialect: str) -> Any:
    """``column`` holds ``needle``, whatever the case of its letters.

    A search for "50%" or "a_b" means those characters: autoescape turns the LIKE wildcards in the
    typed text into literals (with an ESCAPE clause). SQLite's LIKE ignores the case of ASCII letters,
    and of no others, exactly as its ``lower()`` folds them, so there the match needs no lowered copy of
    every text: half the time of a search through a million sentences.
    """
    if dialect == "sqlite":
        return column.contains(needle, autoescape=True)
    return column.icontains(needle, autoescape=True)


def count_items(engine: Engine, dataset_id: int, flt: ItemFilter = ItemFilter()) -> int:
    """How many items of the dataset match ``flt``.

    Rows are counted (``count(*)``), which an index on the filtered columns answers alone on a vacuumed
    PostgreSQL store; counting ``items.id``, which no such index holds, read every matching row (a
    source model's 17,856 items at a million sentences: 42.6 ms against 1.7 ms)."""
    with read_session(engine) as session:
        return (
            session.scalar(
                _filtered(select(func.count()).select_from(m.Item), dataset_id, flt, engine.dialect.name)
            )
            or 0
        )


def _row_columns(dataset_id: int) -> tuple[Any, ...]:
    """What a line of the browser shows: the item, previews of its texts and its gold span count."""
    gold = select(m.LabelSet.id).where(m.LabelSet.kind == "gold", m.LabelSet.dataset_id == dataset_id)
    n_spans = (
        select(func.count())
        .where(m.Span.item_id == m.Item.id, m.Span.label_set_id.in_(gold))
        .correlate(m.Item)
        .scalar_subquery()
    )
    return (
        m.Item.id,
        m.Item.external_id,
        m.Item.position,
        m.Item.subset,
        m.Item.source_model,
        m.Item.task_type,
        func.substr(m.Item.prompt, 1, 200),
        func.substr(m.Item.response, 1, 200),
        n_spans,
    )


def item_page(engine: Engine, dataset_id: int, flt: ItemFilter, offset: int, limit: int) -> list[ItemRow]:
    """One page of matching items in dataset order (count them with :func:`count_items`)."""
    query = (
        _filtered(select(*_row_columns(dataset_id)), dataset_id, flt, engine.dialect.name)
        .order_by(m.Item.position, m.Item.id)  # positions may tie: the id keeps every page stable
        .offset(offset)
        .limit(limit)
    )
    with read_session(engine) as session:
        return [ItemRow(*row) for row in session.execute(query)]


#: How many matches the browser counts, at least, when matching means reading every item's texts or
#: labels: a word found in most of a million sentences' captions is counted in a millisecond up to
#: here, and in a tenth of a second to the end.
COUNT_BOUND = 1_000


@dataclass(frozen=True)
class BrowsePage:
    """One page of the browser and what is known of the matches around it."""

    rows: list[ItemRow]
    page: int  # 1-based: the page asked for, or the last one when that is past the end
    n_pages: int  # pages known to hold matches: all of them when ``counted_all``
    n_matching: int  # exact when ``counted_all``; otherwise more than this many items match
    counted_all: bool


def _reads_every_item(flt: ItemFilter) -> bool:
    """Whether matching ``flt`` reads every item's texts or gold labels (no index answers it)."""
    return bool(flt.text.strip()) or flt.hallucinated is not None


#: The most items whose ids a search of the texts held hands the store (a word held by more, searched to
#: a page further on, is left to the store): well within every store's limit on bound values.
MAX_FOUND_IDS = 10_000


def _first_matches(
    engine: Engine, session: Session, dataset_id: int, flt: ItemFilter, bound: int
) -> list[int]:
    """The ids of the first ``bound + 1`` items matching ``flt`` (all of them when fewer match), in
    dataset order, as ``session`` sees them.

    The texts held in memory name the items holding the searched word, or the first of them when it is
    common (:func:`db.repositories.text_search.matching_items`), and the store keeps to those. First
    ones are enough when ``bound + 1`` of them match the rest of ``flt`` (and, on PostgreSQL, ``ILIKE``):
    every match before the last of them is among them. Else the store searches every item in order, as
    it does while the texts are being read; and so it does at once when at least every other item holds
    the word, as it then reads few more rows than it keeps. (A word in one caption of 14, searched by
    PostgreSQL in order at a million sentences, read 13,904 rows for its first 1,001 matches: 58 ms,
    against 13 ms for finding them in memory and reading those.)"""
    dialect = engine.dialect.name
    needle = flt.text.strip()
    asked = min(bound, MAX_FOUND_IDS)
    found = matching_items(engine, session, dataset_id, needle, asked) if needle else None

    def first(known: Found | None) -> list[int]:
        return list(
            session.scalars(
                _filtered(select(m.Item.id), dataset_id, flt, dialect, known)
                .order_by(m.Item.position, m.Item.id)
                .limit(bound + 1)
            )
        )

    if found is not None and (found.complete or (asked == bound and len(found.ids) * 2 < found.read)):
        ids = first(found)
        if found.complete or len(ids) > bound:
            return ids
    return first(None)


def browse_page(
    engine: Engine,
    dataset_id: int,
    flt: ItemFilter,
    page: int,
    page_size: int,
    count_bound: int = COUNT_BOUND,
) -> BrowsePage:
    """Page ``page`` (1-based) of the items matching ``flt``, in dataset order, with their count.

    Filters an index answers (subset, source model, assignment) are counted exactly. A search of the
    texts, or of what gold says, is counted while its matches are found in dataset order, and the
    counting stops after ``count_bound`` matches or the end of the asked-for page, whichever is
    later: the common word is counted in a millisecond and the page needs no second pass, while the
    next page is always known to exist. Once a dataset's texts are read into memory, they say which
    items hold the word (:func:`_first_matches`): a rare word would have the store read every item's
    texts, and a common one hundreds of items for each page's worth of matches.
    """
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    page = max(1, page)
    dialect = engine.dialect.name
    if not _reads_every_item(flt):
        total = count_items(engine, dataset_id, flt)
        n_pages = max(1, math.ceil(total / page_size))
        page = min(page, n_pages)
        rows = item_page(engine, dataset_id, flt, (page - 1) * page_size, page_size)
        return BrowsePage(rows, page, n_pages, total, True)
    bound = max(count_bound, page * page_size)
    with read_session(engine) as session:  # one snapshot for the matches and their rows
        if dialect != "sqlite":  # SQLite's read transaction is one snapshot already
            session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        ids = _first_matches(engine, session, dataset_id, flt, bound)
        n_pages = max(1, math.ceil(len(ids) / page_size))
        page = min(page, n_pages)
        chosen = ids[(page - 1) * page_size : page * page_size]
        rows = (
            [
                ItemRow(*row)
                for row in session.execute(
                    select(*_row_columns(dataset_id))
                    .where(m.Item.id.in_(chosen))
                    .order_by(m.Item.position, m.Item.id)
                )
            ]
            if chosen
            else []
        )
    counted_all = len(ids) <= bound
    return BrowsePage(rows, page, n_pages, len(ids) if counted_all else bound, counted_all)


def facets(engine: Engine, dataset_id: int) -> Facets:
    """The values the browser's filters offer."""
    with read_session(engine) as session:

        def values(column: Any) -> tuple[str, ...]:
            query = select(column).where(m.Item.dataset_id == dataset_id, column.is_not(None)).distinct()
            return tuple(sorted(session.scalars(query)))

        return Facets(values(m.Item.subset), values(m.Item.source_model), values(m.Item.task_type))


def get_item(engine: Engine, dataset_id: int, external_id: str) -> ItemView | None:
    """One item with its sentences, claims and reference triplets, or None."""
    if unstorable(external_id) is not None:  # typed in a jump box or an address: no item has such an id
        return None
    with read_session(engine) as session:
        item = session.scalar(
            select(m.Item).where(m.Item.dataset_id == dataset_id, m.Item.external_id == external_id)
        )
        if item is None:
            return None
        return ItemView(
            id=item.id,
            dataset_id=item.dataset_id,
            external_id=item.external_id,
            position=item.position,
            subset=item.subset,
            split=item.split,
            source_model=item.source_model,
            task_type=item.task_type,
            prompt=item.prompt,
            response=item.response,
            reference=item.reference,
            image_ref=item.image_ref,
            meta=dict(item.meta or {}),
            sentences=tuple(
                SentenceView(s.index, s.start, s.end, item.response[s.start : s.end]) for s in item.sentences
            ),
            claims=tuple(
                ClaimView(c.id, c.index, c.text, c.start, c.end, c.segment, c.segment_text, c.source)
                for c in item.claims
            ),
            reference_triplets=tuple(
                TripletView(t.id, t.index, t.subject, t.relation, t.object, None)
                for t in item.triplets
                if t.label_set_id is None
            ),
        )


def item_at(engine: Engine, dataset_id: int, position: int) -> str | None:
    """The external id of the item at a 0-based position in dataset order."""
    with read_session(engine) as session:
        return session.scalar(
            select(m.Item.external_id)
            .where(m.Item.dataset_id == dataset_id)
            .order_by(m.Item.position)
            .offset(position)
            .limit(1)
        )


def neighbours(engine: Engine, dataset_id: int, position: int) -> tuple[str | None, str | None]:
    """External ids of the items just before and after ``position`` in dataset order."""
    with read_session(engine) as session:
        previous = session.scalar(
            select(m.Item.external_id)
            .where(m.Item.dataset_id == dataset_id, m.Item.position < position)
            .order_by(m.Item.position.desc())
            .limit(1)
        )
        following = session.scalar(
            select(m.Item.external_id)
            .where(m.Item.dataset_id == dataset_id, m.Item.position > position)
            .order_by(m.Item.position)
            .limit(1)
        )
    return previous, following
