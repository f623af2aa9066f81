"""Benchmark formats without a public copy here (hand-made records after their papers and cards), Tri-HE's
real file, and the canonical JSONL: read, problems reported precisely, and import → export → import."""

from __future__ import annotations

import json

import pytest

from db.access import OPERATOR
from db.export_files import export_file
from db.transfer import import_file
from formats.base import ReadOptions
from formats.canonical import FORMAT as CANONICAL
from formats.halloc import FORMAT as HALLOC
from formats.label_studio import FORMAT as LABEL_STUDIO
from formats.mhaldetect import FORMAT as MHALDETECT
from formats.mhalubench import FORMAT as MHALUBENCH
from formats.registry import best_guess
from formats.trihe import FORMAT as TRIHE
from formats.typed_tags import FORMAT as TYPED
from formats.typed_tags import parse_typed


def dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


# ------------------------------------------------------------------------------------------ M-HalDetect

MHALDETECT_RECORDS = [
    {
        "id": 11,
        "question": "Describe the image.",
        "image": "COCO_val2014_000000000042.jpg",
        "response": "A dog sleeps on a red sofa. It is probably tired. Nobody is there.",
        "annotations": [
            {"start": 0, "end": 27, "text": "A dog sleeps on a red sofa.", "label": "INACCURATE"},
            {"start": 28, "end": 49, "text": "It is probably tired.", "label": "ANALYSIS"},
            {"start": 50, "end": 66, "text": "Nobody is there.", "label": "ACCURATE"},
        ],
        "split": "val",
    }
]


def test_mhaldetect_segments_become_sentences_labels_and_spans(round_trip):
    data = dumps(MHALDETECT_RECORDS)
    assert best_guess(data, "mhal.json") is MHALDETECT
    content, exported = round_trip("mhaldetect", data)
    assert json.loads(exported) == MHALDETECT_RECORDS
    gold = content["label_sets"][("gold", "gold")]["annotations"]["11"]
    assert [(lab["label"], lab["meta"]) for lab in gold["sentence_labels"]] == [
        ("incorrect", {}),
        ("unknown", {"label": "ANALYSIS"}),
        ("correct", {}),
    ]
    assert [(s["start"], s["end"]) for s in gold["spans"]] == [(0, 27)]


@pytest.mark.parametrize(
    ("segment", "field", "reason"),
    [
        (
            {"start": 0, "end": 5, "text": "B dog", "label": "ACCURATE"},
            "annotations[0].text",
            "is not the response",
        ),
        ({"start": 0, "end": 99, "label": "ACCURATE"}, "annotations[0]", "not a span of the response"),
        ({"start": 0, "end": 5, "label": "MAYBE"}, "annotations[0].label", "is not one of"),
    ],
)
def test_mhaldetect_misplaced_segments_are_rejected(segment, field, reason):
    record = {**MHALDETECT_RECORDS[0], "annotations": [segment]}
    result = MHALDETECT.read(dumps([record]), source="m.json")
    (problem,) = result.problems
    assert (problem.record, problem.field) == ("#0 (id=11)", field) and reason in problem.reason


# ------------------------------------------------------------------------------------------- MHaluBench

MHALUBENCH_RECORDS = [
    {
        "id": 6,
        "image_path": "/TextVQA/train_images/160dee3be9ec3cbc.jpg",
        "claim_list": ["The laptop brand is Toshiba", "Toshiba was founded in 1885"],
        "ref_tool_info": "scene text: TONGFANG",
        "ref_claim_label": ["hallucination", "hallucination"],
        "ref_reason": [
            {"claim1": "hallucination", "reason": "The text says TONGFANG."},
            {"claim2": "hallucination", "reason": "Founded in 1939."},
        ],
        "ref_prompt": "Given an image…",
    },
    {
        "image_path": "coco/1.jpg",
        "prompt": "Describe the image.",
        "response": "A man holds a red kite. The sky is clear.",
        "model": "llava",
        "task_type": "image-to-text",
        "label": "hallucination",
        "segments": [
            {
                "segment": "A man holds a red kite.",
                "label": "hallucination",
                "claims": [
                    {"claim": "A man holds a kite.", "label": "non-hallucination", "type": "object"},
                    {"claim": "The kite is red.", "label": "hallucination", "type": "attribute"},
                ],
            },
            {
                "segment": "The sky is clear.",
                "label": "non-hallucination",
                "claims": [{"claim": "The sky is clear.", "label": "non-hallucination", "type": "attribute"}],
            },
        ],
    },
    {
        "image_path": "t2i/7.png",
        "prompt": "A cat wearing a hat",
        "response": "",
        "model": "sd",
        "task_type": "text-to-image",
        "label": "hallucination",
        "segments": [
            {
                "segment": "A cat wearing a hat",
                "label": "hallucination",
                "claims": [
                    {"claim": "There is a cat.", "label": "non-hallucination", "type": "object"},
                    {"claim": "The cat wears a hat.", "label": "hallucination", "type": "attribute"},
                ],
            }
        ],
    },
]


