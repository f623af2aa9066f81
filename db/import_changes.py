"""What an import would do to annotations already stored: the report shown before anything is replaced.

An import replaces what a label set says about each item it mentions (and each rater's ratings of each
item it holds). Adding to an item that had nothing, or re-importing the same content, loses nothing; any
other difference removes or changes someone's work, so the import is refused unless replacing was chosen
(:class:`ReplaceRequired`). The plan compares stored and incoming annotations row by row — spans by their
offsets, sentence labels and scores by sentence, claim labels by claim, triplets by position, verdicts on
another label set's triplets by that label set and position, statuses by task, ratings by segment, a
response score by its item — and keeps the stored state of every unit it will rewrite, so the edit log can hold it and the
import can be undone (:mod:`db.import_undo`).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models as m
from db.exporter import label_set_record
from db.label_set_keys import Key
from db.record_reach import NOTHING, Reach, logged_reach, reach_of, within
from db.triplet_verdicts import LostVerdict, lost_verdicts
from formats.problems import Problem
from formats.records import (
    Annotations,
    Bundle,
    RatingRecord,
    RatingTaskRecord,
    TripletJudgmentRecord,
    TripletRecord,
)

SHOWN_ITEMS = 10
_CHUNK = 5_000  # external ids per query, well within every store's limit on bound values
Rows = dict[str, dict[Hashable, list[tuple[Any, ...]]]]


class ReplaceRequired(Exception):
    """Nothing was written: the import would remove or change stored annotations and replacing was not chosen."""

    def __init__(self, changes: ImportChanges) -> None:
        self.changes = changes
        super().__init__("\n".join(changes.report_lines()))

    def problem(self, source: str) -> Problem:
        """The refusal as a problem of the whole input, for the reports that list problems."""
        return Problem(
            source,
            "-",
            "-",
            "it would remove or change stored annotations ("
            + "; ".join(self.changes.report_lines())
            + "); nothing was imported: choose to replace existing annotations to apply it",
        )


def annotation_rows(
    annotations: Annotations, encode_meta: Callable[[dict[str, Any]], str] | None = None
) -> Rows:
    """What one label set says about one item, keyed the way a change is recognised, in a stable order.

    Only the kinds the item has are built: an import plans every item of a large file through here,
    and most items hold two or three of the eight kinds. ``encode_meta`` gives a sentence label's meta as
    text (an import passes its :class:`MetaTexts`, so that its writer stores the text planned here
    rather than encoding it again); :func:`meta_text` when not given."""
    a = annotations
    rows: Rows = {}
    if a.spans:
        rows["spans"] = _grouped(((s.start, s.end), (s.type, s.note)) for s in a.spans)
    if a.sentence_labels:
        encode = encode_meta or meta_text
        rows["sentence_labels"] = _grouped(
            (lab.index, (lab.label, lab.error_type, bool(lab.override), encode(lab.meta)))
            for lab in a.sentence_labels
        )
    if a.claim_labels:
        rows["claim_labels"] = _grouped((c.index, (c.label, c.type, c.reason)) for c in a.claim_labels)
    if a.triplets:
        rows["triplets"] = _grouped(
            (k, (t.subject, t.relation, t.object, t.verdict, t.wrong_part)) for k, t in enumerate(a.triplets)
        )
    if a.triplet_judgments:
        rows["triplet_judgments"] = _grouped(
            ((j.label_set_kind, j.label_set_name, j.index), (j.verdict, j.wrong_part))
            for j in a.triplet_judgments
        )
    if a.statuses:
        rows["item_statuses"] = _grouped((s.task, (s.status, s.note)) for s in a.statuses)
    if a.raw_output is not None:
        r = a.raw_output
        # The cut mark came later: an output not cut keeps the row it had, so the digests imports
        # logged before it still match an unchanged output (and those imports can be undone).
        cut = (True,) if r.cut else ()
        rows["raw_outputs"] = {0: [(r.text, r.analysis, bool(r.follows_format), r.parse_error, *cut)]}
    if a.sentence_scores:
        rows["sentence_scores"] = _grouped(
            (s.index, (float(s.score), bool(s.parsed))) for s in a.sentence_scores
        )
    if a.token_probabilities:
        rows["token_probabilities"] = _grouped(
            ((t.token_index, t.start, t.end), (float(t.probability), t.type)) for t in a.token_probabilities
        )
    if a.response_score is not None:
        r2 = a.response_score
        rows["response_scores"] = {
            0: [(float(r2.score), r2.hallucination, r2.rationale, r2.scale_min, r2.scale_max)]
        }
    return rows


def row_counts(annotations: Annotations) -> dict[str, int]:
    """How many rows :func:`annotation_rows` gives each table, in its order: one per record, and one for
    a raw output or a response score (what an unchanged unit adds to :attr:`ImportChanges.unchanged`)."""
    a = annotations
    counts = {
        "spans": len(a.spans),
        "sentence_labels": len(a.sentence_labels),
        "claim_labels": len(a.claim_labels),
        "triplets": len(a.triplets),
        "triplet_judgments": len(a.triplet_judgments),
        "item_statuses": len(a.statuses),
        "raw_outputs": int(a.raw_output is not None),
        "sentence_scores": len(a.sentence_scores),
        "token_probabilities": len(a.token_probabilities),
        "response_scores": int(a.response_score is not None),
    }
    return {table: n for table, n in counts.items() if n}


def unchanged(stored: Annotations, given: Annotations) -> bool:
    """Whether ``given`` says what ``stored`` says, as their :func:`annotation_rows` compare, without
    building them. Equal records give equal rows but for a sentence label's meta, which the rows hold as
    JSON text: ``1`` and ``1.0``, or ``0.0`` and ``-0.0``, are equal numbers and different texts. So the
    metas are compared as orjson writes them too, which keeps those apart (NaN, which it writes as
    null, is never equal to anything, so the records differ already). A value orjson refuses or
    would write its own way (a subclass, a date) gives False. False tells nothing: the rows are
    then compared.

    Most units of a file imported again are as stored; building the rows of both sides to compare
    them, each sentence label's meta encoded as JSON, took a fifth of such an import's time."""
    if stored != given:
        return False
    try:
        return all(
            _meta_bytes(old.meta) == _meta_bytes(new.meta)
            for old, new in zip(stored.sentence_labels, given.sentence_labels, strict=True)
        )
    except TypeError:  # orjson refuses it
        return False


_meta_bytes = partial(
    orjson.dumps,
    option=orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS,
)


def _sorted_json_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True)``, with the C encoder built once rather than on every call.

    ``JSONEncoder.encode`` makes a new C encoder object for each value it encodes; for the small meta
    dict of each of a million sentence labels that was half the cost of encoding it. The encoder made
    here is the one ``JSONEncoder.iterencode`` makes, with the same arguments but no check for circular
    containers (a meta dict read from a file holds none). Without the C accelerator, the plain encoder.
    """
    from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]

    plain = json.JSONEncoder(sort_keys=True)
    if c_make_encoder is None:
        return plain.encode
    encoder = c_make_encoder(
        None, plain.default, encode_basestring_ascii, None, ": ", ", ", True, False, True
    )

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return plain.encode(value)
        return "".join(encoder(value, 0))

    return encode


