"""AlignBench detector outputs: a 0–100 correctness score per sentence, and ``[red]`` localization.

Both are rows keyed like the benchmark (``model``, ``image_name``, ``sentence_index``) in CSV, JSONL or
Parquet, matched to the stored captions. A score row gives ``score`` (a number) or ``output`` (the
detector's text, e.g. ``{"score": 85} The sentence…``); as in the AlignBench paper, an output with no
score from 0 to 100 in it scores 50 and is counted as unparsed. A localization row gives ``output``: the
sentence with ``[red]`` before each wrong word (``A [red] bird singing in a tree.``), optionally inside
``{"output": …}``. The detector's texts are kept per item as a JSON object ``{sentence_index: output}``.

A file is recognised by its columns: the benchmark's keys without its ``caption``, and ``score`` or
``output``. Rows of outputs alone are scores (``I give it 85/100``) unless they mark words with ``[red]``.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from formats.alignbench import (
    KEY_COLUMNS,
    caption_id,
    csv_header,
    encoding_of,
    load_rows,
    row_key,
    rows_to_bytes,
    sentence_rows,
    typed_cell,
)
from formats.alignment import align_ignoring_whitespace, first_difference, map_span
from formats.base import Format, KnownItem, ReadOptions, ReadResult
from formats.bundles import detector_bundle, detector_outputs, raw_output_json
from formats.fields import RecordError, type_name
from formats.json_documents import loads
from formats.markers import insert_markers
from formats.problems import Problem
from formats.records import Annotations, Bundle, RawOutputRecord, SentenceScoreRecord, SpanRecord
from formats.storable import unstorable
from formats.tables import parquet_columns
from formats.text import head_text

UNPARSED_SCORE = 50.0
# A number ends at a sentence's full stop too ("Score: 85."), not at a decimal point or an exponent.
_SCORE_FIELD = re.compile(r"[\"']?score[\"']?\s*[:=]\s*[\"']?(-?\d+(?:\.\d+)?)(?!\w|\.\d)", re.IGNORECASE)
_OUT_OF_100 = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:/|out of)\s*100(?!\w|\.\d)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?!\w|\.\d)")
_MARKER = re.compile(r"\*{0,2}\[red\]\*{0,2}", re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


def parse_score(output: str) -> float | None:
    """The 0–100 score in a detector's text: a ``"score": N`` field, else ``N/100`` or ``N out of 100``,
    else the text's only number. A text of several numbers without one of those ("Sentence 1 is fine, I
    give it 85") is not guessed at."""
    found = _SCORE_FIELD.search(output) or _OUT_OF_100.search(output)
    numbers = [found.group(1)] if found else _NUMBER.findall(output)
    if len(numbers) != 1:
        return None
    value = float(numbers[0])
    return value if 0 <= value <= 100 else None


def _is_number(cell: Any) -> bool:
    """Whether a cell is a number, or text Python reads as one ("85", "1e400", "inf", "NaN")."""
    if isinstance(cell, int | float):
        return True
    try:
        float(str(cell))
    except ValueError:
        return False
    return True


def _sentence_of(known: Mapping[str, KnownItem], row: Any) -> tuple[str, int, tuple[int, int], int]:
    """``(external id, sentence number, sentence offsets, sentence_index)`` a row speaks about."""
    model, image_name, index = row_key(row)
    ext = caption_id(model, image_name)
    item = known.get(ext)
    if item is None:
        raise RecordError("image_name", f"no stored caption of model {model!r} for image {image_name!r}")
    indices = item.meta.get("sentence_index")
    if isinstance(indices, list) and index in indices:
        k = indices.index(index)
    elif not isinstance(indices, list) and 0 <= index < len(item.sentences):
        k = index
    else:
        raise RecordError("sentence_index", f"caption {ext} has no sentence {index}")
    if k >= len(item.sentences):
        raise RecordError("sentence_index", f"caption {ext} has no sentence {index}")
    return ext, k, item.sentences[k], index


def _raw_texts(annotations: Annotations | None) -> dict[str, str]:
    texts = raw_output_json(annotations, {})
    return {str(k): v for k, v in texts.items() if isinstance(v, str)} if isinstance(texts, dict) else {}


_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


def _columns(data: bytes) -> tuple[set[str], str]:
    """The columns a rows file has, as its first bytes show them (a CSV header, the keys of the first
    JSON rows, a Parquet schema), and text in which to look for ``[red]`` markers (the first bytes, or a
    Parquet file's first outputs)."""
    head = head_text(data, 8192)
    kind = encoding_of(data)
    if kind == "parquet":
        columns = set(parquet_columns(data))
        return columns, _parquet_outputs(data) if "output" in columns else ""
    if kind == "csv":
        return {name.lstrip("\ufeff") for name in csv_header(data[:8192]) or ()}, head
    return set(_JSON_KEY.findall(head)), head