def test_mhalubench_train_and_validation_shapes_round_trip(round_trip):
    data = dumps(MHALUBENCH_RECORDS)
    assert best_guess(data, "mhalubench.json") is MHALUBENCH
    content, exported = round_trip("mhalubench", data, source="mhalubench.json")
    # Records without an id are written with the id their item was given, first.
    assert json.loads(exported) == [
        r if "id" in r else {"id": f"mhalubench-{k}", **r} for k, r in enumerate(MHALUBENCH_RECORDS)
    ]
    train, validation, t2i = content["items"]
    assert train["response"] == "The laptop brand is Toshiba\nToshiba was founded in 1885"
    assert [(c["start"], c["end"]) for c in train["claims"]] == [(0, 27), (28, 55)]
    assert [validation["response"][s["start"] : s["end"]] for s in validation["sentences"]] == [
        "A man holds a red kite.",
        "The sky is clear.",
    ]
    assert [c["segment"] for c in validation["claims"]] == [0, 0, 1]
    assert t2i["task_type"] == "text-to-image" and {c["source"] for c in t2i["claims"]} == {"prompt"}
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    assert gold["6"]["claim_labels"][1]["reason"] == "Founded in 1939."
    assert [c["type"] for c in gold["mhalubench-1"]["claim_labels"]] == ["object", "attribute", "attribute"]


def test_mhalubench_segment_without_claims_round_trips(round_trip):
    """A validation segment that holds no claim (a short answer such as "Yes.") comes back in the export
    with its text and label, where it was: the export once dropped it, leaving ``segments: []``."""
    records = [
        {
            "id": "v3",
            "image_path": "b.jpg",
            "prompt": "Is there a cat?",
            "response": "Yes. The cat is black.",
            "model": "m",
            "task_type": "VQA",
            "label": "hallucination",
            "segments": [
                {"segment": "Yes.", "label": "non-hallucination", "claims": []},
                {
                    "segment": "The cat is black.",
                    "label": "hallucination",
                    "claims": [{"claim": "The cat is black.", "label": "hallucination", "type": "attribute"}],
                },
            ],
        },
        {
            "id": "v4",
            "image_path": "c.jpg",
            "prompt": "Anything odd?",
            "response": "No.",
            "model": "m",
            "task_type": "VQA",
            "label": "non-hallucination",
            "segments": [{"segment": "No.", "label": "non-hallucination", "claims": []}],
        },
    ]
    _, exported = round_trip("mhalubench", dumps(records), source="mhalubench.json")
    assert json.loads(exported) == records


def test_mhalubench_disagreeing_segment_label_is_a_warning_and_bad_label_an_error():
    record = json.loads(json.dumps(MHALUBENCH_RECORDS[1]))
    record["segments"][1]["label"] = "hallucination"
    broken = json.loads(json.dumps(MHALUBENCH_RECORDS[1]))
    broken["segments"][0]["claims"][1]["label"] = "maybe"
    result = MHALUBENCH.read(dumps([record, broken]), source="v.json")
    assert [(p.record, p.field, p.severity) for p in result.problems] == [
        ("#0", "segments[1].label", "warning"),
        ("#1", "segments[0].claims[1].label", "error"),
    ]


# ---------------------------------------------------------------------------------------------- Tri-HE