_META_JSON = _sorted_json_encoder()


def meta_text(meta: dict[str, Any]) -> str:
    """A sentence label's meta as the plan compares and fingerprints it: JSON with sorted keys, and ""
    for none. (Stored, the same text with "{}" for none: see :meth:`MetaTexts.stored`.)"""
    return _META_JSON(meta) if meta else ""


class MetaTexts:
    """:func:`meta_text` of each meta dict, encoded once for both the plan and the writer of a batch.

    Encoding the small meta dict of every sentence label as JSON took a tenth of a 100 K-row import,
    and the plan and the writer each did it. A text is found again by the dict's identity; the dict is
    held with its text, so that identity cannot pass to another dict while it is kept. A dict changed
    after its first encoding keeps its first text: one is made per batch, and nothing changes a
    record's meta between the plan and the write."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[dict[str, Any], str]] = {}

    def __call__(self, meta: dict[str, Any]) -> str:
        found = self._texts.get(id(meta))
        if found is not None and found[0] is meta:
            return found[1]
        text = meta_text(meta)
        self._texts[id(meta)] = (meta, text)
        return text

    def stored(self, meta: dict[str, Any]) -> str:
        """The meta as the ``metadata`` column keeps it: the planned JSON text ("{}" for none)."""
        return self(meta) or "{}"


def rating_rows(ratings: Iterable[RatingRecord]) -> Rows:
    """One rater's ratings of one item, keyed by the rated segment."""
    grouped = _grouped(
        (
            (r.segment_start, r.segment_end),
            (None if r.score is None else float(r.score), r.nothing_flagged_correct),
        )
        for r in ratings
    )
    return {"ratings": grouped} if grouped else {}


