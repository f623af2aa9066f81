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
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from formats import taxonomies
from formats.base import Format, FormatError, ReadOptions, ReadResult, Sink
from formats.bundles import annotations_by_item, gold_bundle
from formats.fields import RecordError, as_float, get_int, type_name
from formats.json_documents import dump_jsonl, iter_jsonl, load_json, loads
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
from formats.storable import bytes_may_hold_unstorable, unstorable
from formats.text import decode_text, head_text, looks_like_json, scan_text_file, utf8_problems

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
# The cells of a caption's first row its item is made of.
ITEM_FIELDS = ("model", "image_name", *ITEM_META, "image_type", "task_type")


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
    suspicious = bytes_may_hold_unstorable(bytes(data), json=kind != "csv")
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
    del text  # the columnar reader parses the bytes; no second copy of a large file is kept
    fast = _arrow_csv_rows(data)
    if fast is not None:
        return Rows(fast, [], b"\x00" in data)
    return Rows(*_csv_rows(bytes(data).decode("utf-8-sig"), source), suspicious)


def _arrow_csv_rows(data: bytes) -> list[dict[str, Any]] | None:
    """The rows of a well-formed CSV file, parsed by pyarrow's C++ reader, with the integer and number
    columns already typed when every cell of theirs converts; None when pyarrow cannot read the file
    alike, so the ``csv`` module reads it and reports exactly where it breaks.

    Per-cell conversion in Python was most of the time of a large import; here a column is typed at once,
    and a column with a cell that does not convert is left as text for the row checks to name the cell.
    """
    import pyarrow as pa
    from pyarrow import csv as arrow_csv

    body = bytes(data[3:]) if bytes(data[:3]) == b"\xef\xbb\xbf" else data
    header = csv_header(body)
    if header is None:
        return None
    try:
        table = arrow_csv.read_csv(
            pa.py_buffer(body),
            parse_options=arrow_csv.ParseOptions(newlines_in_values=True),
            convert_options=arrow_csv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
                null_values=[""],
            ),
        )
    except (pa.ArrowException, UnicodeDecodeError, ValueError):
        return None
    if table.num_rows == 0 or not set(table.column_names) <= set(header):
        return None
    columns = [
        _typed(name, column).to_pylist()
        for name, column in zip(table.column_names, table.columns, strict=True)
    ]
    names = table.column_names
    del table
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


# Rows per batch: the Python objects of a row take a few kilobytes until the batch is written. With
# the block size below, a million rows import in under 300 MB (twice either took 100 MB more, and no
# longer: the time is the same).
BATCH_ROWS = 5_000
# Bytes pyarrow parses at a time; its memory for a block is many times the block. A row longer than a
# block (a caption of half a megabyte) makes the file read whole, as any file pyarrow cannot read alike.
BLOCK_BYTES = 1 << 19


def caption_batches(data: bytes, rows: int | None = None) -> RowBatches | None:
    """The rows of a CSV file in batches (:class:`RowBatch`) of about ``rows`` rows that never split a
    caption, read a block at a time; None when the file must be read whole instead: pyarrow cannot read
    it alike, a key cell is missing or not of its type (so the whole-file reader reports it), or a
    caption's rows are not contiguous.

    A first pass reads only the key columns to check this; the second reads the rows, typing the
    integer and number columns of each block at once (as :func:`_arrow_csv_rows` does for a whole file).
    """
    import pyarrow as pa

    body = bytes(data[3:]) if bytes(data[:3]) == b"\xef\xbb\xbf" else data
    header = csv_header(body)
    if header is None:
        return None
    return _caption_batches(lambda: pa.BufferReader(pa.py_buffer(body)), header, rows)


def file_caption_batches(path: Path, head: bytes, rows: int | None = None) -> RowBatches | None:
    """:func:`caption_batches` of a file read from disk block by block (``head``: its first bytes, which
    hold the header row), so its bytes are never all in memory."""
    import pyarrow as pa

    body = head[3:] if head[:3] == b"\xef\xbb\xbf" else head
    header = csv_header(body) if b"\n" in body else None  # a header longer than the head: read it whole
    if header is None:
        return None
    return _caption_batches(lambda: pa.OSFile(str(path)), header, rows)


