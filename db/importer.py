"""Write a :class:`~formats.records.Bundle` into the store: validate everything first, then one transaction.

A file either imports or nothing changes. Re-importing the same bundle is idempotent: items are matched
by their external id, label sets by (kind, name), and a label set's annotations on an item are replaced,
never appended — but only when replacing was chosen if that removes or changes stored rows
(:mod:`db.import_changes`); the replaced rows go into the import's edit-log entry, so it can be undone. Rows are written with bulk Core inserts (executemany), because a benchmark release has
hundreds of thousands of rows and the per-object ORM path is ten times slower; on PostgreSQL they go by
``COPY``. A large file may come in batches (:func:`import_bundles`): each is validated and written in the
same one transaction, which is rolled back when the whole file is refused.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, text
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, require_in
from db.column_lengths import (
    overlong_annotation_fields,
    overlong_headers,
    overlong_item_fields,
    overlong_rater,
)
from db.copy_rows import copy_rows
from db.engine import hold_name, write_session
from db.import_changes import ImportChanges, MetaTexts, ReplaceRequired, plan_changes, units_now
from db.import_items import StoredItem, StoredItems
from db.item_statuses import PendingStatuses, StatusRow, campaign_ids, campaign_name, pages, status_problems
from db.label_set_keys import Key, label_set_id, label_set_ids
from db.record_reach import Reach, reach_by_item
from db.repositories.annotations import response_scale
from db.triplet_verdicts import LostVerdict, PendingVerdicts, verdict_problems
from db.value_check import unstorable_values
from formats.layouts import with_format
from formats.problems import ImportRejected, Problem, shown_id
from formats.records import (
    Annotations,
    Bundle,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    ResponseScoreRecord,
)
from formats.sentences import split_sentences

_CHUNK = 5_000
# The tables of what a label set says about an item, each row carrying both.
_OWNED = (
    *(m.Span, m.SentenceLabel, m.ClaimLabel, m.RawOutput, m.SentenceScore, m.TokenProbability),
    *(m.ResponseScore, m.Triplet),
)
# The label sets an import marks coverage for: what they say of an item is whole once given.
COVERED_KINDS = ("gold", "detector")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class ImportResult:
    dataset: str
    items_created: int = 0
    items_existing: int = 0
    label_sets: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    changes: ImportChanges = field(default_factory=ImportChanges)
    written_label_sets: set[tuple[str, str]] = field(default_factory=set, repr=False, compare=False)

    @property
    def skipped(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "items_created": self.items_created,
            "items_existing": self.items_existing,
            "label_sets": self.label_sets,
            "rows": self.rows,
            "problems": [p.to_dict() for p in self.problems],
            "changes": self.changes.to_dict(),
        }


def import_bundle(
    engine: Engine,
    bundle: Bundle,
    *,
    actor: Actor,
    source: str = "<input>",
    problems: Sequence[Problem] = (),
    allow_skip: bool = False,
    annotator: str | None = None,
    replace_existing: bool = False,
) -> ImportResult:
    """Validate ``bundle`` against itself and the store, then write it atomically.

    ``problems`` are those a reader already found (records it could not parse). With ``allow_skip``
    False any error rejects the whole input (:class:`ImportRejected`, nothing written); with True the
    sound records are written and the bad ones reported in the result. An import that would remove or
    change stored annotations raises :class:`ReplaceRequired` (nothing written) unless
    ``replace_existing``; only the items whose annotations differ are rewritten.

    Importing needs the ``manage_data`` right of ``actor`` (:class:`~db.access.Forbidden`, nothing
    written); ``annotator`` names who the log says imported, where the actor is the command line.
    """
    return import_bundles(
        engine,
        [bundle],
        actor=actor,
        source=source,
        problems=list(problems),
        allow_skip=allow_skip,
        annotator=annotator,
        replace_existing=replace_existing,
        check_values=True,
    )


def import_bundles(
    engine: Engine,
    bundles: Iterable[Bundle],
    *,
    actor: Actor,
    source: str = "<input>",
    problems: list[Problem],
    allow_skip: bool = False,
    annotator: str | None = None,
    replace_existing: bool = False,
    check_values: bool = False,
) -> ImportResult:
    """:func:`import_bundle` of one input given in batches (a large file read as it is imported): each
    batch is validated against the store and the batches before it, and written in the import's one
    transaction, so only a batch's records are held at a time.

    ``bundles`` all name the same dataset; ``problems`` is the reader's own list, which it may still be
    appending to as it reads. Every batch is validated even after an error, so the report is whole; once
    an error (without ``allow_skip``) or a change needing ``replace_existing`` is found nothing more is
    written, and raising at the end rolls back what was: a refused import leaves the store as it was.

    ``check_values``: walk every record for values no store can keep (:mod:`db.value_check`), as
    :func:`import_bundle` does; a file's reader has done so already, naming its lines.
    """
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        batches = _Batches(session, source, problems, check_values=check_values)
        for bundle in bundles:
            batches.add(bundle, allow_skip=allow_skip, replace_existing=replace_existing)
        if batches.dataset is None:
            raise ImportRejected([*problems, Problem(source, "-", "-", "the input holds no dataset")])
        batches.finish(allow_skip=allow_skip)
        if any(p.severity == "error" for p in problems) and not allow_skip:
            raise ImportRejected(problems)
        changes = batches.changes
        if changes.needs_replace and not replace_existing:
            raise ReplaceRequired(changes)
        result = batches.result
        session.add(
            m.EditLog(
                annotator_id=actor.id if actor.id is not None else _annotator_id(session, annotator),
                action="import",
                entity="datasets",
                entity_id=batches.dataset.id,
                before=changes.log_before(),
                after={
                    "source": source,
                    "rows": result.rows,
                    "skipped": len(result.skipped),
                    "changes": changes.to_dict(),
                    "digests": changes.digests,
                    **logged_coverage(added=batches.marked, units=changes.label_set_items),
                    **logged_created(batches.fresh),
                },
            )
        )
    return result


class _Batches:
    """The state of an import across its batches: the dataset, the items stored so far (before the
    import, and written by it), the label sets it made, and the changes and rows summed up."""

    def __init__(
        self, session: Session, source: str, problems: list[Problem], *, check_values: bool = False
    ) -> None:
        self.session, self.source, self.problems = session, source, problems
        self.check_values = check_values
        self.dataset: m.Dataset | None = None
        self.stored: StoredItems | None = None  # the items each batch names (read as it comes)
        self.seen: set[str] = set()
        self.fresh: set[tuple[str, str]] = set()  # label sets this import created
        self.held: set[tuple[str, str]] = set()  # label sets found, or whose names it holds (hold_name)
        self.counted: dict[tuple[str, str], int] = {}  # records of the batches before, for numbering
        self.rating_tasks: list[RatingTaskRecord] = []
        self.changes = ImportChanges()
        self.result = ImportResult(dataset="", problems=problems, changes=self.changes)
        self.writing = True
        self.written = 0  # batches written
        # Verdicts on other label sets' triplets, statuses on rating campaigns' queues: written once every
        # label set and rating task is (see finish).
        self.verdicts = PendingVerdicts()
        self.statuses = PendingStatuses()
        self.marked: dict[Key, list[str]] = {}  # the items each label set's coverage marks were added to

    def add(self, bundle: Bundle, *, allow_skip: bool, replace_existing: bool) -> None:
        session, problems = self.session, self.problems
        values = (
            unstorable_values(bundle, self.source, self.counted, IMPORTED_SETTINGS)
            if self.check_values
            else None
        )
        if values is not None and values.whole_input:  # before the dataset is looked up or made
            raise ImportRejected([*problems, *values.whole_input])
        if overlong := overlong_headers(bundle):  # a name typed on a page, say: refuses the whole input
            raise ImportRejected([*problems, *(Problem(self.source, *found) for found in overlong)])
        if self.dataset is None:
            found = select(m.Dataset.id).where(m.Dataset.name == bundle.dataset.name)
            if session.scalar(found) is None:  # held while made only: a whole import would hold up others
                hold_name(session, "dataset", bundle.dataset.name)
            self.dataset, new = _get_or_create_dataset(session, bundle)
            self.stored = StoredItems(session, self.dataset.id, new=new)
            self.result.dataset = self.dataset.name
            _keep_settings(self.dataset, bundle)
        dataset, stored = self.dataset, self.stored
        assert stored is not None
        if bundle.items:
            # Held until the import ends, and before any label set's name (in that order always): an
            # import appending to the dataset meanwhile gives its items the positions after this one's,
            # never the same ones (PostgreSQL; SQLite's writes take turns already). The browser's search
            # reads a dataset's texts again only past the last position it holds (db.repositories.text_search).
            hold_name(session, "dataset items", dataset.id)
        # Before anything of them is read: an import (or a live run) making one of these label sets now
        # is waited for, and this batch is then planned against what it made. Only label sets not made
        # yet are held (until the import ends): holding one that exists would hold up a live run's start.
        named = {(ls.kind, ls.name) for ls in bundle.label_sets} - self.held
        if named:
            made = {
                (kind, name)
                for kind, name in session.execute(
                    select(m.LabelSet.kind, m.LabelSet.name).where(
                        m.LabelSet.dataset_id == dataset.id,
                        m.LabelSet.name.in_(sorted({name for _, name in named})),
                    )
                )
            }
            for kind, name in sorted(named - made):
                hold_name(session, "label set", dataset.id, kind, name)
            self.held |= named
        stored.load(_named_items(bundle), with_reference=any(i.reference_triplets for i in bundle.items))
        shapes: dict[str, tuple[int, int, int]] = {}
        firsts = {(ls.kind, ls.name): self.counted.get((ls.kind, ls.name), 0) for ls in bundle.label_sets}
        bad_items = _validate(
            bundle, stored, self.source, problems, self.seen, shapes, self.counted, self.verdicts.refused
        )
        if values is not None:
            problems.extend(values.items)
            bad_items |= values.bad_items
            for external_id in values.bad_items:
                shapes.pop(external_id, None)
        _response_scale_problems(session, dataset.id, bundle, bad_items, self.source, problems)
        rating_tasks = _sound_rating_tasks(
            session,
            dataset.id,
            bundle,
            stored,
            bad_items,
            self.source,
            problems,
            unsound=values.bad_ratings if values is not None else frozenset(),
        )
        self.verdicts.refused |= bad_items  # every check of the batch's records made
        if any(p.severity == "error" for p in problems) and not allow_skip:
            self.writing = False
        done = {key: len(items) for key, items in self.changes.label_set_items.items()}
        done_pairs = {key: len(pairs) for key, pairs in self.changes.rating_pairs.items()}
        meta_texts = MetaTexts()  # this batch's: the plan encodes each label's meta, the writer reuses it
        plan_changes(
            session,
            dataset.id,
            bundle,
            bad_items,
            rating_tasks,
            into=self.changes,
            fresh=self.fresh,
            meta_texts=meta_texts,
        )
        if self.changes.needs_replace and not replace_existing:
            self.writing = False
        # This batch's units whose rows differ from the stored ones, by label set.
        rewritten: dict[tuple[str, str], set[str]] = {}
        for label_set in bundle.label_sets:
            key = (label_set.kind, label_set.name)
            rewritten[key] = items = set(self.changes.label_set_items.get(key, [])[done.get(key, 0) :])
            self.verdicts.note(label_set, firsts[key], items)
            self.statuses.note(label_set, firsts[key], items)
        if not self.writing:
            self._remember_items(bundle, shapes, written={})
            return
        writer = _Writer(
            session, dataset, stored, bad_items, self.result, fresh=self.fresh, meta_texts=meta_texts
        )
        writer.write_items(bundle.items, bundle.dataset.source_format)
        for label_set in bundle.label_sets:
            items = rewritten[(label_set.kind, label_set.name)]
            writer.write_label_set(
                replace(label_set, annotations=[a for a in label_set.annotations if a.item in items])
            )
            marked = writer.cover(label_set)
            if marked:
                self.marked.setdefault((label_set.kind, label_set.name), []).extend(marked)
        for task in rating_tasks:
            pairs = set(self.changes.rating_pairs.get(task.name, [])[done_pairs.get(task.name, 0) :])
            writer.write_rating_task(
                replace(task, ratings=[r for r in task.ratings if (r.rater, r.item) in pairs])
            )
        self._remember_items(bundle, shapes, written=writer.item_ids)
        self.written += 1
        if self.written & (self.written - 1) == 0:  # after the 1st, 2nd, 4th, 8th … batch written
            self._refresh_statistics()

    def finish(self, *, allow_skip: bool) -> None:
        """After the last batch: check the verdicts on other label sets' triplets against those triplets,
        and the statuses on rating campaigns' queues against the campaigns (every label set and rating
        task of the input written by now), and write the sound ones."""
        assert self.dataset is not None and self.stored is not None
        self.stored.load(  # the items of the verdicts and statuses held, and of the verdicts given again
            [
                *self.verdicts.named_items(),
                *self.statuses.named_items(),
                *(lost[0] for _, lost in self.changes.regiven),
            ]
        )
        item_ids = self.stored.ids()
        rows, problems = self.verdicts.resolve(self.session, self.dataset.id, item_ids, self.source)
        statuses, status_problems = self.statuses.resolve(
            self.session, self.dataset.id, item_ids, self.source
        )
        problems += status_problems
        self.problems.extend(problems)
        if any(p.severity == "error" for p in problems) and not allow_skip:
            self.writing = False
        if not self.writing:
            return
        writer = _Writer(self.session, self.dataset, {}, set(), self.result, item_ids=item_ids)
        writer.write_verdicts(rows)
        writer.write_statuses(statuses)
        changes = self.changes
        writer.restore_lost_verdicts(changes.regiven)  # on the new triplets, as the judges' records say
        for key in (self.verdicts.dropped | self.statuses.dropped) & changes.label_set_items.keys():
            # Planned with a verdict or status left out since: fingerprinted as written, so it can be undone.
            _, changes.digests[f"{key[0]}:{key[1]}"] = units_now(
                self.session,
                self.dataset.id,
                key,
                changes.label_set_items[key],
                changes.reach.get(key, {}),
            )

    def _refresh_statistics(self) -> None:
        """PostgreSQL: ANALYZE the tables this import writes to, inside its transaction.

        The planner takes a table it has no statistics for (a new store's) as nearly empty, and plans
        the foreign-key checks of COPY and the lookups of later batches on that; once a table holds a
        few batches, sequential scans made a million-row import 3 times slower (170 s, against 52 s with
        the statistics refreshed as the tables double)."""
        connection = self.session.connection()
        if connection.dialect.name != "postgresql":
            return
        quote = connection.dialect.identifier_preparer.quote
        for table in sorted(self.result.rows):
            connection.exec_driver_sql(f"ANALYZE {quote(table)}")

    def _remember_items(
        self, bundle: Bundle, shapes: dict[str, tuple[int, int, int]], written: dict[str, int]
    ) -> None:
        """The batch's sound new items count as stored for the batches after it (their annotations may
        refer to them): those written are read back from the store; one not written (the import is
        refused already) is kept with its shape."""
        assert self.stored is not None
        for item in bundle.items:
            ext = item.external_id
            if ext in self.stored or ext not in shapes:
                continue
            if ext in written:
                self.stored.wrote(ext)
            else:
                self.stored.remember(ext, shapes[ext])


def write_annotations(
    session: Session,
    dataset: m.Dataset,
    label_sets: Sequence[LabelSetRecord],
    rating_tasks: Sequence[tuple[RatingTaskRecord, Sequence[tuple[str, str]]]],
    reach: Mapping[Key, Mapping[str, Reach]],
    lost: Iterable[tuple[Key, LostVerdict]] = (),
    created: set[Key] | None = None,
) -> dict[str, int]:
    """Rewrite what these label sets say about the items they mention, and these rating tasks' ratings
    of the (rater, external id) pairs given with each (cleared first); the rows written, per table.

    Used to put back the state an import replaced; the caller checked the records against the store.
    A label set's verdicts on other label sets' triplets and its statuses are replaced as far as its
    ``reach`` goes only (:mod:`db.record_reach`). ``lost``: verdicts
    other label sets gave on these label sets' triplets, which the change being undone removed with
    those triplets, by the judged label set; each is put back on the triplet at its position.
    Raises :class:`ImportRejected` when a verdict on another label set's triplet finds no such triplet
    now, or a status no such rating campaign (the caller's transaction is then rolled back).
    ``created`` receives the label sets that were not stored and are made here (an undo of an undo
    that had taken them away), with the attributes their records give.
    """
    result = ImportResult(dataset=dataset.name)
    stored = StoredItems(session, dataset.id)
    stored.load(
        [
            *(a.item for label_set in label_sets for a in label_set.annotations),
            *(r.item for task, _ in rating_tasks for r in task.ratings),
            *(ext for _, pairs in rating_tasks for _, ext in pairs),
        ]
    )
    writer = _Writer(session, dataset, stored, set(), result, fresh=created)
    verdicts, statuses = PendingVerdicts(), PendingStatuses()
    for label_set in label_sets:
        writer.write_label_set(label_set, reach.get((label_set.kind, label_set.name), {}))
        verdicts.note(label_set, 0)
        statuses.note(label_set, 0)
    rows, problems = verdicts.resolve(session, dataset.id, writer.item_ids, "<stored state>")
    status_rows, status_problems = statuses.resolve(session, dataset.id, writer.item_ids, "<stored state>")
    if problems or status_problems:
        raise ImportRejected([*problems, *status_problems])
    writer.write_verdicts(rows)
    writer.write_statuses(status_rows)
    writer.restore_lost_verdicts(lost)
    for task, pairs in rating_tasks:
        writer.write_rating_task(task, clear=pairs)
    return result.rows


def logged_created(created: Iterable[Key]) -> dict[str, Any]:
    """The label sets a change made, as its edit-log entry keeps them (nothing when it made none): an
    undo that leaves one of them holding nothing takes it away too, rather than leaving an empty run
    in every list of detectors."""
    made = sorted(created)
    return {"created": [{"kind": kind, "name": name} for kind, name in made]} if made else {}


def logged_coverage(
    added: Mapping[Key, Sequence[str]],
    removed: Mapping[Key, Sequence[str]] | None = None,
    units: Mapping[Key, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The coverage marks a change added and took away, per gold label set or detector run, as its edit-log entry
    keeps them (nothing when it changed none). Marks on every item of the label set's unit in ``units``
    (a new gold label set's, say) are kept as ``"unit_items": true`` with only the others listed: a
    million items listed twice made the entry megabytes larger."""

    def entry(key: Key, items: Sequence[str]) -> dict[str, Any]:
        unit = set(units.get(key, ())) if units is not None else set()
        if not unit or not unit <= set(items):
            return {"kind": key[0], "name": key[1], "items": list(items)}
        return {
            "kind": key[0],
            "name": key[1],
            "unit_items": True,
            "items": [i for i in items if i not in unit],
        }

    kept = {
        what: [entry(key, items) for key, items in marks.items() if items]
        for what, marks in (("added", added), ("removed", removed or {}))
    }
    return {"coverage": kept} if any(kept.values()) else {}


def coverage_items(mark: Mapping[str, Any], before: Mapping[str, Any]) -> list[str]:
    """The items of one logged coverage mark (:func:`logged_coverage`), given its entry's ``before``."""
    listed = list(mark.get("items", []))
    if not mark.get("unit_items"):
        return listed
    unit = next(
        (
            list(unit["items"])
            for unit in before.get("label_sets", [])
            if (unit["kind"], unit["name"]) == (mark["kind"], mark["name"])
        ),
        [],
    )
    return [*unit, *listed]


def set_coverage(
    session: Session, dataset_id: int, key: Key, items: Sequence[str], covered: bool
) -> list[str]:
    """Add (``covered``) or take away the "done" mark of label set ``key`` (gold, or a detector run) on the
    spans task of these items, where the item is without a status there, or has the mark; the items
    changed. A mark is taken away only where the label set says nothing of the item now: where a later
    import gave it spans or labels there, that import's record still says the item was checked.

    An import marks the items it brings as covered (:meth:`_Writer.cover`) and logs which; its undo takes
    those marks away — left behind, they read as "gold checked this item and found nothing", or "the run
    was given this item and flagged nothing", in the metrics and in every export — and an undo of that
    undo puts them back."""
    owner_id = label_set_id(session, dataset_id, key)
    if owner_id is None or not items:
        return []
    changed: list[str] = []
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        ids = {
            ext: item_id
            for item_id, ext in session.execute(
                select(m.Item.id, m.Item.external_id).where(
                    m.Item.dataset_id == dataset_id, m.Item.external_id.in_(chunk)
                )
            )
        }
        statuses = {
            item_id: status
            for item_id, status in session.execute(
                select(m.ItemStatus.item_id, m.ItemStatus.status).where(
                    m.ItemStatus.label_set_id == owner_id,
                    m.ItemStatus.page == m.COVERAGE_PAGE,
                    m.ItemStatus.item_id.in_(list(ids.values())),
                )
            )
        }
        wanted = [
            ext for ext in chunk if ext in ids and statuses.get(ids[ext]) == (None if covered else "done")
        ]
        if wanted and not covered:
            said = {
                item_id
                for table in _OWNED
                for item_id in session.scalars(
                    select(table.item_id).where(
                        table.label_set_id == owner_id, table.item_id.in_([ids[ext] for ext in wanted])
                    )
                )
            }
            wanted = [ext for ext in wanted if ids[ext] not in said]
        if wanted and covered:
            rows = [
                {
                    "label_set_id": owner_id,
                    "item_id": ids[ext],
                    "page": m.COVERAGE_PAGE,
                    "status": "done",
                }
                for ext in wanted
            ]
            session.execute(insert(m.ItemStatus), rows)
        elif wanted:
            session.execute(
                delete(m.ItemStatus).where(
                    m.ItemStatus.label_set_id == owner_id,
                    m.ItemStatus.page == m.COVERAGE_PAGE,
                    m.ItemStatus.item_id.in_([ids[ext] for ext in wanted]),
                )
            )
        changed += wanted
    return changed


def _other_answer(annotations: Annotations) -> bool:
    """Whether a detector's record answers in another kind than spans, and with no span: a scorer's
    sentence scores, a claim detector's labels, token probabilities. A run whose records answer so, and
    none with a span, is no span detector to cover — not even on an item whose output failed to parse,
    which holds no answer at all. (A run answering in spans and another kind covers every item it gives:
    where it found no span it flagged nothing.)"""
    a = annotations
    return not a.spans and bool(
        a.sentence_labels
        or a.claim_labels
        or a.triplets
        or a.sentence_scores
        or a.token_probabilities
        or a.response_score
    )


def _only_standing(annotations: Annotations) -> bool:
    """Whether a record holds nothing but verdicts on other label sets' triplets and statuses (which say
    nothing of the item's spans)."""
    return bool(annotations.triplet_judgments or annotations.statuses) and annotations == Annotations(
        annotations.item, triplet_judgments=annotations.triplet_judgments, statuses=annotations.statuses
    )


def _annotator_id(session: Session, name: str | None) -> int | None:
    if not name:
        return None
    return session.scalar(select(m.Annotator.id).where(m.Annotator.name == name))


def _get_or_create_dataset(session: Session, bundle: Bundle) -> tuple[m.Dataset, bool]:
    """The dataset ``bundle`` names, and whether it was made now (it had no row)."""
    record = bundle.dataset
    dataset = session.scalar(select(m.Dataset).where(m.Dataset.name == record.name))
    if dataset is None:
        dataset = m.Dataset(
            name=record.name,
            source_format=record.source_format,
            taxonomy=list(record.taxonomy),
            label_kinds=list(record.label_kinds),
            description=record.description,
            is_synthetic=record.is_synthetic,
            image_root=record.image_root,
        )
        session.add(dataset)
        session.flush()
        return dataset, True
    merged_taxonomy = list(dict.fromkeys([*dataset.taxonomy, *record.taxonomy]))
    merged_kinds = list(dict.fromkeys([*dataset.label_kinds, *record.label_kinds]))
    if merged_taxonomy != dataset.taxonomy or merged_kinds != dataset.label_kinds:
        dataset.taxonomy, dataset.label_kinds = merged_taxonomy, merged_kinds
    if record.image_root and not dataset.image_root:
        dataset.image_root = record.image_root
    session.flush()
    return dataset, False


# The dataset settings an import may set from its bundle; the others (a team's blind labelling…) are
# chosen by people, never by a file.
IMPORTED_SETTINGS = ("import_mapping",)


def _keep_settings(dataset: m.Dataset, bundle: Bundle) -> None:
    """Put the bundle's importable settings on the dataset row, inside the import's transaction."""
    given = {k: v for k, v in bundle.dataset_settings.items() if k in IMPORTED_SETTINGS}
    current = dict(dataset.settings or {})
    if given and any(current.get(k) != v for k, v in given.items()):
        dataset.settings = {**current, **given}


def _named_items(bundle: Bundle) -> list[str]:
    """The external ids a batch's items, records and ratings name (those its checks read stored)."""
    return [
        *(i.external_id for i in bundle.items),
        *(a.item for label_set in bundle.label_sets for a in label_set.annotations),
        *(r.item for task in bundle.rating_tasks for r in task.ratings),
    ]


# ----------------------------------------------------------------------------------------------- validation


def _validate(
    bundle: Bundle,
    stored: Mapping[str, StoredItem],
    source: str,
    problems: list[Problem],
    seen: set[str],
    new_shapes: dict[str, tuple[int, int, int]],
    counted: dict[tuple[str, str], int] | None = None,
    refused: Collection[str] = (),
) -> set[str]:
    """Append every problem of ``bundle`` to ``problems``; return the external ids of rejected items.

    ``seen`` holds the ids of the batches before (and gets this batch's); ``new_shapes`` gets the text
    length, sentence and claim counts of each sound item. ``counted``: the items (key ``("", "")``)
    and each label set's annotations of the batches before, so a record is numbered as in the file;
    this batch's are added. ``refused``: the items refused in the batches before, whose records here
    are left out as well, without a word more (as in a whole file, where they are in one batch); an item
    given in this batch is checked afresh (a record of it may have come before its line, refused then
    for naming no item)."""
    counted = {} if counted is None else counted
    first_item = counted.get(("", ""), 0)
    counted[("", "")] = first_item + len(bundle.items)
    bad: set[str] = set()
    kept: Counter[str] = Counter()  # stored items' fields the file gives otherwise, by field
    shape = new_shapes  # external id -> (text length, sentences, claims)
    for index, item in enumerate(bundle.items, first_item):
        where = f"#{index} (id={shown_id(item.external_id)})"
        reasons = _item_problems(item, stored.get(item.external_id))
        if item.external_id in seen:
            reasons.append(("external_id", "the same id appears twice in this input"))
        seen.add(item.external_id)
        for field_name, reason in reasons:
            problems.append(Problem(source, where, field_name, reason))
        if reasons:
            bad.add(item.external_id)
            continue
        for warning in _kept_item_warnings(item, stored.get(item.external_id), source, where):
            kept[warning.field] += 1
            if kept[warning.field] <= _KEPT_NAMED:
                problems.append(warning)
        n_sentences = (
            len(item.sentences) if item.sentences is not None else len(split_sentences(item.response))
        )
        old = stored.get(item.external_id)
        # A stored item keeps its sentences and claims (an import adds none to it, even where it has
        # none): annotations are checked against those.
        shape[item.external_id] = (
            len(item.response),
            old.n_sentences if old else n_sentences,
            old.n_claims if old else len(item.claims),
        )

    for field_name, n in kept.items():  # a file that moved every image is one more line, not thousands
        if n > _KEPT_NAMED:
            problems.append(
                Problem(
                    source,
                    "-",
                    field_name,
                    f"and {n - _KEPT_NAMED:,} more stored items whose {field_name} the file gives otherwise; "
                    "the stored ones stay",
                    "warning",
                )
            )

    def shape_of(ext: str) -> tuple[int, int, int] | None:
        found = shape.get(ext)
        if found is None and ext in stored:
            old = stored[ext]
            found = (old.length, old.n_sentences, old.n_claims)
        return found

    names: set[tuple[str, str]] = set()
    for label_set in bundle.label_sets:
        if label_set.kind not in m.LABEL_SET_KINDS:
            problems.append(
                Problem(source, f"label set {label_set.name!r}", "kind", f"unknown kind {label_set.kind!r}")
            )
        if (label_set.kind, label_set.name) in names:
            problems.append(
                Problem(source, f"label set {label_set.name!r}", "name", "the same label set appears twice")
            )
        names.add((label_set.kind, label_set.name))
        first = counted.get((label_set.kind, label_set.name), 0)
        counted[(label_set.kind, label_set.name)] = first + len(label_set.annotations)
        earlier: dict[str, list[Annotations]] = {}  # per item, the label set's records before
        for index, ann in enumerate(label_set.annotations, first):
            where = f"#{index} (id={shown_id(ann.item)})"
            if ann.item in bad:
                continue
            if ann.item in refused and ann.item not in shape:  # refused in a batch before, not given here
                bad.add(ann.item)
                continue
            known = shape_of(ann.item)
            if known is None:
                problems.append(
                    Problem(
                        source,
                        where,
                        "item",
                        f"no item with id {ann.item!r} in dataset {bundle.dataset.name!r}",
                    )
                )
                bad.add(ann.item)
                continue
            before = earlier.setdefault(ann.item, [])
            reasons = [*_annotation_problems(ann, *known), *_repeats(before, ann)]
            before.append(ann)
            for field_name, reason in reasons:
                problems.append(Problem(source, where, f"{label_set.name}.{field_name}", reason))
                bad.add(ann.item)
    return bad


def _repeats(before: Sequence[Annotations], record: Annotations) -> Iterable[tuple[str, str]]:
    """What ``record`` gives a second time for its item, in itself or after the same label set's records
    ``before`` of the item: the store keeps one label per sentence or claim, one score per sentence, one
    raw output and response score, and one status per task."""
    if not before and _distinct(record):
        return  # nearly always: a record of its own, giving nothing twice
    given: set[tuple[str, Any]] = set()
    for k, a in enumerate((*before, record)):
        for field_name, key, reason in _keyed(a):
            if key in given and k == len(before):
                yield field_name, f"{reason} by this label set"
            given.add(key)


def _distinct(a: Annotations) -> bool:
    return all(
        len(set(keys)) == len(keys)
        for keys in (
            [s.index for s in a.sentence_labels],
            [c.index for c in a.claim_labels],
            [s.index for s in a.sentence_scores],
            [s.task for s in a.statuses],
        )
    )


def _keyed(a: Annotations) -> Iterator[tuple[str, tuple[str, Any], str]]:
    """What a record gives that the store keeps one of per item: (field, key, what is given twice)."""
    for k, label in enumerate(a.sentence_labels):
        yield f"sentence_labels[{k}]", ("label", label.index), f"sentence {label.index} is labeled twice"
    for k, claim in enumerate(a.claim_labels):
        yield f"claim_labels[{k}]", ("claim", claim.index), f"claim {claim.index} is labeled twice"
    for k, score in enumerate(a.sentence_scores):
        yield f"sentence_scores[{k}]", ("score", score.index), f"sentence {score.index} is scored twice"
    for k, status in enumerate(a.statuses):
        yield (
            f"statuses[{k}].task",
            ("status", status.task),
            f"the task {status.task!r} is given two statuses",
        )
    if a.raw_output is not None:
        yield "raw_output", ("raw output", None), "the item is given two raw outputs"
    if a.response_score is not None:
        yield "response_score", ("response score", None), "the item is given two response scores"


_KEPT_NAMED = 10  # kept-item warnings named one by one per field and batch; the rest are counted


def _kept_item_warnings(item: ItemRecord, old: StoredItem | None, source: str, where: str) -> list[Problem]:
    """A stored item's prompt, image or reference triplets that the file gives otherwise: an import
    writes labels, never a stored item's own fields, so the stored value stays — said, not silently (a
    corrected question, or a corrected Tri-HE scene graph, re-imported changed nothing and said
    nothing)."""
    if old is None or old.id < 0 or not old.text_hash:  # new, or written by this very import
        return []
    warnings = []
    given_triplets = [(t.subject, t.relation, t.object) for t in item.reference_triplets]
    for field_name, given, kept in (
        ("prompt", item.prompt, old.prompt),
        ("image", item.image_ref, old.image_ref),
        (
            "reference triplets",
            _triplets_text(given_triplets),
            _triplets_text(old.reference) if old.reference is not None else None,
        ),
    ):
        if field_name == "reference triplets" and (not given_triplets or old.reference is None):
            continue
        if given and given != kept:
            warnings.append(
                Problem(
                    source,
                    where,
                    field_name,
                    f"{_clipped(given)} differs from the stored {_clipped(kept)}; an import does not change a "
                    "stored item, so the stored one stays (import into a new dataset to use the file's)",
                    "warning",
                )
            )
    return warnings


def _triplets_text(triplets: Iterable[tuple[str, str, str]]) -> str:
    """Triplets as one line, to compare and to quote: "(a, on, b); (c, near, d)"."""
    return "; ".join(f"({s}, {r}, {o})" for s, r, o in triplets)


def _clipped(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "none"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _item_problems(item: ItemRecord, old: StoredItem | None) -> list[tuple[str, str]]:
    reasons: list[tuple[str, str]] = []
    if not isinstance(item.external_id, str) or not item.external_id.strip():
        reasons.append(("external_id", "missing or empty"))
    reasons += overlong_item_fields(item)
    if not isinstance(item.response, str):
        return [*reasons, ("response", f"expected text, got {type(item.response).__name__}")]
    if not isinstance(item.prompt, str):
        reasons.append(("prompt", f"expected text, got {type(item.prompt).__name__}"))
    if old is not None and old.text_hash and old.text_hash != text_hash(item.response):
        reasons.append(
            (
                "response",
                "differs from the stored item with this id; spans already stored would no longer fit",
            )
        )
    n = len(item.response)
    if item.sentences is not None:
        previous_end = 0
        for k, sentence in enumerate(item.sentences):
            if not (0 <= sentence.start < sentence.end <= n):
                reasons.append((f"sentences[{k}]", _offsets_flaw(sentence.start, sentence.end, n, f"0-{n}")))
            elif sentence.start < previous_end:
                reasons.append((f"sentences[{k}]", "overlaps the previous sentence"))
            else:
                previous_end = sentence.end
    for k, claim in enumerate(item.claims):
        if not isinstance(claim.text, str) or not claim.text.strip():
            reasons.append((f"claims[{k}].text", "missing or empty"))
        if claim.start is not None and not (0 <= claim.start < (claim.end or -1) <= n):
            reasons.append((f"claims[{k}]", _offsets_flaw(claim.start, claim.end, n, f"0-{n}")))
    return reasons


def _offsets_flaw(start: object, end: object, length: int, within: str) -> str:
    """Why offsets ``start``-``end`` into a text of ``length`` do not mark a part of it: reversed or empty
    offsets inside the text are said to be so, not to lie outside it."""
    if isinstance(start, int) and isinstance(end, int) and 0 <= end <= start <= length:
        return f"offsets {start}-{end} " + ("are empty" if start == end else "end before they start")
    return f"offsets {start}-{end} outside {within}"


def _annotation_problems(
    annotations: Annotations, length: int, n_sentences: int, n_claims: int
) -> Iterable[tuple[str, str]]:
    for k, span in enumerate(annotations.spans):
        if not (
            isinstance(span.start, int) and isinstance(span.end, int) and 0 <= span.start < span.end <= length
        ):
            yield f"spans[{k}]", _offsets_flaw(span.start, span.end, length, f"the response (0-{length})")
    for k, label in enumerate(annotations.sentence_labels):
        if label.label not in m.SENTENCE_LABELS:
            yield (
                f"sentence_labels[{k}].label",
                f"{label.label!r} is not one of {', '.join(m.SENTENCE_LABELS)}",
            )
        if not 0 <= label.index < n_sentences:
            yield (
                f"sentence_labels[{k}].index",
                f"sentence {label.index} does not exist ({n_sentences} sentences)",
            )
    for k, score in enumerate(annotations.sentence_scores):
        if not 0 <= score.index < n_sentences:
            yield (
                f"sentence_scores[{k}].index",
                f"sentence {score.index} does not exist ({n_sentences} sentences)",
            )
        if not isinstance(score.score, int | float) or not 0 <= score.score <= 100:
            yield f"sentence_scores[{k}].score", f"{score.score!r} is not a number from 0 to 100"
    for k, claim_label in enumerate(annotations.claim_labels):
        if claim_label.label not in m.CLAIM_LABELS:
            yield (
                f"claim_labels[{k}].label",
                f"{claim_label.label!r} is not one of {', '.join(m.CLAIM_LABELS)}",
            )
        if not 0 <= claim_label.index < n_claims:
            yield f"claim_labels[{k}].index", f"claim {claim_label.index} does not exist ({n_claims} claims)"
    for k, triplet in enumerate(annotations.triplets):
        if triplet.verdict not in (None, *m.TRIPLET_VERDICTS):
            yield f"triplets[{k}].verdict", f"{triplet.verdict!r} is not yes, no or empty"
        if triplet.wrong_part not in (None, *m.TRIPLET_WRONG_PARTS):
            yield f"triplets[{k}].wrong_part", f"{triplet.wrong_part!r} is not object1, object2 or relation"
    yield from overlong_annotation_fields(annotations)
    yield from verdict_problems(annotations)
    yield from status_problems(annotations)
    for k, token in enumerate(annotations.token_probabilities):
        if not 0 <= token.start < token.end <= length:
            yield f"token_probabilities[{k}]", _offsets_flaw(token.start, token.end, length, "the response")
        if not isinstance(token.probability, int | float) or not 0.0 <= token.probability <= 1.0:
            yield f"token_probabilities[{k}].probability", f"{token.probability!r} is not in [0, 1]"
    if annotations.response_score is not None:
        yield from _response_score_problems(annotations.response_score)


def _response_score_problems(rated: ResponseScoreRecord) -> Iterable[tuple[str, str]]:
    low, high, score = rated.scale_min, rated.scale_max, rated.score
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (low, high)) or low >= high:
        yield "response_score.scale_min", f"{low!r}-{high!r} is not a scale of whole numbers"
    elif isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        yield "response_score.score", f"expected a number, got {score!r}"
    elif not low <= score <= high:
        yield "response_score.score", f"{score:g} is outside the scale {low}-{high}"
    if rated.hallucination is not None and not isinstance(rated.hallucination, bool):
        yield "response_score.hallucination", f"expected true, false or empty, got {rated.hallucination!r}"
    if rated.rationale is not None and not isinstance(rated.rationale, str):
        yield "response_score.rationale", f"expected text, got {type(rated.rationale).__name__}"


def _response_scale_problems(
    session: Session,
    dataset_id: int,
    bundle: Bundle,
    bad_items: set[str],
    source: str,
    problems: list[Problem],
) -> None:
    """A label set rates every response on one scale: a score on another scale than the label set's
    first one in the input, or than its scores already stored, is an error (an average over both would
    mean nothing)."""
    for label_set in bundle.label_sets:
        rated = [
            (index, a)
            for index, a in enumerate(label_set.annotations)
            if a.response_score is not None and a.item not in bad_items
        ]
        if not rated:
            continue
        stored = response_scale(
            session,
            session.scalar(
                select(m.LabelSet.id).where(
                    m.LabelSet.dataset_id == dataset_id,
                    m.LabelSet.kind == label_set.kind,
                    m.LabelSet.name == label_set.name,
                )
            ),
        )
        first = rated[0][1].response_score
        assert first is not None
        scale, said = (
            (stored, "its stored scores are")
            if stored is not None
            else ((first.scale_min, first.scale_max), f"its first score (id={shown_id(rated[0][1].item)}) is")
        )
        for index, given in rated:
            score = given.response_score
            assert score is not None
            if (score.scale_min, score.scale_max) != scale:
                problems.append(
                    Problem(
                        source,
                        f"#{index} (id={shown_id(given.item)})",
                        f"{label_set.name}.response_score.scale_min",
                        f"scale {score.scale_min}-{score.scale_max}, but {said} on {scale[0]}-{scale[1]}; "
                        "one label set rates every response on one scale",
                    )
                )
                bad_items.add(given.item)


def _sound_rating_tasks(
    session: Session,
    dataset_id: int,
    bundle: Bundle,
    stored: Mapping[str, StoredItem],
    bad_items: set[str],
    source: str,
    problems: list[Problem],
    unsound: Collection[tuple[int, int]] = frozenset(),
) -> list[RatingTaskRecord]:
    """Check every rating task and rating against the store and the bundle, appending to ``problems``.

    Returns the tasks with only their sound ratings; a task whose definition is wrong (no such detector,
    a scale that is not one, a different scale than the stored task of that name) keeps none. Ratings
    in ``unsound`` (``(task position, rating position)``, reported already) are left out too.
    """
    if not bundle.rating_tasks:
        return []
    lengths = {ext: s.length for ext, s in stored.items()}
    lengths.update({i.external_id: len(i.response) for i in bundle.items if isinstance(i.response, str)})
    detectors = set(
        session.scalars(
            select(m.LabelSet.name).where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "detector")
        )
    ) | {ls.name for ls in bundle.label_sets if ls.kind == "detector"}
    existing = {
        task.name: (name, task.granularity, task.scale_min, task.scale_max)
        for task, name in session.execute(
            select(m.RatingTask, m.LabelSet.name)
            .join(m.LabelSet, m.LabelSet.id == m.RatingTask.detector_label_set_id)
            .where(m.RatingTask.dataset_id == dataset_id)
        )
    }
    sound: list[RatingTaskRecord] = []
    names: set[str] = set()
    for position, task in enumerate(bundle.rating_tasks):
        where = f"rating task {task.name!r}"
        reasons = []
        if task.name in names:
            reasons.append(("name", "the same rating task appears twice"))
        names.add(task.name)
        if task.detector not in detectors:
            reasons.append(("detector", f"no detector run {task.detector!r} in this dataset"))
        if task.granularity not in ("segment", "response"):
            reasons.append(("granularity", f"{task.granularity!r} is not segment or response"))
        scale = (task.scale_min, task.scale_max)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in scale) or scale[0] >= scale[1]:
            reasons.append(("scale_min", f"{scale[0]!r}-{scale[1]!r} is not a scale of whole numbers"))
        old = existing.get(task.name)
        if old is not None and old != (task.detector, task.granularity, *scale):
            reasons.append(
                (
                    "scale_min",
                    f"differs from the stored task of that name (detector {old[0]!r}, per {old[1]}, "
                    f"scale {old[2]}-{old[3]}); its ratings would mean something else",
                )
            )
        for field_name, reason in reasons:
            problems.append(Problem(source, where, field_name, reason))
        if reasons:
            continue
        keep: list[RatingRecord] = []
        seen: set[tuple[str, str, int, int]] = set()
        for index, rating in enumerate(task.ratings):
            if rating.item in bad_items or (position, index) in unsound:
                continue  # the item's own problem, or the rating's, is reported already
            key = (rating.item, rating.rater, rating.segment_start, rating.segment_end)
            flaw = _rating_problem(rating, task, lengths) or (
                ("rater", "the same rater rates the same segment twice") if key in seen else None
            )
            if flaw is not None:
                problems.append(Problem(source, f"{where} #{index} (id={shown_id(rating.item)})", *flaw))
                continue
            seen.add(key)
            keep.append(rating)
        sound.append(replace(task, ratings=keep))
    return sound