def _grouped(pairs: Iterable[tuple[Hashable, tuple[Any, ...]]]) -> dict[Hashable, list[tuple[Any, ...]]]:
    found: dict[Hashable, list[tuple[Any, ...]]] = {}
    for key, value in pairs:
        if key in found:
            found[key].append(value)
        else:
            found[key] = [value]
    for values in found.values():
        if len(values) > 1:
            values.sort(key=repr)
    return found


def digest(units: Sequence[Rows]) -> str:
    """A fingerprint of some units' rows, so an undo can tell whether they changed since."""
    fingerprint = Fingerprint()
    fingerprint.add(units)
    return fingerprint.hexdigest()


def _key_repr(pair: tuple[Hashable, Any]) -> str:
    return repr(pair[0])


class Fingerprint:
    """:func:`digest` of units given in several parts (an import written in batches): the same hash as
    of the JSON list of every unit, built without holding every unit at once."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256(b"[")
        self._empty = True

    def add(self, units: Iterable[Rows]) -> None:
        # Each unit's rows by table name, each table's by the repr of its keys (integers, or tuples of
        # integers and None): as one repr never begins another's unless the shorter is an integer and
        # the longer goes on in digits, this is the order of the reprs of the (key, rows) pairs too.
        # (The keys of verdicts on another label set's triplets hold its kind and name as well: that
        # table came later, so no digest logged before it was sorted otherwise.)
        body = [sorted((t, sorted(g.items(), key=_key_repr)) for t, g in unit.items()) for unit in units]
        if not body:
            return
        text = json.dumps(body)[1:-1]  # the units' JSON, ", " between them
        self._hash.update(((", " if not self._empty else "") + text).encode("utf-8", "surrogatepass"))
        self._empty = False

    def hexdigest(self) -> str:
        whole = self._hash.copy()
        whole.update(b"]")
        return whole.hexdigest()


@dataclass
class ImportChanges:
    """Per label set (``kind:name``) or rating task (``rating task NAME``) and table: rows removed,
    changed and added; the items where something is removed or changed; and what to write and log."""

    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)
    # (kind, name) -> external ids whose annotations differ; stored annotations of those items.
    label_set_items: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    label_set_before: dict[tuple[str, str], list[Annotations]] = field(default_factory=dict)
    # (kind, name) -> those of its rewritten items whose verdicts on other label sets' triplets or
    # statuses it replaces, with how far (:mod:`db.record_reach`): the rest stay as they are.
    reach: dict[Key, dict[str, Reach]] = field(default_factory=dict)
    # (judged label set, external id, judge) -> the judge's verdicts on the judged label set's triplets of
    # the item that the import removes, as a triplet does not come back as it was: counted as the judge's
    # work removed, and logged for undo. (Where the input rewrites the judge's own record of the item,
    # reaching that label set, the record decides instead: see plan_changes.)
    lost: dict[tuple[Key, str, Key], list[LostVerdict]] = field(default_factory=dict)
    # The positions (judged label set, external id, index) whose triplet comes back with other words.
    renamed: set[tuple[Key, str, int]] = field(default_factory=set)
    # The lost verdicts that a judge's record given as stored, later in the input, gives again: written
    # on the new triplet at that position once the input is (counted as changed, still logged as lost).
    regiven: list[tuple[Key, LostVerdict]] = field(default_factory=list)
    # task name -> (rater, external id) pairs whose ratings differ; stored ratings of those pairs.
    rating_pairs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    rating_before: dict[str, list[RatingRecord]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    # Rows the input holds that are stored already, per table (those units are not rewritten).
    unchanged: dict[str, int] = field(default_factory=dict)
    # The digest of each owner's units so far, while an import is planned batch by batch.
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict, repr=False, compare=False)

    @property
    def needs_replace(self) -> bool:
        return any(n["removed"] or n["changed"] for tables in self.counts.values() for n in tables.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "needs_replace": self.needs_replace,
            "counts": self.counts,
            "items_affected": len(self.items),
            "first_items": self.items[:SHOWN_ITEMS],
            "unchanged": self.unchanged,
        }

    def report_lines(self) -> list[str]:
        lines = []
        for owner, tables in self.counts.items():
            parts = [
                f"{table}: {n['removed']} removed, {n['changed']} changed, {n['added']} added"
                for table, n in tables.items()
            ]
            lines.append(f"{owner} — " + "; ".join(parts))
        if self.items:
            lines.append(self.items_line())
        return lines

    def items_line(self) -> str:
        more = f" … and {len(self.items) - SHOWN_ITEMS} more" if len(self.items) > SHOWN_ITEMS else ""
        return f"items affected ({len(self.items)}): {', '.join(self.items[:SHOWN_ITEMS])}{more}"

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per label set (or rating task) and table, for a report table."""
        return [
            {"label set": owner, "table": table, **counts}
            for owner, tables in self.counts.items()
            for table, counts in tables.items()
        ]

    def log_before(self) -> dict[str, Any]:
        """The stored state of every unit the import rewrites, as the edit log keeps it."""
        return logged_state(
            self.label_set_items,
            self.label_set_before,
            self.rating_pairs,
            self.rating_before,
            self.reach,
            self.lost_verdicts(),
        )

    def lost_verdicts(self) -> dict[Key, list[LostVerdict]]:
        """The verdicts the import removes with other label sets' triplets, by the judged label set."""
        found: dict[Key, list[LostVerdict]] = {}
        for (judged, _, _), lost in self.lost.items():
            found.setdefault(judged, []).extend(lost)
        return found

    def add_units(self, owner: str, units: Sequence[Rows]) -> None:
        """Fold the units ``owner`` rewrites into its digest (batch after batch, in input order)."""
        fingerprint = self.fingerprints.setdefault(owner, Fingerprint())
        fingerprint.add(units)
        self.digests[owner] = fingerprint.hexdigest()

    def _same(self, rows: Rows) -> None:
        self._same_counts({table: sum(map(len, grouped.values())) for table, grouped in rows.items()})

    def _same_counts(self, counts: Mapping[str, int]) -> None:
        for table, n in counts.items():
            self.unchanged[table] = self.unchanged.get(table, 0) + n

    def _lose(self, judged: Key, lost: LostVerdict) -> None:
        """Count and keep a verdict another label set gave on a triplet the import does not write again."""
        ext, judge = lost[0], (lost[1], lost[2])
        self.lost.setdefault((judged, ext, judge), []).append(lost)
        owner = f"{judge[0]}:{judge[1]}"
        total = self.counts.setdefault(owner, {}).setdefault(
            "triplet_judgments", {"removed": 0, "changed": 0, "added": 0}
        )
        total["removed"] += 1

    def _lost_by(self, judge: Key, ext: str, reach: Reach) -> list[tuple[Key, LostVerdict]]:
        """The verdicts of ``judge`` on item ``ext`` that a label set earlier in the input removes with its
        triplets, where ``reach`` (a record's, naming the label sets it judges) covers that label set."""
        return [
            (judged, lost)
            for judged in sorted(reach.judged or ())
            for lost in self.lost.get((judged, ext, judge), ())
            if (judged, lost) not in self.regiven
        ]

    def _regive(self, taken: Sequence[tuple[Key, LostVerdict]]) -> None:
        """The judge's record, given as stored, gives these lost verdicts again: those whose triplet comes
        back (with other words) get them on the new triplet, as the record says; counted as changed.
        (One whose triplet the input drops stays lost: it has nothing left to judge.)"""
        for judged, lost in taken:
            if (judged, lost[0], lost[3]) in self.renamed:
                self.regiven.append((judged, lost))
                total = self.counts[f"{lost[1]}:{lost[2]}"]["triplet_judgments"]
                total["removed"] -= 1
                total["changed"] += 1

    def _unlose(self, judge: Key, ext: str, taken: Sequence[tuple[Key, LostVerdict]]) -> None:
        """Take back verdicts counted as lost: the judge's rewritten record of the item accounts for them."""
        for judged in {judged for judged, _ in taken}:
            del self.lost[(judged, ext, judge)]
        owner = f"{judge[0]}:{judge[1]}"
        total = self.counts[owner]["triplet_judgments"]
        total["removed"] -= len(taken)
        if not any(total.values()):
            del self.counts[owner]["triplet_judgments"]
            if not self.counts[owner]:
                del self.counts[owner]

    def _count(self, owner: str, old: Rows, new: Rows) -> bool:
        """Add the differences of one unit to the counts; True when something stored is removed or changed."""
        if not old:  # nothing stored for this unit (a first import): every row is added
            for table, grouped in new.items():
                total = self.counts.setdefault(owner, {}).setdefault(
                    table, {"removed": 0, "changed": 0, "added": 0}
                )
                total["added"] += sum(len(values) for values in grouped.values())
            return False
        loses = False
        for table in [*old, *(t for t in new if t not in old)]:
            before, after = old.get(table, {}), new.get(table, {})
            n = {"removed": 0, "changed": 0, "added": 0}
            for key in [*before, *(k for k in after if k not in before)]:
                was, now = before.get(key, []), after.get(key, [])
                n["changed"] += sum(1 for a, b in zip(was, now, strict=False) if a != b)
                n["removed"] += max(0, len(was) - len(now))
                n["added"] += max(0, len(now) - len(was))
            if any(n.values()):
                total = self.counts.setdefault(owner, {}).setdefault(table, dict.fromkeys(n, 0))
                for what, count in n.items():
                    total[what] += count
                loses = loses or bool(n["removed"] or n["changed"])
        return loses