def test_trihe_real_file_reads_and_exports_identically(engine, shared_data):
    data = (shared_data / "tri-he" / "tri-he.json").read_bytes()
    assert best_guess(data, "tri-he.json") is TRIHE
    outcome = import_file(
        engine,
        data,
        source="tri-he.json",
        options=ReadOptions(dataset="trihe"),
        image_root=str(shared_data / "tri-he" / "images"),
        actor=OPERATOR,
    )
    assert outcome.ok, outcome.errors
    assert outcome.result.items_created == 1226
    malformed = [p for p in outcome.warnings if p.field.startswith("triplets[")]
    assert [p.record for p in malformed] == ["image 70", "image 2353731", "image 2362421"]
    document = json.loads(data)
    present = sum(
        len(entry["instance"])
        for key, entry in document.items()
        if (shared_data / "tri-he" / "images" / f"{key}.jpg").is_file()
    )
    assert present > 0
    assert len([p for p in outcome.warnings if p.field == "image"]) == 1226 - present
    assert json.loads(export_file(engine, "trihe", "trihe", actor=OPERATOR)) == json.loads(data)


TRIHE_DOCUMENT = {
    "42": {
        "instance": [
            {"question": "Why is the room bright?", "answer": "A lamp is on.", "triplet": ["(lamp, is, on)"]},
            {"question": "What is on the desk?", "answer": "A laptop.", "triplet": ["(laptop, on, desk)"]},
        ],
        "triplets": ["(laptop, on, desk)", "(lamp,is,on)", "(a, b, c, d)"],
        "all_object": ["lamp", "laptop", "desk"],
        "object": ["lamp", "laptop"],
    }
}


def test_trihe_round_trip_keeps_odd_triplet_strings(round_trip):
    content, exported = round_trip("trihe", dumps(TRIHE_DOCUMENT), source="tri.json")
    assert json.loads(exported) == TRIHE_DOCUMENT
    first = content["items"][0]
    assert first["external_id"] == "42/0" and first["image_ref"] == "42.jpg"
    assert [(t["subject"], t["relation"], t["object"]) for t in first["reference_triplets"]] == [
        ("laptop", "on", "desk"),
        ("lamp", "is", "on"),
    ]


# ---------------------------------------------------------------------------------------------- HalLoc

