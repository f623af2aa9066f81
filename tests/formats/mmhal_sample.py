"""A hand-made file in MMHal-Bench's shape (made up for the tests, not taken from the benchmark)."""

from __future__ import annotations

import copy
import json
from typing import Any

RECORDS: list[dict[str, Any]] = [
    {
        "question_type": "attribute",
        "question_topic": "animal",
        "image_id": "a1b2",
        "image_src": "https://images.example.org/photos/a1b2_o.jpg",
        "image_content": ["Cat", "Sofa"],
        "question": "What color is the cat?",
        "gt_answer": "The cat is black.",
        "model_answer": "The cat is white with brown spots.",
        "rating": 1,
        "hallucination": True,
        "judge": "gpt-4",
    },
    {
        "question_type": "counting",
        "question_topic": "animal",
        "image_id": "c3d4",
        "image_src": "https://images.example.org/photos/c3d4_o.jpg",
        "image_content": ["Dog"],
        "question": "How many dogs are there?",
        "gt_answer": "Two dogs.",
        "model_answer": "There are two dogs on the grass.",
        "gpt4_review": "The answer matches the image.\nHallucination: no\nRating: 5",
        "judge": "gpt-4",
    },
    {
        "question_type": "attribute",
        "question_topic": "vehicle",
        "image_id": "e5f6",
        "image_src": "https://images.example.org/photos/e5f6_o.jpg",
        "image_content": ["Car", "Road"],
        "question": "What is <b>written</b> on the car?",
        "gt_answer": "Nothing is written on the car.",
        "model_answer": "The car says **TAXI** <script>x()</script>.",
        "rating": 2,
        "judge": "gpt-4",
    },
    {
        "question_type": "counting",
        "question_topic": "people",
        "image_id": "g7h8",
        "image_src": "https://images.example.org/photos/g7h8_o.jpg",
        "image_content": ["Person"],
        "question": "How many people are in the photo?",
        "gt_answer": "Three people.",
        "model_answer": "I cannot tell.",
    },
]
IDS = ["000-a1b2", "001-c3d4", "002-e5f6", "003-g7h8"]


def records(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """The sample with ``changes[f"r{k}"]`` merged into record ``k`` (a value of None removes a field)."""
    found = copy.deepcopy(RECORDS)
    for name, fields in changes.items():
        record = found[int(name[1:])]
        for key, value in fields.items():
            if value is None:
                record.pop(key, None)
            else:
                record[key] = value
    return found


def sample_bytes(**changes: dict[str, Any]) -> bytes:
    return json.dumps(records(**changes), indent=2).encode("utf-8")
