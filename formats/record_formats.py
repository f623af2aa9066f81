"""The read template of the formats whose file is one record per item (a JSON list or JSON lines).

Such a reader differs from the next only in how it reads one record, so the whole of ``read`` lives
here: decode the bytes, load the records, run each through the format's hook inside the shared record
loop (:mod:`formats.record_loops`, which turns a :class:`~formats.fields.RecordError` into a problem
for that record alone), and build the bundle. A new format of this shape is a subclass with
``name``/``title``, ``sniff``, the hook and, when writable, ``write``:

* :class:`BenchmarkRecordsFormat` — items and one gold label set; the hook :meth:`read_item` turns
  one record into an item and its gold annotations.
* :class:`PredictionRecordsFormat` — one detector run over stored items; the hook
  :meth:`~PredictionRecordsFormat.record_fields` takes out the record's own fields (rejecting the
  record when they are missing) and :meth:`~PredictionRecordsFormat.annotate` turns them into the
  detector's annotations of the item, keeping an unreadable output with :func:`kept_without`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from formats.base import Format, KnownItem, ReadOptions, ReadResult
from formats.bundles import detector_bundle, gold_bundle
from formats.fields import RecordError
from formats.ids import record_of
from formats.json_documents import PairsHook, load_records
from formats.problems import Problem
from formats.record_loops import benchmark_items, in_dataset, prediction_items, prediction_records
from formats.records import Annotations, ItemRecord, RawOutputRecord
from formats.tables import Part, TableSource, file_source
from formats.text import file_stem

T = TypeVar("T")

# ``(field, reason)`` notes a hook adds about a record it still accepts; reported as warnings.
Warnings = list[tuple[str, str]]
# Reads one record (at its index in the file) into an item and its gold annotations.
RecordReader = Callable[[Any, int, Warnings], tuple[ItemRecord, Annotations]]

# A run is refused whole as one over another dataset when at least RUN_CHECK_MIN_OUTPUTS of its outputs
# hold a text to compare with their items' responses and fewer than RUN_CHECK_MIN_SHARE of them match
# (so none, below 20 outputs). A detector's own slips are per output (kept, counted against its IF); a
# run of which (nearly) no output copies its item's response is the file of another dataset whose ids
# happen to be this one's (``processed_test-3`` of every MHALO file), and would score as a detector that
# failed every item. One or two outputs are too few to tell a broken output from another dataset.
RUN_CHECK_MIN_OUTPUTS = 3
RUN_CHECK_MIN_SHARE = 0.05

# What a run refused as one over another dataset is told, whichever check found it out.
OVER_ANOTHER_DATASET = "is this run over another dataset? Nothing of it was imported; import it into the dataset its outputs are of"


def no_item_refusal(source: str, outputs: int, dataset: str | None) -> Problem:
    """The file-level error refusing a run none of whose ``outputs`` names an item of ``dataset``: each
    record's own "no item" error alone left the page offering to skip them all, which imports nothing,
    and never said the likely cause."""
    return Problem(
        source,
        "-",
        "-",
        f"none of the {outputs} outputs names an item of {in_dataset(dataset)}: {OVER_ANOTHER_DATASET}",
    )


@dataclass(frozen=True)
class TextCheck:
    """Whether one output's text is a copy of its item's stored response, for the run check; with
    ``difference`` saying where a text that is not one parts from the response."""

    matches: bool
    difference: str = ""


@dataclass
class RunTextChecks:
    """The text checks of a run's outputs, and the refusal they add up to (see ``RUN_CHECK_MIN_*``)."""

    compared: int = 0
    matched: int = 0
    first: tuple[str, str] | None = None  # the first output that does not match: label, why

    def add(self, label: str, check: TextCheck | None) -> None:
        if check is None:
            return
        self.compared += 1
        if check.matches:
            self.matched += 1
        elif self.first is None:
            self.first = (label, check.difference)

    def refusal(self, source: str) -> Problem | None:
        """The file-level error refusing the run, or None when enough of its outputs match."""
        if self.compared < RUN_CHECK_MIN_OUTPUTS or self.matched >= RUN_CHECK_MIN_SHARE * self.compared:
            return None
        assert self.first is not None
        label, difference = self.first
        share = (
            f"none of the {self.compared} outputs matches its item's response"
            if not self.matched
            else f"only {self.matched} of the {self.compared} outputs match their item's response"
        )
        return Problem(
            source,
            "-",
            "-",
            f"{share} (first that does not: record {label}: {difference}): {OVER_ANOTHER_DATASET}",
        )


