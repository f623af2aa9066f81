"""MMHal-Bench files and MMHal ratings files: reading, problems per record and field, writing back."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import formats
from db.access import OPERATOR
from db.export_files import export_file
from db.transfer import import_file
from formats.base import KnownItem, ReadOptions
from formats.mmhal import RUBRIC, RUBRIC_HALLUCINATES, image_contents
from formats.preview import preview_file
from formats.records import ResponseScoreRecord
from formats.registry import FORMATS, best_guess
from tests.formats.conftest import comparable
from tests.formats.mmhal_sample import IDS, RECORDS, records, sample_bytes

MMHAL, RATINGS = FORMATS["mmhal"], FORMATS["mmhal-ratings"]
KNOWN = {ext: KnownItem(r["model_answer"]) for ext, r in zip(IDS, RECORDS, strict=True)}


def _read(data: bytes, **options):
    return MMHAL.read(data, source="mmhal_test.json", options=ReadOptions(**options))


def test_records_become_items_with_question_answer_reference_and_type() -> None:
    result = _read(sample_bytes())
    assert result.problems == []
    bundle = result.bundle
    assert bundle.dataset.name == "mmhal_test" and bundle.dataset.label_kinds == ["response"]
    assert [i.external_id for i in bundle.items] == IDS
    first = bundle.items[0]
    assert (first.prompt, first.response, first.reference, first.subset) == (
        "What color is the cat?",
        "The cat is white with brown spots.",
        "The cat is black.",
        "attribute",
    )
    assert first.image_ref == "a1b2_o.jpg"
    assert image_contents(first.meta) == ["Cat", "Sofa"]
    assert first.meta["fields"]["image_src"] == RECORDS[0]["image_src"]


def test_judge_ratings_become_response_scores_of_a_detector_named_after_the_judge() -> None:
    bundle = _read(sample_bytes()).bundle
    (judge,) = bundle.label_sets
    assert (judge.kind, judge.name) == ("detector", "gpt-4")
    scores = {a.item: a.response_score for a in judge.annotations}
    assert scores == {
        IDS[0]: ResponseScoreRecord(1.0, True, None),
        # From the review: its last "Rating: N", and its "Hallucination: no".
        IDS[1]: ResponseScoreRecord(5.0, False, RECORDS[1]["gpt4_review"]),
        IDS[2]: ResponseScoreRecord(2.0, None, None),
    }


def test_a_record_without_a_judge_name_goes_to_the_named_run_or_judge() -> None:
    data = sample_bytes(r0={"judge": None}, r1={"judge": None}, r2={"judge": None})
    assert [ls.name for ls in _read(data).bundle.label_sets] == ["judge"]
    assert [ls.name for ls in _read(data, detector="my judge").bundle.label_sets] == ["my judge"]


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"rating": 7}, "rating", "7 is outside the scale 0-6"),
        ({"rating": -1}, "rating", "-1 is outside the scale 0-6"),
        ({"rating": "good"}, "rating", "expected a rating from 0 to 6"),
        ({"rating": True}, "rating", "expected a rating from 0 to 6"),
        ({"hallucination": "maybe"}, "hallucination", "expected yes or no"),
        ({"rating": None, "review": "Looks fine to me."}, "review", "no rating"),
        ({"rating": None, "review": "Rating: 9"}, "review", "9 is outside the scale 0-6"),
        ({"image_content": {"a": 1}}, "image_content", "expected a list of labels"),
        ({"model_answer": None}, "model_answer", "missing"),
        ({"question": 3}, "question", "expected text"),
    ],
)
def test_a_bad_record_is_an_error_naming_its_field(changes, field, reason) -> None:
    result = _read(sample_bytes(r0=changes))
    (error,) = result.errors
    assert (error.file, error.record, error.field) == ("mmhal_test.json", "#0", field)
    assert reason in error.reason
    assert [i.external_id for i in result.bundle.items] == IDS[1:]


def test_a_review_that_disagrees_with_the_rating_is_a_warning_and_the_rating_is_kept() -> None:
    result = _read(sample_bytes(r0={"review": "Rating: 4"}))
    assert [(p.severity, p.field) for p in result.problems] == [("warning", "review")]
    assert result.bundle.label_sets[0].annotations[0].response_score.score == 1.0


def test_an_own_id_is_used_and_written_back() -> None:
    data = sample_bytes(r0={"id": 17})
    bundle = _read(data).bundle
    assert bundle.items[0].external_id == "17"
    assert json.loads(MMHAL.write(bundle))[0] == records(r0={"id": 17})[0]


def test_written_back_exactly_as_read() -> None:
    data = sample_bytes()
    assert json.loads(MMHAL.write(_read(data).bundle)) == RECORDS


def test_recognised_by_content() -> None:
    assert best_guess(sample_bytes(), "anything.json", "benchmark") is MMHAL
    plain = json.dumps([{k: v for k, v in r.items() if k not in ("rating", "judge")} for r in RECORDS])
    assert best_guess(plain.encode(), "x.json", "benchmark") is MMHAL


def test_the_rubric_covers_the_scale() -> None:
    assert sorted(RUBRIC) == list(range(7))
    assert all(("with hallucination" in RUBRIC[k]) == (k < 3) for k in RUBRIC)


def test_every_meaning_of_the_rubric_ends_by_saying_whether_it_hallucinates() -> None:
    """:data:`RUBRIC_HALLUCINATES` is read off each meaning's last words: a meaning that ended otherwise
    would be taken for "no hallucination" without a word (this was an ``assert`` run at import)."""
    endings = (", with hallucination", ", no hallucination")
    assert [k for k, meaning in RUBRIC.items() if not meaning.endswith(endings)] == []
    assert sorted(k for k, says in RUBRIC_HALLUCINATES.items() if says) == [0, 1, 2]
    assert sorted(RUBRIC_HALLUCINATES) == sorted(RUBRIC)


def test_no_format_module_runs_a_check_at_import() -> None:
    """A check at a module's top ran on every import of the format (and not at all under ``python -O``);
    it belongs in the tests."""
    found = [
        f"{path.name}:{node.lineno}"
        for path in sorted(Path(formats.__file__).parent.rglob("*.py"))
        for node in ast.parse(path.read_text(), filename=str(path)).body
        if isinstance(node, ast.Assert)
    ]
    assert found == []


# ------------------------------------------------------------------------------- ratings files


def _ratings(data: bytes, source: str = "ratings.jsonl", **options):
    return RATINGS.read(data, source=source, options=ReadOptions(known=KNOWN, **options))


def test_ratings_as_an_object_of_ids() -> None:
    data = json.dumps({IDS[0]: 4, IDS[1]: {"rating": 1, "hallucination": True, "rationale": "no dog"}})
    result = _ratings(data.encode(), "r.json", detector="rater")
    assert result.problems == []
    (label_set,) = result.bundle.label_sets
    assert (label_set.kind, label_set.name) == ("detector", "rater")
    assert [(a.item, a.response_score) for a in label_set.annotations] == [
        (IDS[0], ResponseScoreRecord(4.0)),
        (IDS[1], ResponseScoreRecord(1.0, True, "no dog")),
    ]
    assert best_guess(data.encode(), "r.json", "predictions") is RATINGS


def test_ratings_as_csv_with_its_label_set_kind() -> None:
    data = f"id,rating,hallucination,rationale\n{IDS[2]},3,no,\n{IDS[3]},0.5,yes,vague\n".encode()
    result = _ratings(data, "r.csv", detector="alice", label_set_kind="human")
    assert result.problems == []
    (label_set,) = result.bundle.label_sets
    assert (label_set.kind, label_set.name, label_set.annotator) == ("human", "alice", "alice")
    assert [a.response_score for a in label_set.annotations] == [
        ResponseScoreRecord(3.0, False),
        ResponseScoreRecord(0.5, True, "vague"),
    ]
    assert best_guess(data, "r.csv", "predictions") is RATINGS


def test_bad_ratings_are_errors_per_record() -> None:
    lines = [
        {"id": IDS[0], "rating": 6},
        {"id": IDS[1], "rating": 8},
        {"id": "nope", "rating": 3},
        {"id": IDS[2]},
        {"id": IDS[0], "rating": 2},
        {"id": IDS[3], "rating": 4, "colour": "red"},
    ]
    result = _ratings("".join(json.dumps(x) + "\n" for x in lines).encode())
    assert [(p.severity, p.record, p.field) for p in result.problems] == [
        ("error", f"#1 (id={IDS[1]})", "rating"),
        ("error", "#2 (id=nope)", "id"),
        ("error", f"#3 (id={IDS[2]})", "rating"),
        ("error", f"#4 (id={IDS[0]})", "id"),
        ("warning", f"#5 (id={IDS[3]})", "colour"),
    ]
    assert "8 is outside the scale 0-6" in result.problems[0].reason
    assert [a.item for a in result.bundle.label_sets[0].annotations] == [IDS[0], IDS[3]]


@pytest.mark.parametrize("filename", ["out.jsonl", "out.csv"])
def test_ratings_written_back_read_the_same(filename: str) -> None:
    bundle = _read(sample_bytes()).bundle
    written = RATINGS.write(bundle, filename=filename)
    again = _ratings(written, filename, detector="gpt-4").bundle.label_sets[0]
    assert again.annotations == bundle.label_sets[0].annotations


def test_the_import_preview_says_what_each_rating_is() -> None:
    data = json.dumps({IDS[0]: {"rating": 2, "hallucination": True}, IDS[1]: 5}).encode()
    shown = preview_file(
        "mmhal-ratings", data, source="r.json", options=ReadOptions(detector="j", known=KNOWN)
    )
    assert [(i.external_id, i.note) for i in shown.items] == [
        (IDS[0], "Rated 2 of 0-6, hallucination: yes"),
        (IDS[1], "Rated 5 of 0-6"),
    ]


# ------------------------------------------------------------------------- through the store


def test_an_mmhal_file_round_trips_through_the_store(round_trip) -> None:
    content, exported = round_trip("mmhal", sample_bytes(), source="mmhal.json")
    assert json.loads(exported) == RECORDS
    judge = content["label_sets"][("detector", "gpt-4")]["annotations"]
    assert {ext: a["response_score"]["score"] for ext, a in judge.items()} == {
        IDS[0]: 1,
        IDS[1]: 5,
        IDS[2]: 2,
    }


def test_a_ratings_file_round_trips_through_the_store(prediction_round_trip) -> None:
    ratings = "".join(
        json.dumps(r) + "\n"
        for r in [
            {"id": IDS[3], "rating": 3, "hallucination": False, "rationale": "vague"},
            {"id": IDS[0], "rating": 0.5},
        ]
    )
    run, _ = prediction_round_trip(
        "mmhal", sample_bytes(), "mmhal-ratings", ratings.encode(), source="r.jsonl"
    )
    assert {ext: a["response_score"]["score"] for ext, a in run["annotations"].items()} == {
        IDS[3]: 3,
        IDS[0]: 0.5,
    }


def test_response_scores_survive_the_canonical_format(engine) -> None:
    assert import_file(
        engine,
        sample_bytes(),
        source="m.json",
        format_name="mmhal",
        options=ReadOptions(dataset="one"),
        actor=OPERATOR,
    ).ok
    canonical = export_file(engine, "one", "canonical", actor=OPERATOR)
    assert import_file(
        engine,
        canonical,
        source="c.jsonl",
        format_name="canonical",
        options=ReadOptions(dataset="two"),
        actor=OPERATOR,
    ).ok
    assert comparable(engine, "two") == comparable(engine, "one")


@pytest.mark.parametrize(("kind", "name"), [("gold", "gold"), ("human", "alice"), ("detector", "gold")])
def test_ratings_that_are_not_a_judges_read_back_as_whose_they_are(engine, kind, name) -> None:
    """Gold's ratings were written as a judge named 'gold', and read back as a detector run of that name
    (an annotator's as a run named after them): the dataset came back with no gold ratings."""
    from db.transfer import import_predictions

    unrated = {"rating": None, "hallucination": None, "gpt4_review": None, "judge": None}
    plain = sample_bytes(r0=unrated, r1=unrated, r2=unrated)
    assert import_file(
        engine,
        plain,
        source="m.json",
        format_name="mmhal",
        options=ReadOptions(dataset="one"),
        actor=OPERATOR,
    ).ok
    ratings = json.dumps({IDS[0]: {"rating": 1, "hallucination": True, "rationale": "no"}, IDS[2]: 4})
    assert import_predictions(
        engine,
        ratings.encode(),
        source="r.json",
        dataset="one",
        detector=name,
        format_name="mmhal-ratings",
        options=ReadOptions(label_set_kind=kind),
        actor=OPERATOR,
    ).ok
    exported = export_file(engine, "one", "mmhal", actor=OPERATOR)
    again = import_file(
        engine,
        exported,
        source="m.json",
        format_name="mmhal",
        options=ReadOptions(dataset="two"),
        actor=OPERATOR,
    )
    assert again.ok, again.summary()
    content, back = comparable(engine, "one"), comparable(engine, "two")
    assert set(content["label_sets"]) == {(kind, name)}
    assert back["label_sets"] == content["label_sets"]
    # The items are the same but for the rating fields their records now have (their layout).
    for item in (*content["items"], *back["items"]):
        del item["meta"]["layout"]
    assert back == content


def test_whose_rating_a_record_says_it_is_must_be_known() -> None:
    result = _read(sample_bytes(r0={"rated_by": "teacher"}, r1={"rated_by": "annotator", "judge": None}))
    assert [(e.record, e.field) for e in result.errors] == [("#0", "rated_by"), ("#1", "judge")]
    assert "expected judge, gold, annotator, got 'teacher'" in result.errors[0].reason
