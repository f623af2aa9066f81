"""The one interface every file format implements, and what a reader hands back.

A format turns bytes into a :class:`~formats.records.Bundle` (``read``) and, where it can, a bundle back into
bytes (``write``), or a dataset read in batches into a stream (``write_stream``: the formats of large
datasets write it a batch at a time). Readers never touch the database and never raise on bad input:
every flaw becomes a :class:`~formats.problems.Problem` naming file, record, field and reason, and the
record is left out of the bundle. Whether the import then goes ahead is the importer's decision (see :mod:`db.transfer`).

Two kinds of format exist. A *benchmark* file brings items and usually a gold label set. A *predictions*
file is one detector run over items already stored: its reader gets the stored items (``known``) to place
spans on their exact response text, and returns a bundle with no items and one detector label set.
Formats whose file is one record per item share one ``read`` template (:mod:`formats.record_formats`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from formats.problems import Problem
from formats.records import Bundle, LabelSetRecord, merge_batches, pick_label_set

Kind = Literal["benchmark", "predictions"]
# What a label set can say about an item, as :attr:`Format.holds` names it, with how a report calls it.
LABEL_KINDS = {
    "span": "spans",
    "sentence": "sentence labels",
    "claim": "claim labels",
    "triplet": "triplets",
    "output": "raw outputs",
    "score": "sentence scores",
    "probability": "token probabilities",
    "response": "response scores",
}


@dataclass(frozen=True)
class KnownItem:
    """What a predictions reader needs to know about one stored item."""

    response: str
    sentences: tuple[tuple[int, int], ...] = ()
    claims: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class ReadOptions:
    """Everything a reader may need besides the bytes; each format uses what concerns it."""

    dataset: str | None = None
    subset: str | None = None
    # Predictions only: the detector run's name and the dataset's stored items by external id.
    detector: str | None = None
    detector_version: str | None = None
    prompt_strategy: str | None = None
    known: Mapping[str, KnownItem] = field(default_factory=dict)
    # Tag name of inline-tagged detector output; None: find it in the output.
    tag: str | None = None
    # FaithScore: how its 0/1 labels read — "data" (as the annotations show) or "readme" (as its README
    # states); see :mod:`formats.faithscore`.
    faithscore_polarity: str = "data"
    # Whose labels a ratings file holds: a judge's run (detector), gold, or an annotator's (human).
    label_set_kind: str = "detector"

    @property
    def responses(self) -> dict[str, str]:
        """External id -> stored response text."""
        return {ext: item.response for ext, item in self.known.items()}


@dataclass
class ReadResult:
    """A reader's answer: the sound part of the file as a bundle, and everything found wrong.

    ``bundle`` is None when the file as a whole cannot be read (not JSON, wrong top-level shape).
    """

    bundle: Bundle | None
    problems: list[Problem] = field(default_factory=list)
    # A large file read in batches: the batches after ``bundle`` (same dataset), read as they are taken;
    # the problems found meanwhile are appended to ``problems``. None: ``bundle`` is the whole file.
    more: Iterator[Bundle] | None = None
    # Read in batches: how much of the input the batches taken so far hold (0 to 1), for progress.
    read_share: Callable[[], float] | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


class Sink(Protocol):
    """Where :meth:`Format.write_stream` writes: an open binary file, or a ``BytesIO``."""

    def write(self, data: bytes, /) -> int: ...


class FormatError(ValueError):
    """A bundle cannot be written in this format (for example spans in a sentence-only format)."""


class Format:
    """Base class of every format module's format object.

    Subclasses set the class attributes and implement :meth:`read`, :meth:`sniff` and, when
    ``writable``, :meth:`write`.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    kind: ClassVar[Kind] = "benchmark"
    extensions: ClassVar[tuple[str, ...]] = (".json",)
    writable: ClassVar[bool] = True
    # One line for the Import page: what the file looks like.
    description: ClassVar[str] = ""
    # What a written file keeps of the label set it writes, among :data:`LABEL_KINDS`; an export that would
    # keep none of what that label set has is refused (see :mod:`formats.export_check`).
    holds: ClassVar[tuple[str, ...]] = ()
    # Kinds a written file gives back in another shape, though it is not written for them (AlignBench's
    # error words are its gold spans): not listed as left out, and no reason to choose the format.
    keeps_as_well: ClassVar[tuple[str, ...]] = ()
    # Whether a written file holds every chosen label set; else the one :meth:`written_label_set` picks.
    writes_every_label_set: ClassVar[bool] = False
    # Whether a written file holds what no benchmark format has a place for: a label set's verdicts on
    # other label sets' triplets, and where it stands on each item per task (done, skipped, unsure).
    # (Records saying nothing else would read as "nothing found" in a format without them.)
    lossless: ClassVar[bool] = False
    # Whether a written file has a place for "checked, found nothing" (Label Studio's annotation with an
    # empty result): its writer is given the items' statuses too, though it is not lossless.
    holds_statuses: ClassVar[bool] = False
    # Whether the spans a written file holds keep their types (MHALO's tags name none).
    holds_span_types: ClassVar[bool] = True

    def sniff(self, data: bytes, filename: str = "") -> float:
        """How sure this format is that ``data`` is its own, from 0 (not mine) to 1 (certainly mine)."""
        raise NotImplementedError

    def read_batches(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        """The file as :meth:`read` gives it, or, where the format can, in batches of records (see
        ``ReadResult.more``), so an import holds one batch at a time."""
        return self.read(data, source=source, options=options)

    def read_file_batches(
        self, path: Path, head: bytes, *, source: str, options: ReadOptions | None = None
    ) -> ReadResult | None:
        """:meth:`read_batches` of a file on disk without holding its bytes (``head``: its first bytes),
        where the format can; None: read the file's bytes instead."""
        return None

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        raise NotImplementedError

    def changed_in_writing(self, batch: Bundle, label_set: LabelSetRecord) -> Counter[str]:
        """What a written file says otherwise than ``label_set`` does of ``batch``'s items, within the
        kinds of labels it holds: a span type it has no place for, a span it can only widen. Each
        change is a phrase that follows its count ("spans widened to whole words"), counted; the export
        lists them with what it leaves out (:meth:`~formats.export_check.ExportTally.left_out`), so
        no label is changed without a word. Here: the typed spans of a format whose spans have no type
        (:attr:`holds_span_types`), and a detector's outputs cut at the token limit, written as whole
        answers (only a lossless file keeps the mark; read back, they would be scored as whole ones)."""
        changed: Counter[str] = Counter()
        if "span" in self.holds and not self.holds_span_types:
            typed = sum(s.type is not None for a in label_set.annotations for s in a.spans)
            if typed:
                changed[f"typed spans are written untyped ({self.title} has no span types)"] = typed
        if "output" in self.holds and not self.lossless:
            cut = sum(a.raw_output is not None and a.raw_output.cut for a in label_set.annotations)
            if cut:
                changed[
                    f"outputs cut at the token limit are written without that mark ({self.title} has no "
                    "place for it; canonical keeps it)"
                ] = cut
        return changed

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        """The bundle in this format; ``filename`` may choose an encoding (``.csv`` / ``.parquet``)."""
        raise FormatError(f"{self.title} files can be read but not written")

    def write_stream(self, batches: Iterable[Bundle], out: Sink, *, filename: str = "") -> None:
        """The batches of one dataset (as :func:`~formats.records.merge_batches` takes them) written to
        ``out``, the same bytes as :meth:`write` of them merged. This default merges them and writes once;
        a format whose file can be written a batch at a time overrides it, so it holds one batch."""
        out.write(self.write(merge_batches(batches), filename=filename))

    def written_label_set(
        self, bundle: Bundle, counts: Callable[[LabelSetRecord], Mapping[str, int]]
    ) -> LabelSetRecord | None:
        """The label set a file of a one-label-set format holds: the gold one (the detector run, for a
        predictions format), else the only one chosen (:func:`formats.bundles.pick_label_set`).
        ``counts`` gives a label set's labels of each kind (:data:`LABEL_KINDS`), for a format that picks
        by what a label set holds; the writer and the export's report of what it leaves out both ask."""
        return pick_label_set(bundle, "detector" if self.kind == "predictions" else "gold")

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}{self.extensions[0]}"

    def __repr__(self) -> str:
        return f"<Format {self.name}>"