def logged_state(
    label_set_items: dict[tuple[str, str], list[str]],
    label_set_annotations: dict[tuple[str, str], list[Annotations]],
    rating_pairs: dict[str, list[tuple[str, str]]],
    ratings: dict[str, list[RatingRecord]],
    reach: Mapping[Key, Mapping[str, Reach]],
    lost: Mapping[Key, Sequence[LostVerdict]],
) -> dict[str, Any]:
    """Units (a label set on some items, a rating task for some rater and item pairs) with their rows,
    in the JSON shape an edit-log entry keeps them; ``reach``: per label set, the items whose verdicts
    on other label sets' triplets or statuses the change replaced, and how far (the rows kept hold
    those; :func:`db.record_reach.reach_from_log` reads it back); ``lost``: per label set, the verdicts
    others gave on its triplets that the change removed with those triplets."""
    return {
        "label_sets": [
            {
                "kind": kind,
                "name": name,
                "items": items,
                "annotations": [asdict(a) for a in label_set_annotations.get((kind, name), [])],
                **logged_reach(reach.get((kind, name), {})),
                **(
                    {"verdicts_lost": [list(v) for v in lost[(kind, name)]]} if lost.get((kind, name)) else {}
                ),
            }
            for (kind, name), items in label_set_items.items()
        ],
        "ratings": [
            {
                "task": task,
                "pairs": [list(p) for p in pairs],
                "ratings": [asdict(r) for r in ratings.get(task, [])],
            }
            for task, pairs in rating_pairs.items()
        ],
    }


