"""MMHal-Bench ratings of stored responses: item id -> a 0-6 rating, and whether it hallucinates.

One rater's or one judge's ratings of a dataset's items, in any of these shapes:

* JSON lines or a JSON list of ``{id, rating, hallucination?, rationale?}`` — ``score`` for ``rating``,
  and a review text ending in ``Rating: N``, are read as in the benchmark file (:mod:`formats.mmhal`);
* one JSON object ``{id: rating}`` or ``{id: {rating, hallucination, rationale}}``;
* CSV with the columns ``id, rating, hallucination, rationale``.

The ratings become the response scores of one label set named by the user: a judge's run (a detector
label set, the default), gold, or an annotator's (``ReadOptions.label_set_kind``). A rating outside
0-6 is an error of its record. Written back as JSON lines, or as CSV when the file name ends in .csv.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Mapping
from typing import Any

from formats.alignbench import load_rows, rows_to_bytes
from formats.base import Format, ReadOptions, ReadResult
from formats.fields import RecordError
from formats.mmhal import (
    ID_KEYS,
    ITEM_KEYS,
    RATING_FIELDS,
    rating_fields,
    rating_of,
    response_counts,
    scored_label_set,
)
from formats.problems import Problem
from formats.record_loops import ITEM_ID_KEYS, prediction_items, prediction_records
from formats.records import Annotations, Bundle, DatasetRecord, LabelSetRecord, ResponseScoreRecord
from formats.text import head_text, looks_like_json

COLUMNS = ("id", "rating", "hallucination", "rationale")
# What an MMHal record says about its item: read past without a warning.
_ITEM_FIELDS = {*ITEM_KEYS, *ID_KEYS, "question_topic", "image_id", "image_src", "image_content"}
_Read = tuple[ResponseScoreRecord, list[tuple[str, str]]]
# The start of one JSON object mapping an item id to a number: ``{"007-abc": 5, ...``.
_ID_TO_NUMBER = re.compile(r'\ufeff?\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*-?\d')


def _rating(record: dict[str, Any]) -> _Read:
    """The record's rating and the warnings about it; RecordError when it has no usable rating."""
    if set(record) == {"id", "value"}:  # one entry of a JSON object {id: rating or fields}
        value = record["value"]
        record = (
            {**value, "id": record["id"]}
            if isinstance(value, dict)
            else {"id": record["id"], "rating": value}
        )
    warnings: list[tuple[str, str]] = []
    rated = rating_of(record, warnings)
    if rated is None:
        raise RecordError("rating", "missing: give a rating from 0 to 6")
    unknown = [k for k in record if k not in {*ITEM_ID_KEYS, *RATING_FIELDS, *_ITEM_FIELDS}]
    if unknown:
        warnings.append((unknown[0], f"ignored: not a field of a rating ({', '.join(COLUMNS)})"))
    return rated, warnings


def _records(data: bytes, source: str) -> tuple[list[tuple[str, Any]] | None, list[Problem]]:
    """``(record label, record)`` of a JSON or CSV ratings file."""
    if looks_like_json(data) is not None:
        return prediction_records(data, source)
    loaded = load_rows(data, source)
    if loaded.rows is None:
        return None, loaded.problems
    return [(f"line {k + 2}", row) for k, row in enumerate(loaded.rows)], loaded.problems


class MMHalRatingsFormat(Format):
    name = "mmhal-ratings"
    title = "MMHal-Bench ratings (item id -> 0-6 rating)"
    kind = "predictions"
    holds = ("response",)
    extensions = (".jsonl", ".csv")
    description = (
        "Records {id, rating, hallucination, rationale} (JSON lines, JSON or CSV), or one object "
        "{id: rating}: a judge's or a rater's ratings of the stored responses."
    )

    def written_label_set(
        self, bundle: Bundle, counts: Callable[[LabelSetRecord], Mapping[str, int]]
    ) -> LabelSetRecord | None:
        return scored_label_set(bundle, counts)

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data, 8192)
        if looks_like_json(data) is not None:
            if '"model_answer"' in head:
                return 0.0  # a benchmark file, even when it carries ratings
            if '"rating"' in head:
                return 0.7
            return 0.5 if _ID_TO_NUMBER.match(head) else 0.0
        header = next(csv.reader(io.StringIO(head)), [])
        return 0.8 if "rating" in header and any(k in header for k in ITEM_ID_KEYS) else 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        records, problems = _records(data, source)
        if records is None:
            return ReadResult(None, problems)
        annotations = []
        for label, ext, _, (rated, warnings) in prediction_items(
            records, source, problems, options.known, _rating, output="rating", dataset=options.dataset
        ):
            annotations.append(Annotations(item=ext, response_score=rated))
            problems.extend(Problem(source, label, field, reason, "warning") for field, reason in warnings)
        name = " ".join((options.detector or "judge").split()) or "judge"
        detector = options.label_set_kind == "detector"
        label_set = LabelSetRecord(
            kind=options.label_set_kind,
            name=name,
            annotator=name if options.label_set_kind == "human" else None,
            detector_version=options.detector_version if detector else None,
            prompt_strategy=options.prompt_strategy if detector else None,
            annotations=annotations,
        )
        dataset = DatasetRecord(name=options.dataset or "", source_format="mmhal", label_kinds=["response"])
        return ReadResult(Bundle(dataset=dataset, label_sets=[label_set]), problems)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        scored = self.written_label_set(bundle, response_counts)
        ratings = {a.item: a.response_score for a in scored.annotations} if scored else {}
        rows = [
            {"id": item.external_id, **rating_fields(rated)}
            for item in bundle.items
            if (rated := ratings.get(item.external_id)) is not None
        ]
        return rows_to_bytes(rows, filename, COLUMNS)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.ratings.jsonl"


FORMAT = MMHalRatingsFormat()