def _caption_batches(opened: Callable[[], Any], header: list[str], rows: int | None) -> RowBatches | None:
    """:func:`caption_batches` of the CSV input ``opened`` gives afresh for each pass (pyarrow reads it,
    byte-order mark and all)."""
    import pyarrow as pa

    if len(set(header)) != len(header) or not set(KEY_COLUMNS) <= set(header):
        return None
    try:
        total = _contiguous_rows(_csv_blocks(opened(), header, KEY_COLUMNS))
    except (pa.ArrowException, ValueError):
        return None
    # The first pass's blocks are freed; the allocator would keep their memory for the second pass's
    # Python rows, which cannot use it (a million rows: 80 MB more at the import's peak).
    pa.default_memory_pool().release_unused()
    if total is None:
        return None
    return RowBatches(_row_batches(opened(), header, rows or BATCH_ROWS), total)


def _csv_blocks(source: Any, header: list[str], columns: Sequence[str]) -> Iterator[Any]:
    """Record batches of ``columns`` of the CSV input ``source`` (a pyarrow input), every column read as
    text."""
    import pyarrow as pa
    from pyarrow import csv as arrow_csv

    reader = arrow_csv.open_csv(
        source,
        read_options=arrow_csv.ReadOptions(block_size=BLOCK_BYTES, use_threads=False),
        parse_options=arrow_csv.ParseOptions(newlines_in_values=True),
        convert_options=arrow_csv.ConvertOptions(
            column_types={name: pa.string() for name in header},
            include_columns=list(columns),
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
            null_values=[""],
        ),
    )
    yield from reader


def _contiguous_rows(blocks: Iterable[Any]) -> int | None:
    """How many rows the key-column ``blocks`` of a file hold, when every caption's rows follow one
    another (and it has rows, each with its key cells); else None. The caption of each run of rows is
    kept as arrow text, and the runs must all be of different captions. (Kept as Python tuples, the
    captions of a million rows took 36 MB more.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    models: list[Any] = []
    images: list[Any] = []
    last: tuple[str, str] | None = None
    total = 0
    for batch in blocks:
        runs = _caption_runs(batch)
        if runs is None:
            return None
        total += batch.num_rows
        model, image_name = runs
        if not len(model):
            continue
        if last == (model[0].as_py(), image_name[0].as_py()):  # the run goes on from the block before
            model, image_name = model[1:], image_name[1:]
        if len(model):
            models.append(model)
            images.append(image_name)
            last = (model[-1].as_py(), image_name[-1].as_py())
    if last is None:
        return None
    model, image_name = pa.concat_arrays(models), pa.concat_arrays(images)
    del models, images
    # Sorted, a caption with two runs has two equal neighbours. (Neither group_by nor a Python value
    # such as a separator is used: either makes pyarrow import pandas, 45 MB.)
    order = pc.sort_indices(
        pa.table({"model": model, "image_name": image_name}),
        sort_keys=[("model", "ascending"), ("image_name", "ascending")],
    )
    model, image_name = pc.take(model, order), pc.take(image_name, order)
    again = pc.and_(pc.equal(model[1:], model[:-1]), pc.equal(image_name[1:], image_name[:-1]))
    return None if pc.any(again).as_py() else total


class RowBatches:
    """The row batches of a CSV input, taken one by one, with how many rows the input holds (its first
    pass counted them): so how far through the input the batches taken so far reach, for an import's
    progress."""

    def __init__(self, batches: Iterator[RowBatch], total: int) -> None:
        self._batches, self.total, self.taken = batches, total, 0

    def __iter__(self) -> Iterator[RowBatch]:
        return self

    def __next__(self) -> RowBatch:
        batch = next(self._batches)
        self.taken += len(batch)
        return batch

    def share(self) -> float:
        """The share of the input's rows in the batches taken so far (0 to 1)."""
        return min(self.taken / self.total, 1.0) if self.total else 1.0