def units_now(
    session: Session,
    dataset_id: int,
    key: Key,
    items: Sequence[str],
    reach: Mapping[str, Reach],
) -> tuple[dict[str, Annotations], str]:
    """What label set ``key`` says now about ``items`` — with its verdicts on other label sets' triplets
    and its statuses as far as ``reach`` goes only — and the digest of those units, as an import that
    wrote them fingerprinted them (an undo compares the two)."""
    now = {
        ext: within(a, reach.get(ext, NOTHING))
        for ext, a in (stored_annotations(session, dataset_id, *key, set(items)) or {}).items()
    }
    return now, digest([annotation_rows(now[ext]) if ext in now else {} for ext in items])


def stored_annotations(
    session: Session, dataset_id: int, kind: str, name: str, items: set[str]
) -> dict[str, Annotations] | None:
    """What the stored label set says about ``items`` (None when there is no such label set).

    Read for those items only, a chunk at a time: an import plans each batch through here, and reading
    the whole label set for each batch made a re-import take time growing with the square of its size
    (100 K sentences: 20 batches each read 100 K labels)."""
    label_set = session.scalar(
        select(m.LabelSet).where(
            m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == kind, m.LabelSet.name == name
        )
    )
    if label_set is None:
        return None
    wanted = sorted(items)
    found: dict[str, Annotations] = {}
    for start in range(0, len(wanted), _CHUNK):
        query = select(m.Item.id, m.Item.external_id).where(
            m.Item.dataset_id == dataset_id, m.Item.external_id.in_(wanted[start : start + _CHUNK])
        )
        ext_of = {item_id: ext for item_id, ext in session.execute(query)}
        if not ext_of:
            continue
        ids = sorted(ext_of)
        chunk = select(m.Item.id).where(m.Item.id.in_(ids))
        record = label_set_record(session, label_set, {}, ext_of, {i: k for k, i in enumerate(ids)}, chunk)
        found.update((a.item, a) for a in record.annotations)
    return found