def _rating_problem(
    rating: RatingRecord, task: RatingTaskRecord, lengths: dict[str, int]
) -> tuple[str, str] | None:
    if rating.item not in lengths:
        return "item", f"no item with id {rating.item!r} in this dataset"
    if not isinstance(rating.rater, str) or not rating.rater.strip():
        return "rater", "missing or empty"
    if (overlong := overlong_rater(rating.rater)) is not None:
        return "rater", overlong
    score, judged = rating.score, rating.nothing_flagged_correct
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        return "score", f"expected a number, got {score!r}"
    if score is not None and not task.scale_min <= score <= task.scale_max:
        return "score", f"{score!r} is outside the scale {task.scale_min}-{task.scale_max}"
    if judged is not None and not isinstance(judged, bool):
        return "nothing_flagged_correct", f"expected true, false or empty, got {judged!r}"
    if score is None and judged is None:
        return "score", "give a score, or say whether flagging nothing was right"
    start, end = rating.segment_start, rating.segment_end
    if (start, end) == (-1, -1):
        return None
    if task.granularity == "response":
        return "segment_start", "this task rates whole responses (-1/-1), not segments"
    length = lengths[rating.item]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= length):
        return "segment_start", _offsets_flaw(start, end, length, f"the response (0-{length})")
    return None


