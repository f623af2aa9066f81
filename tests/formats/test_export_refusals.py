"""An export never loses every label silently: a format that cannot hold what the written label set has,
a single-label-set format given several, or a detector format given no run, is refused naming what is
missing; and no export is an empty file."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

from db.access import OPERATOR
from db.export_files import FormatError, export_file
from db.importer import import_bundle
from formats.export_check import refuse_empty
from formats.records import (
    Annotations,
    Bundle,
    ClaimLabelRecord,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SpanRecord,
)
from formats.registry import get_format

ITEMS = [ItemRecord("a", "A red cube. A blue ball."), ItemRecord("b", "Two cats.")]


def spans(name: str = "gold", kind: str = "gold") -> LabelSetRecord:
    return LabelSetRecord(
        kind,
        name,
        annotator=name if kind == "human" else None,
        annotations=[
            Annotations("a", [SpanRecord(2, 5), SpanRecord(14, 18)]),
            Annotations("b", [SpanRecord(0, 3)]),
        ],
    )


def store(engine, *label_sets: LabelSetRecord) -> None:
    import_bundle(engine, Bundle(DatasetRecord("d", "mhalo"), list(ITEMS), list(label_sets)), actor=OPERATOR)


@pytest.mark.parametrize(
    ("fmt", "needles"),
    [
        ("alignbench", ["AlignBench", "holds sentence labels", "gold:gold", "3 spans", "mhalo", "canonical"]),
        ("mhalubench", ["holds claim labels", "3 spans"]),
        ("halloc-probs", ["holds token probabilities", "3 spans"]),
        ("trihe-judgments", ["holds triplets", "3 spans"]),
    ],
)
def test_a_format_that_cannot_hold_the_labels_is_refused_naming_them(engine, fmt, needles):
    store(engine, spans())
    with pytest.raises(FormatError) as refused:
        export_file(engine, "d", fmt, actor=OPERATOR)
    for needle in needles:
        assert needle in str(refused.value), str(refused.value)


def test_a_refusal_suggests_only_formats_that_write_the_label_set(engine):
    """An MHALO run (spans and raw outputs) refused as M-HalDetect was told to export as "mhalo, trihe,
    …", and Tri-HE then refused it too (its outputs are no Tri-HE run): the raw outputs made Tri-HE
    look like a home. Every format suggested now writes the run."""
    run = spans("tagger", "detector")
    for per_item in run.annotations:
        per_item.raw_output = RawOutputRecord(f"<Tagged_Text>{per_item.item}</Tagged_Text>", True)
    store(engine, run)
    with pytest.raises(FormatError) as refused:
        export_file(engine, "d", "mhaldetect", actor=OPERATOR)
    said = str(refused.value)
    suggested = said.split("Export it as ", 1)[1].removesuffix(", or canonical (keeps everything)")
    assert "trihe" not in suggested.split(", ") and "mhalo" in suggested.split(", "), said
    for name in suggested.split(", "):
        assert export_file(engine, "d", name, label_sets=["detector:tagger"], actor=OPERATOR), name


def test_an_export_that_comes_out_empty_says_what_the_run_has(engine):
    """An MHALO run's raw outputs, written as AlignBench scores, make an empty file: the export said only
    that, and not that the run has spans and outputs of a kind the format does not write."""
    run = spans("tagger", "detector")
    for per_item in run.annotations:
        per_item.raw_output = RawOutputRecord(f"<Tagged_Text>{per_item.item}</Tagged_Text>", True)
    store(engine, run)
    with pytest.raises(FormatError) as refused:
        export_file(engine, "d", "alignbench-scores", label_sets=["detector:tagger"], actor=OPERATOR)
    title = get_format("alignbench-scores").title
    assert str(refused.value) == (
        f"writing 'd' as {title} gave an empty file: detector:tagger has 3 spans, 2 raw outputs, none of "
        f"them in a form {title} writes (it holds sentence scores and raw outputs); nothing was written"
    )


def test_a_single_label_set_format_given_several_names_them(engine):
    store(engine, spans("ann", "human"), spans("bob", "human"))
    with pytest.raises(FormatError, match="writes one label set") as refused:
        export_file(engine, "d", "mhalo", actor=OPERATOR)
    assert "human:ann" in str(refused.value) and "human:bob" in str(refused.value)
    assert (
        export_file(engine, "d", "mhalo", label_sets=["human:bob"], actor=OPERATOR).count(b"<hallucination>")
        == 3
    )
    # Label Studio writes every set (their spans, not marked done, as the annotators' drafts).
    tasks = json.loads(export_file(engine, "d", "label-studio", actor=OPERATOR))
    assert sorted(d["user"] for t in tasks for d in t["drafts"]) == ["ann", "ann", "bob", "bob"]


def test_a_detector_format_without_a_run_is_refused(engine):
    store(engine)
    with pytest.raises(FormatError, match="detector run"):
        export_file(engine, "d", "mhalo-outputs", actor=OPERATOR)
    with pytest.raises(FormatError, match="detector run"):
        export_file(engine, "d", "word-index", actor=OPERATOR)


def test_formats_that_hold_the_labels_write_them(engine):
    claims = [ClaimRecord("The cube is red.")]
    bundle = Bundle(
        DatasetRecord("d", "mhalubench"),
        [ItemRecord("a", "A red cube.", claims=claims)],
        [
            LabelSetRecord(
                "gold",
                "gold",
                annotations=[Annotations("a", claim_labels=[ClaimLabelRecord(0, "hallucination")])],
            )
        ],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    assert b"hallucination" in export_file(engine, "d", "mhalubench", actor=OPERATOR)
    assert b'"record": "annotations"' in export_file(engine, "d", "canonical", actor=OPERATOR)
    with pytest.raises(FormatError, match="holds spans"):
        export_file(engine, "d", "mhalo", actor=OPERATOR)


def test_an_empty_file_is_never_written():
    with pytest.raises(FormatError, match="empty"):
        refuse_empty(get_format("mhalo-outputs"), b"  \n", "d")
    assert refuse_empty(get_format("mhalo-outputs"), b'{"id": "a"}\n', "d") == b'{"id": "a"}\n'


def _left_out(engine, fmt: str, label_sets: list[str] | None = None) -> list[str]:
    return _left_out_of(engine, "d", fmt, label_sets)


def _left_out_of(engine, dataset: str, fmt: str, label_sets: list[str] | None = None) -> list[str]:
    from db.export_files import export_to

    notes: list[str] = []
    export_to(engine, dataset, fmt, io.BytesIO(), actor=OPERATOR, label_sets=label_sets, left_out=notes)
    return notes


def test_an_export_names_the_label_sets_and_labels_its_format_leaves_out(engine) -> None:
    """Written, but not everything: a detector's raw outputs in Label Studio (read back, the run's
    outputs would all seem to follow their format), the label sets a one-label-set format does not write."""
    from formats.records import RawOutputRecord

    run = spans("eager", "detector")
    run.annotations[0].raw_output = RawOutputRecord("A <hallucination>red</hallucination> cube.", True)
    store(engine, spans(), run)
    assert _left_out(engine, "label-studio") == [
        "detector:eager: its 1 raw outputs are not in the file (Label Studio JSON (tasks with labels) holds spans)"
    ]
    assert _left_out(engine, "mhalo") == [
        "detector:eager is not in the file: MHALO (tagged JSON) writes one label set, gold:gold"
    ]
    assert _left_out(engine, "mhalo", ["gold:gold"]) == []
    assert _left_out(engine, "canonical") == []  # keeps everything


def test_every_kind_of_label_a_format_has_no_place_for_is_named(engine) -> None:
    """The list named only a run's outputs, scores and probabilities: gold's sentence labels and
    response scores went from a Label Studio file without a word. AlignBench's error words are its spans,
    so spans are not named for it."""
    from formats.records import ResponseScoreRecord, SentenceLabelRecord

    gold = spans()
    gold.annotations[0].sentence_labels = [
        SentenceLabelRecord(0, "incorrect"),
        SentenceLabelRecord(1, "correct"),
    ]
    gold.annotations[1].response_score = ResponseScoreRecord(2.0)
    items = [
        dataclasses.replace(item, source_model="m") for item in ITEMS
    ]  # AlignBench names captions by model
    import_bundle(engine, Bundle(DatasetRecord("d", "mhalo"), items, [gold]), actor=OPERATOR)
    assert _left_out(engine, "label-studio") == [
        "gold:gold: its 2 sentence labels, 1 response scores are not in the file "
        "(Label Studio JSON (tasks with labels) holds spans)"
    ]
    assert _left_out(engine, "alignbench") == [
        "gold:gold: its 1 response scores are not in the file "
        "(AlignBench sentence rows (CSV, JSONL, Parquet) holds sentence labels)"
    ]
    # MMHal holds response scores: written, with what it cannot hold named (it was refused outright).
    assert _left_out(engine, "mmhal") == [
        "gold:gold: its 3 spans, 2 sentence labels are not in the file "
        "(MMHal-Bench (questions, answers and 0-6 ratings) holds response scores)"
    ]


def test_mmhal_names_the_label_set_it_writes_the_scores_of(engine) -> None:
    """Gold's spans beside a judge's ratings: MMHal writes the judge's ratings (gold has none), and the
    list named gold as the one written and the judge as left out."""
    from formats.records import ResponseScoreRecord

    judge = LabelSetRecord(
        "detector", "judge", annotations=[Annotations("a", response_score=ResponseScoreRecord(2.0))]
    )
    store(engine, spans(), judge)
    assert _left_out(engine, "mmhal") == [
        "gold:gold is not in the file: MMHal-Bench (questions, answers and 0-6 ratings) writes one label "
        "set, detector:judge"
    ]
    written = json.loads(export_file(engine, "d", "mmhal", actor=OPERATOR))
    assert [(r.get("rating"), r.get("judge")) for r in written] == [(2, None), (None, None)]


@pytest.mark.parametrize(
    ("source", "fmt"),
    [("mhalo", "typed-tags"), ("mhalo", "ragtruth"), ("mhalo", "halloc"), ("ragtruth", "mhalo")],
)
def test_a_dataset_read_from_another_format_is_written_in_this_ones_own_layout(engine, source, fmt) -> None:
    """A record's field names are its own format's: a MHALO dataset as typed tags had ``test_solution``
    and the rest, empty, and its file could not be read back."""
    from db.exporter import export_bundle
    from db.transfer import import_file
    from formats.base import ReadOptions

    mhalo = [
        {
            "id": "a",
            "test_solution": "Two cats.",
            "hallucinated_solution": "<hallucination>Two</hallucination> cats.",
        },
        {"id": "b", "test_solution": "A dog.", "hallucinated_solution": "A dog."},
    ]
    data = json.dumps(mhalo).encode()
    if source == "ragtruth":  # the same records, as a dataset read from RAGTruth
        store(engine)  # (another dataset beside it changes nothing)
        first = import_file(
            engine,
            data,
            source="m.json",
            format_name="mhalo",
            options=ReadOptions(dataset="m"),
            actor=OPERATOR,
        )
        assert first.ok, first.summary()
        data = export_file(engine, "m", "ragtruth", actor=OPERATOR)
    first = import_file(
        engine, data, source="s", format_name=source, options=ReadOptions(dataset="s"), actor=OPERATOR
    )
    assert first.ok, first.summary()
    written = export_file(engine, "s", fmt, actor=OPERATOR)
    foreign = b'"hallucinated_solution"' if source == "mhalo" else b'"labels"'
    assert foreign not in written  # the source format's own field names
    back = import_file(
        engine, written, source="x", format_name=fmt, options=ReadOptions(dataset="x"), actor=OPERATOR
    )
    assert back.ok, back.summary()
    bundle = export_bundle(engine, "x", actor=OPERATOR)
    gold = {a.item: [(sp.start, sp.end) for sp in a.spans] for a in bundle.label_sets[0].annotations}
    assert [(i.response, gold.get(i.external_id, [])) for i in bundle.items] == [
        ("Two cats.", [(0, 3)]),
        ("A dog.", []),
    ]


def test_items_of_two_formats_in_one_dataset_each_keep_their_own_layout(engine) -> None:
    """A dataset first read from MHALO, then given a typed-tags file: each item's layout is its file's."""
    from db.transfer import import_file
    from formats.base import ReadOptions

    mhalo = [
        {
            "id": "m1",
            "test_solution": "A dog.",
            "hallucinated_solution": "A <hallucination>dog</hallucination>.",
        }
    ]
    typed = b'{"id": "t1", "prompt": "Count.", "tagged": "<Number>Two</Number> cats."}\n'
    for data, fmt in ((json.dumps(mhalo).encode(), "mhalo"), (typed, "typed-tags")):
        done = import_file(
            engine,
            data,
            source=f"f.{fmt}",
            format_name=fmt,
            options=ReadOptions(dataset="mix"),
            actor=OPERATOR,
        )
        assert done.ok, done.summary()
    for fmt in ("mhalo", "typed-tags"):
        written = export_file(engine, "mix", fmt, actor=OPERATOR)
        back = import_file(
            engine,
            written,
            source="x",
            format_name=fmt,
            options=ReadOptions(dataset=f"x-{fmt}"),
            actor=OPERATOR,
        )
        assert back.ok, (fmt, back.summary())


def test_label_studio_keeps_an_item_checked_and_found_clean(engine) -> None:
    """An annotation with an empty result: without it, the item read back as never checked by gold,
    and every metric over gold-checked items changed after a round trip."""
    from db.exporter import export_bundle
    from db.transfer import import_file
    from formats.base import ReadOptions
    from formats.records import ItemStatusRecord

    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[
            Annotations("a", [SpanRecord(2, 5)]),
            Annotations("b", statuses=[ItemStatusRecord("spans", "done", None)]),
        ],
    )
    store(engine, gold)
    tasks = json.loads(export_file(engine, "d", "label-studio", actor=OPERATOR))
    assert [len(t["annotations"]) for t in tasks] == [1, 1]
    assert tasks[1]["annotations"][0]["result"] == []
    back = import_file(
        engine,
        json.dumps(tasks).encode(),
        source="ls.json",
        format_name="label-studio",
        options=ReadOptions(dataset="copy"),
        actor=OPERATOR,
    )
    assert back.ok, back.summary()
    copy = export_bundle(engine, "copy", actor=OPERATOR)
    checked = {
        a.item: [s.status for s in a.statuses if s.task == "spans"] for a in copy.label_sets[0].annotations
    }
    assert checked == {"a": ["done"], "b": ["done"]}


def test_halloc_names_the_spans_it_can_only_write_in_another_group(engine) -> None:
    """HalLoc has four groups and no untyped part: a span typed 'Color Attribute' (or not typed) was
    written as an 'object' part without a word, and read back typed 'object'."""
    gold = spans()
    gold.annotations[0].spans = [SpanRecord(2, 5, "Color Attribute"), SpanRecord(14, 18, "Attribute")]
    gold.annotations[1].spans = [SpanRecord(0, 3)]
    store(engine, gold)
    groups = "(its groups: object, attribute, relationship, scene)"
    assert _left_out(engine, "halloc") == [
        f"gold:gold: 1 spans of type 'Color Attribute' are written as HalLoc 'object' parts {groups}",
        f"gold:gold: 1 spans of type 'Attribute' are written as HalLoc 'attribute' parts {groups}",
        f"gold:gold: 1 untyped spans are written as HalLoc 'object' parts {groups}",
    ]
    written = json.loads(export_file(engine, "d", "halloc", actor=OPERATOR))
    assert [{g: len(parts) for g, parts in r["annotations"].items() if parts} for r in written] == [
        {"object": 1, "attribute": 1},
        {"object": 1},
    ]
    # Spans typed by a group are written as they are, and nothing is said.
    gold.annotations[0].spans = [SpanRecord(2, 5, "attribute")]
    import_bundle(engine, Bundle(DatasetRecord("e", "halloc"), list(ITEMS), [gold]), actor=OPERATOR)
    assert _left_out_of(engine, "e", "halloc") == [
        f"gold:gold: 1 untyped spans are written as HalLoc 'object' parts {groups}"
    ]


def test_label_studio_keeps_where_an_annotator_stands_on_each_item(engine) -> None:
    """An annotator's marks did not come back: "checked, found nothing" was written as an empty
    annotation but read back as nothing, "done" was lost beside spans, "skipped" and "unsure" were not
    written. Label Studio's own annotation (done), cancelled annotation (skipped) and draft (not done
    yet; postponed: unsure) keep them."""
    from db.exporter import export_bundle
    from db.transfer import import_file
    from formats.base import ReadOptions
    from formats.records import ItemStatusRecord

    def mark(status: str, note: str | None = None) -> list[ItemStatusRecord]:
        return [ItemStatusRecord("spans", status, note)]

    items = [ItemRecord(ext, "A red cube.") for ext in "abcde"]
    alice = LabelSetRecord(
        "human",
        "alice",
        annotator="alice",
        annotations=[
            Annotations("a", [SpanRecord(2, 5, "Color")], statuses=mark("done")),
            Annotations("b", statuses=mark("done")),
            Annotations("c", statuses=mark("skipped")),
            Annotations("d", [SpanRecord(6, 10)], statuses=mark("unsure", "which cube?")),
            Annotations("e", [SpanRecord(2, 5)]),
        ],
    )
    import_bundle(
        engine, Bundle(DatasetRecord("d", "canonical", label_kinds=["span"]), items, [alice]), actor=OPERATOR
    )
    assert _left_out(engine, "label-studio") == [
        "human:alice: 1 notes of items marked unsure are not in the file"
    ]
    exported = export_file(engine, "d", "label-studio", actor=OPERATOR)
    back = import_file(
        engine,
        exported,
        source="ls.json",
        format_name="label-studio",
        options=ReadOptions(dataset="copy"),
        actor=OPERATOR,
    )
    assert back.ok, back.summary()

    def stands(dataset: str) -> dict[str, tuple[list[tuple[int, int, str | None]], list[str]]]:
        (label_set,) = export_bundle(engine, dataset, actor=OPERATOR).label_sets
        assert (label_set.kind, label_set.name) == ("human", "alice")
        return {
            a.item: ([(s.start, s.end, s.type) for s in a.spans], [s.status for s in a.statuses])
            for a in label_set.annotations
        }

    assert (
        stands("copy")
        == stands("d")
        == {
            "a": ([(2, 5, "Color")], ["done"]),
            "b": ([], ["done"]),
            "c": ([], ["skipped"]),
            "d": ([(6, 10, None)], ["unsure"]),
            "e": ([(2, 5, None)], []),
        }
    )


@pytest.mark.parametrize(
    ("fmt", "label_set", "title"),
    [
        ("mhalo", "gold:gold", "MHALO (tagged JSON)"),
        ("mhalo-outputs", "detector:eager", "MHALO-style detector outputs (<Tagged_Text>)"),
        ("word-index", "detector:eager", "Word-index spans (JSON list of {start, end, text})"),
    ],
)
def test_a_format_whose_spans_have_no_type_names_the_typed_spans(engine, fmt, label_set, title) -> None:
    """An annotator's span types (MHALO files have none; people add them in the app) were dropped by
    an MHALO export without a word."""
    gold, run = spans(), spans("eager", "detector")
    for label in (gold, run):
        label.annotations[0].spans[0].type = "Color Attribute"
        label.annotations[1].spans[0].type = "Object"
    store(engine, gold, run)
    assert f"{label_set}: 2 typed spans are written untyped ({title} has no span types)" in _left_out(
        engine, fmt, [label_set]
    )
