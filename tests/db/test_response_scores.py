"""Response scores in the store (SQLite and PostgreSQL): MMHal-Bench files and ratings files through
the importer, all or nothing and idempotent; export; the labeling action with its log, versions and undo."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Forbidden
from db.export_files import export_file
from db.exporter import export_bundle
from db.import_undo import recent_imports, undo_import
from db.importer import import_bundle
from db.repositories import labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from formats.problems import ImportRejected
from formats.records import Annotations, Bundle, DatasetRecord, LabelSetRecord, ResponseScoreRecord
from tests.formats.mmhal_sample import IDS, RECORDS, sample_bytes


def _count(engine, model=m.ResponseScore) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def _import(engine, data: bytes, **kwargs):
    return import_file(
        engine,
        data,
        source="mmhal.json",
        format_name="mmhal",
        options=ReadOptions(dataset="mm"),
        actor=OPERATOR,
        **kwargs,
    )


def _scores(engine, kind: str, name: str) -> dict[str, tuple]:
    bundle = export_bundle(engine, "mm", [f"{kind}:{name}"], actor=OPERATOR)
    return {
        a.item: (a.response_score.score, a.response_score.hallucination)
        for ls in bundle.label_sets
        for a in ls.annotations
        if a.response_score is not None
    }


def test_an_mmhal_file_imports_items_and_the_judges_scores(engine) -> None:
    outcome = _import(engine, sample_bytes())
    assert outcome.ok, [str(p) for p in outcome.problems]
    assert outcome.result.items_created == 4 and outcome.result.rows["response_scores"] == 3
    item = get_item(engine, 1, IDS[2])
    assert (item.prompt, item.subset, item.reference) == (
        RECORDS[2]["question"],
        "attribute",
        RECORDS[2]["gt_answer"],
    )
    assert _scores(engine, "detector", "gpt-4") == {
        IDS[0]: (1.0, True),
        IDS[1]: (5.0, False),
        IDS[2]: (2.0, None),
    }
    with Session(engine) as session:
        row = session.scalar(select(m.ResponseScore).where(m.ResponseScore.score == 5.0))
        assert (row.scale_min, row.scale_max, row.version) == (0, 6, 1)
        assert row.rationale == RECORDS[1]["gpt4_review"]


def test_a_score_outside_the_scale_rejects_the_file_and_names_the_record(engine) -> None:
    outcome = _import(engine, sample_bytes(r2={"rating": 9}))
    assert not outcome.ok
    (error,) = outcome.errors
    assert (error.file, error.record, error.field) == ("mmhal.json", "#2", "rating")
    assert "9 is outside the scale 0-6" in error.reason
    assert _count(engine) == 0 and _count(engine, m.Item) == 0


def test_the_importer_itself_refuses_a_score_off_its_scale(engine) -> None:
    assert _import(engine, sample_bytes()).ok
    bad = Bundle(
        DatasetRecord("mm", "mmhal"),
        label_sets=[
            LabelSetRecord(
                kind="gold",
                name="gold",
                annotations=[
                    Annotations(IDS[0], response_score=ResponseScoreRecord(4)),
                    Annotations(IDS[1], response_score=ResponseScoreRecord(6.5)),
                    Annotations(IDS[2], response_score=ResponseScoreRecord(3, scale_min=1, scale_max=5)),
                ],
            )
        ],
    )
    with pytest.raises(ImportRejected) as rejected:
        import_bundle(engine, bad, source="gold.jsonl", actor=OPERATOR)
    assert [(p.record, p.field) for p in rejected.value.problems] == [
        (f"#1 (id={IDS[1]})", "gold.response_score.score"),
        (f"#2 (id={IDS[2]})", "gold.response_score.scale_min"),
    ]
    assert "6.5 is outside the scale 0-6" in rejected.value.problems[0].reason
    assert _count(engine) == 3  # only the judge's, from the first import


def test_reimporting_is_idempotent_and_a_changed_rating_needs_replace_and_undoes(engine) -> None:
    assert _import(engine, sample_bytes()).ok
    again = _import(engine, sample_bytes())
    assert again.ok and again.result.items_created == 0 and again.result.rows == {}
    assert again.result.changes.unchanged == {"response_scores": 3}
    changed = _import(engine, sample_bytes(r0={"rating": 4, "hallucination": False}))
    assert not changed.ok and changed.refused_changes is not None
    assert changed.refused_changes.counts == {
        "detector:gpt-4": {"response_scores": {"removed": 0, "changed": 1, "added": 0}}
    }
    assert _scores(engine, "detector", "gpt-4")[IDS[0]] == (1.0, True)
    assert _import(engine, sample_bytes(r0={"rating": 4, "hallucination": False}), replace_existing=True).ok
    assert _scores(engine, "detector", "gpt-4")[IDS[0]] == (4.0, False)
    undo_import(engine, recent_imports(engine)[0].log_id, actor=OPERATOR)
    assert _scores(engine, "detector", "gpt-4")[IDS[0]] == (1.0, True)
    assert _count(engine) == 3


def test_a_ratings_file_imports_as_gold_and_exports_back(engine, tmp_path) -> None:
    assert _import(engine, sample_bytes()).ok
    data = json.dumps({IDS[0]: 0, IDS[1]: 6, IDS[3]: {"rating": 3, "hallucination": False}}).encode()
    outcome = import_predictions(
        engine,
        data,
        source="gold.json",
        dataset="mm",
        detector="gold",
        format_name="mmhal-ratings",
        options=ReadOptions(label_set_kind="gold"),
        actor=OPERATOR,
    )
    assert outcome.ok, [str(p) for p in outcome.problems]
    assert [(v.kind, v.name) for v in list_label_sets(engine, 1)] == [("gold", "gold"), ("detector", "gpt-4")]
    assert _scores(engine, "gold", "gold") == {IDS[0]: (0.0, None), IDS[1]: (6.0, None), IDS[3]: (3.0, False)}
    csv = export_file(
        engine, "mm", "mmhal-ratings", label_sets=["gold:gold"], filename="gold.csv", actor=OPERATOR
    ).decode()
    assert csv.splitlines() == [
        "id,rating,hallucination,rationale",
        f"{IDS[0]},0,,",
        f"{IDS[1]},6,,",
        f"{IDS[3]},3,False,",
    ]
    whole = json.loads(export_file(engine, "mm", "mmhal", label_sets=["detector:gpt-4"], actor=OPERATOR))
    assert whole == RECORDS


def test_a_ratings_file_off_the_scale_writes_nothing(engine) -> None:
    assert _import(engine, sample_bytes()).ok
    data = f'{{"id": "{IDS[0]}", "rating": 3}}\n{{"id": "{IDS[1]}", "rating": 12}}\n'.encode()
    outcome = import_predictions(
        engine,
        data,
        source="r.jsonl",
        dataset="mm",
        detector="r",
        format_name="mmhal-ratings",
        actor=OPERATOR,
    )
    assert not outcome.ok
    assert [(p.record, p.field) for p in outcome.errors] == [(f"#1 (id={IDS[1]})", "rating")]
    assert _count(engine) == 3


@pytest.fixture
def rater(engine):
    assert _import(engine, sample_bytes()).ok
    alice = get_or_create_annotator(engine, "alice")
    return engine, alice.id, human_label_set(engine, 1, alice.id).id


def _mine(engine, label_set_id: int, item_id: int = 1):
    return item_annotations(engine, item_id, [label_set_id])[label_set_id].response_score


def test_scoring_a_response_is_logged_version_checked_and_undoable(rater) -> None:
    engine, who, ls = rater
    created = labeling.set_response_score(engine, ls, 1, 4, who, expected_version=labeling.ABSENT)
    assert created.description == "response scored 4 on the 0–6 scale"
    labeling.set_response_score(
        engine, ls, 1, 4, who, hallucination=True, rationale="wrong colour", expected_version=1
    )
    shown = _mine(engine, ls)
    assert (shown.score, shown.hallucination, shown.rationale, shown.version) == (
        4.0,
        True,
        "wrong colour",
        2,
    )
    with pytest.raises(labeling.StaleEdit):
        labeling.set_response_score(engine, ls, 1, 2, who, expected_version=1)
    with Session(engine) as session:
        entry = session.scalars(
            select(m.EditLog).where(m.EditLog.entity == "response_scores").order_by(m.EditLog.id.desc())
        ).first()
    assert entry.before["hallucination"] is None and entry.after["hallucination"] is True
    assert entry.after["description"] == "response scored 4 on the 0–6 scale, hallucination"
    undone = labeling.undo_last(engine, who, [ls], item_id=1, task=labeling.RESPONSE_SCORES)
    assert undone.description == "undid: response scored 4 on the 0–6 scale, hallucination"
    assert _mine(engine, ls).hallucination is None
    labeling.undo_last(engine, who, [ls], item_id=1, task=labeling.RESPONSE_SCORES)
    assert _mine(engine, ls) is None


@pytest.mark.parametrize(("rationale", "says"), [("wrong\x00colour", "NUL"), ("\udc00", "surrogate")])
def test_a_rationale_no_store_can_keep_is_refused_with_a_message(rater, rationale: str, says: str) -> None:
    engine, who, ls = rater
    with pytest.raises(ValueError, match=f"The rationale contains .*{says}"):
        labeling.set_response_score(engine, ls, 1, 4, who, rationale=rationale)
    assert _mine(engine, ls) is None


def test_a_score_off_the_scale_or_in_gold_is_refused(rater) -> None:
    engine, who, ls = rater
    with pytest.raises(ValueError, match="from 0 to 6; got 7"):
        labeling.set_response_score(engine, ls, 1, 7, who)
    with pytest.raises(ValueError, match="is a number"):
        labeling.set_response_score(engine, ls, 1, float("nan"), who)
    judge = next(v.id for v in list_label_sets(engine, 1) if v.kind == "detector")
    with pytest.raises(Forbidden, match="come from its run"):
        labeling.set_response_score(engine, judge, 1, 3, who)
    assert _mine(engine, ls) is None and _mine(engine, judge).score == 1.0
