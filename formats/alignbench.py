"""AlignBench: one row per caption sentence with a correct / incorrect / unknown label (CSV, JSONL, Parquet).

A caption (one Spanlight item) is rebuilt by grouping rows on ``(model, image_name)`` and ordering them
by ``sentence_index``; its sentences are joined with single spaces and their offsets stored, so a label
always refers to exactly the sentence the annotators saw. The majority label becomes the gold sentence
label (with agreement, Fleiss' pi and vote counts kept on the label), and ``error_words`` are located in
their sentence as typed gold spans; words that cannot be found are reported, never guessed.

The same row reader serves the AlignBench detector outputs (:mod:`formats.alignbench_scores`).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from formats import taxonomies
from formats.base import Format, ReadOptions, ReadResult
from formats.bundles import annotations_by_item, gold_bundle
from formats.fields import RecordError, get_int, type_name
from formats.json_documents import dump_jsonl, iter_jsonl, load_json
from formats.problems import Problem
from formats.records import (
    Annotations,
    Bundle,
    ItemRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SpanRecord,
)
from formats.sentences import split_sentences
from formats.storable import may_hold_unstorable, unstorable
from formats.text import decode_text, head_text, looks_like_json

KEY_COLUMNS = ("model", "image_name", "sentence_index")
COLUMNS = (
    "model",
    "image_source",
    "image_name",
    "image_type",
    "sentence_index",
    "caption",
    "annotation",
    "error_type",
    "error_words",
    "agreement_ratio",
    "fleiss_Pi",
    "n_correct",
    "n_incorrect",
    "n_unknown",
    "image_url",
)
INT_COLUMNS = ("sentence_index", "n_correct", "n_incorrect", "n_unknown")
FLOAT_COLUMNS = ("agreement_ratio", "fleiss_Pi")
# Kept on each gold sentence label; the item keeps the image facts.
LABEL_META = ("error_words", "agreement_ratio", "fleiss_Pi", "n_correct", "n_incorrect", "n_unknown")
ITEM_META = ("image_source", "image_type", "image_url")
LABELS = ("correct", "incorrect", "unknown")


# ------------------------------------------------------------------------------------------- row loading


def encoding_of(data: bytes, filename: str = "") -> str:
    """``parquet``, ``jsonl``, ``json`` or ``csv``, from the bytes first and the file name second."""
    if bytes(data[:4]) == b"PAR1":
        return "parquet"
    opener = looks_like_json(data)
    if opener == "{":
        return "jsonl"
    if opener == "[":
        return "json"
    return "csv"


@dataclass
class Rows:
    """The rows of a file, and whether any value in them may hold a character the store cannot keep
    (when not, readers skip checking every cell of a large clean file)."""

    rows: list[Any] | None
    problems: list[Problem]
    suspicious: bool = True


def load_rows(data: bytes, source: str) -> Rows:
    """Rows of a CSV / JSONL / JSON / Parquet file as dicts (blank CSV cells and NaN become None)."""
    kind = encoding_of(data, source)
    if kind == "parquet":
        return Rows(*_parquet_rows(data, source))
    text, problems = decode_text(data, source)
    if text is None:
        return Rows(None, problems)
    suspicious = may_hold_unstorable(text)
    if kind == "json":
        document, problems = load_json(data, source)
        if document is None:
            return Rows(None, problems)
        if not isinstance(document, list):
            return Rows(
                None, [Problem(source, "-", "-", f"expected a list of rows, got {type_name(document)}")]
            )
        return Rows(document, [], suspicious)
    if kind == "jsonl":
        rows: list[Any] = []
        for index, row in iter_jsonl(text, source, problems):
            while len(rows) < index:
                rows.append(None)  # keep row numbers equal to line numbers
            rows.append(row)
        return Rows(rows, problems, suspicious)
    return Rows(*_csv_rows(text, source), suspicious)


def _csv_rows(text: str, source: str) -> tuple[list[dict[str, Any]] | None, list[Problem]]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = []
        for row in reader:
            if None in row:
                return None, [
                    Problem(source, f"row {reader.line_num}", "-", "more cells than header columns")
                ]
            rows.append({k: (v if v != "" else None) for k, v in row.items()})
    except csv.Error as error:
        return None, [Problem(source, "-", "-", f"not readable CSV: {error}")]
    if not rows and not text.strip():
        return None, [Problem(source, "-", "-", "the file is empty")]
    return rows, []


def _parquet_rows(data: bytes, source: str) -> tuple[list[dict[str, Any]] | None, list[Problem]]:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
    except Exception as error:  # noqa: BLE001 - pyarrow raises several types for damaged files
        return None, [Problem(source, "-", "-", f"not a readable Parquet file: {error}")]
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                row[key] = None
    return rows, []


def rows_to_bytes(rows: list[dict[str, Any]], filename: str, columns: Iterable[str]) -> bytes:
    """Rows written as CSV, Parquet or (default) JSONL, chosen by ``filename``'s extension."""
    columns = list(columns)
    lower = filename.lower()
    if lower.endswith(".csv"):
        out = io.StringIO(newline="")
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(row.get(k)) for k in columns})
        return out.getvalue().encode("utf-8")
    if lower.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(
            [{k: _parquet_cell(row.get(k)) for k in columns} for row in rows],
            schema=pa.schema([(k, _arrow_type(k, rows)) for k in columns]),
        )
        sink = io.BytesIO()
        pq.write_table(table, sink)
        return sink.getvalue()
    return dump_jsonl([{k: row[k] for k in columns if k in row} for row in rows])