def _parquet_outputs(data: bytes, rows: int = 200) -> str:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(io.BytesIO(data)).read_row_group(0, columns=["output"])
    except Exception:  # noqa: BLE001 - a damaged file has no outputs to look at
        return ""
    return "\n".join(str(v) for v in table.column("output").to_pylist()[:rows] if v is not None)


class _RowPredictions(Format):
    kind = "predictions"
    extensions = (".jsonl", ".csv", ".parquet")

    def sniff(self, data: bytes, filename: str = "") -> float:
        """Rows keyed like the benchmark's sentences (but no benchmark rows: no ``caption``), whose
        columns :meth:`sniffed` weighs."""
        columns, text = _columns(data)
        if not set(KEY_COLUMNS) <= columns or "caption" in columns:
            return 0.0
        return self.sniffed(columns, "[red]" in text.lower())

    def sniffed(self, columns: set[str], marked: bool) -> float:
        """How sure the format is of rows with ``columns``, ``marked`` when ``[red]`` is seen in them."""
        raise NotImplementedError

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        loaded = load_rows(data, source)
        if loaded.rows is None:
            return ReadResult(None, loaded.problems)
        problems = loaded.problems
        per_item: dict[str, Annotations] = {}
        texts: dict[str, dict[str, str]] = {}
        failures: dict[str, list[str]] = {}
        failed_rows: list[int] = []
        for number, row in enumerate(loaded.rows):
            if row is None:
                continue
            where = f"row {number}"
            try:
                bad = unstorable(row) if loaded.suspicious else None
                if bad:
                    raise RecordError(*bad)
                ext, k, offsets, index = _sentence_of(options.known, row)
                annotations = per_item.setdefault(ext, Annotations(item=ext))
                output, failure = self.read_row(row, annotations, k, offsets, options.known[ext].response)
            except RecordError as error:
                problems.append(Problem(source, where, error.field, error.reason))
                continue
            if output is not None:
                texts.setdefault(ext, {})[str(index)] = output
            if failure:
                failures.setdefault(ext, []).append(f"sentence {index}: {failure}")
                failed_rows.append(number)
        for ext, annotations in per_item.items():
            if ext in texts or ext in failures:
                failed = failures.get(ext, [])
                annotations.raw_output = RawOutputRecord(
                    json.dumps(texts.get(ext, {}), ensure_ascii=False),
                    follows_format=not failed,
                    parse_error="; ".join(failed) or None,
                )
        if failed_rows:
            problems.append(
                Problem(
                    source,
                    _rows_named(failed_rows),
                    "output",
                    self.failure_summary(len(failed_rows)),
                    "warning",
                )
            )
        return ReadResult(detector_bundle(options, list(per_item.values()), "alignbench"), problems)

    def read_row(
        self, row: dict[str, Any], annotations: Annotations, k: int, offsets: tuple[int, int], response: str
    ) -> tuple[str | None, str | None]:
        raise NotImplementedError

    def failure_summary(self, n: int) -> str:
        raise NotImplementedError

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows = []
        for item, detected in detector_outputs(bundle):
            texts = _raw_texts(detected)
            for k, (start, end, index) in enumerate(sentence_rows(item)):
                row = self.write_row(detected, texts.get(str(index)), k, item.response, start, end)
                if row is not None:
                    rows.append(
                        {
                            "model": item.source_model or "",
                            "image_name": item.image_ref or "",
                            "sentence_index": index,
                            **row,
                        }
                    )
        return rows_to_bytes(rows, filename, ("model", "image_name", "sentence_index", *self.write_columns))

    write_columns: tuple[str, ...] = ()

    def write_row(
        self, annotations: Annotations, text: str | None, k: int, response: str, start: int, end: int
    ) -> dict[str, Any] | None:
        raise NotImplementedError