def _caption_runs(batch: Any) -> tuple[Any, Any] | None:
    """The ``model`` and ``image_name`` of each run of rows of a block, as arrow arrays; None when a key
    cell is missing, blank or (``sentence_index``) not an integer.

    (No Python value is handed to pyarrow here: converting one makes pyarrow import pandas, 45 MB.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    model, image_name, index = (batch.column(batch.schema.get_field_index(c)) for c in KEY_COLUMNS)
    if len(model) == 0:
        return model, image_name
    for column in (model, image_name, index):
        if column.null_count or pc.any(pc.utf8_is_space(column)).as_py():
            return None
        if pc.min_max(pc.utf8_length(column))["min"].as_py() == 0:
            return None
    try:
        pc.cast(index, pa.int64())
    except pa.ArrowException:
        return None
    changes = pc.or_(pc.not_equal(model[1:], model[:-1]), pc.not_equal(image_name[1:], image_name[:-1]))
    starts = pc.indices_nonzero(changes)  # of the runs after the first, in the rows after the first
    return (
        pa.concat_arrays([model[:1], pc.take(model[1:], starts)]),
        pa.concat_arrays([image_name[:1], pc.take(image_name[1:], starts)]),
    )


@dataclass
class RowBatch:
    """Rows of whole captions as columns of Python values: what a batch of a CSV file is read into.

    Made into a dict each and checked cell by cell, the rows took most of the reader's time; the records
    of a caption are made from the columns (:meth:`AlignBenchFormat._caption_rows`), and a row is made a
    dict only when its caption is checked cell by cell. ``first``: the row number of the first row; ``starts``: where
    each caption's run of rows begins; ``typed``: whether every integer and number column was typed by
    pyarrow in the blocks the rows come from (when not, some cell is text, to be converted or named).
    """

    names: list[str]
    columns: dict[str, list[Any]]
    first: int
    starts: list[int]
    typed: bool

    def __len__(self) -> int:
        return len(self.columns[self.names[0]])

    def row(self, k: int) -> dict[str, Any]:
        """Row ``k`` as the dict the row checks read, its cells in header order."""
        return {name: self.columns[name][k] for name in self.names}

    def item_rows(self, lo: int, hi: int) -> list[dict[str, Any]]:
        """The first rows of captions ``lo`` to ``hi``, each with only the cells an item is made of."""
        names = [c for c in ITEM_FIELDS if c in self.columns]
        starts = self.starts[lo:hi]
        cells = [[column[k] for k in starts] for column in map(self.columns.__getitem__, names)]
        return list(map(dict, map(zip, repeat(names), zip(*cells, strict=True))))

    def rows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every row with its number."""
        return ((self.first + k, self.row(k)) for k in range(len(self)))


def _row_batches(source: Any, header: list[str], rows: int) -> Iterator[RowBatch]:
    """The second pass: the rows, cut at the first caption boundary at or after every ``rows`` rows.

    Each block's columns become Python lists at once, and pyarrow finds where its captions begin, so no
    Python work is done here per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names: list[str] = []
    pending: dict[str, list[Any]] = {}
    starts: list[int] = []  # where the captions in ``pending`` begin
    typed = True
    number = 0  # of the first pending row
    for block in _csv_blocks(source, header, header):
        names = block.schema.names
        if not block.num_rows:
            continue
        columns = [_typed(name, block.column(k)) for k, name in enumerate(names)]
        block_typed = all(
            column.type != pa.string()
            for name, column in zip(names, columns, strict=True)
            if name in INT_COLUMNS or name in FLOAT_COLUMNS
        )
        model, image_name = columns[names.index("model")], columns[names.index("image_name")]
        at = len(pending["model"]) if pending else 0
        if not at or (pending["model"][-1], pending["image_name"][-1]) != (
            model[0].as_py(),
            image_name[0].as_py(),
        ):
            starts.append(at)
        changes = pc.or_(pc.not_equal(model[1:], model[:-1]), pc.not_equal(image_name[1:], image_name[:-1]))
        starts += [at + 1 + k for k in pc.indices_nonzero(changes).to_pylist()]
        values = [column.to_pylist() for column in columns]
        values[names.index("sentence_index")] = list(map(int, values[names.index("sentence_index")]))
        if not pending:
            pending = dict(zip(names, values, strict=True))
        else:
            for name, cells in zip(names, values, strict=True):
                pending[name] += cells
        typed = typed and block_typed
        # A caption that began before ``rows`` rows goes on in the batch: the first start from there on
        # ends it (and, a block holding more than ``rows`` rows, the next ``rows`` rows from there).
        while (cut := next((s for s in starts if s >= rows), None)) is not None:
            yield RowBatch(
                names,
                {name: cells[:cut] for name, cells in pending.items()},
                number,
                starts[: starts.index(cut)],
                typed,
            )
            pending = {name: cells[cut:] for name, cells in pending.items()}
            starts = [s - cut for s in starts[starts.index(cut) :]]
            number += cut
            typed = block_typed  # the rows left are all of this block: each cut is in the block just read
    if pending:
        yield RowBatch(names, pending, number, starts, typed)


def _typed(name: str, column: Any) -> Any:
    """An integer or number column as such when every cell of it converts (and is finite); else as text,
    for the row checks to name the cell that does not."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = pa.int64() if name in INT_COLUMNS else pa.float64() if name in FLOAT_COLUMNS else None
    if kind is None:
        return column
    try:
        typed = pc.cast(column, kind)
    except pa.ArrowException:
        return column  # a cell that does not convert: the row checks name it
    if kind == pa.float64() and pc.all(pc.is_finite(typed)).as_py() is False:
        return column
    return typed


