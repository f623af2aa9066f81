"""A person's verdicts on a detector's triplets go out with an export and come back with its import.

The Judge triplets page stores each verdict in the judge's own label set, pointing at the detector's
triplet. These tests judge through the same repository call the page makes, on real SQLite and
PostgreSQL, then move the dataset as a canonical file: the verdicts must arrive on the copy's detector
triplets, a second import of the same file must change nothing, and a file naming a triplet that does
not exist must be refused by record and field with nothing written.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.export_files import export_to
from db.exporter import export_bundle
from db.import_changes import ReplaceRequired
from db.import_undo import UndoRefused, undo_import
from db.importer import import_bundle, import_bundles
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.label_sets import human_label_set
from db.transfer import import_file
from formats.base import ReadOptions
from formats.problems import ImportRejected
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SpanRecord,
    TripletJudgmentRecord,
    TripletRecord,
)
from formats.registry import get_format


def _bundle() -> Bundle:
    items = [
        ItemRecord(
            external_id=ext,
            response="A cube sits left of a ball.",
            reference_triplets=[TripletRecord("cube", "left of", "ball")],
        )
        for ext in ("q1", "q2")
    ]
    extracted = {
        "q1": [TripletRecord("cube", "left of", "ball"), TripletRecord("cube", "is", "red")],
        "q2": [TripletRecord("ball", "is", "blue")],
    }
    detector = LabelSetRecord(
        kind="detector",
        name="extractor",
        annotations=[Annotations(ext, triplets=triplets) for ext, triplets in extracted.items()],
    )
    return Bundle(
        dataset=DatasetRecord(name="scenes", source_format="canonical", label_kinds=["triplet"]),
        items=items,
        label_sets=[detector],
    )


@pytest.fixture
def judged(engine):
    """The dataset with alice's verdicts on the extractor's triplets (two of q1's, one of q2's), given
    as the page gives them; the engine and alice's label set id."""
    import_bundle(engine, _bundle(), actor=OPERATOR)
    alice = get_or_create_annotator(engine, "alice")
    label_set = human_label_set(engine, 1, alice.id)
    with Session(engine) as session:
        triplets = {
            (ext, index): triplet_id
            for triplet_id, ext, index in session.execute(
                select(m.Triplet.id, m.Item.external_id, m.Triplet.index)
                .join(m.Item, m.Item.id == m.Triplet.item_id)
                .where(m.Triplet.label_set_id.is_not(None))
            )
        }
    judge = labeling.set_triplet_judgment
    judge(engine, label_set.id, triplets[("q1", 0)], "yes", alice.id)
    judge(engine, label_set.id, triplets[("q1", 1)], "no", alice.id, wrong_part="object2")
    judge(engine, label_set.id, triplets[("q2", 0)], "no", alice.id, wrong_part="relation")
    return engine, label_set.id


def _verdicts(engine, dataset: str) -> set[tuple[str, str, int, str | None, str | None]]:
    """Every stored verdict of a human label set on another label set's triplet, as (judge, item,
    triplet index, verdict, wrong part), with the triplet checked to be the extractor's."""
    with Session(engine) as session:
        judge = m.LabelSet.__table__.alias("judge")
        rows = session.execute(
            select(
                judge.c.name,
                m.Item.external_id,
                m.Triplet.index,
                m.TripletJudgment.verdict,
                m.TripletJudgment.wrong_part,
                m.LabelSet.name,
            )
            .join(m.Triplet, m.Triplet.id == m.TripletJudgment.triplet_id)
            .join(m.LabelSet, m.LabelSet.id == m.Triplet.label_set_id)
            .join(judge, judge.c.id == m.TripletJudgment.label_set_id)
            .join(m.Item, m.Item.id == m.TripletJudgment.item_id)
            .join(m.Dataset, m.Dataset.id == m.Item.dataset_id)
            .where(m.Dataset.name == dataset)
        ).all()
    assert {row[-1] for row in rows} <= {"extractor"}
    return {tuple(row[:-1]) for row in rows}


def _canonical(engine, dataset: str = "scenes") -> bytes:
    return get_format("canonical").write(export_bundle(engine, dataset, actor=OPERATOR))


JUDGED = {
    ("alice", "q1", 0, "yes", None),
    ("alice", "q1", 1, "no", "object2"),
    ("alice", "q2", 0, "no", "relation"),
}


def test_the_export_carries_the_verdicts_by_label_set_and_position(judged) -> None:
    engine, _ = judged
    lines = [json.loads(line) for line in _canonical(engine).splitlines()]
    alice = {
        row["item"]: row["triplet_judgments"]
        for row in lines
        if row["record"] == "annotations" and row["label_set"]["name"] == "alice"
    }
    assert alice["q1"] == [
        {
            "label_set_kind": "detector",
            "label_set_name": "extractor",
            "index": 0,
            "verdict": "yes",
            "wrong_part": None,
        },
        {
            "label_set_kind": "detector",
            "label_set_name": "extractor",
            "index": 1,
            "verdict": "no",
            "wrong_part": "object2",
        },
    ]
    assert [v["wrong_part"] for v in alice["q2"]] == ["relation"]
    # Records with no such verdicts are written as before (an earlier Spanlight reads the file).
    assert all(
        "triplet_judgments" not in row for row in lines if row.get("label_set", {}).get("name") == "extractor"
    )


