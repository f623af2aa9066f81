"""RAGTruth-style span JSONL (hand-made records of its response.jsonl shape): typed spans checked against
the response, text-only items, implicit_true labels kept out of the spans, and import → export → import
identical (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest

from formats.ragtruth import FORMAT as RAGTRUTH
from formats.ragtruth import written_labels
from formats.records import SpanRecord
from formats.registry import best_guess

RESPONSE = "The museum opened in 1902 and holds 4,000 paintings. Entry is free on Sundays."
RECORDS = [
    {
        "id": "17",
        "source_id": "901",
        "model": "some-7b-chat",
        "temperature": 0.7,
        "labels": [
            {
                "start": 21,
                "end": 25,
                "text": "1902",
                "meta": "The passage says 1920.",
                "label_type": "Evident Conflict",
                "due_to_null": False,
            },
            {
                "start": 53,
                "end": 78,
                "text": "Entry is free on Sundays.",
                "meta": "Not in the passage.",
                "label_type": "Evident Baseless Info",
                "implicit_true": False,
            },
            {
                "start": 36,
                "end": 41,
                "text": "4,000",
                "meta": "",
                "label_type": "Subtle Baseless Info",
                "implicit_true": True,
            },
        ],
        "split": "test",
        "quality": "good",
        "response": RESPONSE,
        "task_type": "QA",
        "prompt": "When did the museum open?",
    },
    {
        "id": "18",
        "model": "other-13b",
        "labels": [],
        "split": "train",
        "quality": "truncated",
        "response": "Unable to answer.",
    },
]


def jsonl(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def lines(exported: bytes) -> list[dict]:
    return [json.loads(line) for line in exported.decode().splitlines()]


def test_typed_spans_and_text_only_items_round_trip(round_trip):
    data = jsonl(RECORDS)
    assert best_guess(data, "response.jsonl") is RAGTRUTH
    content, exported = round_trip("ragtruth", data, source="response.jsonl")
    assert lines(exported) == RECORDS
    first, second = content["items"]
    assert (first["subset"], first["split"], first["source_model"]) == ("QA", "test", "some-7b-chat")
    assert first["prompt"] == "When did the museum open?" and first["image_ref"] is None
    assert first["task_type"] == "text-to-text" and second["subset"] is None
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    spans = [(RESPONSE[s["start"] : s["end"]], s["type"], s["note"]) for s in gold["17"]["spans"]]
    assert spans == [
        ("1902", "Evident Conflict", "The passage says 1920."),
        ("Entry is free on Sundays.", "Evident Baseless Info", "Not in the passage."),
    ]  # the implicit_true label is no hallucination
    assert gold.get("18", {"spans": []})["spans"] == []


def test_the_taxonomy_is_ragtruths_then_the_files_own():
    other = {
        **RECORDS[1],
        "id": "19",
        "response": "Paris.",
        "labels": [{"start": 0, "end": 5, "label_type": "Made Up"}],
    }
    result = RAGTRUTH.read(jsonl([RECORDS[0], other]), source="r.jsonl")
    assert result.bundle.dataset.taxonomy == [
        "Evident Conflict",
        "Subtle Conflict",
        "Evident Baseless Info",
        "Subtle Baseless Info",
        "Made Up",
    ]
    (warning,) = result.problems
    assert (warning.record, warning.field, warning.severity) == ("#0 (id=17)", "labels", "warning")
    assert "implicit_true" in warning.reason


@pytest.mark.parametrize(
    ("label", "field", "reason"),
    [
        (
            {"start": 22, "end": 26, "text": "1902"},
            "labels[0].text",
            "'1902' is not the response's text at 22-26: '902 '",
        ),
        (
            {"start": 70, "end": 90, "text": "x"},
            "labels[0]",
            "offsets (start 70, end 90) are not a span of the response, which is 78 characters long",
        ),
        ({"start": 5, "end": 5}, "labels[0]", "not a span"),
        ({"start": "21", "end": 25}, "labels[0].start", "expected an integer"),
        ({"start": 21, "end": 25, "label_type": 3}, "label_type", "expected text"),
        ("21-25", "labels[0]", "expected an object"),
    ],
)
def test_misplaced_labels_reject_their_record_naming_the_field(label, field, reason):
    record = {**RECORDS[0], "labels": [label]}
    result = RAGTRUTH.read(jsonl([RECORDS[1], record]), source="r.jsonl")
    (problem,) = result.problems
    assert (problem.record, problem.field) == ("#1 (id=17)", field)
    assert reason in problem.reason, problem.reason
    assert [i.external_id for i in result.bundle.items] == ["18"]


def test_a_record_without_labels_or_response_is_rejected():
    result = RAGTRUTH.read(jsonl([{"id": "a", "response": "x"}, {"id": "b", "labels": []}]), source="r.jsonl")
    assert [(p.record, p.field, p.reason) for p in result.problems] == [
        ("#0 (id=a)", "labels", "missing"),
        ("#1 (id=b)", "response", "missing"),
    ]


def test_spans_edited_since_the_import_are_written_with_the_labels_kept():
    """A label whose span is still stored is written as it came (with the span's note now), an implicit_true
    label stays, a deleted span's label goes, and a span added since is appended."""
    result = RAGTRUTH.read(jsonl(RECORDS[:1]), source="r.jsonl")
    (item,) = result.bundle.items
    (gold,) = result.bundle.label_sets[0].annotations
    conflict, _baseless = gold.spans
    now = [
        SpanRecord(conflict.start, conflict.end, conflict.type, "Checked twice."),
        SpanRecord(36, 41, "Subtle Conflict"),
    ]
    assert written_labels(item, now) == [
        {**RECORDS[0]["labels"][0], "meta": "Checked twice."},
        RECORDS[0]["labels"][2],
        {"start": 36, "end": 41, "text": "4,000", "meta": None, "label_type": "Subtle Conflict"},
    ]


def test_an_item_from_another_format_keeps_its_model_split_subset_and_image():
    """Written in RAGTruth, a dataset read from MHALO or canonical lost them: the file held id, prompt,
    response and labels only, and read back every item as text-only, of no model."""
    from formats.records import Bundle, DatasetRecord, ItemRecord
    from formats.registry import get_format

    fmt = get_format("ragtruth")
    item = ItemRecord(
        "x1",
        "A red cube.",
        prompt="Describe.",
        source_model="llava",
        split="test",
        subset="captions",
        image_ref="img/1.png",
    )
    data = fmt.write(Bundle(DatasetRecord("d", "canonical"), items=[item]))
    back = fmt.read(data, source="d.jsonl").bundle
    assert back is not None
    (read,) = back.items
    assert (read.source_model, read.split, read.subset, read.image_ref) == (
        "llava",
        "test",
        "captions",
        "img/1.png",
    )
