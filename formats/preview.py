"""What the Import page shows before anything is written: the first items with their spans, and every
problem the reader found. Pure functions of the file's bytes (and, for detector outputs, the stored
items), so the page can cache them per file.

A preview reads only the head of the file (:data:`PREVIEW_HEAD_BYTES`): a large file must not be parsed
whole, in the server's memory, just to show five items. The head is cut after its last whole record
(JSON lines, CSV rows, elements of a JSON array), so the counts and problems shown are those of that part.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from formats.base import Kind, ReadOptions, ReadResult
from formats.gc_pause import without_gc_pauses
from formats.json_documents import decoder
from formats.problems import Problem, whole_file_first
from formats.records import Annotations, ItemRecord
from formats.registry import get_format, read_file
from formats.sentences import split_sentences
from formats.text import file_stem, looks_like_json

# Enough for sniffing and for the first items of every format; the Import itself reads the whole file.
PREVIEW_HEAD_BYTES = 1024 * 1024
# How far the preview reads when the first PREVIEW_HEAD_BYTES hold no whole record: a first record of a
# few MB (a long response) is shown, not told of as "0 items"; a longer one is said to be so.
PREVIEW_LONG_BYTES = 16 * 1024 * 1024


# How much of an item's text the preview draws. A response of many MB (a long first record) was drawn
# whole, with its spans, and the page sent it all to the browser; the preview is for seeing what the
# file holds, and the import still takes every character.
PREVIEW_TEXT_CHARS = 4000


@dataclass(frozen=True)
class PreviewItem:
    external_id: str
    prompt: str
    text: str  # at most PREVIEW_TEXT_CHARS of the item's text: its beginning
    spans: tuple[tuple[int, int, str | None], ...]  # those within ``text``, cut at its end
    note: str = ""  # e.g. "detector output does not follow the format: …"
    chars_left_out: int = 0  # of the item's text, after ``text``
    spans_left_out: int = 0  # spans that begin after ``text``

    @classmethod
    def of(
        cls,
        external_id: str,
        prompt: str,
        text: str,
        spans: Sequence[tuple[int, int, str | None]],
        note: str = "",
    ) -> PreviewItem:
        """The item as the preview draws it: its text's first :data:`PREVIEW_TEXT_CHARS` characters
        and the spans over them (one that runs past the cut ends there)."""
        cut = min(len(text), PREVIEW_TEXT_CHARS)
        shown = tuple((start, min(end, cut), kind) for start, end, kind in spans if start < cut)
        return cls(external_id, prompt, text[:cut], shown, note, len(text) - cut, len(spans) - len(shown))


@dataclass(frozen=True)
class Preview:
    format: str
    dataset: str | None
    n_items: int
    label_sets: tuple[str, ...]
    items: tuple[PreviewItem, ...]
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    partial: bool = False  # only the head of the file was read: counts and problems cover that part
    # Each item's image reference, by external id, for the page to check against the image folder chosen
    # (a store matter, as the import's own check is): benchmark files only.
    image_refs: tuple[tuple[str, str | None], ...] = ()
    image_root: str | None = None  # the image folder the file names (a canonical file may)

    @property
    def n_errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")

    @property
    def unreadable(self) -> bool:
        """Nothing of the whole file can be imported: it was refused whole (not this format, a run over
        another dataset), or every record of it is in error. Skipping its bad records would import
        nothing, so the page offers neither skipping nor an import. Not said of a preview of the file's
        head: a large JSON document cut there reads as nothing, though the import reads the whole of it."""
        return not self.partial and self.n_errors > 0 and (self.dataset is None or self.n_items == 0)

    @property
    def n_warnings(self) -> int:
        return sum(1 for p in self.problems if p.severity == "warning")

    def problem_rows(self) -> list[dict[str, str]]:
        return problem_rows(self.problems)


def left_out_note(item: PreviewItem) -> str:
    """What the preview leaves out of an item's text, said under the part it draws."""
    spans = (
        f" and {item.spans_left_out:,} span{'s' if item.spans_left_out != 1 else ''} over them"
        if item.spans_left_out
        else ""
    )
    return (
        f"… {item.chars_left_out:,} more character{'s' if item.chars_left_out != 1 else ''}{spans}, "
        "not shown here; the import takes the whole text."
    )


def problem_rows(problems: Sequence[Problem]) -> list[dict[str, str]]:
    """A validation report as table rows: severity, file, record, field, reason; the problems of a whole
    file first (:func:`~formats.problems.whole_file_first`)."""
    return [
        {"severity": p.severity, "file": p.file, "record": p.record, "field": p.field, "reason": p.reason}
        for p in whole_file_first(problems)
    ]


def dataset_name_for(filename: str) -> str:
    """The dataset name a file imports into unless the user names one (its stem)."""
    return file_stem(filename)


def whole_records(head: bytes) -> bytes:
    """The head of a longer file cut after its last whole record, as a document a reader accepts.

    A JSON array keeps the elements that parse completely and is closed again; any other file (JSON
    lines, CSV, TSV) is cut after its last line break.
    """
    if looks_like_json(head) == "[":
        text = head.decode("utf-8-sig", "ignore")
        reader = decoder(text)
        start = text.index("[") + 1
        position, ends = start, []
        while True:
            while position < len(text) and text[position] in " \t\r\n,":
                position += 1
            try:
                _, position = reader.raw_decode(text, position)
            except (json.JSONDecodeError, RecursionError):
                break
            ends.append(position)
        return ("[" + text[start : ends[-1]] + "]").encode() if ends else b"[]"
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut >= 0 else b""