def csv_header(body: bytes) -> list[str] | None:
    """The header row's names, as the ``csv`` module reads them (to read every column as text); None
    when it cannot read them (the whole-file reader then says why)."""
    end = body.find(b"\n")
    first = bytes(body[: end if end != -1 else len(body)]).decode("utf-8")
    try:
        return next(csv.reader([first.rstrip("\r")]), [])
    except csv.Error:  # e.g. a header cell past the csv module's field size limit
        return None


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
    if filename.lower().endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(
            [{k: _parquet_cell(row.get(k)) for k in columns} for row in rows],
            schema=pa.schema([(k, _arrow_type(k, rows)) for k in columns]),
        )
        sink = io.BytesIO()
        pq.write_table(table, sink)
        return sink.getvalue()
    return text_rows(rows, filename, columns, header=True)


def text_rows(
    rows: Iterable[dict[str, Any]], filename: str, columns: Sequence[str], *, header: bool
) -> bytes:
    """Rows as CSV (with the header row when ``header``) or else JSONL, chosen by ``filename``: a file
    written in parts, each with the rows of one batch, is the same as written at once."""
    if filename.lower().endswith(".csv"):
        return csv_text(map(_cells_of(columns), rows), columns, header=header)
    return dump_jsonl([{k: row[k] for k in columns if k in row} for row in rows])


def csv_text(rows: Iterable[Sequence[Any]], columns: Sequence[str], *, header: bool) -> bytes:
    """Rows of cells in ``columns`` order as CSV (with the header row when ``header``), as a DictWriter
    would write them: lists and objects as JSON text."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(columns)
    writer.writerows(map(_plain_cells, rows))
    return out.getvalue().encode("utf-8")


# Cells the csv module writes as they are; any other value (a list, an object) is written as JSON text.
_PLAIN_CELLS = frozenset((str, int, float, bool, type(None)))


def _plain_cells(values: Sequence[Any]) -> Sequence[Any]:
    """``values`` with lists and objects as JSON text: looked at one by one only in a row holding one."""
    if _PLAIN_CELLS.issuperset(map(type, values)):
        return values
    return [json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v for v in values]


def _cells_of(columns: Sequence[str]) -> Callable[[dict[str, Any]], Sequence[Any]]:
    """A row's cells in ``columns`` order (None where it has no such key), taken all at once."""
    take = itemgetter(*columns) if len(columns) > 1 else (lambda row: (row[columns[0]],))

    def cells(row: dict[str, Any]) -> Sequence[Any]:
        try:
            return take(row)
        except KeyError:
            return tuple(row.get(k) for k in columns)

    return cells


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
        if isinstance(value, int):
            return as_float(value, column)
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


def _checked_fields(
    members: list[tuple[int, int, dict[str, Any]]], check_storable: bool
) -> Iterator[tuple[int, int, str, str, str | None, dict[str, Any], Any]]:
    """The :func:`sentence_fields` of a caption's rows (sorted by sentence index), each row checked as it
    is taken: a RecordError names its row."""
    previous = None
    for index, number, row in members:
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
        yield index, number, caption, label, error_type, meta, row.get("error_words")


