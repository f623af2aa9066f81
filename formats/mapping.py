"""Mapped import: any CSV, JSON array, JSON lines or Parquet file, or a folder of Parquet shards, read
into a :class:`~formats.records.Bundle` by a user's :class:`~formats.mapping_spec.ImportMapping` rather
than by a reader written for it.

The reader is one more :class:`~formats.record_formats.BenchmarkRecordsFormat`, so a mapped file is
judged exactly like every other benchmark file: each record is read alone (a flaw rejects that record,
reported with file, record and field), a repeated id is caught, and the importer then validates the
whole bundle and writes it in one transaction. What it reads per record comes from the mapping: the
roles (:data:`~formats.mapping_spec.ROLES`) by dotted path, the gold by :mod:`formats.gold_shapes`.
Fields no role names stay in the item's ``meta["fields"]`` (embedded bytes left out), and the mapping
travels with the bundle (``dataset_settings["import_mapping"]``) so it is saved with the dataset.

A mapped field that no record has is most likely a typing slip, so it is reported for the file rather
than silently importing nothing from it. With no mapping, a source whose columns are AlignBench's or
M-HalDetect's is read by that benchmark's reader (:mod:`formats.dataset_folders`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from formats.base import ReadOptions, ReadResult
from formats.dataset_folders import read_recognised, recognised_format
from formats.field_paths import DROPPED, MISSING, plain, structured, text_of, value_at
from formats.fields import RecordError, storable_object, type_name
from formats.gold_shapes import RecordGold, read_gold
from formats.ids import external_id
from formats.mapping_spec import LABEL_KINDS, ImportMapping, MappingError, spells_response
from formats.preview import PREVIEW_HEAD_BYTES, Preview, preview_of, whole_records
from formats.problems import Problem, record_label
from formats.record_formats import BenchmarkRecordsFormat, Warnings
from formats.records import Annotations, ItemRecord
from formats.tables import TableSource, file_source, head_records, limited

MAPPED = "mapped"
SETTINGS_KEY = "import_mapping"
# Records a preview reads: enough to see the mapping work and its problems, quick on any file.
PREVIEW_RECORDS = 200

__all__ = [
    "MAPPED",
    "PREVIEW_RECORDS",
    "SETTINGS_KEY",
    "ImportMapping",
    "MappedRecords",
    "MappingError",
    "open_file",
    "preview_table",
    "read_table",
]


def open_file(data: bytes, name: str, *, head: bool = False) -> TableSource:
    """A file's records; ``head`` keeps only the first part of a text file, cut after its last whole
    record (for a preview; Parquet is read record by record anyway)."""
    if head and bytes(data[:4]) != b"PAR1" and len(data) > PREVIEW_HEAD_BYTES:
        data = whole_records(data[:PREVIEW_HEAD_BYTES])
    return file_source(data, name)


class MappedRecords(BenchmarkRecordsFormat):
    """The records of a table read by ``mapping``; made per import, never guessed from bytes."""

    name = MAPPED
    title = "Mapped fields (CSV, JSON, JSON lines, Parquet)"
    extensions = (".csv", ".json", ".jsonl", ".parquet")
    writable = False
    description = "Any table of records, read by a mapping of its fields to Spanlight's."

    def __init__(self, mapping: ImportMapping) -> None:
        self.mapping = mapping
        self.seen: set[str] = set()  # mapped paths some record has
        self.n_records = 0
        gold = mapping.gold
        self.roles: dict[str, str] = {path: role for role, path in mapping.fields.items()}
        if gold is not None:
            self.roles.update({path: f"gold.{name}" for name, path in gold.paths().items()})
        used = set(self.roles) | {path.split(".")[0] for path in self.roles}
        self.used_keys = frozenset(used)

    def sniff(self, data: bytes, filename: str = "") -> float:
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        return self.read_source(file_source(data, source), options or ReadOptions())

    def read_source(
        self, source: TableSource, options: ReadOptions, *, limit: int | None = None
    ) -> ReadResult:
        """Every record of ``source`` (its first ``limit`` for a preview) as one bundle."""
        problems: list[Problem] = []
        result = self.read_parts(limited(source, limit), options, problems)
        bundle = result.bundle
        assert bundle is not None
        if self.n_records:
            partial = limit is not None and self.n_records >= limit
            for path, role in self.roles.items():
                if path not in self.seen and role != "response":
                    problems.append(
                        Problem(
                            source.name,
                            "-",
                            path,
                            f"mapped as {role}, but no record {'read ' if partial else ''}has this field",
                            "warning" if partial else "error",
                        )
                    )
        shape = self.mapping.gold.shape if self.mapping.gold else None
        bundle.dataset.label_kinds = list(LABEL_KINDS[shape]) if shape else []
        bundle.dataset_settings = {SETTINGS_KEY: self.mapping.to_dict()}
        return ReadResult(bundle, problems)

    def taxonomy(self, annotations: Sequence[Annotations]) -> Sequence[str]:
        """The span types the file uses."""
        return sorted({s.type for a in annotations for s in a.spans if s.type})

    def record_label(self, index: int, record: Any) -> str:
        path = self.mapping.fields.get("id")
        value = value_at(record, path) if path and isinstance(record, dict) else None
        named = isinstance(value, str | int) and not isinstance(value, bool)
        return record_label(index, str(value) if named else None)

    def _get(self, record: dict[str, Any], role: str) -> tuple[str, Any]:
        """``(path, value)`` of a role (``MISSING`` when unmapped or absent)."""
        path = self.mapping.fields.get(role)
        return (path, value_at(record, path)) if path else (role, MISSING)

    def read_item(
        self, record: Any, index: int, stem: str, warnings: Warnings
    ) -> tuple[ItemRecord, Annotations]:
        self.n_records += 1
        if not isinstance(record, dict):
            raise RecordError("-", f"expected an object, got {type_name(record)}")
        storable_object(record)
        for path in self.roles.keys() - self.seen:
            if value_at(record, path) is not MISSING:
                self.seen.add(path)
        id_path, id_value = self._get(record, "id")
        if isinstance(id_value, float) and id_value.is_integer():
            id_value = int(id_value)  # an integer column with gaps, as pandas writes it to Parquet
        ext, _ = external_id(
            {id_path: None if id_value is MISSING else id_value}, (id_path,), f"{stem}-{index}"
        )
        response_path, response_value = self._get(record, "response")
        response = text_of(response_value, response_path)
        if response is None and not spells_response(self.mapping.gold):
            raise RecordError(response_path, "missing")
        gold = RecordGold()
        if self.mapping.gold is not None:
            gold = read_gold(record, self.mapping.gold, response, warnings)
        text = response if response is not None else gold.response
        if text is None:
            raise RecordError(response_path, "missing")
        values = {role: self._get(record, role) for role in ("prompt", "reference", "subset", "source_model")}
        kept = {k: plain(v) for k, v in record.items() if k not in self.used_keys}
        item = ItemRecord(
            external_id=ext,
            response=text,
            prompt=text_of(values["prompt"][1], values["prompt"][0]) or "",
            reference=text_of(values["reference"][1], values["reference"][0]),
            subset=text_of(values["subset"][1], values["subset"][0], numbers=True),
            source_model=text_of(values["source_model"][1], values["source_model"][0], numbers=True),
            image_ref=self._image(record, warnings),
            sentences=gold.sentences,
            claims=gold.claims,
            reference_triplets=gold.reference_triplets,
            meta={"fields": {k: v for k, v in kept.items() if v is not DROPPED}, **gold.meta},
        )
        annotations = Annotations(
            ext,
            spans=gold.spans,
            sentence_labels=gold.sentence_labels,
            claim_labels=gold.claim_labels,
            triplets=gold.triplets,
            response_score=gold.response_score,
        )
        return item, annotations

    def _image(self, record: dict[str, Any], warnings: Warnings) -> str | None:
        """The image's path or URL; a Hugging Face image column (``{bytes, path}``) gives its path."""
        path, value = self._get(record, "image")
        value = structured(value)
        if isinstance(value, dict):
            inner = value.get("path")
            if isinstance(inner, str) and inner.strip():
                return inner
            value = value.get("bytes")
        if isinstance(value, bytes | bytearray | memoryview):
            warnings.append(
                (path, "holds the image itself, not a path or URL; the item has no image reference")
            )
            return None
        return text_of(value, path)


def read_table(
    source: TableSource, mapping: ImportMapping | None, options: ReadOptions, *, limit: int | None = None
) -> tuple[str, ReadResult]:
    """``(format name, what was read)``: with the mapping, or by a recognised benchmark's reader."""
    if mapping is not None:
        return MAPPED, MappedRecords(mapping).read_source(source, options, limit=limit)
    problems: list[Problem] = []
    name = recognised_format(source, problems)
    if name is None:
        problems.append(
            Problem(
                source.name,
                "-",
                "-",
                "its columns are not those of a benchmark Spanlight reads (AlignBench, M-HalDetect): "
                "map its fields",
            )
        )
        return MAPPED, ReadResult(None, problems)
    return name, read_recognised(source, name, options, limit=limit)


def preview_table(
    source: TableSource,
    mapping: ImportMapping | None,
    options: ReadOptions,
    *,
    limit: int = 5,
    records: int = PREVIEW_RECORDS,
) -> Preview:
    """What importing ``source`` would bring, from its first ``records`` records, nothing written."""
    name, result = read_table(source, mapping, options, limit=records)
    more = len(head_records(source, records + 1, [])) > records
    return preview_of(name, "benchmark", result, options, limit=limit, partial=more)