def _note(annotations: Annotations) -> str:
    """What a preview says about one output beside its spans: an unreadable output, or a rating."""
    raw, rated = annotations.raw_output, annotations.response_score
    if raw is not None and not raw.follows_format:
        return f"Output kept without spans: {raw.parse_error}"
    if rated is not None:
        return f"Rated {rated.score:g} of {rated.scale_min}-{rated.scale_max}" + (
            ""
            if rated.hallucination is None
            else f", hallucination: {'yes' if rated.hallucination else 'no'}"
        )
    return ""


@without_gc_pauses
def preview_file(
    format_name: str,
    data: bytes,
    *,
    source: str,
    options: ReadOptions,
    limit: int = 5,
    complete: bool = True,
    head_bytes: int = PREVIEW_HEAD_BYTES,
) -> Preview:
    """Read ``data`` without importing it: counts, the first ``limit`` items with spans, all problems.

    ``data`` is the file's head when ``complete`` is False (see :func:`whole_records`), of which the first
    ``head_bytes`` are read.
    """
    fmt = get_format(format_name)
    partial = not complete
    result = read_file(fmt, whole_records(data[:head_bytes]) if partial else data, source, options)
    return preview_of(fmt.name, fmt.kind, result, options, limit=limit, partial=partial)


def preview_of(
    format_name: str, kind: Kind, result: ReadResult, options: ReadOptions, *, limit: int = 5, partial: bool
) -> Preview:
    """The preview of what a reader returned: counts, the first ``limit`` items with spans, all problems.

    A benchmark item whose gold has no spans shows its labelled sentences that are not correct as spans
    (typed by their label), and a note sums up claims, triplets and a response score, so every gold shape
    is seen before anything is written.
    """
    bundle = result.bundle
    if bundle is None:
        return Preview(format_name, None, 0, (), (), tuple(result.problems), partial)
    if kind == "benchmark":
        gold = next(
            (ls for ls in bundle.label_sets if ls.kind == "gold"),
            bundle.label_sets[0] if bundle.label_sets else None,
        )
        by_item = {a.item: a for a in gold.annotations} if gold else {}
        items = tuple(
            PreviewItem.of(
                item.external_id,
                item.prompt,
                item.response,
                _drawn(item, by_item.get(item.external_id)),
                gold_note(item, by_item.get(item.external_id)),
            )
            for item in bundle.items[:limit]
        )
        n_items = len(bundle.items)
        image_refs = tuple((item.external_id, item.image_ref) for item in bundle.items)
    else:
        annotations = bundle.label_sets[0].annotations if bundle.label_sets else []
        items = tuple(
            PreviewItem.of(
                a.item,
                "",
                options.known[a.item].response,
                tuple((s.start, s.end, s.type) for s in a.spans),
                _note(a),
            )
            for a in annotations[:limit]
        )
        n_items = len(annotations)
        image_refs = ()
    names = tuple(f"{ls.kind}:{ls.name}" for ls in bundle.label_sets)
    problems = tuple(result.problems)
    return Preview(
        format_name,
        bundle.dataset.name,
        n_items,
        names,
        items,
        problems,
        partial,
        image_refs,
        bundle.dataset.image_root,
    )


def _drawn(item: ItemRecord, gold: Annotations | None) -> tuple[tuple[int, int, str | None], ...]:
    if gold is None:
        return ()
    if gold.spans:
        return tuple((s.start, s.end, s.type) for s in gold.spans)
    sentences = (
        [(s.start, s.end) for s in item.sentences]
        if item.sentences is not None
        else split_sentences(item.response)
    )
    return tuple(
        (*sentences[label.index], label.label)
        for label in gold.sentence_labels
        if label.label != "correct" and 0 <= label.index < len(sentences)
    )


def gold_note(item: ItemRecord, gold: Annotations | None) -> str:
    """One line on the gold a preview cannot draw as spans: claims, triplets, a response score."""
    notes = []
    if gold is not None and gold.claim_labels:
        counts = Counter(c.label for c in gold.claim_labels)
        notes.append(
            f"{len(item.claims)} claims: " + ", ".join(f"{n} {label}" for label, n in counts.items())
        )
    elif item.claims:
        notes.append(f"{len(item.claims)} claims, none labelled")
    if gold is not None and gold.triplets:
        verdicts = Counter(t.verdict or "not judged" for t in gold.triplets)
        notes.append(f"{len(gold.triplets)} triplets: " + ", ".join(f"{n} {v}" for v, n in verdicts.items()))
    if item.reference_triplets:
        notes.append(f"{len(item.reference_triplets)} reference triplets")
    score = item.meta.get("response_score") if isinstance(item.meta, dict) else None
    if isinstance(score, dict) and "score" in score:
        low, high = score.get("scale") or ("?", "?")
        notes.append(f"response score {score['score']:g} on {low:g} to {high:g}")
    return " · ".join(notes)
