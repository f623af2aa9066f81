"""Mapped import: any table read by a field mapping, one gold shape at a time, in every encoding (CSV, a
JSON array, JSON lines, Parquet written here with pyarrow, a folder of Parquet shards).

The fixtures are hand-written so each test can say exactly which spans, labels and problems must come out.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from formats.alignbench import FORMAT as ALIGNBENCH
from formats.base import ReadOptions, ReadResult
from formats.dataset_folders import open_dataset_folder
from formats.field_paths import MISSING, value_at
from formats.mapping import SETTINGS_KEY, ImportMapping, MappingError, open_file, preview_table, read_table
from formats.records import ResponseScoreRecord
from formats.registry import best_guess
from formats.tables import columns_of, head_records, split_of

# ----------------------------------------------------------------------------------------- fixtures


def jsonl(records: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def csv_bytes(rows: list[dict[str, Any]]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in row.items()})
    return out.getvalue().encode()


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def mapping(fields: dict[str, str], gold: dict[str, Any] | None = None) -> ImportMapping:
    value: dict[str, Any] = {"version": 1, "fields": fields}
    if gold is not None:
        value["gold"] = gold
    return ImportMapping.from_dict(value)


def read(data: bytes, name: str, the_mapping: ImportMapping | None, **options: Any) -> ReadResult:
    fmt, result = read_table(open_file(data, name), the_mapping, ReadOptions(**options))
    assert fmt == ("mapped" if the_mapping is not None else fmt)
    return result


def errors(result: ReadResult) -> list[str]:
    return [f"{p.file}|{p.record}|{p.field}|{p.reason}" for p in result.errors]


def gold_of(result: ReadResult) -> dict[str, Any]:
    assert result.bundle is not None
    (gold,) = result.bundle.label_sets
    return {a.item: a for a in gold.annotations}


def spans_of(result: ReadResult) -> dict[str, list[tuple[int, int, str | None]]]:
    return {ext: [(s.start, s.end, s.type) for s in a.spans] for ext, a in gold_of(result).items()}


# ---------------------------------------------------------------------------------------------- spec


def test_mapping_round_trips_as_json_and_names_every_flaw() -> None:
    spec = mapping(
        {"id": "qid", "response": "answer.text"},
        {"shape": "offsets", "field": "spans", "values": {"ACCURATE": None}, "locate_by_text": True},
    )
    again = ImportMapping.from_json(spec.to_json())
    assert again == spec and again.to_dict()["gold"]["values"] == {"ACCURATE": None}
    with pytest.raises(MappingError) as refused:
        ImportMapping.from_dict(
            {
                "version": 2,
                "fields": {"answer": "x", "prompt": ""},
                "gold": {"shape": "sentence_labels", "tag": "b", "values": {"0": "wrong"}},
                "extra": 1,
            }
        )
    where = [w for w, _ in refused.value.problems]
    assert where == [
        "extra",
        "version",
        "fields.answer",
        "fields.prompt",
        "gold.tag",
        "gold.field",
        "gold.values.0",
    ]
    assert "'wrong' is not one of correct, incorrect, unknown" in str(refused.value)
    with pytest.raises(MappingError, match="gold.scale"):
        mapping({"response": "r"}, {"shape": "response_score", "field": "s", "scale": [5, 1]})
    with pytest.raises(MappingError, match="fields.response: missing"):
        mapping({"id": "i"}, {"shape": "offsets", "field": "spans"})
    with pytest.raises(MappingError, match="not valid JSON"):
        ImportMapping.from_json(b"{nope")


def test_dotted_paths_reach_into_objects_lists_and_json_text() -> None:
    record = {"a.b": 1, "meta": {"answer": "x", "spans": [{"start": 3}]}, "cell": '{"k": [5, 6]}'}
    assert value_at(record, "a.b") == 1
    assert value_at(record, "meta.answer") == "x"
    assert value_at(record, "meta.spans.0.start") == 3
    assert value_at(record, "cell.k.1") == 6
    assert value_at(record, "meta.nothing") is MISSING and value_at(record, "meta.spans.4") is MISSING


# -------------------------------------------------------------------------------------------- offsets


OFFSET_RECORDS = [
    {
        "qid": 1,
        "question": {"text": "What is shown?"},
        "answer": "A red cube and two <b>balls</b>.",
        "image": {"bytes": None, "path": "img/1.jpg"},
        "spans": [
            {"start": 2, "end": 5, "text": "red", "kind": "Color"},
            {"start": 15, "end": 18, "text": "two", "kind": "ACCURATE"},
        ],
        "extra": {"source": "x"},
    },
    {"qid": 2, "question": {"text": "Count."}, "answer": "No spans here.", "image": None, "spans": []},
]
OFFSETS = {
    "fields": {"id": "qid", "prompt": "question.text", "response": "answer", "image": "image"},
    "gold": {
        "shape": "offsets",
        "field": "spans",
        "keys": {"label": "kind"},
        "values": {"Color": "Color Attribute", "ACCURATE": None},
    },
}


def test_offsets_from_json_lines_with_nested_fields_and_a_value_mapping() -> None:
    result = read(jsonl(OFFSET_RECORDS), "spans.jsonl", ImportMapping.from_dict({"version": 1, **OFFSETS}))
    assert errors(result) == []
    assert result.bundle is not None
    first, second = result.bundle.items
    assert (first.external_id, first.prompt, first.image_ref) == ("1", "What is shown?", "img/1.jpg")
    assert first.meta["fields"] == {"extra": {"source": "x"}}
    assert second.image_ref is None
    # ACCURATE maps to null: not a span.
    assert spans_of(result) == {"1": [(2, 5, "Color Attribute")], "2": []}
    assert result.bundle.dataset.label_kinds == ["span"]
    assert result.bundle.dataset.taxonomy == ["Color Attribute"]
    assert result.bundle.dataset_settings[SETTINGS_KEY]["gold"]["keys"] == {"label": "kind"}


def test_offsets_as_parallel_lists_in_a_csv() -> None:
    rows = [
        {
            "id": "a",
            "text": "Two cats sit.",
            "starts": [0, 9],
            "ends": [3, 12],
            "labels": ["Number", "Action"],
        },
        {"id": "b", "text": "A dog.", "starts": [], "ends": [], "labels": []},
    ]
    spec = mapping(
        {"id": "id", "response": "text"},
        {"shape": "offsets", "starts": "starts", "ends": "ends", "labels": "labels"},
    )
    result = read(csv_bytes(rows), "parallel.csv", spec)
    assert errors(result) == []
    assert spans_of(result) == {"a": [(0, 3, "Number"), (9, 12, "Action")], "b": []}
    bad = [{**rows[0], "ends": [3]}]
    assert errors(read(csv_bytes(bad), "parallel.csv", spec)) == [
        "parallel.csv|#0 (id=a)|ends|1 ends for 2 starts"
    ]


def test_an_offset_mismatch_is_a_clear_record_error_and_locate_by_text_places_it() -> None:
    records = [
        {"id": "ok", "response": "A red cube.", "spans": [{"start": 2, "end": 5, "text": "red"}]},
        # Offsets counted in bytes of a UTF-8 text: one character off after the emoji.
        {"id": "shifted", "response": "🐱 A red cube.", "spans": [{"start": 5, "end": 8, "text": "red"}]},
        {"id": "absent", "response": "A blue cube.", "spans": [{"start": 2, "end": 5, "text": "red"}]},
    ]
    strict = mapping({"id": "id", "response": "response"}, {"shape": "offsets", "field": "spans"})
    result = read(jsonl(records), "off.jsonl", strict)
    assert errors(result) == [
        "off.jsonl|#1 (id=shifted)|spans[0].text|'red' is not the response text at 5-8: 'ed ' "
        "(choose “locate by text” to place spans where their text is)",
        "off.jsonl|#2 (id=absent)|spans[0].text|'red' is not the response text at 2-5: 'blu' "
        "(choose “locate by text” to place spans where their text is)",
    ]
    assert spans_of(result) == {"ok": [(2, 5, None)]}
    located = mapping(
        {"id": "id", "response": "response"}, {"shape": "offsets", "field": "spans", "locate_by_text": True}
    )
    result = read(jsonl(records), "off.jsonl", located)
    assert errors(result) == ["off.jsonl|#2 (id=absent)|spans[0].text|'red' does not occur in the response"]
    assert spans_of(result) == {"ok": [(2, 5, None)], "shifted": [(4, 7, None)]}
    (warning,) = [p for p in result.problems if p.severity == "warning"]
    assert (warning.record, warning.field) == ("#1 (id=shifted)", "spans")
    assert "spans[0] to 4-7 (offsets 5-8)" in warning.reason


def test_offsets_outside_the_response_and_missing_fields_are_reported() -> None:
    records = [
        {"id": "far", "response": "Short.", "spans": [{"start": 2, "end": 50}]},
        {"id": "nothing"},
    ]
    spec = mapping({"id": "id", "response": "response"}, {"shape": "offsets", "field": "spans"})
    assert errors(read(jsonl(records), "x.jsonl", spec)) == [
        "x.jsonl|#0 (id=far)|spans[0]|offsets (start 2, end 50) are not a span of the response, "
        "which is 6 characters long",
        "x.jsonl|#1 (id=nothing)|response|missing",
    ]


def test_a_mapped_field_no_record_has_is_a_file_error() -> None:
    spec = mapping({"id": "id", "response": "response", "prompt": "questoin"})
    result = read(jsonl([{"id": 1, "response": "A.", "question": "Q?"}]), "typo.jsonl", spec)
    assert errors(result) == ["typo.jsonl|-|questoin|mapped as prompt, but no record has this field"]


# ---------------------------------------------------------------------------------------- inline tags


def test_inline_tags_from_a_json_array_one_tag_or_typed() -> None:
    records = [
        {"id": "a", "tagged": "A <hallucination>red</hallucination> cube <b>bold</b>.", "plain": None},
        {"id": "b", "tagged": "<hallucination>Two</hallucination>  cats.", "plain": "Two cats."},
        {"id": "c", "tagged": "One <hallucination>dog.", "plain": None},
    ]
    data = json.dumps(records).encode()
    one_tag = mapping({"id": "id"}, {"shape": "inline_tags", "field": "tagged", "tag": "hallucination"})
    result = read(data, "tags.json", one_tag)
    assert errors(result) == ["tags.json|#2 (id=c)|tagged|broken tags: <hallucination> is never closed"]
    assert result.bundle is not None
    assert result.bundle.items[0].response == "A red cube <b>bold</b>."
    assert spans_of(result)["a"] == [(2, 5, None)]
    # The response field differs from the tag-stripped text only in whitespace: placed on it, warned.
    with_response = mapping(
        {"id": "id", "response": "plain"}, {"shape": "inline_tags", "field": "tagged", "tag": "hallucination"}
    )
    result = read(json.dumps(records[1:2]).encode(), "tags.json", with_response)
    assert errors(result) == [] and spans_of(result) == {"b": [(0, 3, None)]}
    assert result.bundle is not None and result.bundle.items[0].response == "Two cats."
    assert [p.severity for p in result.problems] == ["warning"]
    typed = mapping({"id": "id"}, {"shape": "inline_tags", "field": "tagged"})
    result = read(
        jsonl([{"id": 1, "tagged": "There are <number>three</number> <obj>cats</obj>."}]), "t.jsonl", typed
    )
    assert spans_of(result) == {"1": [(10, 15, "number"), (16, 20, "obj")]}


# --------------------------------------------------------------------------------------- word indices


def test_word_indices_from_parquet() -> None:
    rows = [
        {"id": "a", "output": "The  cat sat on a mat", "words": [{"start": 1, "end": 3, "text": "cat sat"}]},
        {"id": "b", "output": "Nothing wrong", "words": []},
        {"id": "c", "output": "One two", "words": [{"start": 1, "end": 5, "text": None}]},
    ]
    spec = mapping({"id": "id", "response": "output"}, {"shape": "word_indices", "field": "words"})
    result = read(parquet_bytes(rows), "words.parquet", spec)
    assert errors(result) == ["words.parquet|#2 (id=c)|words[0]|words 1-5 outside the response's 2 words"]
    assert spans_of(result) == {"a": [(5, 12, None)], "b": []}


def test_integer_ids_stored_as_floats_in_parquet_read_as_integers() -> None:
    rows = [{"id": 1.0, "text": "A."}, {"id": 2.0, "text": "B."}, {"id": 2.5, "text": "C."}]
    result = read(parquet_bytes(rows), "ids.parquet", mapping({"id": "id", "response": "text"}))
    assert result.bundle is not None and [i.external_id for i in result.bundle.items] == ["1", "2"]
    assert errors(result) == ["ids.parquet|#2|id|expected text or an integer id, got float"]


# --------------------------------------------------------------------------------------- token labels


def test_token_labels_bio_with_tokens_and_zero_one_on_the_words() -> None:
    records = [
        {
            "id": "bio",
            "tokens": ["Two", "red", "cars", "park", "."],
            "tags": ["B-Number", "B-Color", "I-Color", "O", "O"],
        },
        {"id": "flags", "text": "A big red bus", "flags": [0, 1, 1, 0]},
    ]
    bio = mapping({"id": "id"}, {"shape": "token_labels", "field": "tags", "tokens": "tokens"})
    result = read(jsonl(records[:1]), "bio.jsonl", bio)
    assert errors(result) == []
    assert result.bundle is not None and result.bundle.items[0].response == "Two red cars park ."
    assert spans_of(result) == {"bio": [(0, 3, "Number"), (4, 12, "Color")]}
    flags = mapping({"id": "id", "response": "text"}, {"shape": "token_labels", "field": "flags"})
    result = read(jsonl(records[1:]), "flags.jsonl", flags)
    assert spans_of(result) == {"flags": [(2, 9, None)]}
    short = jsonl([{"id": "x", "text": "A b c", "flags": [0, 1]}])
    assert errors(read(short, "f.jsonl", flags)) == ["f.jsonl|#0 (id=x)|flags|2 labels for 3 tokens"]


# ------------------------------------------------------------------------------------ sentence labels


def test_sentence_labels_with_a_value_mapping_from_a_csv() -> None:
    rows = [
        {"id": "a", "caption": "A red cube. Two balls. A sign.", "labels": [1, 0, 2]},
        {"id": "b", "caption": "One sentence only.", "labels": [1, 0]},
    ]
    spec = mapping(
        {"id": "id", "response": "caption"},
        {
            "shape": "sentence_labels",
            "field": "labels",
            "values": {"0": "incorrect", "1": "correct", "2": None},
        },
    )
    result = read(csv_bytes(rows), "sent.csv", spec)
    assert errors(result) == [
        "sent.csv|#1 (id=b)|labels|2 labels for the 1 sentences the splitter finds in the response; "
        "map the sentence texts (gold.sentences) to place them"
    ]
    labels = gold_of(result)["a"].sentence_labels
    assert [(lab.index, lab.label, lab.meta) for lab in labels] == [
        (0, "correct", {"value": 1}),
        (1, "incorrect", {"value": 0}),
    ]
    assert result.bundle is not None and result.bundle.dataset.label_kinds == ["sentence"]
    unmapped = jsonl([{"id": "c", "caption": "One.", "labels": [7]}])
    assert errors(read(unmapped, "u.jsonl", spec)) == [
        "u.jsonl|#0 (id=c)|labels[0]|7 is not in the value mapping (gold.values)"
    ]


def test_sentence_texts_place_sentences_and_spell_a_missing_response() -> None:
    records = [
        {
            "id": 1,
            "sents": [{"text": "A cat.", "label": "INCORRECT"}, {"text": "It sleeps.", "label": "correct"}],
        }
    ]
    spec = mapping({"id": "id"}, {"shape": "sentence_labels", "field": "sents"})
    result = read(jsonl(records), "s.jsonl", spec)
    assert errors(result) == []
    assert result.bundle is not None
    item = result.bundle.items[0]
    assert item.response == "A cat. It sleeps."
    assert [(s.start, s.end) for s in item.sentences or []] == [(0, 6), (7, 17)]
    assert [lab.label for lab in gold_of(result)["1"].sentence_labels] == ["incorrect", "correct"]


# --------------------------------------------------------------------------------------------- claims


def test_claims_with_labels_from_a_json_array() -> None:
    records = [
        {
            "id": "v1",
            "response": "A dog runs. The sky is green.",
            "claims": [
                {"claim": "A dog runs.", "label": "non-hallucination"},
                {"claim": "The sky is green.", "label": "hallucination", "type": "attribute"},
            ],
        },
        {"id": "t1", "claim_list": ["Cats fly.", "Water is wet."], "verdicts": [1, 0]},
    ]
    spec = mapping({"id": "id", "response": "response"}, {"shape": "claims", "field": "claims"})
    result = read(json.dumps(records[:1]).encode(), "claims.json", spec)
    assert errors(result) == []
    labels = gold_of(result)["v1"].claim_labels
    assert [(c.index, c.label, c.type) for c in labels] == [
        (0, "non-hallucination", None),
        (1, "hallucination", "attribute"),
    ]
    assert result.bundle is not None and [c.text for c in result.bundle.items[0].claims] == [
        "A dog runs.",
        "The sky is green.",
    ]
    beside = mapping(
        {"id": "id"},
        {
            "shape": "claims",
            "field": "claim_list",
            "labels": "verdicts",
            "values": {"1": "hallucination", "0": "non-hallucination"},
        },
    )
    result = read(json.dumps(records[1:]).encode(), "claims.json", beside)
    assert errors(result) == []
    assert result.bundle is not None
    item = result.bundle.items[0]
    assert item.response == "Cats fly.\nWater is wet."
    assert [(c.start, c.end) for c in item.claims] == [(0, 9), (10, 23)]
    assert [c.label for c in gold_of(result)["t1"].claim_labels] == ["hallucination", "non-hallucination"]


# ------------------------------------------------------------------------------------------- triplets


def test_judged_triplets_and_reference_triplets() -> None:
    records = [
        {
            "id": "q1",
            "answer": "The man holds a cup.",
            "triplets": [
                "(man, holds, cup)",
                ["cup", "on", "table"],
                {"subject": "man", "relation": "wears", "object": "hat"},
            ],
            "judged": ["yes", "no", None],
        }
    ]
    judged = mapping(
        {"id": "id", "response": "answer"}, {"shape": "triplets", "field": "triplets", "labels": "judged"}
    )
    result = read(jsonl(records), "tri.jsonl", judged)
    assert errors(result) == []
    found = gold_of(result)["q1"].triplets
    assert [(t.subject, t.relation, t.object, t.verdict) for t in found] == [
        ("man", "holds", "cup", "yes"),
        ("cup", "on", "table", "no"),
        ("man", "wears", "hat", None),
    ]
    reference = mapping(
        {"id": "id", "response": "answer"}, {"shape": "triplets", "field": "triplets", "reference": True}
    )
    result = read(jsonl(records), "tri.jsonl", reference)
    assert result.bundle is not None and len(result.bundle.items[0].reference_triplets) == 3
    assert gold_of(result)["q1"].triplets == []
    broken = jsonl([{"id": "q2", "answer": "x", "triplets": ["(a, b)"]}])
    assert errors(read(broken, "t.jsonl", reference)) == [
        "t.jsonl|#0 (id=q2)|triplets[0]|'(a, b)' is not a triplet (subject, relation, object)"
    ]


# ------------------------------------------------------------------------------------ response scores


def test_response_scores_with_their_scale_from_a_csv() -> None:
    rows = [
        {"id": "a", "response": "Fine answer.", "rating": "5"},
        {"id": "b", "response": "Bad answer.", "rating": "9"},
        {"id": "c", "response": "Not rated.", "rating": ""},
    ]
    spec = mapping(
        {"id": "id", "response": "response"}, {"shape": "response_score", "field": "rating", "scale": [0, 6]}
    )
    result = read(csv_bytes(rows), "scores.csv", spec)
    assert errors(result) == ["scores.csv|#1 (id=b)|rating|9 is outside the scale 0 to 6"]
    assert result.bundle is not None
    (gold,) = result.bundle.label_sets
    scored = {a.item: a.response_score for a in gold.annotations}
    assert scored == {"a": ResponseScoreRecord(5.0, scale_min=0, scale_max=6), "c": None}
    assert result.bundle.dataset.label_kinds == ["response"]


# ------------------------------------------------------------------------------------ dataset folders


def write_folder(
    folder: Path, shards: dict[str, list[dict[str, Any]]], info: dict[str, Any] | None = None
) -> Path:
    for name, rows in shards.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), path)
    if info is not None:
        (folder / "dataset_info.json").write_text(json.dumps(info))
    return folder


def test_a_folder_of_two_parquet_shards_reads_through_the_mapping(tmp_path: Path) -> None:
    folder = write_folder(
        tmp_path / "my-bench",
        {
            "data/train-00000-of-00002.parquet": [
                {"text": "A red cube.", "spans": [{"start": 2, "end": 5, "text": "red"}]},
                {"text": "A cat.", "spans": []},
            ],
            "data/train-00001-of-00002.parquet": [
                {"text": "Two dogs.", "spans": [{"start": 0, "end": 3, "text": "One"}]},
                {"text": "A sun.", "spans": [{"start": 2, "end": 5, "text": "sun"}]},
            ],
        },
        {"description": "A small test benchmark."},
    )
    opened = open_dataset_folder(folder)
    assert opened.description == "A small test benchmark."
    assert [p.name for p in opened.source.parts] == [
        "my-bench/data/train-00000-of-00002.parquet",
        "my-bench/data/train-00001-of-00002.parquet",
    ]
    records = head_records(opened.source, 10, [])
    assert [c.path for c in columns_of(records)] == ["text", "spans"]
    spec = mapping({"response": "text"}, {"shape": "offsets", "field": "spans"})
    _, result = read_table(opened.source, spec, ReadOptions())
    assert errors(result) == [
        "my-bench/data/train-00001-of-00002.parquet|#0|spans[0].text|'One' is not the response text at 0-3: "
        "'Two' (choose “locate by text” to place spans where their text is)"
    ]
    assert result.bundle is not None and result.bundle.dataset.name == "my-bench"
    # Records without ids are named after their shard and place there; the split comes from the name.
    assert [(i.external_id, i.split) for i in result.bundle.items] == [
        ("train-00000-of-00002-0", "train"),
        ("train-00000-of-00002-1", "train"),
        ("train-00001-of-00002-1", "train"),
    ]
    assert split_of(Path("test/0000.parquet")) == "test"


def test_alignbench_and_mhaldetect_shards_are_recognised_without_a_mapping(tmp_path: Path) -> None:
    sentences = [
        {
            "model": "m",
            "image_name": "1.jpg",
            "sentence_index": 0,
            "caption": "A cat.",
            "annotation": "correct",
        },
        {
            "model": "m",
            "image_name": "1.jpg",
            "sentence_index": 1,
            "caption": "It is red.",
            "annotation": "incorrect",
            "error_words": "red",
        },
    ]
    folder = write_folder(tmp_path / "alignbench", {"a.parquet": sentences[1:], "b.parquet": sentences[:1]})
    fmt, result = read_table(open_dataset_folder(folder).source, None, ReadOptions())
    assert fmt == "alignbench" and errors(result) == []
    assert result.bundle is not None
    (item,) = result.bundle.items
    assert item.response == "A cat. It is red."
    assert [(s.start, s.end, s.type) for s in gold_of(result)[item.external_id].spans] == [(13, 16, None)]

    segments = [
        {
            "question": "Describe.",
            "response": "A cat sits. It is red.",
            "image": "1.jpg",
            "annotations": [
                {"start": 0, "end": 11, "text": "A cat sits.", "label": "ACCURATE"},
                {"start": 12, "end": 22, "text": "It is red.", "label": "INACCURATE"},
            ],
        }
    ]
    folder = write_folder(tmp_path / "mhal", {"train/0000.parquet": segments})
    fmt, result = read_table(open_dataset_folder(folder).source, None, ReadOptions())
    assert fmt == "mhaldetect" and errors(result) == []
    assert spans_of(result) == {"0000-0": [(12, 22, None)]}
    # A single M-HalDetect Parquet file is recognised on the ordinary import path too.
    data = parquet_bytes(segments)
    guess = best_guess(data, "m.parquet", "benchmark")
    assert guess is not None and guess.name == "mhaldetect"
    assert ALIGNBENCH.sniff(data) == 0.0
    unknown = write_folder(tmp_path / "other", {"x.parquet": [{"a": 1}]})
    fmt, result = read_table(open_dataset_folder(unknown).source, None, ReadOptions())
    assert result.bundle is None and "map its fields" in result.problems[-1].reason


def test_a_folder_without_shards_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no .parquet files"):
        open_dataset_folder(tmp_path / "empty")


# -------------------------------------------------------------------------------------------- preview


def test_preview_reads_only_the_first_records_and_draws_every_shape() -> None:
    many = [{"id": k, "text": f"Item {k} is red.", "spans": [{"start": 10, "end": 13}]} for k in range(300)]
    spec = mapping({"id": "id", "response": "text"}, {"shape": "offsets", "field": "spans"})
    preview = preview_table(
        open_file(parquet_bytes(many), "many.parquet", head=True), spec, ReadOptions(), records=50
    )
    assert preview.n_items == 50 and preview.partial
    assert preview.items[0].spans == ((10, 13, None),)
    sentences = mapping(
        {"id": "id", "response": "text"},
        {"shape": "sentence_labels", "field": "labels", "values": {"0": "incorrect", "1": "correct"}},
    )
    preview = preview_table(
        open_file(jsonl([{"id": 1, "text": "A cat. A dog.", "labels": [1, 0]}]), "s.jsonl"),
        sentences,
        ReadOptions(),
    )
    assert not preview.partial and preview.items[0].spans == ((7, 13, "incorrect"),)
    claims = mapping({"id": "id", "response": "text"}, {"shape": "claims", "field": "claims"})
    preview = preview_table(
        open_file(
            jsonl([{"id": 1, "text": "A cat.", "claims": [{"claim": "A cat.", "label": "hallucination"}]}]),
            "c.jsonl",
        ),
        claims,
        ReadOptions(),
    )
    assert preview.items[0].note == "1 claims: 1 hallucination"