def _csv_cell(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value


def _parquet_cell(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value


def _arrow_type(column: str, rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    if column in INT_COLUMNS:
        return pa.int64()
    values = [r.get(column) for r in rows if r.get(column) is not None]
    if values and all(isinstance(v, bool) for v in values):
        return pa.bool_()
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return (
            pa.float64()
            if column in FLOAT_COLUMNS or any(isinstance(v, float) for v in values)
            else pa.int64()
        )
    return pa.string()


def typed_cell(row: dict[str, Any], column: str, kind: type) -> Any:
    """A cell as ``kind`` (CSV cells are text); None stays None; raises RecordError when unconvertible."""
    value = row.get(column)
    if value is None or (type(value) is kind and kind is not float):
        return value
    if kind is int:
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise RecordError(column, f"expected an integer, got {value!r}") from None
        return get_int(value, column)
    if kind is float:
        if isinstance(value, bool):
            raise RecordError(column, "expected a number, got true/false")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise RecordError(column, f"expected a number, got {value!r}") from None
        if math.isnan(number) or math.isinf(number):
            raise RecordError(column, f"expected a finite number, got {value!r}")
        return number
    if not isinstance(value, str):
        raise RecordError(column, f"expected text, got {type_name(value)}")
    return value


def row_key(row: Any) -> tuple[str, str, int]:
    """``(model, image_name, sentence_index)`` of a row; raises RecordError when it cannot say."""
    if not isinstance(row, dict):
        raise RecordError("-", f"expected a row object, got {type_name(row)}")
    model, image_name = typed_cell(row, "model", str), typed_cell(row, "image_name", str)
    index = typed_cell(row, "sentence_index", int)
    for column, value in zip(KEY_COLUMNS, (model, image_name, index), strict=True):
        if value is None or (isinstance(value, str) and not value.strip()):
            raise RecordError(column, "missing")
    return model, image_name, index


_META_KINDS = {
    "n_correct": int,
    "n_incorrect": int,
    "n_unknown": int,
    "agreement_ratio": float,
    "fleiss_Pi": float,
}


def sentence_fields(row: dict[str, Any]) -> tuple[str, str, str | None, dict[str, Any]]:
    """``(caption, label, error_type, label meta)`` of one row; raises RecordError naming the bad cell."""
    get = row.get
    caption, label, error_type = get("caption"), get("annotation"), get("error_type")
    if type(caption) is not str:
        caption = typed_cell(row, "caption", str)
    if not caption or caption.isspace():
        raise RecordError("caption", "missing or empty")
    if label not in LABELS:
        raise RecordError("annotation", f"{label!r} is not one of {', '.join(LABELS)}")
    if error_type is not None and type(error_type) is not str:
        error_type = typed_cell(row, "error_type", str)
    meta = {column: value for column in LABEL_META if (value := get(column)) is not None}
    for column, kind in _META_KINDS.items():
        value = meta.get(column)
        if value is not None and not (
            type(value) is kind and (not isinstance(value, float) or math.isfinite(value))
        ):
            meta[column] = typed_cell(row, column, kind)
    return caption, label, error_type or None, meta


def caption_id(model: str, image_name: str) -> str:
    return f"{model}/{image_name}"


# ---------------------------------------------------------------------------------------- error words


def error_word_list(value: Any) -> list[str]:
    """``error_words`` as a list: a list, a JSON/Python list in text, or one phrase of text."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                try:
                    parsed = ast.literal_eval(text)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    parsed = None
            if isinstance(parsed, list):
                return error_word_list(parsed)
        return [text] if text else []
    return [str(value)]


def locate(phrase: str, sentence: str) -> tuple[int, int] | None:
    """Offsets of ``phrase`` in ``sentence`` as whole words: exact case first, then any case."""
    at = sentence.find(phrase)
    while at != -1:
        end = at + len(phrase)
        if (at == 0 or not sentence[at - 1].isalnum()) and (
            end == len(sentence) or not sentence[end].isalnum()
        ):
            return at, end
        at = sentence.find(phrase, at + 1)
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(p) for p in phrase.split()) + r"(?!\w)"
    for flags in (0, re.IGNORECASE):
        found = re.search(pattern, sentence, flags)
        if found:
            return found.span()
    return None


def error_spans(words: Any, sentence: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Spans of the error words in ``sentence``, and the words that could not be found."""
    spans: list[tuple[int, int]] = []
    missing: list[str] = []
    for phrase in error_word_list(words):
        found = locate(phrase, sentence)
        if found is None and "," in phrase:
            parts = [p.strip() for p in phrase.split(",") if p.strip()]
            located = [locate(p, sentence) for p in parts]
            placed = [span for span in located if span is not None]
            if len(placed) == len(located):
                spans += placed
                continue
        if found is None:
            missing.append(phrase)
        else:
            spans.append(found)
    return sorted(set(spans)), missing


# ---------------------------------------------------------------------------------------------- format


class AlignBenchFormat(Format):
    name = "alignbench"
    holds = ("sentence",)
    title = "AlignBench sentence rows (CSV, JSONL, Parquet)"
    extensions = (".jsonl", ".csv", ".parquet")
    description = "One row per caption sentence: model, image_name, sentence_index, caption, annotation, …"

    def sniff(self, data: bytes, filename: str = "") -> float:
        if bytes(data[:4]) == b"PAR1":
            try:
                import pyarrow.parquet as pq

                names = set(pq.read_schema(io.BytesIO(data)).names)
            except Exception:  # noqa: BLE001
                return 0.0
            return 0.9 if {"caption", "annotation", *KEY_COLUMNS} <= names else 0.0
        head = head_text(data, 8192)
        needed = ("caption", "annotation", "sentence_index", "image_name")
        return 0.9 if all(k in head for k in needed) else 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        return self.read_rows(load_rows(data, source), source, options or ReadOptions())

    def read_rows(self, loaded: Rows, source: str, options: ReadOptions) -> ReadResult:
        """The captions of rows already loaded (one file's, or all shards' of a dataset folder)."""
        rows, problems = loaded.rows, loaded.problems
        if rows is None:
            return ReadResult(None, problems)

        captions: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
        bad_captions: set[str] = set()
        for number, row in enumerate(rows):
            if row is None:
                continue
            try:
                model, image_name, index = (
                    (row.get("model"), row.get("image_name"), row.get("sentence_index"))
                    if type(row) is dict
                    else (None, None, None)
                )
                if not (
                    type(model) is str
                    and type(image_name) is str
                    and type(index) is int
                    and model
                    and image_name
                ):
                    model, image_name, index = row_key(row)
            except RecordError as error:
                problems.append(Problem(source, f"row {number}", error.field, error.reason))
                continue
            ext = caption_id(model, image_name)
            captions.setdefault(ext, []).append((index, number, row))
        items, annotations = [], []
        for ext, members in captions.items():
            try:
                item, labels = self._caption(ext, members, options, source, problems, loaded.suspicious)
            except RecordError as error:
                number = error.row if error.row is not None else members[0][1]
                problems.append(Problem(source, f"row {number} (caption {ext})", error.field, error.reason))
                bad_captions.add(ext)
                continue
            items.append(item)
            annotations.append(labels)
        bundle = gold_bundle(
            options, source, self.name, items, annotations, ["sentence", "span"], taxonomies.ALIGNBENCH
        )
        return ReadResult(bundle, problems)

    def _caption(
        self,
        ext: str,
        members: list[tuple[int, int, dict[str, Any]]],
        options: ReadOptions,
        source: str,
        problems: list[Problem],
        check_storable: bool,
    ) -> tuple[ItemRecord, Annotations]:
        members.sort(key=lambda m: m[0])
        sentences: list[SentenceRecord] = []
        labels: list[SentenceLabelRecord] = []
        spans: list[SpanRecord] = []
        pieces: list[str] = []
        at = 0
        previous = None
        first = members[0][2]
        add_sentence, add_label = sentences.append, labels.append
        for k, (index, number, row) in enumerate(members):
            try:
                if index == previous:
                    raise RecordError("sentence_index", f"sentence {index} appears twice in this caption")
                previous = index
                bad = unstorable(row) if check_storable else None
                if bad:
                    raise RecordError(*bad)
                caption, label, error_type, meta = sentence_fields(row)
            except RecordError as error:
                error.row = number
                raise
            if k:
                at += 1
            pieces.append(caption)
            end = at + len(caption)
            add_sentence(SentenceRecord(at, end))
            add_label(SentenceLabelRecord(k, label, error_type, False, meta))
            words = row.get("error_words")
            located, missing = error_spans(words, caption) if words is not None else ((), ())
            spans += [SpanRecord(at + s, at + e, error_type) for s, e in located]
            for phrase in missing:
                problems.append(
                    Problem(
                        source,
                        f"row {number} (caption {ext})",
                        "error_words",
                        f"{phrase!r} does not occur in the sentence; no span was made for it",
                        "warning",
                    )
                )
            at = end
        model, image_name = first["model"], first["image_name"]
        item_meta = {c: first[c] for c in ITEM_META if first.get(c) is not None}
        item_meta["sentence_index"] = [m[0] for m in members]
        item = ItemRecord(
            external_id=ext,
            response=" ".join(pieces),
            subset=options.subset or first.get("image_type"),
            source_model=model,
            task_type=first.get("task_type") or "image-to-text",
            image_ref=image_name,
            meta=item_meta,
            sentences=sentences,
        )
        return item, Annotations(item=ext, spans=spans, sentence_labels=labels)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        by_item = annotations_by_item(bundle)
        rows = []
        for item in bundle.items:
            annotations = by_item.get(item.external_id)
            labels = {lab.index: lab for lab in annotations.sentence_labels} if annotations else {}
            for k, (start, end, index) in enumerate(sentence_rows(item)):
                label = labels.get(k)
                meta = dict(label.meta) if label else {}
                rows.append(
                    {
                        "model": item.source_model or "",
                        "image_source": item.meta.get("image_source"),
                        "image_name": item.image_ref or item.external_id,
                        "image_type": item.meta.get("image_type"),
                        "sentence_index": index,
                        "caption": item.response[start:end],
                        "annotation": label.label if label else None,
                        "error_type": label.error_type if label else None,
                        "error_words": meta.get("error_words", _span_words(annotations, item, start, end)),
                        **{c: meta.get(c) for c in LABEL_META[1:]},
                        "image_url": item.meta.get("image_url"),
                    }
                )
        return rows_to_bytes(rows, filename, COLUMNS)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.jsonl"


def sentence_rows(item: ItemRecord) -> list[tuple[int, int, int]]:
    """``(start, end, sentence_index)`` of each sentence of an item, in order."""
    offsets = (
        [(s.start, s.end) for s in item.sentences]
        if item.sentences is not None
        else split_sentences(item.response)
    )
    indices = item.meta.get("sentence_index")
    if not isinstance(indices, list) or len(indices) != len(offsets):
        indices = list(range(len(offsets)))
    return [(s, e, i) for (s, e), i in zip(offsets, indices, strict=True)]


def _span_words(annotations: Annotations | None, item: ItemRecord, start: int, end: int) -> list[str] | None:
    if annotations is None:
        return None
    words = [item.response[s.start : s.end] for s in annotations.spans if start <= s.start and s.end <= end]
    return words or None


FORMAT = AlignBenchFormat()