class BenchmarkRecordsFormat(Format):
    """A benchmark file of one record per item, read into items and one gold label set.

    The dataset is named by the user or after the file; an item's subset is the user's, else the one
    its record gives, else :meth:`default_subset` of the file's stem.
    """

    # The kinds of labels the gold label set carries (``span``, ``sentence``, ``claim``).
    label_kinds: ClassVar[tuple[str, ...]] = ("span",)
    # How the file's JSON objects are built (None: dicts); see :data:`formats.json_documents.PairsHook`.
    pairs_hook: ClassVar[PairsHook | None] = None

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        """One record (at ``index`` of the file named ``stem``) as an item and its gold annotations."""
        raise NotImplementedError

    def record_reader(self, stem: str, options: ReadOptions) -> RecordReader:
        """How the records of one file are read: :meth:`read_item` each. A format whose records depend
        on the read's options, or on each other (a repeat of an earlier record), returns its own reader,
        made afresh for every file."""
        return lambda record, index, warnings: self.read_item(record, index, stem, warnings)

    def default_subset(self, stem: str) -> str | None:
        return None

    def taxonomy(self, annotations: Sequence[Annotations]) -> Sequence[str]:
        """The hallucination types the dataset offers (a benchmark's fixed list, or those found)."""
        return ()

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        if bytes(data[:4]) == b"PAR1":
            problems: list[Problem] = []
            return self.read_parts(file_source(data, source), options or ReadOptions(), problems)
        records, problems = load_records(data, source, type(self).pairs_hook)
        if records is None:
            return ReadResult(None, problems)
        return self.read_parts(
            TableSource(source, (Part(source, lambda _: iter(records)),)), options or ReadOptions(), problems
        )

    def read_parts(self, source: TableSource, options: ReadOptions, problems: list[Problem]) -> ReadResult:
        """The records of every part of ``source`` (one file, or the Parquet shards of a dataset folder)
        as one bundle; each problem names the part its record is in, and a record without an id of its
        own is named after its part's file and its place there."""
        items: list[ItemRecord] = []
        annotations: list[Annotations] = []
        for part in source.parts:
            stem = file_stem(part.name)
            found, gold = benchmark_items(
                part.records(problems),
                part.name,
                problems,
                self.record_reader(stem, options),
                label_of=self.record_label,
            )
            for item in found:
                item.subset = options.subset or item.subset or self.default_subset(stem)
                item.split = item.split or part.split
            items += found
            annotations += gold
        bundle = gold_bundle(
            options,
            source.name,
            self.name,
            items,
            annotations,
            list(self.label_kinds),
            self.taxonomy(annotations),
        )
        return ReadResult(bundle, problems)

    def record_label(self, index: int, record: Any) -> str:
        """How a record is named in a report (its index, and its id when it has one)."""
        return record_of(index, record)


class PredictionRecordsFormat(Format, Generic[T]):
    """A detector run of one record per stored item, read into one detector label set.

    ``T`` is what :meth:`record_fields` takes out of a record for :meth:`annotate`.
    """

    kind = "predictions"
    extensions = (".jsonl", ".json")
    # What one record gives its item, as the report of a repeated record calls it.
    output: ClassVar[str] = "output"
    # Run record_fields before the repeated-item check, so a missing output is named first.
    read_before_repeat: ClassVar[bool] = False
    # The source format the bundle's dataset names (the benchmark family the outputs belong to).
    source_format: ClassVar[str]

    def record_fields(self, record: dict[str, Any]) -> T:
        """The format's own fields of a record; RecordError rejects the record."""
        raise NotImplementedError

    def annotate(
        self,
        ext: str,
        record: dict[str, Any],
        fields: T,
        item: KnownItem,
        options: ReadOptions,
        warnings: Warnings,
    ) -> Annotations:
        """The detector's annotations of the stored ``item`` (external id ``ext``)."""
        raise NotImplementedError

    def text_check(
        self, fields: T, item: KnownItem, options: ReadOptions, annotations: Annotations
    ) -> TextCheck | None:
        """Whether the output in ``fields`` (read into ``annotations``) holds a copy of ``item``'s
        response, for the check that a run is over this dataset at all (see ``RUN_CHECK_MIN_*``); None
        when the format's outputs copy no text, or this one holds none, so it tells nothing either way."""
        return None

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        records, problems = prediction_records(data, source)
        if records is None:
            return ReadResult(None, problems)
        annotations: dict[str, Annotations] = {}
        checks = RunTextChecks()
        output_warnings: set[int] = set()  # ids of the outputs' own warnings, moot when the run is refused
        unknown: list[str] = []  # the records naming no stored item
        for label, ext, record, fields in prediction_items(
            records,
            source,
            problems,
            options.known,
            self.record_fields,
            output=self.output,
            read_before_repeat=self.read_before_repeat,
            dataset=options.dataset,
            unknown=unknown,
        ):
            warnings: Warnings = []
            item = options.known[ext]
            annotations[ext] = self.annotate(ext, record, fields, item, options, warnings)
            found = [Problem(source, label, field, reason, "warning") for field, reason in warnings]
            problems += found
            output_warnings.update(id(problem) for problem in found)
            checks.add(label, self.text_check(fields, item, options, annotations[ext]))
        refusal = checks.refusal(source)
        if records and len(unknown) == len(records):
            refusal = no_item_refusal(source, len(records), options.dataset)
        if refusal is not None:
            return ReadResult(None, [*(p for p in problems if id(p) not in output_warnings), refusal])
        return ReadResult(detector_bundle(options, list(annotations.values()), self.source_format), problems)


def kept_without(what: str, ext: str, raw_text: str, error: RecordError, warnings: Warnings) -> Annotations:
    """An output that cannot be read as ``what`` (spans, labels…): kept as a raw output that does not
    follow the format, never dropped, with a warning saying why."""
    warnings.append((error.field, f"kept without {what}: {error.reason}"))
    return Annotations(
        ext, raw_output=RawOutputRecord(raw_text, False, parse_error=f"{error.field}: {error.reason}")
    )