def stored_ratings(
    session: Session, dataset_id: int, task: str, pairs: set[tuple[str, str]]
) -> dict[tuple[str, str], list[RatingRecord]]:
    """The stored ratings of task ``task`` by (rater, external id), for ``pairs`` only."""
    found: dict[tuple[str, str], list[RatingRecord]] = defaultdict(list)
    query = (
        select(m.Rating, m.Annotator.name, m.Item.external_id)
        .join(m.RatingTask, m.RatingTask.id == m.Rating.task_id)
        .join(m.Annotator, m.Annotator.id == m.Rating.annotator_id)
        .join(m.Item, m.Item.id == m.Rating.item_id)
        .where(m.RatingTask.dataset_id == dataset_id, m.RatingTask.name == task)
        .order_by(m.Rating.id)
    )
    for rating, rater, ext in session.execute(query):
        if (rater, ext) in pairs:
            found[(rater, ext)].append(
                RatingRecord(
                    ext,
                    rater,
                    rating.score,
                    rating.segment_start,
                    rating.segment_end,
                    rating.nothing_flagged_correct,
                )
            )
    return found


def _by_item(annotations: Iterable[Annotations]) -> dict[str, Annotations]:
    """Annotations per item; an item given twice gets everything both say, as the writer stores it."""
    found: dict[str, Annotations] = {}
    for given in annotations:
        seen = found.get(given.item)
        if seen is None:
            found[given.item] = given
            continue
        found[given.item] = Annotations(
            item=given.item,
            spans=[*seen.spans, *given.spans],
            sentence_labels=[*seen.sentence_labels, *given.sentence_labels],
            claim_labels=[*seen.claim_labels, *given.claim_labels],
            triplets=[*seen.triplets, *given.triplets],
            triplet_judgments=[*seen.triplet_judgments, *given.triplet_judgments],
            statuses=[*seen.statuses, *given.statuses],
            raw_output=given.raw_output or seen.raw_output,
            sentence_scores=[*seen.sentence_scores, *given.sentence_scores],
            token_probabilities=[*seen.token_probabilities, *given.token_probabilities],
            response_score=given.response_score or seen.response_score,
        )
    return found


def _with_verdicts(stored: Annotations, lost: Sequence[tuple[Key, LostVerdict]]) -> Annotations:
    """A stored unit with its verdicts that another label set's rewritten triplets took put back (by the
    judged label set), where the store no longer holds them."""
    held = {(j.label_set_kind, j.label_set_name, j.index) for j in stored.triplet_judgments}
    back = [
        TripletJudgmentRecord(kind, name, index, verdict, wrong_part)
        for (kind, name), (_, _, _, index, verdict, wrong_part) in lost
        if (kind, name, index) not in held
    ]
    return replace(stored, triplet_judgments=[*stored.triplet_judgments, *back]) if back else stored