HALLOC_RECORDS = [
    {
        "id": "instruct_53",
        "split": "train",
        "prompt": "<image> Where is the man relative to the refrigerator?",
        "source_text": "The man is to the right of the refrigerator.",
        "hallucinated_text": "The man is to the left of the refrigerator.",
        "image_id": 2336351,
        "source_metadata": {"id": "00142745", "source": "GQA"},
        "annotations": {
            "object": [],
            "attribute": [],
            "relationship": [
                {
                    "subject": {"name": "man", "word_index": "1", "char_index": "4:7"},
                    "predicate": {
                        "name": "left",
                        "word_index": "5",
                        "char_index": "18:22",
                        "category": "preposition",
                    },
                    "object": {"name": "refrigerator", "word_index": "8", "char_index": "30:42"},
                }
            ],
            "scene": [],
        },
    },
    {
        "id": "vqa_1",
        "split": "train",
        "prompt": "<image> Which place is it?",
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
]


def test_halloc_parts_become_typed_spans_and_round_trip(round_trip):
    data = dumps(HALLOC_RECORDS)
    assert best_guess(data, "halloc_instruct.json") is HALLOC
    content, exported = round_trip("halloc", data, source="halloc_instruct.json")
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    text = HALLOC_RECORDS[0]["hallucinated_text"]
    assert [(text[s["start"] : s["end"]], s["type"], s["note"]) for s in gold["instruct_53"]["spans"]] == [
        ("man", "relationship", "subject#0"),
        ("left", "relationship", "predicate#0"),
        ("refrigerator", "relationship", "object#0"),
    ]
    assert [(s["start"], s["end"], s["type"]) for s in gold["vqa_1"]["spans"]] == [(0, 6, "scene")]
    written = json.loads(exported)
    assert written[0]["annotations"]["relationship"][0]["predicate"] == {
        "name": "left",
        "word_index": "5",
        "category": "preposition",
        "char_index": "18:22",
    }
    assert written[0]["image_id"] == 2336351 and written[1]["image_id"] == "2367212"
    assert content["items"][0]["subset"] == "instruct"


def test_halloc_misplaced_parts_are_reported():
    record = json.loads(json.dumps(HALLOC_RECORDS[0]))
    record["annotations"]["relationship"][0]["predicate"]["char_index"] = "4:8"
    record["annotations"]["relationship"][0]["predicate"].pop("word_index")
    result = HALLOC.read(dumps([record]), source="h.json")
    (problem,) = result.problems
    assert problem.field == "annotations.relationship[0].predicate.char_index"
    assert "not 'left'" in problem.reason


# ----------------------------------------------------------------------------------------- typed tags


def test_typed_tags_parse_and_round_trip(round_trip):
    records = [
        {
            "id": "a",
            "prompt": "How many cats?",
            "tagged": "There are <number>three</number> cats on a <Color_Attribute>red</Color_Attribute> mat.",
        },
        {"id": "b", "tagged": "No <hallucination>bird</hallucination> here; 2 < 3."},
    ]
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    assert best_guess(data, "t.jsonl") is TYPED
    content, exported = round_trip("typed-tags", data, source="t.jsonl")
    assert [json.loads(line) for line in exported.splitlines()] == records
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    assert [(s["start"], s["end"], s["type"]) for s in gold["a"]["spans"]] == [
        (10, 15, "number"),
        (26, 29, "Color_Attribute"),
    ]
    assert [s["type"] for s in gold["b"]["spans"]] == [None]


def test_typed_tags_keep_types_no_tag_name_can_hold(engine, round_trip):
    """A type with a space was written as a tag with an underscore and read back so: 'Color Attribute'
    came back 'Color_Attribute', a second type beside the first. A type that cannot start a tag name was
    written untyped."""
    from db.importer import import_bundle
    from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord

    text = "A red cube, a big ball and a blue bird."
    types = ["Color Attribute", "Color_Attribute", "3D shape", "hallucination", None]
    places = [(2, 5), (14, 17), (18, 22), (29, 33), (34, 38)]
    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[
            Annotations("a", [SpanRecord(s, e, t) for (s, e), t in zip(places, types, strict=True)])
        ],
    )
    dataset = DatasetRecord("src", "canonical", label_kinds=["span"])
    import_bundle(engine, Bundle(dataset, [ItemRecord("a", text)], [gold]), actor=OPERATOR)
    exported = export_file(engine, "src", "typed-tags", actor=OPERATOR)
    (record,) = [json.loads(line) for line in exported.splitlines()]
    assert record["tagged"] == (
        "A <Color_Attribute.2>red</Color_Attribute.2> cube, a <Color_Attribute>big</Color_Attribute> "
        "<t_3D_shape>ball</t_3D_shape> and a <hallucination.2>blue</hallucination.2> "
        "<hallucination>bird</hallucination>."
    )
    assert record["tag_types"] == {
        "Color_Attribute.2": "Color Attribute",
        "t_3D_shape": "3D shape",
        "hallucination.2": "hallucination",
    }
    content, _ = round_trip("typed-tags", exported, source="t.jsonl")
    spans = content["label_sets"][("gold", "gold")]["annotations"]["a"]["spans"]
    assert [(s["start"], s["end"], s["type"]) for s in spans] == [
        (s, e, t) for (s, e), t in zip(places, types, strict=True)
    ]


def test_typed_tags_refuse_tag_types_that_are_not_names_of_types():
    record = {"id": "a", "tagged": "A <x>red</x> cube.", "tag_types": {"x": 3}}
    result = TYPED.read(dumps([record]), source="t.json")
    assert [(p.record, p.field) for p in result.errors] == [("#0 (id=a)", "tag_types")]


@pytest.mark.parametrize(
    ("tagged", "reason"),
    [
        ("a <x>b <y>c</y></x>", "opens inside <x>"),
        ("a <x>b</y>", "closes <x>"),
        ("a </x>", "closes nothing"),
        ("a <x>b", "never closed"),
    ],
)
def test_typed_tags_broken(tagged, reason):
    with pytest.raises(ValueError, match=reason):
        parse_typed(tagged)


# -------------------------------------------------------------------------------------- Label Studio

