"""Verdicts one label set gives on triplets another label set extracted, on their way into the store.

A person judging a detector's triplets (the Judge triplets page) stores each verdict in their own label
set, pointing at the detector's triplet. A file carries such a verdict as the judged label set's kind and
name and the triplet's index among its triplets of the item
(:class:`~formats.records.TripletJudgmentRecord`), since a triplet's id means nothing in another store.

The judged triplets may come later in the same input than the verdicts (a file lists label sets in any
order, and a large one is read in batches), so the verdicts are held until every batch is read and
written: each is then checked against the judged label set's triplets of the item — as the input gives
them where it gives that label set's annotations on the item, else as stored — and written by the
triplet's id. A verdict whose triplet does not exist is reported by record and field.

A label set written again keeps the verdicts others gave on its triplets only where a triplet comes back
at its position with the same words; the others go with their triplet. :func:`lost_verdicts` tells an
import's plan (and an undo) which those are, so that the report counts them as their judges' work
removed and the edit log keeps them for an undo to put back.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from db import models as m
from db.label_set_keys import Key, label_set_id, label_set_ids
from formats.problems import Problem, shown_id
from formats.records import Annotations, LabelSetRecord, TripletRecord

_CHUNK = 5_000
# A verdict another label set gave on one of a label set's triplets: (external id, judge's kind, judge's
# name, the triplet's index, verdict, wrong part).
LostVerdict = tuple[str, str, str, int, str | None, str | None]


def lost_verdicts(
    session: Session, dataset_id: int, key: Key, written: Mapping[str, Sequence[TripletRecord]]
) -> list[LostVerdict]:
    """The verdicts other label sets gave on label set ``key``'s stored triplets of the items in
    ``written`` that writing its triplets of each item as ``written`` gives them removes: those on a
    triplet that does not come back at its position with the same words (the writer keeps the rest)."""
    if not written:
        return []
    judged_id = label_set_id(session, dataset_id, key)
    if judged_id is None:
        return []
    judge = aliased(m.LabelSet)
    items = sorted(written)
    lost: list[LostVerdict] = []
    for start in range(0, len(items), _CHUNK):
        query = (
            select(
                m.Item.external_id,
                judge.kind,
                judge.name,
                m.Triplet.index,
                m.Triplet.subject,
                m.Triplet.relation,
                m.Triplet.object,
                m.TripletJudgment.verdict,
                m.TripletJudgment.wrong_part,
            )
            .join(m.Triplet, m.Triplet.id == m.TripletJudgment.triplet_id)
            .join(judge, judge.id == m.TripletJudgment.label_set_id)
            .join(m.Item, m.Item.id == m.Triplet.item_id)
            .where(
                m.Triplet.label_set_id == judged_id,
                m.TripletJudgment.label_set_id != judged_id,
                m.Item.dataset_id == dataset_id,
                m.Item.external_id.in_(items[start : start + _CHUNK]),
            )
            .order_by(m.Item.id, m.Triplet.index, judge.id)
        )
        for ext, kind, name, index, subject, relation, object_, verdict, wrong_part in session.execute(query):
            again = written[ext]
            if index < len(again) and _words(again[index]) == (subject, relation, object_):
                continue  # written again as it was: the writer keeps its verdicts
            lost.append((ext, kind, name, index, verdict, wrong_part))
    return lost


def _words(triplet: TripletRecord) -> tuple[str, str, str]:
    return triplet.subject, triplet.relation, triplet.object


def verdict_problems(annotations: Annotations) -> Iterable[tuple[str, str]]:
    """What is wrong with the verdicts of one record by themselves, as (field, reason)."""
    seen: set[tuple[str, str, int]] = set()
    for k, given in enumerate(annotations.triplet_judgments):
        where = f"triplet_judgments[{k}]"
        if given.label_set_kind not in m.LABEL_SET_KINDS:
            yield (
                f"{where}.label_set_kind",
                f"{given.label_set_kind!r} is not one of {', '.join(m.LABEL_SET_KINDS)}",
            )
        if not isinstance(given.index, int) or isinstance(given.index, bool) or given.index < 0:
            yield f"{where}.index", f"{given.index!r} is not a triplet's position (0, 1, 2 …)"
        if given.verdict not in (None, *m.TRIPLET_VERDICTS):
            yield f"{where}.verdict", f"{given.verdict!r} is not yes, no or empty"
        if given.wrong_part not in (None, *m.TRIPLET_WRONG_PARTS):
            yield f"{where}.wrong_part", f"{given.wrong_part!r} is not object1, object2 or relation"
        key = (given.label_set_kind, given.label_set_name, given.index)
        if key in seen:
            yield where, "the same triplet is judged twice in this record"
        seen.add(key)


@dataclass
class _Held:
    judge: Key
    where: str  # the record, as a problem names it
    name: str  # the judging label set's name, which starts the problem's field
    annotations: Annotations


@dataclass
class PendingVerdicts:
    """The verdicts of an input on other label sets' triplets, held until every label set is written.

    ``extracted`` counts the triplets the input gives a label set on an item, where it gives some: an
    import that is refused writes none of them, and its verdicts are checked against these. (A record
    without triplets is not counted, so that a million sentence labels add nothing here; where such a
    record empties a label set's stored triplets, its verdicts are checked once the import is written.)
    """

    held: list[_Held] = field(default_factory=list)
    extracted: dict[tuple[str, str, str], int] = field(default_factory=dict)
    named: set[Key] = field(default_factory=set)  # the input's label sets (written or not)
    refused: set[str] = field(default_factory=set)  # items whose records were refused, in any batch
    dropped: set[Key] = field(default_factory=set)  # label sets with a verdict left out by resolve

    def note(self, label_set: LabelSetRecord, first: int, items: Collection[str] | None = None) -> None:
        """Take the triplets and verdicts of ``label_set``'s records (numbered from ``first`` as the label
        set's records of the whole input are) on ``items`` (None: on every item); its records on other
        items are not written."""
        key = (label_set.kind, label_set.name)
        self.named.add(key)
        for index, record in enumerate(label_set.annotations, first):
            if items is not None and record.item not in items:
                continue
            if record.triplets:
                extracted = (*key, record.item)
                self.extracted[extracted] = self.extracted.get(extracted, 0) + len(record.triplets)
            if record.triplet_judgments:
                self.held.append(_Held(key, f"#{index} (id={shown_id(record.item)})", label_set.name, record))

    def named_items(self) -> list[str]:
        """The external ids of the items whose records give the verdicts held."""
        return [held.annotations.item for held in self.held]

    def resolve(
        self, session: Session, dataset_id: int, item_ids: dict[str, int], source: str
    ) -> tuple[list[dict[str, Any]], list[Problem]]:
        """The rows to write for the verdicts held, by the ids of their triplets as the store holds them
        now (every label set of the input written), and the problems of those that fit no triplet.

        ``item_ids``: the stored items' ids by external id. An import refused already wrote none of its
        triplets: its verdicts are still checked against the input's, and give no rows."""
        problems: list[Problem] = []
        if not self.held:
            return [], problems
        label_sets = label_set_ids(session, dataset_id)
        stored = self._stored_triplets(session, label_sets, item_ids)
        rows: list[dict[str, Any]] = []
        written: set[tuple[Key, int]] = set()
        for held in self.held:
            ext = held.annotations.item
            if ext in self.refused:  # the judged triplets may be among the records refused
                problems.append(
                    Problem(
                        source,
                        held.where,
                        f"{held.name}.triplet_judgments",
                        "not written: a record of this item was refused, so its triplets may not be there",
                        "warning",
                    )
                )
                self.dropped.add(held.judge)
                continue
            for k, given in enumerate(held.annotations.triplet_judgments):
                judged = (given.label_set_kind, given.label_set_name)
                owner = f"{given.label_set_kind}:{given.label_set_name}"
                reason = None
                ids = stored.get((label_sets.get(judged, -1), ext), {})
                count = self.extracted.get((*judged, ext), len(ids))
                if judged == held.judge:
                    reason = "names its own label set: a verdict on its own triplet belongs on that triplet"
                elif judged not in label_sets and judged not in self.named:
                    reason = f"this dataset has no label set {owner}"
                elif not given.index < count:
                    reason = f"{owner} has no triplet {given.index} on this item (it has {count})"
                elif given.index not in ids:  # refused already: the input's triplets were not written
                    continue
                elif (held.judge, ids[given.index]) in written:
                    reason = "the same triplet is judged twice in this input"
                if reason is not None:
                    field_name = f"{held.name}.triplet_judgments[{k}]"
                    problems.append(Problem(source, held.where, field_name, reason))
                    self.dropped.add(held.judge)
                    continue
                triplet_id = ids[given.index]
                written.add((held.judge, triplet_id))
                rows.append(
                    {
                        "label_set_id": label_sets[held.judge],
                        "triplet_id": triplet_id,
                        "item_id": item_ids[ext],
                        "verdict": given.verdict,
                        "wrong_part": given.wrong_part,
                        "version": 1,
                    }
                )
        return rows, problems

    def _stored_triplets(
        self, session: Session, label_sets: dict[Key, int], item_ids: dict[str, int]
    ) -> dict[tuple[int | None, str], dict[int, int]]:
        """The stored triplets' ids by (label set id, external id) and index, for the label sets and
        items the held verdicts name."""
        judged = {
            label_sets[key]
            for held in self.held
            for given in held.annotations.triplet_judgments
            if (key := (given.label_set_kind, given.label_set_name)) in label_sets
        }
        ext_of = {
            item_ids[h.annotations.item]: h.annotations.item
            for h in self.held
            if h.annotations.item in item_ids
        }
        wanted = sorted(ext_of)
        found: dict[tuple[int | None, str], dict[int, int]] = {}
        for start in range(0, len(wanted), _CHUNK):
            for triplet_id, ls_id, item_id, index in session.execute(
                select(m.Triplet.id, m.Triplet.label_set_id, m.Triplet.item_id, m.Triplet.index).where(
                    m.Triplet.label_set_id.in_(sorted(judged)),
                    m.Triplet.item_id.in_(wanted[start : start + _CHUNK]),
                )
            ):
                found.setdefault((ls_id, ext_of[item_id]), {})[index] = triplet_id
        return found
