"""Helpers shared by the format modules: decoding untrusted bytes, typed field access, text alignment.

Every function here reports instead of raising: a bad byte, a wrong type or a text that does not match
becomes a reason string or a :class:`~formats.problems.Problem`, because users must see every flaw of a file
at once and a reader must never crash on what a file contains.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import PurePath
from typing import Any, TypeVar

from formats.problems import Problem, record_label
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord

# Characters the stores cannot hold: PostgreSQL text refuses NUL, and an unpaired surrogate (possible in
# JSON through "\ud800") is not encodable as UTF-8 at all.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

T = TypeVar("T")


class RecordError(ValueError):
    """One record (or one field of it) is unusable; carries the field name for the report."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


# ------------------------------------------------------------------------------------------------- bytes


def decode_text(data: bytes, source: str) -> tuple[str | None, list[Problem]]:
    """UTF-8 text of ``data`` (a byte-order mark is allowed), or None and a problem saying where it breaks."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None, [Problem(source, "-", "-", f"expected file bytes, got {type(data).__name__}")]
    try:
        return bytes(data).decode("utf-8-sig"), []
    except UnicodeDecodeError as error:
        return None, [
            Problem(
                source,
                "-",
                "-",
                f"not valid UTF-8 text: byte {error.start} (0x{bytes(data)[error.start]:02x}) cannot be "
                "decoded; save the file as UTF-8",
            )
        ]


def load_json(data: bytes, source: str) -> tuple[Any, list[Problem]]:
    """The parsed JSON document, or None and a problem with line and column of the syntax error."""
    text, problems = decode_text(data, source)
    if text is None:
        return None, problems
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        return None, [
            Problem(
                source, "-", "-", f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
            )
        ]
    except RecursionError:
        return None, [Problem(source, "-", "-", "not readable JSON: nested too deeply")]
    if document is None:
        return None, [Problem(source, "-", "-", "the file holds only JSON null, no records")]
    return document, []


def load_document(data: bytes, source: str, kind: type, expected: str) -> tuple[Any, list[Problem]]:
    """The parsed JSON document when it is a ``kind`` (dict or list), else None and a problem saying what
    was ``expected``: the formats whose file is one document of a fixed shape reject any other alike."""
    document, problems = load_json(data, source)
    if document is None:
        return None, problems
    if not isinstance(document, kind):
        problems.append(Problem(source, "-", "-", f"expected {expected}, got {type_name(document)}"))
        return None, problems
    return document, problems


def iter_jsonl(text: str, source: str, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """``(line index, value)`` of each non-blank line; a line that is not JSON becomes a problem."""
    for index, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            yield index, json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(
                Problem(
                    source, f"line {index + 1}", "-", f"not valid JSON: {error.msg} at column {error.colno}"
                )
            )
        except RecursionError:
            problems.append(Problem(source, f"line {index + 1}", "-", "not readable JSON: nested too deeply"))


def looks_like_json(data: bytes) -> str | None:
    """``"["``, ``"{"`` or None: the first non-blank character of the file, if it opens JSON."""
    head = bytes(data[:4096]).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1].decode() if head[:1] in (b"[", b"{") else None


def head_text(data: bytes, size: int = 65536) -> str:
    """The beginning of the file as text (for sniffing; undecodable bytes replaced)."""
    return bytes(data[:size]).decode("utf-8", "replace")


def dump_json(value: Any, *, indent: int | None = 2) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")


def dump_jsonl(rows: Sequence[Any]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def file_stem(source: str) -> str:
    """``processed_test`` for ``…/processed_test.json``; the name datasets and ids are derived from."""
    stem = PurePath(source.replace("\\", "/")).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".parquet", ".zip"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem or "input"


# ------------------------------------------------------------------------------------------ record fields


_JSON_ESCAPE_UNSTORABLE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def may_hold_unstorable(text: str) -> bool:
    """False when no value parsed from ``text`` (JSON or CSV) can hold a NUL or an unpaired surrogate,
    so readers can skip checking every record of a large, clean file."""
    return "\x00" in text or _JSON_ESCAPE_UNSTORABLE.search(text) is not None


def unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """``(field, reason)`` for the first string inside ``value`` the database cannot store, else None."""
    stack: deque[tuple[str, Any]] = deque([(path, value)])
    while stack:
        where, current = stack.popleft()
        if isinstance(current, str):
            found = _UNSTORABLE.search(current)
            if found:
                what = (
                    "a NUL character" if found.group() == "\x00" else "an unpaired surrogate (broken Unicode)"
                )
                return where or "-", f"contains {what} at character {found.start()}, which cannot be stored"
        elif isinstance(current, Mapping):
            for key, item in current.items():
                if isinstance(key, str) and _UNSTORABLE.search(key):
                    return where or "-", "a field name contains a character that cannot be stored"
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(current, list | tuple):
            stack.extend((f"{where}[{k}]", item) for k, item in enumerate(current))
    return None


def type_name(value: Any) -> str:
    return (
        "null"
        if value is None
        else {dict: "object", list: "list", str: "text", bool: "true/false"}.get(
            type(value), type(value).__name__
        )
    )


def get_str(
    record: Mapping[str, Any], key: str, *, required: bool = True, allow_empty: bool = True
) -> str | None:
    """``record[key]`` as text; missing/null -> None (or RecordError when required); other types -> error."""
    value = record.get(key)
    if value is None:
        if required:
            raise RecordError(key, "missing")
        return None
    if not isinstance(value, str):
        raise RecordError(key, f"expected text, got {type_name(value)}")
    if not allow_empty and not value.strip():
        raise RecordError(key, "is empty")
    return value


def get_first_str(
    record: Mapping[str, Any], keys: Sequence[str], *, required: bool = True
) -> tuple[str | None, str | None]:
    """The first of ``keys`` present (non-null) in ``record``: ``(key, text)``; ``(None, None)`` when none."""
    for key in keys:
        if record.get(key) is not None:
            return key, get_str(record, key)
    if required:
        raise RecordError("/".join(keys), "missing (none of these fields is present)")
    return None, None


def get_int(value: Any, field: str) -> int:
    """A JSON integer (not a bool, not a float with a fraction)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(field, f"expected an integer, got {type_name(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise RecordError(field, f"expected an integer, got {value!r}")
        value = int(value)
    return value


def get_list(record: Mapping[str, Any], key: str, *, required: bool = True) -> list[Any]:
    value = record.get(key)
    if value is None:
        if required:
            raise RecordError(key, "missing")
        return []
    if not isinstance(value, list):
        raise RecordError(key, f"expected a list, got {type_name(value)}")
    return value


def external_id(record: Mapping[str, Any], keys: Sequence[str], fallback: str) -> tuple[str, bool]:
    """The record's own id (text or integer) under one of ``keys``, else ``fallback``; and whether it had one."""
    for key in keys:
        value = record.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise RecordError(key, f"expected text or an integer id, got {type_name(value)}")
        text = str(value)
        if not text.strip():
            raise RecordError(key, "is empty")
        return text, True
    return fallback, False


def id_was_int(record: Mapping[str, Any], key: str = "id") -> bool:
    value = record.get(key)
    return isinstance(value, int) and not isinstance(value, bool)


def written_id(external: str, layout: Mapping[str, Any]) -> str | int:
    """The id as the source file had it: an integer again when it was one."""
    return int(external) if layout.get("int_id") else external


def where(index: int, record_id: str | None = None) -> str:
    return record_label(index, record_id)


def load_records(data: bytes, source: str) -> tuple[list[tuple[int, Any]] | None, list[Problem]]:
    """``(index, record)`` pairs of a JSON array or a JSON-lines file (index = position or line number - 1)."""
    opener = looks_like_json(data)
    if opener == "[":
        document, problems = load_json(data, source)
        if document is None:
            return None, problems
        return list(enumerate(document)), problems
    text, problems = decode_text(data, source)
    if text is None:
        return None, problems
    if opener is None:
        return None, [Problem(source, "-", "-", "not JSON: expected a JSON list or one JSON object per line")]
    records = list(iter_jsonl(text, source, problems))
    if problems:
        # Perhaps one pretty-printed object rather than JSON lines.
        try:
            whole = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return records, problems
        return [(0, whole)], []
    return records, problems


def record_of(index: int, record: Any) -> str:
    """How a record is named in a report: its index, and its id when it has a usable one."""
    rid = record.get("id") if isinstance(record, dict) else None
    return record_label(index, str(rid) if isinstance(rid, str | int) and not isinstance(rid, bool) else None)


def benchmark_items(
    records: Iterable[tuple[int, Any]],
    source: str,
    problems: list[Problem],
    read: Callable[[Any, int, list[tuple[str, str]]], tuple[ItemRecord, T]],
    label_of: Callable[[int, Any], str] = record_of,
) -> tuple[list[ItemRecord], list[T]]:
    """The items of a benchmark file and what ``read`` found with each (its gold labels), in file order.

    Every benchmark reader treats its records alike, so a flawed file is reported the same way whatever
    its format: ``read(record, index, warnings)`` raising RecordError rejects only that record (an error
    naming its field); the ``(field, reason)`` warnings it adds are reported; then a record repeating an
    earlier id is dropped (see :class:`DuplicateIds`). ``label_of`` names a record in the report.
    """
    items: list[ItemRecord] = []
    found: list[T] = []
    duplicates = DuplicateIds()
    for index, record in records:
        label = label_of(index, record)
        warnings: list[tuple[str, str]] = []
        try:
            item, gold = read(record, index, warnings)
        except RecordError as error:
            problems.append(Problem(source, label, error.field, error.reason))
            continue
        problems.extend(Problem(source, label, field, reason, "warning") for field, reason in warnings)
        repeated = duplicates.check(item.external_id, index, record)
        if repeated:
            problems.append(Problem(source, label, "id", repeated[1], repeated[0]))
            continue
        items.append(item)
        found.append(gold)
    return items, found


class DuplicateIds:
    """Remembers each record id: an exact copy of an earlier record is dropped with a warning, a
    different record under a used id is an error (the released MHALO M-HalDetect file repeats records)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, str]] = {}

    def check(self, record_id: str, index: int, record: Any) -> tuple[str, str] | None:
        """None for a new id, else ``(severity, reason)``."""
        fingerprint = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
        if record_id not in self._seen:
            self._seen[record_id] = (index, fingerprint)
            return None
        first, earlier = self._seen[record_id]
        if fingerprint == earlier:
            return "warning", f"an exact copy of record #{first} (same id {record_id!r}); imported once"
        return "error", f"the id {record_id!r} is already used by record #{first}, with different content"


# --------------------------------------------------------------------------------------------- alignment


def nonspace_positions(text: str) -> list[int]:
    return [k for k, ch in enumerate(text) if not ch.isspace()]


def align_ignoring_whitespace(src: str, dst: str) -> list[int] | None:
    """Map each character index of ``src`` to an index in ``dst`` when both hold the same non-whitespace
    characters in the same order (whitespace may differ anywhere, also inside words); else None.

    Whitespace characters of ``src`` map to the position just after the previous non-whitespace
    character's image, so a span's ends can be moved onto ``dst`` exactly.
    """
    a, b = nonspace_positions(src), nonspace_positions(dst)
    if len(a) != len(b) or any(src[i] != dst[j] for i, j in zip(a, b, strict=True)):
        return None
    mapping = [0] * (len(src) + 1)
    k = 0
    for i in range(len(src) + 1):
        if k < len(a) and a[k] == i:
            mapping[i] = b[k]
            k += 1
        else:
            mapping[i] = b[k - 1] + 1 if k else 0
    return mapping


def map_span(mapping: list[int], src: str, start: int, end: int) -> tuple[int, int] | None:
    """Move the span ``[start, end)`` of ``src`` through a :func:`align_ignoring_whitespace` mapping.

    The span is trimmed to its first and last non-whitespace character; None when it holds none.
    """
    while start < end and src[start].isspace():
        start += 1
    while end > start and src[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    return mapping[start], mapping[end - 1] + 1


def first_difference(a: str, b: str, *, context: int = 25) -> str:
    """Where two texts first differ, shown as two short quoted excerpts."""
    k = 0
    limit = min(len(a), len(b))
    while k < limit and a[k] == b[k]:
        k += 1
    lo = max(0, k - 10)
    return f"at character {k}: {a[lo : k + context]!r} vs {b[lo : k + context]!r}"


def norm_ws(text: str) -> str:
    return " ".join(text.split())


def overlapping(spans: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The first two spans that overlap (in start order), or None."""
    ordered = sorted(spans)
    for previous, current in zip(ordered, ordered[1:], strict=False):
        if current[0] < previous[1]:
            return previous, current
    return None


def insert_markers(text: str, marks: Sequence[tuple[int, int, str, str]]) -> str:
    """``text`` with ``opening`` / ``closing`` strings around each ``(start, end, opening, closing)``.

    The spans must not overlap (check with :func:`overlapping` first).
    """
    pieces: list[str] = []
    at = 0
    for start, end, opening, closing in sorted(marks, key=lambda m: (m[0], m[1])):
        pieces += [text[at:start], opening, text[start:end], closing]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


# ----------------------------------------------------------------------------------------------- bundles


def pick_label_set(bundle: Bundle, kind: str = "gold") -> LabelSetRecord | None:
    """The label set a single-label-set writer puts into a file: the first of ``kind``, else the only one."""
    for label_set in bundle.label_sets:
        if label_set.kind == kind:
            return label_set
    return bundle.label_sets[0] if len(bundle.label_sets) == 1 else None


def annotations_by_item(bundle: Bundle, kind: str = "gold") -> dict[str, Annotations]:
    """The annotations a single-label-set writer exports (see :func:`pick_label_set`), by item id."""
    label_set = pick_label_set(bundle, kind)
    return {a.item: a for a in label_set.annotations} if label_set else {}


def spans_by_item(bundle: Bundle, kind: str = "gold") -> dict[str, list[tuple[int, int]]]:
    return {ext: [(s.start, s.end) for s in a.spans] for ext, a in annotations_by_item(bundle, kind).items()}


def gold_bundle(
    options: Any,
    source: str,
    source_format: str,
    items: list[ItemRecord],
    annotations: list[Annotations],
    label_kinds: list[str],
    taxonomy: Sequence[str] = (),
) -> Bundle:
    """What a benchmark reader returns: its items and one gold label set, in a dataset named by the user
    or else after the file (as every benchmark format names it)."""
    return Bundle(
        dataset=DatasetRecord(
            name=options.dataset or file_stem(source),
            source_format=source_format,
            taxonomy=list(taxonomy),
            label_kinds=label_kinds,
        ),
        items=items,
        label_sets=[LabelSetRecord(kind="gold", name="gold", annotations=annotations)],
    )


def detector_bundle(options: Any, annotations: list[Annotations], source_format: str) -> Bundle:
    """What a predictions reader returns: no items, one detector label set named by the user."""
    return Bundle(
        dataset=DatasetRecord(name=options.dataset or "", source_format=source_format),
        label_sets=[
            LabelSetRecord(
                kind="detector",
                name=options.detector or "detector",
                detector_version=options.detector_version,
                prompt_strategy=options.prompt_strategy,
                annotations=annotations,
            )
        ],
    )


def detector_outputs(bundle: Bundle) -> Iterator[tuple[ItemRecord, Annotations]]:
    """Each item with the exported detector label set's annotations of it, in item order: what every
    predictions writer writes a row for (items the detector has no output for are left out)."""
    by_item = annotations_by_item(bundle, "detector")
    for item in bundle.items:
        annotations = by_item.get(item.external_id)
        if annotations is not None:
            yield item, annotations


def raw_output_json(annotations: Annotations | None, default: Any = None) -> Any:
    """The detector's raw output parsed as JSON, else ``default`` (no raw output, or not JSON).

    Predictions readers keep a JSON output verbatim as the raw output, so writers give it back from here
    and an export repeats exactly what was imported.
    """
    if annotations is None or annotations.raw_output is None:
        return default
    try:
        return json.loads(annotations.raw_output.text)
    except json.JSONDecodeError:
        return default


ITEM_ID_KEYS = ("id", "item", "item_id", "external_id", "question_id")


def prediction_records(data: bytes, source: str) -> tuple[list[tuple[str, Any]] | None, list[Problem]]:
    """``(record label, record)`` of a predictions file: a JSON list, JSON lines, or an object mapping
    item id -> output (each becomes ``{"id": key, "value": output}``)."""
    document = None
    if looks_like_json(data) == "{":
        whole, problems = load_json(data, source)
        if isinstance(whole, dict) and not any(k in whole for k in ITEM_ID_KEYS):
            return [(f"id={key}", {"id": key, "value": value}) for key, value in whole.items()], problems
        document = [whole] if isinstance(whole, dict) else None
    if document is None:
        records, problems = load_records(data, source)
        if records is None:
            return None, problems
        return [(record_of(index, record), record) for index, record in records], problems
    return [(record_of(0, document[0]), document[0])], []


def item_of(record: Mapping[str, Any], known: Mapping[str, Any]) -> str:
    """The stored item a prediction record is about (by its id); RecordError naming the problem."""
    ext, found = external_id(record, ITEM_ID_KEYS, "")
    if not found:
        raise RecordError("id", f"missing: give the item's id in one of {', '.join(ITEM_ID_KEYS)}")
    if ext not in known:
        raise RecordError("id", f"no item {ext!r} in this dataset")
    return ext


def _no_fields(record: dict[str, Any]) -> None:
    return None


def prediction_items(
    records: Iterable[tuple[str, Any]],
    source: str,
    problems: list[Problem],
    known: Mapping[str, Any],
    read: Callable[[dict[str, Any]], T] = _no_fields,
    *,
    output: str = "output",
    read_before_repeat: bool = False,
) -> Iterator[tuple[str, str, dict[str, Any], T]]:
    """``(record label, item id, record, read(record))`` of each usable record of a predictions file.

    Every predictions reader accepts a record on the same terms, so a file is judged alike whatever its
    format: it must be an object, hold only storable text, name a stored item, and be the first
    ``output`` for that item; ``read`` takes out the format's own fields (it may raise RecordError too).
    A record failing any of these is reported once, as an error with its field, and skipped.
    ``read_before_repeat`` runs ``read`` before the repeated-item check (mhalo-outputs names a missing
    output before a second one).
    """
    seen: set[str] = set()
    for label, record in records:
        try:
            if not isinstance(record, dict):
                raise RecordError("-", f"expected an object, got {type_name(record)}")
            bad = unstorable(record)
            if bad:
                raise RecordError(*bad)
            ext = item_of(record, known)
            if read_before_repeat:
                value = read(record)
            if ext in seen:
                raise RecordError("id", f"a second {output} for item {ext!r}")
            if not read_before_repeat:
                value = read(record)
        except RecordError as error:
            problems.append(Problem(source, label, error.field, error.reason))
            continue
        seen.add(ext)
        yield label, ext, record, value
