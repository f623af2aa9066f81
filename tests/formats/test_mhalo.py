"""MHALO tagged JSON: the real released files (every flaw reported by index) and hand-made records."""

from __future__ import annotations

import json

import pytest

from db.access import OPERATOR
from db.export_files import export_file
from db.exporter import export_bundle
from db.importer import import_bundle
from db.repositories.datasets import get_dataset
from db.transfer import import_file
from formats.base import ReadOptions
from formats.mhalo import FORMAT, subset_for
from formats.registry import best_guess

# What the real files hold and what Spanlight must say about them (checked by reading them by hand).
EXPECTED = {
    "processed_mhal_dataset.json": {"items": 363, "errors": {}, "warnings": 137},
    "processed_geo_170k.json": {"items": 499, "errors": {"#56": "test_solution"}, "warnings": 0},
    "processed_test.json": {
        "items": 149,
        "errors": {
            "#7": "a closing tag looks malformed: '/hallucination>' at character 47 lacks its '<'",
            "#41": "a closing tag looks malformed: '/hallucination>' at character 149 lacks its '<'",
            "#52": "a closing tag looks malformed: '/hallucination>' at character 109 lacks its '<'",
            "#82": "differs from test_solution at character 925",
            "#84": "a closing tag looks malformed: '<hallucination>' at character 32, after '(B)'",
            "#91": "nested <hallucination> at character 525",
        },
        "warnings": 1,
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_files_read_with_every_flaw_reported(shared_data, name):
    data = (shared_data / "mhalo" / name).read_bytes()
    assert best_guess(data, name) is FORMAT
    result = FORMAT.read(data, source=name)
    expected = EXPECTED[name]
    assert len(result.bundle.items) == expected["items"]
    errors = {p.record: p for p in result.errors}
    assert set(errors) == set(expected["errors"])
    for record, needle in expected["errors"].items():
        assert needle in str(errors[record]), errors[record]
    warnings = [p for p in result.problems if p.severity == "warning"]
    assert len(warnings) == expected["warnings"]


def test_real_whitespace_only_difference_is_aligned_exactly(shared_data):
    source = json.loads((shared_data / "mhalo" / "processed_test.json").read_bytes())
    result = FORMAT.read(json.dumps(source).encode(), source="processed_test.json")
    (warning,) = [p for p in result.problems if p.severity == "warning"]
    assert warning.record == "#54" and "only in whitespace" in warning.reason
    item = next(i for i in result.bundle.items if i.external_id == "processed_test-54")
    assert item.response == source[54]["test_solution"]
    gold = {a.item: a for a in result.bundle.label_sets[0].annotations}["processed_test-54"]
    texts = [item.response[s.start : s.end] for s in gold.spans]
    assert texts == ["outdoors", "a window visible in the background."]


def test_real_mhal_ids_duplicates_and_listed_spans(shared_data):
    data = (shared_data / "mhalo" / "processed_mhal_dataset.json").read_bytes()
    result = FORMAT.read(data, source="processed_mhal_dataset.json")
    assert all("exact copy" in p.reason for p in result.problems)
    assert result.bundle.items[0].external_id == "mhal_340"
    assert result.bundle.items[0].subset == "M-HalDetect"
    assert result.bundle.items[0].image_ref == "COCO_val2014_000000007288.jpg"


def export_bundle_or_none(engine, name):
    from db.exporter import UnknownDataset

    try:
        return export_bundle(engine, name, actor=OPERATOR)
    except UnknownDataset:
        return None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_file_imports_and_export_reproduces_each_record(engine, shared_data, name):
    data = (shared_data / "mhalo" / name).read_bytes()
    expected = EXPECTED[name]
    if expected["errors"]:
        refused = import_file(engine, data, source=name, options=ReadOptions(dataset="mhalo"), actor=OPERATOR)
        assert not refused.ok and len(refused.errors) == len(expected["errors"])
        assert export_bundle_or_none(engine, "mhalo") is None
    outcome = import_file(
        engine, data, source=name, options=ReadOptions(dataset="mhalo"), allow_skip=True, actor=OPERATOR
    )
    assert outcome.ok and outcome.result.items_created == expected["items"], outcome.summary()
    exported = json.loads(export_file(engine, "mhalo", "mhalo", actor=OPERATOR))
    source = json.loads(data)
    kept, seen = [], set()
    for index, record in enumerate(source):
        key = json.dumps(record, sort_keys=True)
        if f"#{index}" not in expected["errors"] and key not in seen:
            kept.append((index, record))
            seen.add(key)
    assert len(exported) == len(kept)
    stem = name.removesuffix(".json")
    for written, (index, record) in zip(exported, kept, strict=True):
        # Written under the dataset's name, a record names the subset its file's name gave it, so a
        # re-import keeps it (the one field the released record lacks).
        assert written.pop("subset") == subset_for(stem)
        if "id" not in record:
            # The item's derived id is written first, so a re-import finds the same items.
            assert list(written) == ["id", *record] and written.pop("id") == f"{stem}-{index}"
        if name == "processed_test.json" and index == 54:
            # The source's own tagged text differs from test_solution in whitespace; ours follows it.
            tagged, original = written.pop("hallucinated_solution"), record.pop("hallucinated_solution")
            assert "".join(tagged.split()) == "".join(original.split()) and tagged != original
        assert written == record, (name, index)


def test_reimport_is_idempotent(engine, shared_data):
    data = (shared_data / "mhalo" / "processed_geo_170k.json").read_bytes()
    options = ReadOptions(dataset="geo")
    first = import_file(
        engine, data, source="processed_geo_170k.json", options=options, allow_skip=True, actor=OPERATOR
    )
    before = export_bundle(engine, "geo", actor=OPERATOR)
    again = import_file(
        engine, data, source="processed_geo_170k.json", options=options, allow_skip=True, actor=OPERATOR
    )
    assert first.result.items_created == 499 and again.result.items_created == 0
    assert again.result.items_existing == 499
    assert export_bundle(engine, "geo", actor=OPERATOR) == before


HAND_MADE = [
    {
        "id": 7,
        "image": "geoqa_plus/1.png",
        "question": "What is angle A?",
        "original_solution": "Angle A is 50°.",
        "test_solution": "Angle A is 60°. Emoji 🐱 then <b>bold</b>.",
        "hallucinated_solution": "Angle A is <hallucination>60°</hallucination>. Emoji 🐱 then "
        "<hallucination><b>bold</b></hallucination>.",
        "api_response": {"kept": True},
    },
    {
        "image_path": "a.jpg",
        "prompt": "Describe.",
        "gt_answer": "A cat.",
        "original_solution": None,
        "test_solution": "A dog.",
        "hallucinated_solution": "A dog.",
    },
]


def test_hand_made_round_trip_keeps_types_fields_and_emoji(round_trip):
    data = json.dumps(HAND_MADE).encode()
    content, exported = round_trip("mhalo", data, source="processed_custom.json")
    assert json.loads(exported) == [HAND_MADE[0], {"id": "processed_custom-1", **HAND_MADE[1]}]
    first, second = content["items"]
    assert first["external_id"] == "7" and first["subset"] == "custom"
    assert second["external_id"] == "processed_custom-1" and second["reference"] == "A cat."
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    spans = [(s["start"], s["end"]) for s in gold["7"]["spans"]]
    assert [first["response"][s:e] for s, e in spans] == ["60°", "<b>bold</b>"]


@pytest.mark.parametrize(
    ("record", "field", "reason"),
    [
        (
            {"test_solution": "a b", "hallucinated_solution": "a <hallucination>b"},
            "hallucinated_solution",
            "never closed",
        ),
        ({"test_solution": "a b", "hallucinated_solution": "a c"}, "hallucinated_solution", "differs"),
        ({"test_solution": 3, "hallucinated_solution": "a"}, "test_solution", "expected text"),
        ({"hallucinated_solution": "a"}, "test_solution", "missing"),
        (
            {
                "test_solution": "a b",
                "hallucinated_solution": "a <hallucination>b</hallucination>",
                "hallucination_spans": [{"start": 0, "end": 1, "text": "a"}],
            },
            "hallucination_spans",
            "disagree",
        ),
        (
            {
                "test_solution": "a b",
                "hallucinated_solution": "a b",
                "hallucination_spans": [{"start": 0, "end": 9}],
            },
            "hallucination_spans[0]",
            "not a span of test_solution",
        ),
        ("not an object", "-", "expected an object"),
        ({"test_solution": "a\x00", "hallucinated_solution": "a\x00"}, "test_solution", "NUL"),
    ],
)
def test_bad_records_are_reported_by_index_and_field(record, field, reason):
    good = {"test_solution": "fine", "hallucinated_solution": "fine"}
    result = FORMAT.read(json.dumps([good, record]).encode(), source="f.json")
    (problem,) = result.problems
    assert (problem.record, problem.field) == ("#1", field)
    assert reason in problem.reason
    assert len(result.bundle.items) == 1


def test_overlapping_spans_cannot_be_written_as_tags(engine):
    from db.importer import import_bundle
    from formats.base import FormatError
    from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord

    bundle = Bundle(
        DatasetRecord("ov", "canonical"),
        [ItemRecord("x", "one two three")],
        [
            LabelSetRecord(
                "gold", "gold", annotations=[Annotations("x", [SpanRecord(0, 7), SpanRecord(4, 13)])]
            )
        ],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    with pytest.raises(FormatError, match="overlap"):
        export_file(engine, "ov", "mhalo", actor=OPERATOR)


@pytest.mark.parametrize(
    ("tagged", "needles", "not_said"),
    [
        # processed_test #84: the closing tag lost its "/".
        (
            "The answer is <hallucination>(B)<hallucination>. Then <hallucination>5</hallucination>.",
            ["a closing tag looks malformed", "'<hallucination>' at character 32", "'(B)'"],
            "nested",
        ),
        # processed_test #7 / #41: the closing tag lost its "<" (and the "<" sits after the word).
        (
            "<hallucination>The person riding/hallucination> is a< <hallucination>woman</hallucination>.",
            ["a closing tag looks malformed", "'/hallucination>' at character 32"],
            "nested",
        ),
        # An opening tag written as a closing one.
        (
            "A </hallucination>red</hallucination> cube.",
            ["an opening tag looks malformed: '</hallucination>' at character 2 closes nothing"],
            "nested",
        ),
        (
            "A <hallucination>red cube.",
            ["<hallucination> at character 2 is never closed"],
            "malformed",
        ),
        # A genuine nesting (processed_test #91) is still called one.
        (
            "<hallucination>m = 180 - <hallucination>52</hallucination> = 128.</hallucination>",
            ["nested", "character 25", "opened at character 0"],
            "malformed",
        ),
    ],
)
def test_broken_tags_are_explained(tagged, needles, not_said):
    from metrics import parse_tagged

    plain = tagged
    for marker in ("</hallucination>", "<hallucination>", "/hallucination>", "< "):
        plain = plain.replace(marker, " " if marker == "< " else "")
    record = {"test_solution": plain, "hallucinated_solution": tagged}
    with pytest.raises(ValueError):
        parse_tagged(tagged)
    (problem,) = FORMAT.read(json.dumps([record]).encode(), source="f.json").problems
    assert problem.field == "hallucinated_solution"
    for needle in needles:
        assert needle in problem.reason, problem.reason
    assert not_said not in problem.reason, problem.reason


@pytest.mark.parametrize(
    ("file_name", "subset"),
    [
        ("processed_mathv_360k.json", "MathV360K"),
        ("processed_mathv360k.json", "MathV360K"),
        ("processed_rlhfv_dataset.json", "RLHF-V"),
        ("processed_rlhf_v_dataset.json", "RLHF-V"),
        ("processed_mhal_dataset.json", "M-HalDetect"),
        ("processed_geo_170k.json", "Geo170K"),
        ("processed_geo170k.json", "Geo170K"),
        ("processed_test.json", "MC"),
        ("processed_custom.json", "custom"),
    ],
)
def test_released_files_get_the_papers_subset_names(file_name, subset):
    record = {"test_solution": "A cat.", "hallucinated_solution": "A cat."}
    result = FORMAT.read(json.dumps([record]).encode(), source=file_name)
    assert result.bundle.items[0].subset == subset


def test_untagged_records_are_gold_covered_clean_items(shared_data, engine):
    """No tag at all means no hallucination (FORMATS.md): gold covers those items too, with no span."""
    data = (shared_data / "mhalo" / "processed_test.json").read_bytes()
    result = FORMAT.read(data, source="processed_test.json")
    import_bundle(engine, result.bundle, actor=OPERATOR, problems=result.problems, allow_skip=True)
    (gold,) = result.bundle.label_sets
    assert len([a for a in gold.annotations if not a.spans]) == 15
    summary = get_dataset(engine, result.bundle.dataset.name)
    assert summary is not None
    assert (summary.n_items, summary.n_gold_items, summary.n_done_items) == (149, 149, 0)
    # Importing the same file again changes nothing and keeps the coverage.
    import_bundle(engine, result.bundle, actor=OPERATOR, problems=result.problems, allow_skip=True)
    again = get_dataset(engine, result.bundle.dataset.name)
    assert again is not None and again.n_gold_items == 149


def test_a_round_trip_through_a_named_file_keeps_each_items_subset(engine, tmp_path):
    """A dataset of two subsets exported as bench.json read back with every item's subset "bench"."""
    from db.export_files import export_to
    from db.repositories.items import get_item

    record = {"test_solution": "A cat.", "hallucinated_solution": "A <hallucination>cat</hallucination>."}
    for source, ext in (("processed_test.json", "t"), ("processed_geo_170k.json", "g")):
        data = json.dumps([{**record, "id": ext}]).encode()
        assert import_file(engine, data, source=source, options=ReadOptions(dataset="two"), actor=OPERATOR).ok
    out = tmp_path / "bench.json"
    export_to(engine, "two", "mhalo", out, actor=OPERATOR)
    written = json.loads(out.read_text())
    assert [r.get("subset") for r in written] == ["MC", "Geo170K"]
    assert import_file(
        engine, out.read_bytes(), source="bench.json", options=ReadOptions(dataset="copy"), actor=OPERATOR
    ).ok
    copy = get_dataset(engine, "copy")
    assert copy is not None
    assert [get_item(engine, copy.id, ext).subset for ext in ("t", "g")] == ["MC", "Geo170K"]
    # Written under a name that gives the subset already, a record stays as the released file has it.
    only = tmp_path / "processed_test.json"
    export_to(engine, "copy", "mhalo", only, actor=OPERATOR)
    assert [r.get("subset") for r in json.loads(only.read_text())] == [None, "Geo170K"]
    # A "subset" that is not text is one of the record's own fields, as before the field was read.
    odd = json.dumps([{**record, "id": "n", "subset": 3}]).encode()
    assert import_file(engine, odd, source="odd.json", options=ReadOptions(dataset="odd"), actor=OPERATOR).ok
    # A subset chosen at import wins over the records' own.
    chosen = ReadOptions(dataset="chosen", subset="mine")
    assert import_file(engine, out.read_bytes(), source="bench.json", options=chosen, actor=OPERATOR).ok
    mine = get_dataset(engine, "chosen")
    assert mine is not None and get_item(engine, mine.id, "t").subset == "mine"