class SentenceRows(NamedTuple):
    """The rows of one or more captions in order, column by column, each cell as :func:`sentence_fields`
    gives it (``error_words``: the cell as it is)."""

    indices: Sequence[int]
    numbers: Sequence[int]
    captions: Sequence[str]
    labels: Sequence[str]
    error_types: Sequence[str | None]
    metas: Sequence[dict[str, Any]]
    words: Sequence[Any]

    def part(self, lo: int, hi: int) -> SentenceRows:
        """The rows from ``lo`` to ``hi``."""
        return SentenceRows(
            self.indices[lo:hi],
            self.numbers[lo:hi],
            self.captions[lo:hi],
            self.labels[lo:hi],
            self.error_types[lo:hi],
            self.metas[lo:hi],
            self.words[lo:hi],
        )


class _Phrases(dict[str, list[str]]):
    """:func:`error_word_list` of each ``error_words`` text, read once for each distinct text (a batch's
    cells repeat: a word list is parsed as JSON, and read again as Python when not JSON)."""

    def __missing__(self, words: str) -> list[str]:
        phrases = self[words] = error_word_list(words)
        return phrases


def _sentence_rows(fields: list[tuple[int, int, str, str, str | None, dict[str, Any], Any]]) -> SentenceRows:
    """Rows of fields, as :func:`_checked_fields` gives them, column by column."""
    return SentenceRows(*(list(column) for column in zip(*fields, strict=True)))


def _grouped(rows: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, list[tuple[int, int, dict[str, Any]]]]:
    """Rows ``(row number, row)`` with sound key cells by caption id, as ``(sentence_index, number, row)``."""
    captions: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    for number, row in rows:
        ext = caption_id(row["model"], row["image_name"])
        captions.setdefault(ext, []).append((row["sentence_index"], number, row))
    return captions


_LABEL_SET = frozenset(LABELS)


def _captions_to_check(batch: RowBatch) -> set[int]:
    """The captions (by position in the batch) :func:`sentence_fields` may refuse a row of, or whose
    sentence indices are not in order (to be sorted, or refused as one given twice): the whole columns
    are looked at first, and rows one by one only when they hold such a row. The number columns need
    no look, the batch's being typed (:class:`RowBatch`)."""
    captions, labels, indices = (batch.columns[c] for c in ("caption", "annotation", "sentence_index"))
    bad: list[int] = []
    if None in captions or any(map(str.isspace, captions)) or not _LABEL_SET.issuperset(labels):
        bad = [
            k
            for k, (caption, label) in enumerate(zip(captions, labels, strict=True))
            if caption is None or caption.isspace() or label not in _LABEL_SET
        ]
    begins = set(batch.starts)
    bad += [k for k in range(1, len(indices)) if indices[k] <= indices[k - 1] and k not in begins]
    return {bisect_right(batch.starts, k) - 1 for k in bad}


def _label_metas(columns: dict[str, list[Any]], n: int) -> list[dict[str, Any]]:
    """Each row's label meta as :func:`sentence_fields` makes it of a row whose number cells are typed:
    its :data:`LABEL_META` cells that are not empty, in that order. Every row's dict is made whole by
    ``map`` and the empty cells taken out after, column by column (half the time of a comprehension
    that leaves them out, row by row)."""
    names = [c for c in LABEL_META if c in columns]
    if not names:
        return [{} for _ in range(n)]
    cells = [columns[c] for c in names]
    metas = list(map(dict, map(zip, repeat(names), zip(*cells, strict=True))))
    for name, column in zip(names, cells, strict=True):
        if None in column:
            for k in [k for k, value in enumerate(column) if value is None]:
                del metas[k][name]
    return metas


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
                parsed = loads(text)
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
    return phrase_spans(error_word_list(words), sentence)


