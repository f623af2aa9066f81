"""Items of a file without ids get ``<file stem>-<index>``; every export writes each item's id back, so a
re-import (of a renamed file, or of one written after records were rejected) finds every item again."""

from __future__ import annotations

import json

import pytest

from db.access import OPERATOR
from db.export_files import export_file
from db.exporter import export_bundle
from db.transfer import import_file
from formats.base import ReadOptions

# One record per format with no id of its own; the file is [good, not-a-record, good].
NO_ID_RECORDS = {
    "mhalo": {
        "test_solution": "A red cube.",
        "hallucinated_solution": "A <hallucination>red</hallucination> cube.",
    },
    "typed-tags": {"prompt": "Describe.", "tagged": "There are <number>three</number> cats."},
    "mhaldetect": {
        "question": "Describe.",
        "response": "A dog sleeps. It is tired.",
        "annotations": [{"start": 0, "end": 13, "text": "A dog sleeps.", "label": "INACCURATE"}],
    },
    "mhalubench": {
        "image_path": "coco/1.jpg",
        "claim_list": ["There is a kite."],
        "ref_claim_label": ["hallucination"],
    },
    "halloc": {
        "split": "train",
        "prompt": "Which place is it?",
        "source_text": "church",
        "hallucinated_text": "castle",
        "image_id": "2367212",
        "annotations": {
            "object": [],
            "attribute": [],
            "relationship": [],
            "scene": [{"scene": {"name": "castle", "word_index": "0"}}],
        },
    },
}


def records(exported: bytes) -> list[dict]:
    """The records of an exported JSON list or JSON-lines file."""
    text = exported.decode()
    return (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(line) for line in text.splitlines()]
    )


@pytest.mark.parametrize("fmt", sorted(NO_ID_RECORDS))
def test_a_round_trip_after_a_rejected_record_keeps_every_items_id(engine, fmt):
    record = NO_ID_RECORDS[fmt]
    data = json.dumps([record, 42, record | {"prompt": "Again."}]).encode()
    first = import_file(
        engine,
        data,
        source="source.json",
        format_name=fmt,
        options=ReadOptions(dataset="one"),
        allow_skip=True,
        actor=OPERATOR,
    )
    assert first.ok and [p.record for p in first.errors] == ["#1"], first.problems
    ids = [i.external_id for i in export_bundle(engine, "one", actor=OPERATOR).items]
    assert ids == ["source-0", "source-2"]

    exported = export_file(engine, "one", fmt, filename="renamed.json", actor=OPERATOR)
    written = records(exported)
    assert [r["id"] for r in written] == ids and all(next(iter(r)) == "id" for r in written)
    again = import_file(
        engine,
        exported,
        source="renamed.json",
        format_name=fmt,
        options=ReadOptions(dataset="two"),
        actor=OPERATOR,
    )
    assert again.ok, again.problems
    assert [i.external_id for i in export_bundle(engine, "two", actor=OPERATOR).items] == ids
    # The second export is the first one: nothing else moved.
    assert export_file(engine, "two", fmt, filename="renamed.json", actor=OPERATOR) == exported
