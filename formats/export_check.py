"""Whether a dataset can be written in a format at all: an export never silently drops every label.

A format holds some kinds of labels (:attr:`~formats.base.Format.holds`) and writes one label set or all
of them. Writing a label set in a format that holds none of what it has — sentence-level AlignBench for a
dataset of spans — would give a file of items without a single label (or an empty file), and the user
would only find out on reading it back. So such an export is refused with a message naming what the
label set has, what the format holds, and the formats that hold it. A format that keeps some of what a
label set has (spans, not the sentence labels beside them) writes what it can: that is what choosing a
format means, and the canonical JSONL keeps everything. A dataset written batch by batch is counted as
it goes (:func:`checked_batches`) and refused alike, before its file is finished.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator

from formats.base import LABEL_KINDS, Format, FormatError
from formats.records import Bundle, LabelSetRecord
from formats.registry import formats


def label_counts(label_set: LabelSetRecord) -> dict[str, int]:
    """How many labels of each kind (:data:`~formats.base.LABEL_KINDS`) a label set has."""
    annotations = label_set.annotations
    counts = {
        "span": sum(len(a.spans) for a in annotations),
        "sentence": sum(len(a.sentence_labels) for a in annotations),
        "claim": sum(len(a.claim_labels) for a in annotations),
        "triplet": sum(len(a.triplets) for a in annotations),
        "output": sum(a.raw_output is not None for a in annotations),
        "score": sum(len(a.sentence_scores) for a in annotations),
        "probability": sum(len(a.token_probabilities) for a in annotations),
        "response": sum(a.response_score is not None for a in annotations),
    }
    return {kind: counts[kind] for kind in LABEL_KINDS if counts[kind]}


def _said(counts: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {LABEL_KINDS[kind]}" for kind, n in counts.items())


def _holds(fmt: Format) -> str:
    return " and ".join(LABEL_KINDS[kind] for kind in fmt.holds) or "no labels"


def _name(label_set: LabelSetRecord) -> str:
    return f"{label_set.kind}:{label_set.name}"


def export_refusal(fmt: Format, bundle: Bundle) -> str | None:
    """Why ``bundle`` cannot be written as ``fmt`` without losing all its labels, or None when it can."""
    tally = ExportTally(fmt)
    tally.take(bundle)
    return tally.refusal()


class ExportTally:
    """What :func:`export_refusal` needs of a dataset — its name, how many items, which label sets with
    how many labels of each kind — counted batch by batch, so a streamed export is checked alike."""

    def __init__(self, fmt: Format) -> None:
        self.fmt = fmt
        self.head: Bundle | None = None  # the dataset and the chosen label sets, without annotations
        self.items = 0
        self.counts: list[Counter[str]] = []
        # Per chosen label set, what the file says otherwise (Format.changed_in_writing), if it writes it.
        self.changed: list[Counter[str] | None] = []

    def take(self, batch: Bundle) -> None:
        if self.head is None:
            label_sets = [dataclasses.replace(ls, annotations=[]) for ls in batch.label_sets]
            self.head = Bundle(dataset=batch.dataset, label_sets=label_sets)
            self.counts = [Counter() for _ in label_sets]
            written = self._written()
            self.changed = [Counter() if any(ls is w for w in written) else None for ls in label_sets]
        self.items += len(batch.items)
        for counts, changed, label_set in zip(self.counts, self.changed, batch.label_sets, strict=True):
            counts.update(label_counts(label_set))
            if changed is not None:
                changed.update(self.fmt.changed_in_writing(batch, label_set))

    def _written(self) -> list[LabelSetRecord]:
        """The chosen label sets the file holds: every one, or the one a one-label-set format writes."""
        fmt, head = self.fmt, self.head
        assert head is not None, "no batch was taken"
        if fmt.writes_every_label_set:
            return head.label_sets
        counted = {id(ls): counts for ls, counts in zip(head.label_sets, self.counts, strict=True)}
        picked = fmt.written_label_set(head, lambda label_set: counted[id(label_set)])
        return [picked] if picked else []

    def refusal(self) -> str | None:
        fmt, head = self.fmt, self.head
        assert head is not None, "no batch was taken"
        if not self.items:
            return f"the dataset {head.dataset.name!r} holds no items: there is nothing to write"
        counts_of = {  # in LABEL_KINDS order, as label_counts gives them
            id(ls): {kind: counts[kind] for kind in LABEL_KINDS if counts[kind]}
            for ls, counts in zip(head.label_sets, self.counts, strict=True)
        }
        labelled = [ls for ls in head.label_sets if counts_of[id(ls)]]
        if fmt.writes_every_label_set:
            # Such a file keeps what it can of each label set: refused only when it keeps nothing of any.
            kept = any(set(counts_of[id(ls)]) & set(fmt.holds) for ls in labelled)
            return (
                None if kept or not labelled else self._nothing_kept(labelled[0], counts_of[id(labelled[0])])
            )
        written = fmt.written_label_set(head, lambda label_set: counts_of[id(label_set)])
        if written is None:
            if fmt.kind == "predictions":
                chosen = ", ".join(map(_name, head.label_sets)) or "none"
                return f"{fmt.title} writes a detector run, and no detector run is chosen (chosen: {chosen})"
            if labelled:
                return (
                    f"{fmt.title} writes one label set — the gold one, or the only one chosen — and "
                    f"{len(head.label_sets)} are chosen without a gold one "
                    f"({', '.join(map(_name, head.label_sets))}): choose the one to write"
                )
            return None
        counts = counts_of[id(written)]
        if not counts or set(counts) & set(fmt.holds):
            return None
        return self._nothing_kept(written, counts)

    def left_out(self) -> list[str]:
        """What the file leaves out of the chosen label sets, a line each: the label sets a
        one-label-set format does not write, and the kinds of labels of those it writes that the format
        has no place for (a Label Studio file of gold's spans leaves out its sentence labels and claims;
        a run's raw outputs there read back as outputs that followed their format), and what the file
        says otherwise of the labels it holds (:meth:`~formats.base.Format.changed_in_writing`: a span
        type HalLoc has no group for). Kinds the format gives back in another shape
        (:attr:`~formats.base.Format.keeps_as_well`) are not listed. Nothing for a lossless format."""
        fmt, head = self.fmt, self.head
        if head is None or fmt.lossless:
            return []
        written = self._written()
        notes = []
        for label_set, counts, changed in zip(head.label_sets, self.counts, self.changed, strict=True):
            kinds = {kind: counts[kind] for kind in LABEL_KINDS if counts[kind]}
            if not kinds:
                continue
            if not any(label_set is w for w in written):
                one = f", {_name(written[0])}" if written else ""
                notes.append(f"{_name(label_set)} is not in the file: {fmt.title} writes one label set{one}")
                continue
            kept = {*fmt.holds, *fmt.keeps_as_well}
            lost = {kind: n for kind, n in kinds.items() if kind not in kept}
            if lost:
                notes.append(
                    f"{_name(label_set)}: its {_said(lost)} are not in the file ({fmt.title} holds {_holds(fmt)})"
                )
            notes += [f"{_name(label_set)}: {n:,} {change}" for change, n in (changed or {}).items()]
        return notes

    def written_summary(self) -> str:
        """What the label sets the file holds have, and what the format keeps of them: for a file that
        came out empty, "detector:run has 120 spans, 120 raw outputs, none of them in a form AlignBench
        sentence scores (0–100) writes (it holds sentence scores and raw outputs)"."""
        fmt, head = self.fmt, self.head
        assert head is not None, "no batch was taken"
        counted = {id(ls): counts for ls, counts in zip(head.label_sets, self.counts, strict=True)}

        def has(label_set: LabelSetRecord) -> str:
            counts = counted[id(label_set)]
            return _said({kind: counts[kind] for kind in LABEL_KINDS if counts[kind]}) or "no labels"

        said = "; ".join(f"{_name(ls)} has {has(ls)}" for ls in self._written()) or "no label set is written"
        return f"{said}, none of them in a form {fmt.title} writes (it holds {_holds(fmt)})"

    def _nothing_kept(self, written: LabelSetRecord, counts: dict[str, int]) -> str:
        fmt = self.fmt
        # Raw outputs are in the shape of the format that read them, and a format that holds outputs
        # keeps only its own kind (Tri-HE refuses an MHALO run's): they alone make no format a safe
        # suggestion, and one suggested for them would refuse the label set in turn.
        portable = set(counts) - {"output"}
        others = [
            f.name
            for f in formats(fmt.kind, writable=True)
            if portable & set(f.holds) and f.name != "canonical"
        ]
        return (
            f"{fmt.title} holds {_holds(fmt)}, and {_name(written)} has none: it has {_said(counts)}, "
            "so the file would carry none of its labels. Export it as "
            + (f"{', '.join(others)}, or " if others else "")
            + "canonical (keeps everything)"
        )


def checked_batches(
    fmt: Format, batches: Iterable[Bundle], tally: ExportTally | None = None
) -> Iterator[Bundle]:
    """``batches`` passed on one by one, then :class:`FormatError` with :func:`export_refusal`'s reason
    of them all, when there is one, as the writer asks for more: a refused export never finishes its
    file (a format that merges the batches never starts writing). ``tally`` (else a new one) counts
    them, for :meth:`ExportTally.left_out` once the file is written."""
    tally = tally or ExportTally(fmt)
    for batch in batches:
        tally.take(batch)
        yield batch
    refusal = tally.refusal()
    if refusal:
        raise FormatError(refusal)


def refuse_empty(fmt: Format, data: bytes, dataset: str) -> bytes:
    """``data`` unless it is empty (nothing but whitespace): an export never writes an empty file."""
    if not bytes(data).strip():
        raise empty_file(fmt, dataset)
    return data


def empty_file(fmt: Format, dataset: str, tally: ExportTally | None = None) -> FormatError:
    """Why nothing was written. With the export's ``tally``, what the written label sets have beside what
    the format holds: an MHALO run's raw outputs written as AlignBench scores gave an empty file, and the
    message did not say that the run has spans and outputs of another kind only."""
    what = f": {tally.written_summary()}" if tally is not None and tally.head is not None else ""
    return FormatError(f"writing {dataset!r} as {fmt.title} gave an empty file{what}; nothing was written")