def plan_changes(
    session: Session,
    dataset_id: int,
    bundle: Bundle,
    bad_items: set[str],
    rating_tasks: Sequence[RatingTaskRecord],
    *,
    into: ImportChanges | None = None,
    fresh: Iterable[tuple[str, str]] = (),
    meta_texts: MetaTexts | None = None,
) -> ImportChanges:
    """Compare what ``bundle`` says with what is stored; every unit whose rows differ is to be written.

    An import written in batches plans each batch ``into`` the same changes; the label sets in ``fresh``
    were made by this import, so nothing of theirs was stored before it and none is read back;
    ``meta_texts`` keeps the incoming sentence labels' meta texts for the writer."""
    changes = ImportChanges() if into is None else into
    fresh = set(fresh)
    losing: set[str] = set()
    for record in bundle.label_sets:
        incoming = _by_item(a for a in record.annotations if a.item not in bad_items)
        stored = (
            {}
            if (record.kind, record.name) in fresh
            else stored_annotations(session, dataset_id, record.kind, record.name, set(incoming)) or {}
        )
        owner = f"{record.kind}:{record.name}"
        items, before, units = [], [], []
        rewritten_triplets: dict[str, list[TripletRecord]] = {}  # where stored triplets are written again
        key = (record.kind, record.name)
        for ext, given in incoming.items():
            old = stored.get(ext)
            reach = reach_of(given)
            if old is not None:
                old = within(old, reach)
            # Its verdicts that a label set written before it in this input removes with its triplets
            # were stored before the import: compared as such (the store may have lost them already).
            taken = changes._lost_by(key, ext, reach) if given.triplet_judgments else []
            if taken:
                old = _with_verdicts(old or Annotations(ext), taken)
            elif old is not None and unchanged(old, given):
                changes._same_counts(row_counts(given))
                continue
            old_rows, new_rows = annotation_rows(old) if old else {}, annotation_rows(given, meta_texts)
            if old_rows == new_rows:
                changes._same(new_rows)
                changes._regive(taken)  # as stored: it judges the triplets at those positions still
                continue
            if taken:
                changes._unlose(key, ext, taken)  # rewritten: this record says what it keeps of them
            items.append(ext)
            units.append(new_rows)
            if reach:
                changes.reach.setdefault((record.kind, record.name), {})[ext] = reach
            if old is not None:
                before.append(old)
                if old.triplets:
                    rewritten_triplets[ext] = given.triplets
            if changes._count(owner, old_rows, new_rows):
                losing.add(ext)
        for lost in lost_verdicts(session, dataset_id, key, rewritten_triplets):
            said = changes.reach.get((lost[1], lost[2]), {}).get(lost[0])
            if said is not None and (said.judged is None or key in said.judged):
                continue  # the judge's record of the item, rewritten by this input, decides
            if lost[3] < len(rewritten_triplets[lost[0]]):
                changes.renamed.add((key, lost[0], lost[3]))
            changes._lose(key, lost)
            losing.add(lost[0])
        if items:
            changes.label_set_items.setdefault((record.kind, record.name), []).extend(items)
            changes.label_set_before.setdefault((record.kind, record.name), []).extend(before)
            changes.add_units(owner, units)
    for task in rating_tasks:
        incoming_ratings: dict[tuple[str, str], list[RatingRecord]] = defaultdict(list)
        for rating in task.ratings:
            incoming_ratings[(rating.rater, rating.item)].append(rating)
        stored_pairs = stored_ratings(session, dataset_id, task.name, set(incoming_ratings))
        owner = f"rating task {task.name}"
        pairs, kept, units = [], [], []
        for pair, ratings in incoming_ratings.items():
            old_rows, new_rows = rating_rows(stored_pairs.get(pair, [])), rating_rows(ratings)
            if old_rows == new_rows:
                changes._same(new_rows)
                continue
            pairs.append(pair)
            units.append(new_rows)
            kept += stored_pairs.get(pair, [])
            if changes._count(owner, old_rows, new_rows):
                losing.add(pair[1])
        if pairs:
            changes.rating_pairs.setdefault(task.name, []).extend(pairs)
            changes.rating_before.setdefault(task.name, []).extend(kept)
            changes.add_units(owner, units)
    order = {item.external_id: k for k, item in enumerate(bundle.items)}
    changes.items += sorted(losing, key=lambda ext: (order.get(ext, len(order)), ext))
    return changes