LS_TASKS = [
    {
        "id": 1,
        "data": {"text": "A 🐱 sits on a red mat.", "image": "/data/upload/cat.jpg", "prompt": "Describe."},
        "annotations": [
            {
                "completed_by": {"email": "ann@example.org"},
                "result": [
                    {
                        "from_name": "label",
                        "to_name": "text",
                        "type": "labels",
                        "value": {"start": 14, "end": 17, "text": "red", "labels": ["Color Attribute"]},
                    }
                ],
            },
            {
                "ground_truth": True,
                "completed_by": 3,
                "result": [
                    {
                        "type": "labels",
                        "value": {"start": 15, "end": 18, "text": "red", "labels": ["Hallucination"]},
                    },
                    {"type": "choices", "value": {"choices": ["bad"]}},
                ],
            },
        ],
        "predictions": [
            {
                "model_version": "det-v1",
                "result": [{"type": "labels", "value": {"start": 2, "end": 3, "labels": ["Object"]}}],
            }
        ],
    }
]


def test_label_studio_reads_annotators_gold_and_predictions_and_utf16_offsets():
    result = LABEL_STUDIO.read(dumps(LS_TASKS), source="ls.json")
    assert [(p.field, p.severity) for p in result.problems] == [
        ("annotations[1].result[0]", "warning"),
        ("annotations[1].result[1]", "warning"),
    ]
    sets = {(ls.kind, ls.name): ls.annotations[0].spans for ls in result.bundle.label_sets}
    text = LS_TASKS[0]["data"]["text"]
    assert [(text[s.start : s.end], s.type) for s in sets[("human", "ann@example.org")]] == [
        ("red", "Color Attribute")
    ]
    assert [(text[s.start : s.end], s.type) for s in sets[("gold", "gold")]] == [("red", None)]
    assert [(text[s.start : s.end], s.type) for s in sets[("detector", "det-v1")]] == [("🐱", "Object")]


def test_label_studio_round_trip(round_trip):
    content, exported = round_trip("label-studio", dumps(LS_TASKS), source="ls.json")
    assert set(content["label_sets"]) == {
        ("human", "ann@example.org"),
        ("gold", "gold"),
        ("detector", "det-v1"),
    }
    task = json.loads(exported)[0]
    assert task["data"]["external_id"] == "1" and task["predictions"][0]["model_version"] == "det-v1"
    # Label Studio's user ids, each with the name it is read back by.
    assert [a["completed_by"] for a in task["annotations"]] == [
        {"id": 1, "email": "ann@example.org"},
        {"id": 2, "email": "gold"},
    ]


def test_label_studio_keeps_the_items_reference_split_and_task_type(engine):
    """An item's reference answer (MMHal's standard answer, MHALO's correct one), split and task type
    were not written: read back, the item had none."""
    from db.importer import import_bundle
    from formats.records import Bundle, DatasetRecord, ItemRecord

    items = [
        ItemRecord("a", "A red cube.", reference="A blue cube.", split="test", subset="s", source_model="m"),
        ItemRecord("b", "Two cats.", task_type="text-to-image", reference=""),
    ]
    import_bundle(engine, Bundle(DatasetRecord("src", "canonical"), items), actor=OPERATOR)
    exported = export_file(engine, "src", "label-studio", actor=OPERATOR)
    assert json.loads(exported)[0]["data"]["reference"] == "A blue cube."
    back = import_file(
        engine,
        exported,
        source="ls.json",
        format_name="label-studio",
        options=ReadOptions(dataset="copy"),
        actor=OPERATOR,
    )
    assert back.ok, back.summary()
    from tests.formats.conftest import comparable

    fields = ("reference", "split", "subset", "source_model", "task_type")
    assert [[i[k] for k in fields] for i in comparable(engine, "copy")["items"]] == [
        ["A blue cube.", "test", "s", "m", "image-to-text"],
        ["", None, None, None, "text-to-image"],
    ]


def test_label_studio_data_fields_of_another_shape_stay_data():
    task = {"data": {"text": "A cat.", "split": 3, "reference": "A dog."}, "annotations": []}
    (item,) = LABEL_STUDIO.read(dumps([task]), source="ls.json").bundle.items
    assert (item.reference, item.split, item.meta["data"]) == ("A dog.", None, {"split": 3})