class AlignBenchScores(_RowPredictions):
    name = "alignbench-scores"
    holds = ("score", "output")
    title = "AlignBench sentence scores (0–100)"
    description = "Rows: model, image_name, sentence_index, and score (0–100) or the detector's output text."
    write_columns = ("score", "output")

    def sniffed(self, columns: set[str], marked: bool) -> float:
        # Outputs alone are scores' too ("I give it 85/100"), unless they mark words with [red].
        if marked:
            return 0.0
        return 0.8 if "score" in columns else 0.7 if "output" in columns else 0.0

    def read_row(
        self, row: dict[str, Any], annotations: Annotations, k: int, offsets: tuple[int, int], response: str
    ) -> tuple[str | None, str | None]:
        score = row.get("score")
        output = row.get("output")
        if output is not None and not isinstance(output, str):
            raise RecordError("output", f"expected text, got {type_name(output)}")
        if score is not None and not isinstance(score, bool):
            # A number must be one from 0 to 100 (inf, NaN and 1e400 are numbers no score can be); text
            # in the column ("85/100", "N/A") is read as the detector's output, when the row has none.
            if _is_number(score):
                try:
                    value = typed_cell(row, "score", float)
                except RecordError:
                    value = None
                if value is None or not 0 <= value <= 100:
                    raise RecordError("score", f"{score!r} is not a number from 0 to 100")
                annotations.sentence_scores.append(SentenceScoreRecord(k, value, True))
                return output, None
            output = output if output is not None else str(score)
        if output is None:
            raise RecordError("score", "missing (give score or output)")
        value = parse_score(output)
        if value is None:
            annotations.sentence_scores.append(SentenceScoreRecord(k, UNPARSED_SCORE, False))
            return output, "no score from 0 to 100 in the output"
        annotations.sentence_scores.append(SentenceScoreRecord(k, value, True))
        return output, None

    def failure_summary(self, n: int) -> str:
        return f"{n} output(s) held no score from 0 to 100; each scored {UNPARSED_SCORE:g} (as in AlignBench)"

    def write_row(
        self, annotations: Annotations, text: str | None, k: int, response: str, start: int, end: int
    ) -> dict[str, Any] | None:
        score = next((s for s in annotations.sentence_scores if s.index == k), None)
        if score is None:
            return None
        value = score.score if score.parsed else None
        if value is not None and math.isfinite(value) and value.is_integer():
            value = int(value)
        return {"score": value, "output": text}


def _rows_named(numbers: list[int], shown: int = 10) -> str:
    """The rows of one warning as a record name: "rows 3, 8, 12" (the first ``shown``, then how many more)."""
    head = ", ".join(map(str, numbers[:shown]))
    more = f" and {len(numbers) - shown:,} more" if len(numbers) > shown else ""
    return f"row {head}" if len(numbers) == 1 else f"rows {head}{more}"


def localized_spans(output: str, sentence: str) -> tuple[list[tuple[int, int]], str | None]:
    """Word spans (offsets in ``sentence``) marked by ``[red]`` in ``output``, and why it failed, if it did."""
    text = _FENCE.sub("", output.strip())
    if text.startswith("{"):
        try:
            parsed = loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            text = parsed["output"]
    plain_parts, marks = [], []
    at, length = 0, 0
    for marker in _MARKER.finditer(text):
        piece = text[at : marker.start()]
        plain_parts.append(piece)
        length += len(piece)
        marks.append(length)
        at = marker.end()
    plain_parts.append(text[at:])
    plain = "".join(plain_parts)
    mapping = align_ignoring_whitespace(plain, sentence)
    if mapping is None:
        return [], f"the marked text differs from the sentence {first_difference(plain, sentence)}"
    words = []
    for mark in marks:
        start = mark
        while start < len(plain) and plain[start].isspace():
            start += 1
        if start >= len(plain):
            continue
        end = start
        while end < len(plain) and not plain[end].isspace():
            end += 1
        placed = map_span(mapping, plain, start, end)
        if placed:
            words.append(placed)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(set(words)):
        if merged and (start <= merged[-1][1] or not sentence[merged[-1][1] : start].strip()):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged, None


class AlignBenchLocalization(_RowPredictions):
    name = "alignbench-localization"
    holds = ("span", "output")
    holds_span_types = False
    title = "AlignBench localization ([red] before wrong words)"
    description = (
        "Rows: model, image_name, sentence_index, output (the sentence with [red] before wrong words)."
    )
    write_columns = ("output",)

    def sniffed(self, columns: set[str], marked: bool) -> float:
        return 0.9 if marked and "output" in columns else 0.0

    def read_row(
        self, row: dict[str, Any], annotations: Annotations, k: int, offsets: tuple[int, int], response: str
    ) -> tuple[str | None, str | None]:
        output = row.get("output")
        if not isinstance(output, str):
            raise RecordError("output", f"expected text, got {type_name(output)}")
        start, end = offsets
        spans, failure = localized_spans(output, response[start:end])
        annotations.spans += [SpanRecord(start + s, start + e) for s, e in spans]
        return output, failure

    def failure_summary(self, n: int) -> str:
        return f"{n} output(s) did not reproduce their sentence; they are kept, with no spans"

    def write_row(
        self, annotations: Annotations, text: str | None, k: int, response: str, start: int, end: int
    ) -> dict[str, Any] | None:
        if text is not None:
            return {"output": text}
        if _raw_texts(annotations):
            return None  # the detector said nothing about this sentence
        inside = [(s.start, s.end) for s in annotations.spans if start <= s.start and s.end <= end]
        sentence = response[start:end]
        marks = []
        for s, e in inside:
            for word in re.finditer(r"\S+", response[s:e]):
                marks.append((s - start + word.start(), s - start + word.start(), "[red] ", ""))
        return {"output": insert_markers(sentence, marks)}


FORMATS = (AlignBenchScores(), AlignBenchLocalization())