def phrase_spans(phrases: list[str], sentence: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Spans of the phrases of :func:`error_word_list` in ``sentence``, and those that could not be found:
    a phrase with commas that is not found whole is found in its parts, when all of them are."""
    spans: list[tuple[int, int]] = []
    missing: list[str] = []
    for phrase in phrases:
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
    keeps_as_well = ("span",)  # gold's spans as the error words of its incorrect sentences
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

    def read_batches(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        """A CSV file whose captions' rows are contiguous and whose key cells are all sound, read in
        batches of captions (see :func:`caption_batches`); any other file as :meth:`read` reads it."""
        options = options or ReadOptions()
        if encoding_of(data, source) != "csv":
            return self.read(data, source=source, options=options)
        problems = utf8_problems(data, source)
        if problems:
            return ReadResult(None, problems)
        batches = caption_batches(data)
        if batches is None:
            return self.read(data, source=source, options=options)
        return self._batched(batches, options, source, problems, b"\x00" in data)

    def read_file_batches(
        self, path: Path, head: bytes, *, source: str, options: ReadOptions | None = None
    ) -> ReadResult | None:
        """:meth:`read_batches` of a CSV file read from disk: checked, then read, a block at a time, so a
        million rows import without the file's bytes in memory; None for a file :meth:`read_batches`
        would read whole (or not as CSV)."""
        if encoding_of(head, source) != "csv":
            return None
        problems, holds_nul = scan_text_file(path, source)
        if problems:
            return ReadResult(None, problems)
        batches = file_caption_batches(path, head)
        if batches is None:
            return None
        return self._batched(batches, options or ReadOptions(), source, problems, holds_nul)

    def _batched(
        self,
        batches: RowBatches,
        options: ReadOptions,
        source: str,
        problems: list[Problem],
        suspicious: bool,
    ) -> ReadResult:
        """The first bundle of ``batches`` (rows of whole captions), and the others as they are read."""

        def bundles() -> Iterator[Bundle]:
            for batch in batches:
                items, annotations = self._batch_captions(batch, options, source, problems, suspicious)
                yield gold_bundle(
                    options,
                    source,
                    self.name,
                    items,
                    annotations,
                    ["sentence", "span"],
                    taxonomies.ALIGNBENCH,
                )

        read = bundles()
        first = next(read, None)
        return ReadResult(first, problems, read, read_share=batches.share)

    def _batch_captions(
        self, batch: RowBatch, options: ReadOptions, source: str, problems: list[Problem], suspicious: bool
    ) -> tuple[list[ItemRecord], list[Annotations]]:
        """The captions of a batch. A caption whose cells are all sound, as a few checks of whole columns
        tell, is made from the columns; any other is checked row by row (:meth:`_caption`), which names
        the bad cell, so the per-row checks run only where a message may be due.

        The whole batch is checked row by row when a cell may not be storable (the file holds a NUL), a
        number column holds text (some cell did not convert), or two captions have one id (they are then
        read as one, as a file read whole reads them)."""
        columns, n = batch.columns, len(batch)
        ends = [*batch.starts[1:], n]
        models, images = columns["model"], columns["image_name"]
        exts = [caption_id(models[s], images[s]) for s in batch.starts]
        if (
            suspicious
            or not batch.typed
            or "caption" not in columns
            or "annotation" not in columns
            or len(set(exts)) != len(exts)
        ):
            return self._row_captions(_grouped(batch.rows()), options, source, problems, suspicious)
        checked = _captions_to_check(batch)
        nothing: list[Any] = [None] * n
        rows = SentenceRows(
            columns["sentence_index"],
            list(range(batch.first, batch.first + n)),
            columns["caption"],
            columns["annotation"],
            [value or None for value in columns.get("error_type", nothing)],
            _label_metas(columns, n),
            columns.get("error_words", nothing),
        )
        items: list[ItemRecord] = []
        annotations: list[Annotations] = []
        sound = 0  # the first caption not yet read
        for caption in [*sorted(checked), len(exts)]:
            if sound < caption:  # the sound captions before this one, at once
                lo, hi = batch.starts[sound], ends[caption - 1]
                read = self._caption_rows(
                    exts[sound:caption],
                    batch.item_rows(sound, caption),
                    [k - lo for k in batch.starts[sound:caption]],
                    rows.part(lo, hi),
                    options,
                    source,
                    problems,
                )
                items += read[0]
                annotations += read[1]
            if caption < len(exts):
                start, end = batch.starts[caption], ends[caption]
                members = [(rows.indices[k], rows.numbers[k], batch.row(k)) for k in range(start, end)]
                read = self._row_captions({exts[caption]: members}, options, source, problems, False)
                items += read[0]
                annotations += read[1]
            sound = caption + 1
        return items, annotations

    def read_rows(self, loaded: Rows, source: str, options: ReadOptions) -> ReadResult:
        """The captions of rows already loaded (one file's, or all shards' of a dataset folder)."""
        rows, problems = loaded.rows, loaded.problems
        if rows is None:
            return ReadResult(None, problems)

        captions: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
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
        items, annotations = self._row_captions(captions, options, source, problems, loaded.suspicious)
        bundle = gold_bundle(
            options, source, self.name, items, annotations, ["sentence", "span"], taxonomies.ALIGNBENCH
        )
        return ReadResult(bundle, problems)

    def _row_captions(
        self,
        captions: dict[str, list[tuple[int, int, dict[str, Any]]]],
        options: ReadOptions,
        source: str,
        problems: list[Problem],
        check_storable: bool,
    ) -> tuple[list[ItemRecord], list[Annotations]]:
        """The captions of rows grouped by caption id, each checked row by row: a caption with a bad
        cell is said in ``problems`` (by its row) and left out."""
        items, annotations = [], []
        for ext, members in captions.items():
            try:
                item, labels = self._caption(ext, members, options, source, problems, check_storable)
            except RecordError as error:
                number = error.row if error.row is not None else members[0][1]
                problems.append(Problem(source, f"row {number} (caption {ext})", error.field, error.reason))
                continue
            items.append(item)
            annotations.append(labels)
        return items, annotations

    def _caption(
        self,
        ext: str,
        members: list[tuple[int, int, dict[str, Any]]],
        options: ReadOptions,
        source: str,
        problems: list[Problem],
        check_storable: bool,
    ) -> tuple[ItemRecord, Annotations]:
        """One caption of rows ``(sentence_index, row number, row)``, each row checked; a row with a bad
        cell raises RecordError after the warnings of the rows before it are said."""
        members.sort(key=lambda m: m[0])
        fields: list[tuple[int, int, str, str, str | None, dict[str, Any], Any]] = []
        try:
            fields.extend(_checked_fields(members, check_storable))
        finally:  # the rows before a bad one are read for their warnings, as they come before its error
            read = (
                self._caption_rows(
                    [ext], [members[0][2]], [0], _sentence_rows(fields), options, source, problems
                )
                if fields
                else ([], [])
            )
        items, annotations = read
        return items[0], annotations[0]

    def _caption_rows(
        self,
        exts: list[str],
        firsts: list[dict[str, Any]],
        starts: list[int],
        rows: SentenceRows,
        options: ReadOptions,
        source: str,
        problems: list[Problem],
    ) -> tuple[list[ItemRecord], list[Annotations]]:
        """The items and gold labels of captions whose rows are all sound and in order, each caption's
        rows beginning at its ``starts`` in ``rows``; ``firsts``: each caption's first row, which holds
        the item's facts.

        The offsets of every sentence are computed at once and its records made by ``map``, so the only
        Python work per row is a record's own; the error words of a row are read in row order, their
        warnings said as they are found."""
        import numpy as np

        n = len(rows.captions)
        counts = np.diff(np.array([*starts, n], dtype=np.int64)).astype(np.int64)
        lengths = np.fromiter(map(len, rows.captions), dtype=np.int64, count=n)
        before = np.cumsum(lengths + 1) - (lengths + 1)  # where each sentence would begin, all joined
        begins = np.repeat(np.array(starts, dtype=np.int64), counts)
        at = (before - before[begins]).tolist()
        ends = (before - before[begins] + lengths).tolist()
        sentences = list(map(SentenceRecord, at, ends))
        labels = list(
            map(
                SentenceLabelRecord,
                (np.arange(n) - begins).tolist(),
                rows.labels,
                rows.error_types,
                repeat(False),
                rows.metas,
            )
        )
        phrases = _Phrases()
        worded = [k for k, words in enumerate(rows.words) if words is not None]
        next_worded = 0
        items: list[ItemRecord] = []
        annotations: list[Annotations] = []
        for ext, first, start, end in zip(exts, firsts, starts, [*starts[1:], n], strict=True):
            spans: list[SpanRecord] = []
            while next_worded < len(worded) and worded[next_worded] < end:
                k = worded[next_worded]
                next_worded += 1
                words = rows.words[k]
                said = phrases[words] if type(words) is str else error_word_list(words)  # JSON rows: a list
                located, missing = phrase_spans(said, rows.captions[k])
                spans += [SpanRecord(at[k] + s, at[k] + e, rows.error_types[k]) for s, e in located]
                for phrase in missing:
                    problems.append(
                        Problem(
                            source,
                            f"row {rows.numbers[k]} (caption {ext})",
                            "error_words",
                            f"{phrase!r} does not occur in the sentence; no span was made for it",
                            "warning",
                        )
                    )
            item_meta = {c: first[c] for c in ITEM_META if first.get(c) is not None}
            item_meta["sentence_index"] = list(rows.indices[start:end])
            items.append(
                ItemRecord(
                    external_id=ext,
                    response=" ".join(rows.captions[start:end]),
                    subset=options.subset or first.get("image_type"),
                    source_model=first["model"],
                    task_type=first.get("task_type") or "image-to-text",
                    image_ref=first["image_name"],
                    meta=item_meta,
                    sentences=sentences[start:end],
                )
            )
            annotations.append(Annotations(item=ext, spans=spans, sentence_labels=labels[start:end]))
        return items, annotations

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        refused: list[str] = []
        rows = list(_rows(bundle, set(), refused))
        if refused:
            raise FormatError(refused[0])
        return rows_to_bytes(rows, filename, COLUMNS)

    def write_stream(self, batches: Iterable[Bundle], out: Sink, *, filename: str = "") -> None:
        """CSV and JSONL a batch at a time (each caption's rows depend on that caption alone); Parquet
        whole, as :meth:`write` does, since its column types are chosen from every row."""
        if filename.lower().endswith(".parquet"):
            super().write_stream(batches, out, filename=filename)
            return
        as_csv = filename.lower().endswith(".csv")
        captions: set[tuple[str, str]] = set()
        refused: list[str] = []  # every batch is still taken, so a refusal of the whole export comes first
        for k, batch in enumerate(batches):
            if as_csv:
                out.write(csv_text(_row_values(batch, captions, refused), COLUMNS, header=k == 0))
            else:
                out.write(text_rows(_rows(batch, captions, refused), filename, COLUMNS, header=k == 0))
        if refused:
            raise FormatError(refused[0])

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.jsonl"


def _rows(bundle: Bundle, captions: set[tuple[str, str]], refused: list[str]) -> Iterator[dict[str, Any]]:
    """The rows of each item's sentences with the written label set's labels, in item order."""
    return (dict(zip(COLUMNS, values, strict=True)) for values in _row_values(bundle, captions, refused))


def _row_values(
    bundle: Bundle, captions: set[tuple[str, str]], refused: list[str]
) -> Iterator[tuple[Any, ...]]:
    """:func:`_rows`, each row as its cells in :data:`COLUMNS` order (what a CSV row is made of).

    A caption is named by its model and image, so an item without a model, or two items of one model
    and image (M-HalDetect has several answers per image), are said in ``refused`` and not written: the
    writer then refuses the file (:class:`FormatError`) rather than one that reads back refused, or as
    one caption. ``captions``: those written so far, across batches."""
    by_item = annotations_by_item(bundle)
    for item in bundle.items:
        annotations = by_item.get(item.external_id)
        labels = {lab.index: lab for lab in annotations.sentence_labels} if annotations else {}
        model = item.source_model or ""
        image_name = item.image_ref or item.external_id
        if not model:
            refused.append(
                f"AlignBench names a caption by its model and image, and item {item.external_id!r} has no "
                "source model: the file could not be read back. Export the dataset as canonical"
            )
            continue
        if (model, image_name) in captions:
            refused.append(
                f"AlignBench names a caption by its model and image, and item {item.external_id!r} is a "
                f"second caption of model {model!r} for image {image_name!r}: the two would read back as "
                "one. Export the dataset as canonical"
            )
            continue
        captions.add((model, image_name))
        image_source, image_type, image_url = (item.meta.get(key) for key in ITEM_META)
        for k, (start, end, index) in enumerate(sentence_rows(item)):
            label = labels.get(k)
            meta = label.meta if label else {}
            words = (
                meta["error_words"] if "error_words" in meta else _span_words(annotations, item, start, end)
            )
            yield (
                *(model, image_source, image_name, image_type, index, item.response[start:end]),
                *((label.label, label.error_type) if label else (None, None)),
                words,
                *map(meta.get, LABEL_META[1:]),
                image_url,
            )


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