def test_label_studio_completed_by_is_a_user_id_that_reads_back_as_its_annotator(round_trip):
    """completed_by was written as the annotator's name, where Label Studio takes a user id."""
    text = "A red cube."
    tasks = [
        {
            "data": {"text": text},
            "annotations": [
                {"completed_by": who, "result": [{"type": "labels", "value": {"start": 2, "end": 5}}]}
                for who in (10, {"email": "ann@example.org"}, {"id": 4, "username": "bob"}, "1")
            ],
        }
    ]
    content, exported = round_trip("label-studio", dumps(tasks), source="ls.json")
    assert set(content["label_sets"]) == {("human", n) for n in ("10", "ann@example.org", "bob", "1")}
    written = [a["completed_by"] for a in json.loads(exported)[0]["annotations"]]
    # A name that is an id stays that id; the others get ids of their own, beside their names (as the
    # e-mail address, which Label Studio finds its users by).
    assert sorted(w if isinstance(w, int) else w["id"] for w in written) == [1, 2, 3, 10]
    assert [w for w in written if isinstance(w, int)] == [10, 1]
    assert sorted(w["email"] for w in written if isinstance(w, dict)) == ["ann@example.org", "bob"]


def test_label_studio_drafts_and_skips_are_where_annotators_stand():
    red = [{"type": "labels", "value": {"start": 2, "end": 5, "labels": ["Color"]}}]
    task = {
        "data": {"text": "A red cube."},
        "annotations": [
            {"completed_by": {"id": 7, "email": "ann@example.org"}, "result": red},
            {"completed_by": 8, "was_cancelled": True, "result": []},
            {"ground_truth": True, "was_cancelled": True, "result": red},
        ],
        "drafts": [
            {"user": "ann@example.org", "result": []},
            {"user": "bob@example.org", "was_postponed": True, "result": red},
            {"user": "cy@example.org", "result": red},
        ],
    }
    result = LABEL_STUDIO.read(dumps([task]), source="ls.json")
    assert [(p.field, p.reason) for p in result.problems] == [
        ("annotations[2]", "a cancelled gold annotation; skipped"),
        ("drafts[0]", "a draft beside the annotation of the same annotator; skipped"),
    ]
    stands = {
        ls.name: (
            [(s.start, s.end) for s in ls.annotations[0].spans],
            [s.status for s in ls.annotations[0].statuses],
        )
        for ls in result.bundle.label_sets
    }
    assert stands == {
        "ann@example.org": ([(2, 5)], ["done"]),
        "8": ([], ["skipped"]),
        "bob@example.org": ([(2, 5)], ["unsure"]),
        "cy@example.org": ([(2, 5)], []),
    }


def test_a_label_studio_file_written_by_an_earlier_version_says_nothing_of_done():
    """The earlier writer put every person's spans in an annotation, done or not, with completed_by their
    bare name: read as "done", such a file marked an annotator's unfinished items finished on import."""
    red = [{"type": "labels", "value": {"start": 2, "end": 5, "labels": ["Color"]}}]
    task = {
        "data": {"text": "A red cube."},
        "annotations": [
            {"completed_by": "alice", "result": red},
            {"completed_by": "17", "result": red},  # a Label Studio user id written as text
        ],
    }
    result = LABEL_STUDIO.read(dumps([task]), source="ls.json")
    stands = {
        ls.name: (
            [(s.start, s.end) for s in ls.annotations[0].spans],
            [s.status for s in ls.annotations[0].statuses],
        )
        for ls in result.bundle.label_sets
    }
    assert stands == {"alice": ([(2, 5)], []), "17": ([(2, 5)], ["done"])}


def test_label_studio_misplaced_span_is_rejected():
    task = json.loads(json.dumps(LS_TASKS[0]))
    task["annotations"][0]["result"][0]["value"]["text"] = "blue"
    result = LABEL_STUDIO.read(dumps([task]), source="ls.json")
    assert [p.field for p in result.errors] == ["annotations[0].result[0].value"]


# ------------------------------------------------------------------------------------------- canonical