def test_the_verdicts_arrive_on_the_copys_triplets_and_a_second_import_changes_nothing(judged) -> None:
    engine, _ = judged
    data = _canonical(engine)
    first = import_file(
        engine, data, source="scenes.jsonl", actor=OPERATOR, options=ReadOptions(dataset="copy")
    )
    assert first.ok, first.problems
    assert first.result.rows["triplet_judgments"] == 3
    assert _verdicts(engine, "copy") == JUDGED
    assert _verdicts(engine, "scenes") == JUDGED

    again = import_file(
        engine, data, source="scenes.jsonl", actor=OPERATOR, options=ReadOptions(dataset="copy")
    )
    assert again.ok, again.problems
    assert "triplet_judgments" not in again.result.rows
    assert again.result.changes.unchanged["triplet_judgments"] == 3
    assert _verdicts(engine, "copy") == JUDGED
    # And the copy exports as the original did.
    assert _canonical(engine, "copy") == data.replace(b'"name": "scenes"', b'"name": "copy"')


def test_verdicts_listed_before_the_label_set_that_extracted_the_triplets_are_imported(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    bundle.dataset.name = "reversed"
    bundle.label_sets.reverse()  # alice's verdicts first, the extractor's triplets after them
    assert [ls.name for ls in bundle.label_sets] == ["alice", "extractor"]
    result = import_bundle(engine, bundle, actor=OPERATOR)
    assert result.rows["triplet_judgments"] == 3
    assert _verdicts(engine, "reversed") == JUDGED


def test_a_changed_verdict_needs_replacing_and_the_import_can_be_undone(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments[0].verdict = "no"
    alice.annotations[0].triplet_judgments[0].wrong_part = "object1"
    with pytest.raises(ReplaceRequired) as refused:
        import_bundle(engine, bundle, actor=OPERATOR)
    assert refused.value.changes.counts["human:alice"]["triplet_judgments"] == {
        "removed": 0,
        "changed": 1,
        "added": 0,
    }
    assert _verdicts(engine, "scenes") == JUDGED

    import_bundle(engine, bundle, actor=OPERATOR, replace_existing=True)
    changed = (JUDGED - {("alice", "q1", 0, "yes", None)}) | {("alice", "q1", 0, "no", "object1")}
    assert _verdicts(engine, "scenes") == changed
    with Session(engine) as session:
        log_id = session.scalar(select(func.max(m.EditLog.id)).where(m.EditLog.action == "import"))
    undo_import(engine, log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED


def test_an_undo_whose_judged_triplet_is_gone_is_refused_and_writes_nothing(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments.pop()  # the import takes back alice's verdict on q1's triplet 1
    import_bundle(engine, Bundle(bundle.dataset, label_sets=[alice]), actor=OPERATOR, replace_existing=True)
    with Session(engine) as session:
        log_id = session.scalar(select(func.max(m.EditLog.id)).where(m.EditLog.action == "import"))
    # Then that triplet goes: a new run of the extractor finds one triplet in q1.
    extractor = next(ls for ls in bundle.label_sets if ls.name == "extractor")
    extractor.annotations[0].triplets = extractor.annotations[0].triplets[:1]
    import_bundle(
        engine, Bundle(bundle.dataset, label_sets=[extractor]), actor=OPERATOR, replace_existing=True
    )
    before = _verdicts(engine, "scenes")
    with pytest.raises(UndoRefused, match=r"detector:extractor has no triplet 1 on this item \(it has 1\)"):
        undo_import(engine, log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == before


@pytest.mark.parametrize(
    ("verdict", "field", "says"),
    [
        (
            TripletJudgmentRecord("detector", "extractor", 2, "yes"),
            "[0]",
            "has no triplet 2 on this item (it has 2)",
        ),
        (TripletJudgmentRecord("detector", "nobody", 0, "yes"), "[0]", "has no label set detector:nobody"),
        (TripletJudgmentRecord("human", "alice", 0, "yes"), "[0]", "names its own label set"),
        (
            TripletJudgmentRecord("detector", "extractor", 0, "maybe"),
            "[0].verdict",
            "'maybe' is not yes, no or empty",
        ),
        (
            TripletJudgmentRecord("critic", "extractor", 0, "yes"),
            "[0].label_set_kind",
            "'critic' is not one of",
        ),
        (
            TripletJudgmentRecord("detector", "extractor", -1, "yes"),
            "[0].index",
            "is not a triplet's position",
        ),
        (TripletJudgmentRecord("detector", "extractor", 1, "yes"), "[1]", "the same triplet is judged twice"),
    ],
)
def test_a_verdict_that_fits_no_triplet_is_refused_by_record_and_field_and_nothing_is_written(
    judged, verdict: TripletJudgmentRecord, field: str, says: str
) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    bundle.dataset.name = "copy"
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments[0] = verdict  # q1's verdict on the extractor's triplet 0
    data = get_format("canonical").write(bundle)
    outcome = import_file(engine, data, source="scenes.jsonl", actor=OPERATOR)
    assert not outcome.ok
    [problem] = [p for p in outcome.problems if p.severity == "error"]
    assert (problem.file, problem.record, problem.field) == (
        "scenes.jsonl",
        "#0 (id=q1)",
        f"alice.triplet_judgments{field}",
    )
    assert says in problem.reason
    with Session(engine) as session:
        assert (
            session.scalar(select(func.count()).select_from(m.Dataset).where(m.Dataset.name == "copy")) == 0
        )
    assert _verdicts(engine, "scenes") == JUDGED


def test_skipping_bad_records_writes_the_sound_verdicts_and_reports_the_other(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    bundle.dataset.name = "copy"
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[1].triplet_judgments.append(TripletJudgmentRecord("detector", "extractor", 5, "yes"))
    data = get_format("canonical").write(bundle)
    outcome = import_file(engine, data, source="scenes.jsonl", actor=OPERATOR, allow_skip=True)
    assert outcome.ok
    assert [(p.record, p.field) for p in outcome.problems] == [("#1 (id=q2)", "alice.triplet_judgments[1]")]
    assert _verdicts(engine, "copy") == JUDGED


def test_a_reimport_replacing_a_label_set_keeps_its_verdicts_on_reference_triplets(judged) -> None:
    engine, alice_set = judged
    with Session(engine) as session:
        reference = session.scalar(select(m.Triplet.id).where(m.Triplet.label_set_id.is_(None)))
        alice_id = session.scalar(select(m.Annotator.id).where(m.Annotator.name == "alice"))
    labeling.set_triplet_judgment(engine, alice_set, reference, "yes", alice_id)
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments.pop()
    import_bundle(engine, Bundle(bundle.dataset, label_sets=[alice]), actor=OPERATOR, replace_existing=True)
    with Session(engine) as session:
        kept = session.scalar(
            select(m.TripletJudgment.verdict).where(
                m.TripletJudgment.triplet_id == reference, m.TripletJudgment.label_set_id == alice_set
            )
        )
    assert kept == "yes"
    assert _verdicts(engine, "scenes") == JUDGED - {("alice", "q1", 1, "no", "object2")}


def test_a_new_run_of_the_extractor_keeps_the_verdicts_on_the_triplets_it_finds_again(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    extractor = next(ls for ls in bundle.label_sets if ls.name == "extractor")
    q1, q2 = extractor.annotations
    q1.triplets.append(TripletRecord("ball", "is", "small"))  # a triplet more: only adds
    result = import_bundle(engine, Bundle(bundle.dataset, label_sets=[extractor]), actor=OPERATOR)
    assert result.rows["triplets"] == 3
    assert _verdicts(engine, "scenes") == JUDGED

    q1.triplets[1] = TripletRecord("cube", "is", "green")  # triplet 1 is another one now
    q2.triplets = []
    import_bundle(
        engine, Bundle(bundle.dataset, label_sets=[extractor]), actor=OPERATOR, replace_existing=True
    )
    assert _verdicts(engine, "scenes") == {("alice", "q1", 0, "yes", None)}


def test_an_import_refused_for_another_record_reports_only_that_record(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    bundle.dataset.name = "copy"
    bundle.items.append(ItemRecord(external_id="q3", response=""))
    bundle.items.append(ItemRecord(external_id="q3", response="Again."))  # the same id twice
    outcome = import_file(
        engine, get_format("canonical").write(bundle), source="scenes.jsonl", actor=OPERATOR
    )
    assert not outcome.ok
    assert [(p.record, p.field) for p in outcome.problems if p.severity == "error"] == [
        ("#3 (id=q3)", "external_id")
    ]
    assert _verdicts(engine, "copy") == set()


def _alice_spans(engine) -> Bundle:
    """alice's record of q1 as a file in a format without verdicts gives it: a span only."""
    dataset = export_bundle(engine, "scenes", actor=OPERATOR).dataset
    alice = LabelSetRecord(kind="human", name="alice", annotations=[Annotations("q1", [SpanRecord(2, 6)])])
    return Bundle(dataset, label_sets=[alice])


def test_a_file_without_verdicts_leaves_them_as_they_are_and_its_import_can_be_undone(judged) -> None:
    engine, _ = judged
    result = import_bundle(engine, _alice_spans(engine), actor=OPERATOR)  # adds a span: no replacing
    assert result.rows == {"spans": 1}
    assert _verdicts(engine, "scenes") == JUDGED
    again = import_bundle(engine, _alice_spans(engine), actor=OPERATOR)
    assert again.rows == {} and not again.changes.needs_replace
    with Session(engine) as session:
        log_id = session.scalar(
            select(func.min(m.EditLog.id)).where(m.EditLog.action == "import", m.EditLog.id > 1)
        )
    undo_import(engine, log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(m.Span)) == 0


def test_an_export_of_some_label_sets_carries_the_verdicts_on_those_only(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", ["alice"], actor=OPERATOR)
    assert [ls.name for ls in bundle.label_sets] == ["alice"]
    assert all(not a.triplet_judgments for a in bundle.label_sets[0].annotations)
    bundle.dataset.name = "copy"
    assert import_bundle(engine, bundle, actor=OPERATOR).dataset == "copy"


def test_only_a_format_that_holds_verdicts_gets_records_of_nothing_but_verdicts(judged) -> None:
    from db.exporter import export_batches
    from formats.registry import FORMATS

    engine, _ = judged
    assert [name for name, fmt in FORMATS.items() if fmt.lossless] == ["canonical"]
    [batch] = export_batches(engine, "scenes", ["alice"], actor=OPERATOR, lossless=False)
    assert batch.label_sets[0].annotations == []  # not "alice found nothing in q1 and q2"


def test_a_verdict_left_out_when_skipping_bad_records_does_not_stop_the_undo(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[1].triplet_judgments[0].verdict = "yes"
    alice.annotations[1].triplet_judgments.append(TripletJudgmentRecord("detector", "extractor", 5, "yes"))
    result = import_bundle(
        engine,
        Bundle(bundle.dataset, label_sets=[alice]),
        actor=OPERATOR,
        allow_skip=True,
        replace_existing=True,
    )
    assert [p.field for p in result.problems] == ["alice.triplet_judgments[1]"]
    assert ("alice", "q2", 0, "yes", "relation") in _verdicts(engine, "scenes")
    with Session(engine) as session:
        log_id = session.scalar(select(func.max(m.EditLog.id)).where(m.EditLog.action == "import"))
    undo_import(engine, log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED


def test_a_file_read_in_batches_reports_a_refused_record_once(judged, monkeypatch) -> None:
    from formats import canonical

    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    bundle.dataset.name = "copy"
    extractor = next(ls for ls in bundle.label_sets if ls.name == "extractor")
    extractor.annotations[0].triplets[0].verdict = "maybe"
    data = get_format("canonical").write(bundle)
    reports = []
    for batch_records in (2, 10_000):  # alice's q1 record in a later batch than the extractor's, and not
        monkeypatch.setattr(canonical, "BATCH_RECORDS", batch_records)
        outcome = import_file(engine, data, source="scenes.jsonl", actor=OPERATOR)
        reports.append([(p.record, p.field) for p in outcome.problems if p.severity == "error"])
    assert (
        [field for _, field in reports[0]]
        == [field for _, field in reports[1]]
        == ["extractor.triplets[0].verdict"]
    )


def test_an_item_refused_in_a_later_batch_for_its_score_scale_gets_no_follow_on_verdict_error(judged) -> None:
    from db.importer import import_bundles
    from formats.records import ResponseScoreRecord

    engine, _ = judged
    dataset = export_bundle(engine, "scenes", actor=OPERATOR).dataset
    three = [
        TripletRecord("cube", "left of", "ball"),
        TripletRecord("cube", "is", "red"),
        TripletRecord("a", "b", "c"),
    ]
    first = Bundle(
        dataset,
        label_sets=[
            LabelSetRecord(
                "human",
                "alice",
                annotations=[
                    Annotations(
                        "q1", triplet_judgments=[TripletJudgmentRecord("detector", "extractor", 2, "yes")]
                    )
                ],
            ),
            LabelSetRecord(
                "detector",
                "scorer",
                annotations=[
                    Annotations("q2", response_score=ResponseScoreRecord(0.5, scale_min=0, scale_max=1))
                ],
            ),
        ],
    )
    second = Bundle(
        dataset,
        label_sets=[
            LabelSetRecord("human", "alice"),
            LabelSetRecord("detector", "extractor", annotations=[Annotations("q1", triplets=three)]),
            LabelSetRecord(
                "detector",
                "scorer",
                annotations=[
                    Annotations("q1", response_score=ResponseScoreRecord(7, scale_min=0, scale_max=10))
                ],
            ),
        ],
    )
    problems: list = []
    result = import_bundles(
        engine, [first, second], actor=OPERATOR, problems=problems, allow_skip=True, replace_existing=True
    )
    assert [(p.field, p.severity) for p in result.problems] == [
        ("scorer.response_score.scale_min", "error"),
        ("alice.triplet_judgments", "warning"),
    ]
    assert _verdicts(engine, "scenes") == JUDGED - {
        ("alice", "q1", 0, "yes", None),
        ("alice", "q1", 1, "no", "object2"),
    }


def test_a_gold_record_of_verdicts_only_does_not_mark_the_item_as_checked_for_spans(judged) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    bundle.dataset.name = "copy"
    bundle.dataset.label_kinds = ["span", "triplet"]
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.kind = "gold"  # as an adjudicated verdict promoted to gold is exported
    bundle.label_sets.append(
        LabelSetRecord(kind="gold", name="spans", annotations=[Annotations("q2", [SpanRecord(2, 6)])])
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    with Session(engine) as session:
        covered = session.scalars(
            select(m.Item.external_id)
            .join(m.ItemStatus, m.ItemStatus.item_id == m.Item.id)
            .join(m.Dataset, m.Dataset.id == m.Item.dataset_id)
            .where(m.Dataset.name == "copy", m.ItemStatus.status == "done")
        ).all()
    assert covered == ["q2"]
    assert {v[1:] for v in _verdicts(engine, "copy")} == {v[1:] for v in JUDGED}


# ------------------------------------------------------- verdicts on the triplets of several detectors


@pytest.fixture
def two_judged(judged):
    """``judged``, with a second detector (``parser``) whose one triplet of q1 alice judged too."""
    engine, alice_set = judged
    parser = LabelSetRecord(
        kind="detector",
        name="parser",
        annotations=[Annotations("q1", triplets=[TripletRecord("ball", "is", "round")])],
    )
    import_bundle(engine, Bundle(_bundle().dataset, label_sets=[parser]), actor=OPERATOR)
    triplet, alice_id = _parser_triplet_and_alice(engine)
    labeling.set_triplet_judgment(engine, alice_set, triplet, "no", alice_id, wrong_part="object2")
    return engine, alice_set


def _parser_triplet_and_alice(engine) -> tuple[int, int]:
    """The id of the parser's triplet, and alice's annotator id."""
    with Session(engine) as session:
        triplet = session.scalar(
            select(m.Triplet.id)
            .join(m.LabelSet, m.LabelSet.id == m.Triplet.label_set_id)
            .where(m.LabelSet.name == "parser")
        )
        alice_id = session.scalar(select(m.Annotator.id).where(m.Annotator.name == "alice"))
    return triplet, alice_id


def _all_verdicts(engine) -> set[tuple[str, str, int, str | None, str | None]]:
    """Every stored verdict on a detector's triplet in ``scenes``, as (judged detector, item, triplet
    index, verdict, wrong part)."""
    with Session(engine) as session:
        rows = session.execute(
            select(
                m.LabelSet.name,
                m.Item.external_id,
                m.Triplet.index,
                m.TripletJudgment.verdict,
                m.TripletJudgment.wrong_part,
            )
            .join(m.Triplet, m.Triplet.id == m.TripletJudgment.triplet_id)
            .join(m.LabelSet, m.LabelSet.id == m.Triplet.label_set_id)
            .join(m.Item, m.Item.id == m.TripletJudgment.item_id)
            .where(m.TripletJudgment.label_set_id != m.Triplet.label_set_id)
        ).all()
    return {tuple(row) for row in rows}


ALL_JUDGED = {("extractor", *verdict[1:]) for verdict in JUDGED} | {("parser", "q1", 0, "no", "object2")}


def _last_import(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.max(m.EditLog.id)).where(m.EditLog.action == "import"))


def test_an_export_of_some_label_sets_imports_back_without_touching_the_verdicts_it_leaves_out(
    two_judged,
) -> None:
    engine, _ = two_judged
    assert _all_verdicts(engine) == ALL_JUDGED
    data = get_format("canonical").write(
        export_bundle(engine, "scenes", ["alice", "extractor"], actor=OPERATOR)
    )
    # It carries alice's verdicts on the extractor's triplets, not on the parser's; importing it back
    # into the same dataset changes nothing (it needed replacing and then deleted the parser verdict).
    again = import_file(engine, data, source="scenes.jsonl", actor=OPERATOR)
    assert again.ok, again.problems
    assert not again.result.changes.needs_replace
    assert again.result.changes.unchanged["triplet_judgments"] == 3
    assert _all_verdicts(engine) == ALL_JUDGED


def test_a_changed_verdict_in_such_an_export_replaces_that_verdict_alone_and_undoes(two_judged) -> None:
    engine, _ = two_judged
    bundle = export_bundle(engine, "scenes", ["alice", "extractor"], actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments[0].verdict = "no"  # q1, the extractor's triplet 0
    with pytest.raises(ReplaceRequired) as refused:
        import_bundle(engine, bundle, actor=OPERATOR)
    assert refused.value.changes.counts["human:alice"] == {
        "triplet_judgments": {"removed": 0, "changed": 1, "added": 0}
    }
    import_bundle(engine, bundle, actor=OPERATOR, replace_existing=True)
    changed = ALL_JUDGED - {("extractor", "q1", 0, "yes", None)} | {("extractor", "q1", 0, "no", None)}
    assert _all_verdicts(engine) == changed
    logged = _last_import(engine)
    undo = undo_import(engine, logged, actor=OPERATOR)
    assert _all_verdicts(engine) == ALL_JUDGED
    undo_import(engine, undo.log_id, actor=OPERATOR)  # and the undo undoes
    assert _all_verdicts(engine) == changed


def test_a_verdict_changed_on_another_detectors_triplet_since_the_import_does_not_stop_its_undo(
    two_judged,
) -> None:
    engine, alice_set = two_judged
    bundle = export_bundle(engine, "scenes", ["alice", "extractor"], actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments[0].verdict = "no"
    import_bundle(engine, bundle, actor=OPERATOR, replace_existing=True)
    logged = _last_import(engine)
    # alice then changes her verdict on the parser's triplet of q1: not what the import replaced.
    triplet, alice_id = _parser_triplet_and_alice(engine)
    labeling.set_triplet_judgment(engine, alice_set, triplet, "yes", alice_id)
    undo_import(engine, logged, actor=OPERATOR)
    assert _all_verdicts(engine) == (
        ALL_JUDGED - {("parser", "q1", 0, "no", "object2")} | {("parser", "q1", 0, "yes", None)}
    )


@pytest.mark.parametrize("logged_as", ["verdict_items", "verdict_scope"])
def test_an_import_logged_before_the_reach_was_kept_still_undoes_every_verdict_it_replaced(
    judged, logged_as
) -> None:
    engine, _ = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].triplet_judgments[0].verdict = "no"
    import_bundle(engine, bundle, actor=OPERATOR, replace_existing=True)
    logged = _last_import(engine)
    with Session(engine) as session:  # as such an entry was written: without the tasks of statuses
        entry = session.get(m.EditLog, logged)
        before = json.loads(json.dumps(entry.before))
        [unit] = [u for u in before["label_sets"] if u["name"] == "alice"]
        reach = unit.pop("reach")
        if logged_as == "verdict_items":  # the items alone: every verdict of each
            unit["verdict_items"] = list(reach)
        else:  # the items with the label sets judged
            unit["verdict_scope"] = {ext: kept["judged"] for ext, kept in reach.items()}
        entry.before = before
        session.commit()
    undo = undo_import(engine, logged, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED
    undo_import(engine, undo.log_id, actor=OPERATOR)
    assert ("alice", "q1", 0, "no", None) in _verdicts(engine, "scenes")


def test_verdicts_on_triplets_a_new_run_changes_are_counted_as_removed_and_come_back_with_its_undo(
    judged,
) -> None:
    engine, alice_set = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    extractor = next(ls for ls in bundle.label_sets if ls.name == "extractor")
    q1, q2 = extractor.annotations
    q1.triplets[1] = TripletRecord("cube", "is", "green")  # triplet 1 of q1 is another one now
    q2.triplets = []  # and q2 has none
    run = Bundle(bundle.dataset, label_sets=[extractor])
    with pytest.raises(ReplaceRequired) as refused:
        import_bundle(engine, run, actor=OPERATOR)
    # The report names whose judging goes with the triplets, not only the detector's own rows.
    assert refused.value.changes.counts["human:alice"] == {
        "triplet_judgments": {"removed": 2, "changed": 0, "added": 0}
    }
    assert refused.value.changes.items == ["q1", "q2"]
    assert _verdicts(engine, "scenes") == JUDGED

    import_bundle(engine, run, actor=OPERATOR, replace_existing=True)
    assert _verdicts(engine, "scenes") == {("alice", "q1", 0, "yes", None)}
    logged = _last_import(engine)
    # alice judges the new triplet 1 of q1; undoing the run takes that triplet away, and her verdict on
    # it, and puts back the old triplets with her verdicts on them.
    with Session(engine) as session:
        new_triplet = session.scalar(
            select(m.Triplet.id).where(m.Triplet.subject == "cube", m.Triplet.object == "green")
        )
        alice_id = session.scalar(select(m.Annotator.id).where(m.Annotator.name == "alice"))
    labeling.set_triplet_judgment(engine, alice_set, new_triplet, "yes", alice_id)
    undo = undo_import(engine, logged, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED
    assert undo.rows["triplet_judgments"] >= 2
    # Undoing the undo brings back the run and alice's verdict on its new triplet.
    undo_import(engine, undo.log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == {("alice", "q1", 0, "yes", None), ("alice", "q1", 1, "yes", None)}


def test_a_lost_verdict_whose_judge_is_gone_is_not_put_back(judged) -> None:
    engine, alice_set = judged
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    extractor = next(ls for ls in bundle.label_sets if ls.name == "extractor")
    extractor.annotations[1].triplets = []
    import_bundle(
        engine, Bundle(bundle.dataset, label_sets=[extractor]), actor=OPERATOR, replace_existing=True
    )
    logged = _last_import(engine)
    with Session(engine) as session:  # alice's label set goes, and her verdicts with it
        session.execute(delete(m.LabelSet).where(m.LabelSet.id == alice_set))
        session.commit()
    undo_import(engine, logged, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == set()
    with Session(engine) as session:
        assert (
            session.scalar(
                select(func.count()).select_from(m.Triplet).where(m.Triplet.label_set_id.is_not(None))
            )
            == 3
        )


def _in_two_batches(
    bundle: Bundle, first: LabelSetRecord, second: LabelSetRecord
) -> Callable[[], list[Bundle]]:
    """The input of ``first`` and ``second`` as two batches, the items with the first (afresh each call)."""
    return lambda: [
        Bundle(bundle.dataset, items=bundle.items, label_sets=[first]),
        Bundle(bundle.dataset, label_sets=[second]),
    ]


def _planned_then_imported(engine, batches: Callable[[], list[Bundle]], alice: dict[str, int]) -> None:
    """Plan the batches (refused: they need replacing), then import them: both count alice's verdicts
    as ``alice`` says."""
    with pytest.raises(ReplaceRequired) as planned:
        import_bundles(engine, batches(), actor=OPERATOR, problems=[])
    done = import_bundles(engine, batches(), actor=OPERATOR, problems=[], replace_existing=True)
    for changes in (planned.value.changes, done.changes):
        assert changes.counts["human:alice"] == {"triplet_judgments": alice}


def _extractor_and_alice(engine) -> tuple[Bundle, LabelSetRecord, LabelSetRecord]:
    bundle = export_bundle(engine, "scenes", actor=OPERATOR)
    extractor = next(ls for ls in bundle.label_sets if ls.name == "extractor")
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    return bundle, extractor, alice


def test_an_item_given_in_two_records_of_a_judge_replaces_the_verdicts_both_reach(two_judged) -> None:
    engine, _ = two_judged
    alice = LabelSetRecord(
        kind="human",
        name="alice",
        annotations=[
            Annotations("q1", triplet_judgments=[TripletJudgmentRecord("detector", "extractor", 0, "no")]),
            Annotations("q1", triplet_judgments=[TripletJudgmentRecord("detector", "parser", 0, "yes")]),
        ],
    )
    import_bundle(
        engine, Bundle(_bundle().dataset, label_sets=[alice]), actor=OPERATOR, replace_existing=True
    )
    assert _all_verdicts(engine) == {
        ("extractor", "q1", 0, "no", None),
        ("parser", "q1", 0, "yes", None),
        ("extractor", "q2", 0, "no", "relation"),
    }
    undo_import(engine, _last_import(engine), actor=OPERATOR)
    assert _all_verdicts(engine) == ALL_JUDGED


@pytest.mark.parametrize("extractor_first", [True, False])
def test_a_judge_rewritten_beside_a_detector_whose_triplet_changes_counts_each_verdict_once(
    judged, extractor_first
) -> None:
    """The extractor's triplet 1 of q1 gets other words, and alice's record changes her verdict on it:
    one verdict changed, whichever batch comes first, planned alone or written; and the import, its undo
    and the undo of that undo each leave exactly what they should."""
    engine, _ = judged
    bundle, extractor, alice = _extractor_and_alice(engine)
    extractor.annotations[0].triplets[1] = TripletRecord("cube", "is", "green")
    verdict = next(j for j in alice.annotations[0].triplet_judgments if j.index == 1)
    verdict.verdict, verdict.wrong_part = "yes", None
    batches = _in_two_batches(bundle, *((extractor, alice) if extractor_first else (alice, extractor)))
    _planned_then_imported(engine, batches, {"removed": 0, "changed": 1, "added": 0})
    after = JUDGED - {("alice", "q1", 1, "no", "object2")} | {("alice", "q1", 1, "yes", None)}
    assert _verdicts(engine, "scenes") == after
    undo = undo_import(engine, _last_import(engine), actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED
    again = undo_import(engine, undo.log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == after
    undo_import(engine, again.log_id, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED


def test_a_judges_record_given_as_stored_keeps_its_verdict_on_a_triplet_whose_words_change(judged) -> None:
    """The input gives the extractor's triplet 1 of q1 other words and alice's record as stored, with
    her verdict on triplet 1: the verdict is written on the new triplet (the file says she judged it),
    counted as changed, whether her record comes in the same batch as the extractor's or a later one (as an
    export orders them: a detector's label set before the judges'); importing the same input again
    changes nothing, and the undo puts back the old triplet with her verdict on it."""
    engine, _ = judged
    bundle, extractor, alice = _extractor_and_alice(engine)
    extractor.annotations[0].triplets[1] = TripletRecord("cube", "is", "green")
    batches = _in_two_batches(bundle, extractor, alice)
    _planned_then_imported(engine, batches, {"removed": 0, "changed": 1, "added": 0})
    assert _verdicts(engine, "scenes") == JUDGED
    with Session(engine) as session:  # on the new triplet
        words = session.execute(
            select(m.Triplet.subject, m.Triplet.relation, m.Triplet.object)
            .join(m.TripletJudgment, m.TripletJudgment.triplet_id == m.Triplet.id)
            .where(m.TripletJudgment.verdict == "no", m.TripletJudgment.wrong_part == "object2")
        ).one()
    assert tuple(words) == ("cube", "is", "green")
    logged = _last_import(engine)
    again = import_bundles(engine, batches(), actor=OPERATOR, problems=[])
    assert again.rows == {} and not again.changes.needs_replace
    undo_import(engine, logged, actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED
    with Session(engine) as session:
        assert session.scalar(select(func.count()).where(m.Triplet.object == "green")) == 0


def test_a_judges_record_as_stored_before_the_detector_whose_triplet_changes_loses_that_verdict(
    judged,
) -> None:
    """The other order (the judge's record before the detector's): the verdict goes with the old triplet,
    counted as removed, and the undo puts it back."""
    engine, _ = judged
    bundle, extractor, alice = _extractor_and_alice(engine)
    extractor.annotations[0].triplets[1] = TripletRecord("cube", "is", "green")
    _planned_then_imported(
        engine, _in_two_batches(bundle, alice, extractor), {"removed": 1, "changed": 0, "added": 0}
    )
    assert _verdicts(engine, "scenes") == JUDGED - {("alice", "q1", 1, "no", "object2")}
    undo_import(engine, _last_import(engine), actor=OPERATOR)
    assert _verdicts(engine, "scenes") == JUDGED


def test_a_judges_record_as_stored_judging_a_triplet_the_input_drops_loses_it_and_is_refused_again(
    judged,
) -> None:
    """The input drops the extractor's triplet 1 of q1 and gives alice's record as stored, with her
    verdict on it: the verdict goes (it has nothing left to judge), and the same input imported again is
    refused by record and field, as it judges a triplet the extractor does not have."""
    engine, _ = judged
    bundle, extractor, alice = _extractor_and_alice(engine)
    extractor.annotations[0].triplets = extractor.annotations[0].triplets[:1]
    both = Bundle(bundle.dataset, label_sets=[extractor, alice])
    done = import_bundle(engine, both, actor=OPERATOR, replace_existing=True)
    assert done.changes.counts["human:alice"] == {
        "triplet_judgments": {"removed": 1, "changed": 0, "added": 0}
    }
    assert _verdicts(engine, "scenes") == JUDGED - {("alice", "q1", 1, "no", "object2")}
    with pytest.raises(ImportRejected) as refused:
        import_bundle(engine, both, actor=OPERATOR, replace_existing=True)
    assert [(p.record, p.field, p.reason) for p in refused.value.problems] == [
        (
            "#0 (id=q1)",
            "alice.triplet_judgments[1]",
            "detector:extractor has no triplet 1 on this item (it has 1)",
        )
    ]


def test_an_export_says_which_verdicts_it_leaves_out(judged) -> None:
    """A Tri-HE file has no place for a judge's verdicts on the items' reference triplets (its judgements
    are on a model's extracted triplets), nor for a person's verdicts on a detector's: such an export
    left them out without a word, so a round trip lost them unsaid."""
    engine, alice_set = judged
    with Session(engine) as session:
        reference = session.scalar(select(m.Triplet.id).where(m.Triplet.label_set_id.is_(None)))
        alice_id = session.scalar(select(m.Annotator.id).where(m.Annotator.name == "alice"))
    labeling.set_triplet_judgment(engine, alice_set, reference, "no", alice_id, wrong_part="object2")
    on_reference = (
        "human:alice: not in the file: its verdicts on the items' reference triplets (the scene graph), "
        "1 in all; no format has a place for them"
    )

    def left_out(fmt: str, label_sets: list[str] | None = None) -> list[str]:
        notes: list[str] = []
        export_to(engine, "scenes", fmt, io.BytesIO(), actor=OPERATOR, label_sets=label_sets, left_out=notes)
        return notes

    others = "human:alice: not in the file: its verdicts on triplets of other label sets, 3 in all (only canonical holds them)"
    assert left_out("trihe") == [on_reference, others]
    assert left_out("trihe-judgments") == [on_reference, others]
    assert left_out("canonical") == [on_reference]
    assert left_out("canonical", ["alice"]) == [
        on_reference,
        "human:alice: not in the file: its verdicts on triplets of label sets not exported, 3 in all "
        "(export those label sets too)",
    ]
    assert left_out("trihe", ["extractor"]) == []  # alice's verdicts are not chosen
