"""A store whose every name, id and note is hostile Markdown, and how Markdown would show a source.

Shared by the page tests (AppTest) and the browser test: the text must come out literally everywhere.
"""

from __future__ import annotations

import re
import string

from sqlalchemy import Engine

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import list_datasets
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from db.repositories.labeling import set_item_status
from db.repositories.rating_tasks import TaskSpec, create_rating_task
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SentenceLabelRecord,
    SpanRecord,
)
from render.literal_text import WORD_JOINER

HOSTILE = "**bold** [x](https://evil.example/) ![p](https://evil.example/p.png)"
DATASET = f"set {HOSTILE}"
ITEM = f"id {HOSTILE}"
DETECTOR = f"det {HOSTILE}"
TASK = f"task {HOSTILE}"
ANNOTATOR = f"ann {HOSTILE}"
NOTE = f"note {HOSTILE}"


def shown(source: str) -> str:
    """The characters Markdown displays for ``source`` when it holds no construct: CommonMark resolves a
    backslash before ASCII punctuation and character references; the word joiner has no glyph."""
    text = re.sub(r"\\([" + re.escape(string.punctuation) + "])", r"\1", source)
    text = text.replace("&#32;", " ").replace("&#9;", "\t")
    return text.replace(WORD_JOINER, "")


def hostile_bundle() -> Bundle:
    response = "A red cube. The ball is blue."
    item = ItemRecord(
        external_id=ITEM,
        response=response,
        prompt=f"prompt {HOSTILE}",
        subset=f"subset {HOSTILE}",
        source_model=f"model {HOSTILE}",
    )
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                item=ITEM,
                spans=[SpanRecord(2, 5, "Color Attribute")],
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect", "Color Attribute"),
                    SentenceLabelRecord(1, "correct"),
                ],
            )
        ],
    )
    detector = LabelSetRecord(
        kind="detector",
        name=DETECTOR,
        detector_version=f"v {HOSTILE}",
        annotations=[
            Annotations(
                item=ITEM,
                spans=[SpanRecord(2, 10, "Color Attribute")],
                sentence_labels=[SentenceLabelRecord(0, "incorrect"), SentenceLabelRecord(1, "correct")],
                raw_output=RawOutputRecord(f"output {HOSTILE}", False, parse_error=f"error {HOSTILE}"),
            )
        ],
    )
    return Bundle(
        dataset=DatasetRecord(
            DATASET,
            "canonical",
            taxonomy=["Color Attribute"],
            label_kinds=["span", "sentence"],
            description=f"description {HOSTILE}",
        ),
        items=[item],
        label_sets=[gold, detector],
    )


def load_hostile(engine: Engine) -> None:
    """Import the bundle, add a rating task, and an annotator who skipped the item with a note."""
    import_bundle(engine, hostile_bundle(), source="hostile", actor=OPERATOR)
    dataset_id = next(d.id for d in list_datasets(engine) if d.name == DATASET)
    detector = next(ls for ls in list_label_sets(engine, dataset_id, kind="detector"))
    create_rating_task(
        engine, dataset_id, TaskSpec(name=TASK, detector_label_set_id=detector.id), None, actor=OPERATOR
    )
    annotator = get_or_create_annotator(engine, ANNOTATOR)
    mine = human_label_set(engine, dataset_id, annotator.id)
    item = get_item(engine, dataset_id, ITEM)
    assert item is not None
    set_item_status(engine, mine.id, item.id, "spans", "skipped", annotator.id, note=NOTE)