def test_canonical_is_lossless_including_ratings_and_detector_outputs(engine, round_trip):
    from db.importer import import_bundle
    from formats.records import (
        Annotations,
        Bundle,
        ClaimLabelRecord,
        ClaimRecord,
        DatasetRecord,
        ItemRecord,
        LabelSetRecord,
        RatingRecord,
        RatingTaskRecord,
        RawOutputRecord,
        SentenceLabelRecord,
        SentenceRecord,
        SentenceScoreRecord,
        SpanRecord,
        TokenProbabilityRecord,
        TripletRecord,
    )

    text = "A red 🐱 cube. It sits <b>left</b> of a ball."
    bundle = Bundle(
        DatasetRecord("src", "canonical", taxonomy=["Object"], label_kinds=["span"], description="d"),
        [
            ItemRecord(
                "x",
                text,
                prompt="p",
                subset="s",
                split="test",
                source_model="m",
                reference="ref",
                image_ref="x.png",
                meta={"k": [1, {"z": None}]},
                sentences=[SentenceRecord(0, 13), SentenceRecord(14, len(text))],
                claims=[ClaimRecord("The cube is red.", 2, 5, 0, "A red cube.")],
                reference_triplets=[TripletRecord("cube", "left of", "ball")],
            )
        ],
        [
            LabelSetRecord(
                "gold",
                "gold",
                annotations=[
                    Annotations(
                        "x",
                        spans=[SpanRecord(2, 5, "Object", "note")],
                        sentence_labels=[SentenceLabelRecord(0, "incorrect", "Object", True, {"v": 1})],
                        claim_labels=[ClaimLabelRecord(0, "hallucination", "attribute", "why")],
                        triplets=[TripletRecord("cube", "left of", "ball", "no", "relation")],
                    )
                ],
            ),
            LabelSetRecord(
                "detector",
                "det",
                detector_version="1.2",
                prompt_strategy="analyze-then-judge",
                meta={"temperature": 0},
                annotations=[
                    Annotations(
                        "x",
                        spans=[SpanRecord(0, 5)],
                        raw_output=RawOutputRecord(
                            "<Tagged_Text>raw</Tagged_Text>", False, "because", "differs"
                        ),
                        sentence_scores=[SentenceScoreRecord(0, 12.5), SentenceScoreRecord(1, 50, False)],
                        token_probabilities=[TokenProbabilityRecord(0, 0, 1, 0.25, "object")],
                    )
                ],
            ),
            LabelSetRecord(
                "human", "ann", annotator="ann", annotations=[Annotations("x", spans=[SpanRecord(6, 7)])]
            ),
        ],
        [
            RatingTaskRecord(
                "rate",
                "det",
                rubric={"1": "bad"},
                ratings=[
                    RatingRecord("x", "rater", 3.0, 0, 5),
                    RatingRecord("x", "rater", None, -1, -1, True),
                ],
            )
        ],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    exported = export_file(engine, "src", "canonical", actor=OPERATOR)
    assert best_guess(exported, "x.jsonl") is CANONICAL
    content, again = round_trip("canonical", exported, source="x.jsonl")
    assert again.split(b"\n")[1:] == exported.split(b"\n")[1:]
    assert content["rating_tasks"][0]["ratings"][1]["nothing_flagged_correct"] is True
    assert content["items"][0]["meta"] == {"k": [1, {"z": None}]}


@pytest.mark.parametrize(
    ("lines", "record", "field", "reason"),
    [
        (
            ['{"record": "item", "external_id": "x"}'],
            "line 1",
            "record",
            "the first line must be the dataset",
        ),
        (
            ['{"record": "dataset", "format_version": 99, "name": "d", "source_format": "c"}'],
            "line 1",
            "format_version",
            "not a version",
        ),
        (
            [
                '{"record": "dataset", "format_version": 1, "name": "d", "source_format": "c"}',
                '{"record": "item", "external_id": "x", "response": 5}',
            ],
            "line 2",
            "response",
            "expected text",
        ),
        (
            [
                '{"record": "dataset", "format_version": 1, "name": "d", "source_format": "c"}',
                '{"record": "item", "external_id": "x", "response": "r", "colour": 1}',
            ],
            "line 2",
            "colour",
            "unknown field",
        ),
        (
            [
                '{"record": "dataset", "format_version": 1, "name": "d", "source_format": "c"}',
                '{"record": "annotations", "label_set": {"kind": "gold", "name": "g"}, "item": "x"}',
            ],
            "line 2",
            "label_set",
            "names no label set",
        ),
    ],
)
def test_canonical_strictness(lines, record, field, reason):
    result = CANONICAL.read("\n".join(lines).encode(), source="c.jsonl")
    problem = result.problems[0]
    assert (problem.record, problem.field) == (record, field) and reason in problem.reason
