"""A small gold dataset and the hostile five-line re-import from the data-protection report."""

from __future__ import annotations

import json

from formats.canonical import CanonicalFormat
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SpanRecord,
)

SENTENCES = {"a": 6, "b": 5, "c": 5}  # 16 gold sentence labels in all


def response(n: int) -> str:
    return " ".join(f"Sentence number {k} is here." for k in range(n))


def gold_bundle() -> Bundle:
    items = [ItemRecord(external_id=ext, response=response(n)) for ext, n in SENTENCES.items()]
    spans = {"a": [(0, 8), (9, 15)], "b": [(0, 8), (16, 17)], "c": [(9, 15)]}  # 5 spans
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                item=ext,
                spans=[SpanRecord(s, e, "Object") for s, e in spans[ext]],
                sentence_labels=[
                    SentenceLabelRecord(k, "incorrect" if k == 0 else "correct") for k in range(n)
                ],
            )
            for ext, n in SENTENCES.items()
        ],
    )
    return Bundle(dataset=DatasetRecord("shapes", "canonical"), items=items, label_sets=[gold])


def canonical(bundle: Bundle) -> bytes:
    return CanonicalFormat().write(bundle)


HOSTILE = (
    "\n".join(
        json.dumps(line)
        for line in [
            {"record": "dataset", "format_version": 1, "name": "shapes", "source_format": "canonical"},
            {"record": "label_set", "kind": "gold", "name": "gold"},
            *(
                {"record": "annotations", "label_set": {"kind": "gold", "name": "gold"}, "item": ext}
                for ext in SENTENCES
            ),
        ]
    )
    + "\n"
).encode()
