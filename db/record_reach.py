"""How far a record reaches into what a label set has stored on its item, beyond its labels.

A record replaces everything a label set says about its item: spans, labels, triplets, scores. Two kinds
of rows are different, because only the canonical format carries them: a person's verdicts on triplets
another label set extracted, and where the label set stands on the item per task (done, skipped, unsure
with a note). A file of any other format has no place for them, and an export of some label sets carries
only the verdicts on those label sets' triplets. So a record replaces them only as far as it speaks of
them — its verdicts on the triplets of the label sets it gives verdicts on, its statuses for the tasks it
gives a status for — and leaves the rest as they are. The import's plan compares, logs and fingerprints
exactly that reach, and an undo puts back exactly that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from db.label_set_keys import Key
from formats.records import Annotations


@dataclass(frozen=True)
class Reach:
    """What a record replaces of its label set's stored verdicts and statuses on its item: the verdicts on
    the triplets of the label sets in ``judged`` (None: every label set's, as an edit-log entry made
    before the reach was kept says) and the statuses for the tasks in ``tasks``."""

    judged: frozenset[Key] | None = frozenset()
    tasks: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return self.judged is None or bool(self.judged) or bool(self.tasks)

    def __or__(self, other: Reach) -> Reach:
        judged = None if self.judged is None or other.judged is None else self.judged | other.judged
        return Reach(judged, self.tasks | other.tasks)


NOTHING = Reach()


def reach_of(given: Annotations) -> Reach:
    """How far a record of an import reaches: the label sets it gives verdicts on, the tasks it gives a
    status for."""
    if not given.triplet_judgments and not given.statuses:
        return NOTHING
    return Reach(
        frozenset((j.label_set_kind, j.label_set_name) for j in given.triplet_judgments),
        frozenset(s.task for s in given.statuses),
    )


def reach_by_item(records: Iterable[Annotations]) -> dict[str, Reach]:
    """How far ``records`` reach on each item they give verdicts or statuses on (an item may be given in
    several records: together they reach as far as each)."""
    found: dict[str, Reach] = {}
    for record in records:
        if record.triplet_judgments or record.statuses:
            found[record.item] = found.get(record.item, NOTHING) | reach_of(record)
    return found


def within(stored: Annotations, reach: Reach) -> Annotations:
    """A stored unit with only the verdicts and statuses ``reach`` covers: what a change that replaces
    those compares, keeps and puts back (it leaves the others as they are)."""
    if not stored.triplet_judgments and not stored.statuses:
        return stored
    judged, tasks = reach.judged, reach.tasks
    verdicts = [
        j
        for j in stored.triplet_judgments
        if judged is None or (j.label_set_kind, j.label_set_name) in judged
    ]
    statuses = [s for s in stored.statuses if s.task in tasks]
    if len(verdicts) == len(stored.triplet_judgments) and len(statuses) == len(stored.statuses):
        return stored
    return replace(stored, triplet_judgments=verdicts, statuses=statuses)


def logged_reach(reach: Mapping[str, Reach]) -> dict[str, Any]:
    """``reach`` (by external id) as an edit-log unit keeps it: ``verdict_items`` lists the items whose
    every verdict was replaced (only an undo of an entry made before the reach was kept gives such), and
    ``reach`` the others' label sets (``[kind, name]`` pairs) and tasks."""
    entry: dict[str, Any] = {}
    every = [ext for ext, r in reach.items() if r.judged is None]
    if every:
        entry["verdict_items"] = every
    kept = {
        ext: {"judged": sorted(map(list, r.judged or ())), "tasks": sorted(r.tasks)}
        for ext, r in reach.items()
        if r and (r.judged or r.tasks)
    }
    if kept:
        entry["reach"] = kept
    return entry


def reach_from_log(unit: Mapping[str, Any]) -> dict[str, Reach]:
    """The reach of one logged label set unit (:func:`logged_reach`). An entry made before it was kept
    lists its items in ``verdict_items``: each record replaced every verdict of its item (and, as no file
    carried statuses then, none of them); one made before statuses were carried keeps the judged label
    sets alone, in ``verdict_scope``."""
    found = dict.fromkeys(unit.get("verdict_items", []), Reach(judged=None))
    for ext, keys in unit.get("verdict_scope", {}).items():
        found[ext] = Reach(frozenset((kind, name) for kind, name in keys))
    for ext, kept in unit.get("reach", {}).items():
        judged = frozenset((kind, name) for kind, name in kept.get("judged", []))
        found[ext] = Reach(found[ext].judged if ext in found else judged, frozenset(kept.get("tasks", [])))
    return found