# ------------------------------------------------------------------------------------------------- writing


class _Writer:
    def __init__(
        self,
        session: Session,
        dataset: m.Dataset,
        stored: Mapping[str, StoredItem],
        bad_items: set[str],
        result: ImportResult,
        fresh: set[tuple[str, str]] | None = None,
        item_ids: dict[str, int] | None = None,
        meta_texts: MetaTexts | None = None,
    ) -> None:
        self.session = session
        # The sentence labels' meta as JSON text, shared with the change plan of the same batch.
        self.meta_texts = MetaTexts() if meta_texts is None else meta_texts
        # Label sets made by this import: nothing of theirs is stored from before, nothing to clear.
        self.fresh = set() if fresh is None else fresh
        self.dataset = dataset
        # The ids of the stored items the batch names, by external id (the writer adds those it writes);
        # not an item of a refused import's batch before, which has none (id -1).
        self.item_ids = (
            {ext: s.id for ext, s in stored.items() if s.id >= 0} if item_ids is None else item_ids
        )
        self.bad = bad_items
        self.result = result
        # The ids of the sentences this writer adds, by item id, in index order: taken before the insert
        # (:meth:`_new_sentence_ids`), so the labels of the same batch find them without reading them back.
        self.written_sentences: dict[int, Sequence[int]] = {}
        # Other label sets' verdicts on the triplets a rewritten label set had, by that label set's id:
        # taken before its triplets are cleared, put back on the triplets it writes again unchanged.
        self.others_verdicts: dict[int, list[tuple[Any, ...]]] = {}
        # The ids of the items this writer added: no status of theirs is stored but what it writes.
        self.created: set[int] = set()

    def _count(self, table: str, n: int) -> None:
        if n:
            self.result.rows[table] = self.result.rows.get(table, 0) + n

    def _insert(self, model: type[m.Base], rows: list[dict[str, Any]]) -> None:
        """Insert rows given as dicts (attribute name -> value), all with the same fields."""
        if not rows:
            return
        keys = tuple(rows[0])
        if any(len(row) != len(keys) for row in rows):
            raise ValueError(f"rows for {model.__tablename__} do not all have the same fields")
        self._insert_tuples(model, keys, [tuple(row[k] for k in keys) for row in rows])

    def _insert_tuples(
        self,
        model: type[m.Base],
        keys: Sequence[str],
        rows: list[tuple[Any, ...]],
        *,
        encoded: Sequence[str] = (),
    ) -> None:
        """Insert rows given as tuples of ``keys`` values, with one driver-level executemany per chunk.

        The ORM's bulk path falls back to one INSERT per row when a table has Python-side defaults, and
        Core's per-row parameter processing still doubled the time of a 100 K-row import; here only the
        columns that need it go through their bind processor (JSON, dates) and defaults are computed once.
        The values of the ``encoded`` keys are given as the database keeps them (JSON as its text).
        """
        if not rows:
            return
        table = model.__table__
        column_of = {p.key: p.columns[0] for p in sa_inspect(model).column_attrs}
        columns = [column_of[k] for k in keys]
        defaults = [
            c for c in table.columns if c.default is not None and not c.primary_key and c not in columns
        ]
        connection = self.session.connection()
        dialect = connection.dialect
        quote = dialect.identifier_preparer.quote
        mark = "?" if dialect.paramstyle == "qmark" else "%s"
        names = [*columns, *defaults]
        sql = (
            f"INSERT INTO {dialect.identifier_preparer.format_table(table)} "
            f"({', '.join(quote(c.name) for c in names)}) VALUES ({', '.join(mark for _ in names)})"
        )
        processors = [
            (k, process)
            for k, c in enumerate(columns)
            if keys[k] not in encoded
            and (process := c.type.dialect_impl(dialect).bind_processor(dialect)) is not None
        ]
        tail = []
        for column in defaults:
            arg = column.default.arg
            value = arg(None) if callable(arg) else arg
            process = column.type.dialect_impl(dialect).bind_processor(dialect)
            tail.append(process(value) if process else value)
        fixed = tuple(tail)
        if dialect.name == "postgresql":
            copy_rows(connection, table, names, rows, processors, fixed)
            self._count(model.__tablename__, len(rows))
            return
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            if processors:
                processed = []
                for row in chunk:
                    values = list(row)
                    for k, process in processors:
                        values[k] = process(values[k])
                    processed.append((*values, *fixed))
                chunk = processed
            elif fixed:
                chunk = [row + fixed for row in chunk]
            connection.exec_driver_sql(sql, chunk)
        self._count(model.__tablename__, len(rows))

    def write_items(self, items: list[ItemRecord], source_format: str | None = None) -> None:
        """Insert the items not stored yet. An item's source layout is marked with the format it was read
        as (:func:`formats.layouts.with_format`), so an export in another format does not follow it."""
        new = [i for i in items if i.external_id not in self.bad and i.external_id not in self.item_ids]
        self.result.items_existing += sum(
            1 for i in items if i.external_id not in self.bad and i.external_id in self.item_ids
        )
        if not new:
            return

        first = (
            self.session.scalar(select(func.max(m.Item.position)).where(m.Item.dataset_id == self.dataset.id))
            or 0
        ) + 1
        self._insert(
            m.Item,
            [
                {
                    "dataset_id": self.dataset.id,
                    "external_id": i.external_id,
                    "position": first + k,
                    "subset": i.subset,
                    "split": i.split,
                    "source_model": i.source_model,
                    "task_type": i.task_type,
                    "prompt": i.prompt,
                    "response": i.response,
                    "reference": i.reference,
                    "image_ref": i.image_ref,
                    "meta": with_format(i.meta, source_format),
                    "text_hash": text_hash(i.response),
                    "version": 1,
                }
                for k, i in enumerate(new)
            ],
        )
        self.result.items_created += len(new)
        wanted = {i.external_id for i in new}
        for ext, item_id in self.session.execute(  # only this batch's rows: no rereading of earlier ones
            select(m.Item.external_id, m.Item.id).where(
                m.Item.dataset_id == self.dataset.id, m.Item.position >= first
            )
        ):
            if ext in wanted:
                self.item_ids[ext] = item_id
                self.created.add(item_id)
        sentences, claims, triplets = [], [], []
        counts: list[tuple[int, int]] = []
        for item in new:
            item_id = self.item_ids[item.external_id]
            given = item.sentences is not None
            offsets = (
                [(s.start, s.end) for s in item.sentences]
                if item.sentences is not None
                else split_sentences(item.response)
            )
            source = "imported" if given else "splitter"
            sentences += [(item_id, k, s, e, source) for k, (s, e) in enumerate(offsets)]
            counts.append((item_id, len(offsets)))
            claims += [
                {
                    "item_id": item_id,
                    "index": k,
                    "text": c.text,
                    "start": c.start,
                    "end": c.end,
                    "segment": c.segment,
                    "segment_text": c.segment_text,
                    "source": c.source,
                }
                for k, c in enumerate(item.claims)
            ]
            triplets += [
                {
                    "item_id": item_id,
                    "label_set_id": None,
                    "index": k,
                    "subject": t.subject,
                    "relation": t.relation,
                    "object": t.object,
                }
                for k, t in enumerate(item.reference_triplets)
            ]
        ids = self._new_sentence_ids(len(sentences))
        at = 0
        for item_id, n in counts:
            self.written_sentences[item_id] = ids[at : at + n]
            at += n
        self._insert_tuples(
            m.Sentence,
            ("id", "item_id", "index", "start", "end", "source"),
            [(row_id, *row) for row_id, row in zip(ids, sentences, strict=True)],
        )
        self._insert(m.Claim, claims)
        self._insert(m.Triplet, triplets)

    def _label_set(self, record: LabelSetRecord) -> tuple[int, bool]:
        label_set = self.session.scalar(
            select(m.LabelSet).where(
                m.LabelSet.dataset_id == self.dataset.id,
                m.LabelSet.kind == record.kind,
                m.LabelSet.name == record.name,
            )
        )
        if label_set is not None:
            return label_set.id, False
        annotator_id = None
        if record.annotator:
            annotator = self.session.scalar(select(m.Annotator).where(m.Annotator.name == record.annotator))
            if annotator is None:
                annotator = m.Annotator(name=record.annotator, role="annotator")
                self.session.add(annotator)
                self.session.flush()
            annotator_id = annotator.id
        label_set = m.LabelSet(
            dataset_id=self.dataset.id,
            kind=record.kind,
            name=record.name,
            annotator_id=annotator_id,
            detector_version=record.detector_version,
            prompt_strategy=record.prompt_strategy,
            meta=record.meta,
        )
        self.session.add(label_set)
        self.session.flush()
        return label_set.id, True

    def _new_sentence_ids(self, n: int) -> Sequence[int]:
        """``n`` ids for new sentences, taken before they are inserted.

        Reading a million sentences' ids back after inserting them, to give each label its sentence,
        cost a tenth of a second per 100 K. On PostgreSQL the ids come from the table's own sequence, so
        they are never another writer's. On SQLite they follow the table's largest id, as SQLite would
        give them itself: the import's transaction holds the store's write lock from its start
        (``BEGIN IMMEDIATE``), so no other writer adds rows in between."""
        if not n:
            return []
        connection = self.session.connection()
        if connection.dialect.name == "postgresql":
            # The sequence is named once: looked up in every row, the catalog lookup took four fifths of
            # the time (0.25 s against 0.05 s for 100 K ids).
            sequence = connection.execute(
                text("SELECT pg_get_serial_sequence(:table, 'id')"), {"table": m.Sentence.__tablename__}
            ).scalar_one()
            return (
                connection.execute(
                    text("SELECT nextval(CAST(:sequence AS regclass)) FROM generate_series(1, :n)"),
                    {"sequence": sequence, "n": n},
                )
                .scalars()
                .all()
            )
        last = connection.execute(select(func.max(m.Sentence.id))).scalar() or 0
        return range(last + 1, last + 1 + n)

    def _ids_by_index(
        self, model: type[m.Sentence | m.Claim], item_ids: list[int]
    ) -> dict[int, dict[int, int]]:
        """The ids of these items' stored sentences (or claims), by item id and index: read only for the
        items whose annotations refer to one (a detector's spans need neither)."""
        found: dict[int, dict[int, int]] = {}
        # Core rows: the ORM's result handling doubled the time. (No autoflush is needed: sentences and
        # claims are only ever written with Core inserts.)
        connection = self.session.connection()
        for start in range(0, len(item_ids), _CHUNK):
            query = select(model.id, model.item_id, model.index).where(
                model.item_id.in_(item_ids[start : start + _CHUNK])
            )
            for row_id, item_id, index in connection.execute(query):
                found.setdefault(item_id, {})[index] = row_id
        return found

    def write_label_set(self, record: LabelSetRecord, reach: Mapping[str, Reach] | None = None) -> None:
        """Write what ``record`` says about its items, replacing what the label set said about them.

        Its verdicts on other label sets' triplets and its statuses are replaced as far as ``reach`` goes
        (None: as each record reaches, :mod:`db.record_reach`); the others stay as they are. Verdicts,
        and statuses on a rating campaign's queue, are written once every label set and rating task is
        (:mod:`db.triplet_verdicts`, :mod:`db.item_statuses`)."""
        label_set_id, created = self._label_set(record)
        if (record.kind, record.name) not in self.result.written_label_sets:  # once, however many batches
            self.result.written_label_sets.add((record.kind, record.name))
            self.result.label_sets.append(record.name)
        annotations = [a for a in record.annotations if a.item not in self.bad]
        item_ids = [self.item_ids[a.item] for a in annotations]
        if reach is None:
            reach = reach_by_item(annotations)
        if created:
            self.fresh.add((record.kind, record.name))
        elif (record.kind, record.name) not in self.fresh:
            self._clear(
                label_set_id, item_ids, {self.item_ids[e]: r for e, r in reach.items() if e in self.item_ids}
            )
        by_item = list(zip(annotations, item_ids, strict=True))
        written = self.written_sentences  # the items this batch added; the others' are read
        sentence_ids: dict[int, Sequence[int] | dict[int, int]] = {
            **self._ids_by_index(
                m.Sentence,
                [i for a, i in by_item if (a.sentence_labels or a.sentence_scores) and i not in written],
            ),
            **written,
        }
        claim_ids = self._ids_by_index(m.Claim, [i for a, i in by_item if a.claim_labels])
        stored_meta = self.meta_texts.stored
        spans, sentence_labels, claim_labels, raw, scores, tokens = [], [], [], [], [], []
        response_scores: list[dict[str, Any]] = []
        extracted: list[tuple[int, int, Any]] = []
        for a, item_id in zip(annotations, item_ids, strict=True):
            base = {"label_set_id": label_set_id, "item_id": item_id}
            spans += [(label_set_id, item_id, s.start, s.end, s.type, s.note) for s in a.spans]
            of_item = sentence_ids.get(item_id, ())  # by index: the sentence ids of its labels and scores
            sentence_labels += [
                (
                    label_set_id,
                    item_id,
                    of_item[lab.index],
                    lab.label,
                    lab.error_type,
                    lab.override,
                    stored_meta(lab.meta),
                )
                for lab in a.sentence_labels
            ]
            claim_labels += [
                {
                    **base,
                    "claim_id": claim_ids[item_id][c.index],
                    "label": c.label,
                    "type": c.type,
                    "reason": c.reason,
                    "version": 1,
                }
                for c in a.claim_labels
            ]
            if a.raw_output is not None:
                raw.append(
                    {
                        **base,
                        "text": a.raw_output.text,
                        "analysis": a.raw_output.analysis,
                        "follows_format": a.raw_output.follows_format,
                        "parse_error": a.raw_output.parse_error,
                        "cut": a.raw_output.cut,
                        "version": 1,
                    }
                )
            scores += [
                {
                    **base,
                    "sentence_id": of_item[s.index],
                    "score": float(s.score),
                    "parsed": s.parsed,
                }
                for s in a.sentence_scores
            ]
            tokens += [
                {
                    **base,
                    "token_index": t.token_index,
                    "start": t.start,
                    "end": t.end,
                    "probability": float(t.probability),
                    "type": t.type,
                }
                for t in a.token_probabilities
            ]
            extracted += [(item_id, k, t) for k, t in enumerate(a.triplets)]
            if a.response_score is not None:
                rated = a.response_score
                response_scores.append(
                    {
                        **base,
                        "score": float(rated.score),
                        "scale_min": rated.scale_min,
                        "scale_max": rated.scale_max,
                        "hallucination": rated.hallucination,
                        "rationale": rated.rationale,
                        "version": 1,
                    }
                )
        self._insert_tuples(m.Span, ("label_set_id", "item_id", "start", "end", "type", "note"), spans)
        self._insert_tuples(
            m.SentenceLabel,
            ("label_set_id", "item_id", "sentence_id", "label", "error_type", "override", "meta"),
            sentence_labels,
            encoded=("meta",),
        )
        self._insert(m.ClaimLabel, claim_labels)
        self._insert(m.RawOutput, raw)
        self._insert(m.SentenceScore, scores)
        self._insert(m.TokenProbability, tokens)
        self._insert(m.ResponseScore, response_scores)
        self._write_triplets(label_set_id, extracted)
        self.others_verdicts.pop(label_set_id, None)
        self.write_statuses(
            [
                (label_set_id, item_id, s.task, s.status, s.note)
                for a, item_id in zip(annotations, item_ids, strict=True)
                for s in a.statuses
                if campaign_name(s.task) is None  # a campaign's queue: once every rating task is written
            ]
        )

    def cover(self, record: LabelSetRecord) -> list[str]:
        """Record that a gold label set's or a detector run's spans are complete on every item it has a
        record for.

        A gold record with no span says the response has no hallucination (MHALO: no tag at all); without
        this mark such an item would look as if gold never looked at it. A detector's record with no span
        says the run was given the item and flagged nothing; without the mark an item the run was never
        given would read the same, and count against it as a miss (a run over one subset of the items).
        The mark is the "done" status a person gives an item they finished, on the spans task, so
        coverage reads the same for all three. It is added for every item of the file, changed or not,
        so importing a file again also covers items an earlier import left unmarked. The items marked,
        which the import's edit log keeps, so that its undo takes the marks away again
        (:func:`set_coverage`).
        """
        if record.kind not in COVERED_KINDS or "span" not in self.dataset.label_kinds:
            return []
        if (
            record.kind == "detector"
            and not any(a.spans for a in record.annotations)
            and any(_other_answer(a) for a in record.annotations)
        ):
            return []  # a run answering in another kind (its failed outputs are no span answers either)
        label_set_id, _ = self._label_set(record)
        found = (
            (self.item_ids.get(a.item), a.item)
            for a in record.annotations
            if a.item not in self.bad and not _only_standing(a)  # they say nothing of spans
        )
        ext_of = {i: ext for i, ext in found if i is not None}
        item_ids = list(ext_of)
        # An item this writer added has no mark but one its record's statuses wrote just now: the store
        # is asked only about the others (on PostgreSQL, asking about every item of a 100 K-sentence
        # import into a new dataset took about 0.2 s).
        stated = {a.item for a in record.annotations if a.statuses}
        asked = [i for i in item_ids if i not in self.created or ext_of[i] in stated]
        marked: set[int] = set()
        for start in range(0, len(asked), _CHUNK):
            marked.update(
                self.session.scalars(
                    select(m.ItemStatus.item_id).where(
                        m.ItemStatus.label_set_id == label_set_id,
                        m.ItemStatus.page == m.COVERAGE_PAGE,
                        m.ItemStatus.item_id.in_(asked[start : start + _CHUNK]),
                    )
                )
            )
        added = [i for i in item_ids if i not in marked]
        self._insert_tuples(
            m.ItemStatus,
            ("label_set_id", "item_id", "page", "status"),
            [(label_set_id, i, m.COVERAGE_PAGE, "done") for i in added],
        )
        return [ext_of[i] for i in added]

    def _write_triplets(self, label_set_id: int, extracted: list[tuple[int, int, Any]]) -> None:
        if not extracted:
            return
        self._insert(
            m.Triplet,
            [
                {
                    "item_id": item_id,
                    "label_set_id": label_set_id,
                    "index": k,
                    "subject": t.subject,
                    "relation": t.relation,
                    "object": t.object,
                }
                for item_id, k, t in extracted
            ],
        )
        ids = {
            (item_id, index): tid
            for tid, item_id, index in self.session.execute(
                select(m.Triplet.id, m.Triplet.item_id, m.Triplet.index).where(
                    m.Triplet.label_set_id == label_set_id
                )
            )
        }
        # A triplet written again as it was (same position, same words) keeps the verdicts other label
        # sets gave it: a new run of a detector that only adds triplets loses nobody's judging.
        again = {(item_id, k): (t.subject, t.relation, t.object) for item_id, k, t in extracted}
        self._insert(
            m.TripletJudgment,
            [
                {
                    "label_set_id": judge,
                    "triplet_id": ids[(item_id, index)],
                    "item_id": item_id,
                    "verdict": verdict,
                    "wrong_part": wrong_part,
                    "updated_at": updated_at,
                    "version": version,
                }
                for item_id, index, *said, judge, verdict, wrong_part, updated_at, version in (
                    self.others_verdicts.get(label_set_id, ())
                )
                if again.get((item_id, index)) == tuple(said)
            ],
        )
        self._insert(
            m.TripletJudgment,
            [
                {
                    "label_set_id": label_set_id,
                    "triplet_id": ids[(item_id, k)],
                    "item_id": item_id,
                    "verdict": t.verdict,
                    "wrong_part": t.wrong_part,
                    "version": 1,
                }
                for item_id, k, t in extracted
                if t.verdict is not None or t.wrong_part is not None
            ],
        )

    def write_statuses(self, rows: Sequence[StatusRow]) -> None:
        """Write statuses, each on its stored page."""
        self._insert_tuples(m.ItemStatus, ("label_set_id", "item_id", "page", "status", "note"), list(rows))

    def write_verdicts(self, rows: list[dict[str, Any]]) -> None:
        """Write verdicts on other label sets' triplets, resolved to those triplets' ids."""
        self._insert(m.TripletJudgment, rows)

    def restore_lost_verdicts(self, lost: Iterable[tuple[Key, LostVerdict]]) -> None:
        """Put back verdicts other label sets gave on a label set's triplets that a change removed with
        those triplets (an undo does, once it has written that label set's triplets back): each on the
        triplet at its position, unless its judge's label set is gone (its verdicts with it) or has a
        verdict there already."""
        lost = list(lost)
        if not lost:
            return
        ids = label_set_ids(self.session, self.dataset.id)
        places: list[tuple[int, int, int, int, str | None, str | None]] = []
        for key, (ext, kind, name, index, verdict, wrong_part) in lost:
            judged, judge, item_id = ids.get(key), ids.get((kind, name)), self.item_ids.get(ext)
            if judged is not None and judge is not None and item_id is not None:
                places.append((judged, judge, item_id, index, verdict, wrong_part))
        item_ids = sorted({place[2] for place in places})
        triplets: dict[tuple[int, int, int], int] = {}
        judging: set[tuple[int, int]] = set()
        for start in range(0, len(item_ids), _CHUNK):
            chunk = item_ids[start : start + _CHUNK]
            found = select(m.Triplet.id, m.Triplet.label_set_id, m.Triplet.item_id, m.Triplet.index).where(
                m.Triplet.label_set_id.in_(sorted({place[0] for place in places})),
                m.Triplet.item_id.in_(chunk),
            )
            for triplet_id, ls_id, item_id, index in self.session.execute(found):
                if ls_id is not None:
                    triplets[(ls_id, item_id, index)] = triplet_id
            given = select(m.TripletJudgment.label_set_id, m.TripletJudgment.triplet_id).where(
                m.TripletJudgment.item_id.in_(chunk)
            )
            judging.update((judge, triplet_id) for judge, triplet_id in self.session.execute(given))
        rows = []
        for judged, judge, item_id, index, verdict, wrong_part in places:
            on = triplets.get((judged, item_id, index))
            if on is None or (judge, on) in judging:
                continue
            judging.add((judge, on))
            rows.append(
                {
                    "label_set_id": judge,
                    "triplet_id": on,
                    "item_id": item_id,
                    "verdict": verdict,
                    "wrong_part": wrong_part,
                    "version": 1,
                }
            )
        self._insert(m.TripletJudgment, rows)

    def _take_others_verdicts(self, label_set_id: int, item_ids: list[int]) -> None:
        """Keep the verdicts other label sets gave on this label set's triplets of these items, with
        each triplet's text, before the triplets are cleared (their verdicts would go with them)."""
        self.others_verdicts.setdefault(label_set_id, []).extend(
            self.session.execute(
                select(
                    m.Triplet.item_id,
                    m.Triplet.index,
                    m.Triplet.subject,
                    m.Triplet.relation,
                    m.Triplet.object,
                    m.TripletJudgment.label_set_id,
                    m.TripletJudgment.verdict,
                    m.TripletJudgment.wrong_part,
                    m.TripletJudgment.updated_at,
                    m.TripletJudgment.version,
                )
                .join(m.TripletJudgment, m.TripletJudgment.triplet_id == m.Triplet.id)
                .where(
                    m.Triplet.label_set_id == label_set_id,
                    m.Triplet.item_id.in_(item_ids),
                    m.TripletJudgment.item_id.in_(item_ids),
                    m.TripletJudgment.label_set_id != label_set_id,
                )
            ).all()
        )

    def _clear(self, label_set_id: int, item_ids: list[int], reach: Mapping[int, Reach]) -> None:
        """Remove what this label set said about these items, so a re-import replaces it, with its
        verdicts on its own triplets; its verdicts on other label sets' triplets and its statuses only as
        far as ``reach`` (by item id) goes (the import writes them back). Its verdicts on the dataset's
        reference triplets stay: no file carries them."""
        own = select(m.Triplet.id).where(m.Triplet.label_set_id == label_set_id)
        for judged, verdict_item_ids in self._by_judged(reach).items():
            for start in range(0, len(verdict_item_ids), _CHUNK):
                chunk = verdict_item_ids[start : start + _CHUNK]
                others = select(m.Triplet.id).where(
                    m.Triplet.item_id.in_(chunk),
                    m.Triplet.label_set_id.is_not(None)
                    if judged is None
                    else m.Triplet.label_set_id.in_(judged),
                )
                self.session.execute(
                    delete(m.TripletJudgment).where(
                        m.TripletJudgment.label_set_id == label_set_id,
                        m.TripletJudgment.item_id.in_(chunk),
                        m.TripletJudgment.triplet_id.in_(others),
                    )
                )
        for start in range(0, len(item_ids), _CHUNK):
            chunk = item_ids[start : start + _CHUNK]
            self._take_others_verdicts(label_set_id, chunk)
            self.session.execute(
                delete(m.TripletJudgment).where(
                    m.TripletJudgment.label_set_id == label_set_id,
                    m.TripletJudgment.item_id.in_(chunk),
                    m.TripletJudgment.triplet_id.in_(own),
                )
            )
            for model in _OWNED:
                self.session.execute(
                    delete(model).where(model.label_set_id == label_set_id, model.item_id.in_(chunk))
                )
        self._clear_statuses(label_set_id, reach)

    def _clear_statuses(self, label_set_id: int, reach: Mapping[int, Reach]) -> None:
        """Remove this label set's statuses of the tasks ``reach`` (by item id) names on each item."""
        by_tasks: dict[frozenset[str], list[int]] = {}
        for item_id, r in reach.items():
            if r.tasks:
                by_tasks.setdefault(r.tasks, []).append(item_id)
        campaigns = campaign_ids(self.session, self.dataset.id) if by_tasks else {}
        for tasks, status_item_ids in by_tasks.items():
            for start in range(0, len(status_item_ids), _CHUNK):
                self.session.execute(
                    delete(m.ItemStatus).where(
                        m.ItemStatus.label_set_id == label_set_id,
                        m.ItemStatus.item_id.in_(status_item_ids[start : start + _CHUNK]),
                        m.ItemStatus.page.in_(pages(tasks, campaigns)),
                    )
                )

    def _by_judged(self, reach: Mapping[int, Reach]) -> dict[tuple[int, ...] | None, list[int]]:
        """The item ids of ``reach`` grouped by the ids of the label sets whose triplets their verdicts
        are replaced on (None: every label set's); a label set not stored has no triplets."""
        ids = label_set_ids(self.session, self.dataset.id) if any(r.judged for r in reach.values()) else {}
        groups: dict[tuple[int, ...] | None, list[int]] = {}
        for item_id, r in reach.items():
            keys = r.judged
            judged = None if keys is None else tuple(sorted(ids[k] for k in keys if k in ids))
            if judged != ():
                groups.setdefault(judged, []).append(item_id)
        return groups

    def write_rating_task(self, record: RatingTaskRecord, clear: Iterable[tuple[str, str]] = ()) -> None:
        detector_id = self.session.scalar(
            select(m.LabelSet.id).where(
                m.LabelSet.dataset_id == self.dataset.id,
                m.LabelSet.kind == "detector",
                m.LabelSet.name == record.detector,
            )
        )
        if detector_id is None:
            self.result.problems.append(
                Problem(
                    "<bundle>", f"rating task {record.name!r}", "detector", f"no detector {record.detector!r}"
                )
            )
            return
        # A manager's form may be making a task of this name now: the second waits, then finds the first's.
        hold_name(self.session, "rating task", self.dataset.id, record.name)
        task = self.session.scalar(
            select(m.RatingTask).where(
                m.RatingTask.dataset_id == self.dataset.id, m.RatingTask.name == record.name
            )
        )
        if task is None:
            task = m.RatingTask(
                dataset_id=self.dataset.id,
                detector_label_set_id=detector_id,
                name=record.name,
                granularity=record.granularity,
                scale_min=record.scale_min,
                scale_max=record.scale_max,
                rubric=record.rubric,
            )
            self.session.add(task)
            self.session.flush()
        raters: dict[str, int] = {}
        rows: list[dict[str, Any]] = []
        for rating in record.ratings:
            if rating.item in self.bad or rating.item not in self.item_ids:
                continue
            if rating.rater not in raters:
                annotator = self.session.scalar(select(m.Annotator).where(m.Annotator.name == rating.rater))
                if annotator is None:
                    annotator = m.Annotator(name=rating.rater, role="annotator")
                    self.session.add(annotator)
                    self.session.flush()
                raters[rating.rater] = annotator.id
            rows.append(
                {
                    "task_id": task.id,
                    "item_id": self.item_ids[rating.item],
                    "annotator_id": raters[rating.rater],
                    "segment_start": rating.segment_start,
                    "segment_end": rating.segment_end,
                    "score": rating.score,
                    "nothing_flagged_correct": rating.nothing_flagged_correct,
                    "version": 1,
                }
            )
        # A re-import replaces what it rates — each rater's ratings of each item it holds, and the
        # (rater, item) pairs in ``clear`` — and leaves other raters' work and other items alone.
        rated: dict[int, list[int]] = {}
        for row in rows:
            rated.setdefault(row["annotator_id"], []).append(row["item_id"])
        for rater, ext in clear:
            rater_id = raters.get(rater) or self.session.scalar(
                select(m.Annotator.id).where(m.Annotator.name == rater)
            )
            if rater_id is not None and ext in self.item_ids:
                rated.setdefault(rater_id, []).append(self.item_ids[ext])
        for annotator_id, item_ids in rated.items():
            unique = sorted(set(item_ids))
            for start in range(0, len(unique), _CHUNK):
                self.session.execute(
                    delete(m.Rating).where(
                        m.Rating.task_id == task.id,
                        m.Rating.annotator_id == annotator_id,
                        m.Rating.item_id.in_(unique[start : start + _CHUNK]),
                    )
                )
        self._insert(m.Rating, rows)
