"""Writes that never overwrite unseen changes, undo scoped to one item, store errors as messages,
and who may be an annotator."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Forbidden
from db.importer import import_bundle
from db.repositories import labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import (
    InvalidName,
    find_annotator,
    get_or_create_annotator,
    list_annotators,
    validate_name,
)
from db.repositories.label_sets import human_label_set
from formats.records import Annotations, ItemRecord, LabelSetRecord, SentenceLabelRecord
from tests.db.test_importer import RESPONSE, _bundle


@pytest.fixture
def setup(engine):
    bundle = _bundle()
    import_bundle(
        engine,
        _bundle(items=[*bundle.items, ItemRecord(external_id="x2", response=RESPONSE)]),
        actor=OPERATOR,
    )
    alice = get_or_create_annotator(engine, "alice")
    label_set = human_label_set(engine, 1, alice.id)
    return engine, alice.id, label_set.id


def test_expected_absent_refuses_a_label_someone_saved_meanwhile(setup) -> None:
    engine, who, ls = setup
    labeling.set_sentence_label(engine, ls, 1, 0, "correct", who, expected_version=labeling.ABSENT)
    with pytest.raises(labeling.StaleEdit, match="changed by you in another tab or window meanwhile"):
        labeling.set_sentence_label(engine, ls, 1, 0, "incorrect", who, expected_version=labeling.ABSENT)
    claim = 1
    labeling.set_claim_label(engine, ls, claim, "hallucination", who, expected_version=labeling.ABSENT)
    with pytest.raises(labeling.StaleEdit):
        labeling.set_claim_label(
            engine, ls, claim, "non-hallucination", who, expected_version=labeling.ABSENT
        )
    labeling.set_item_status(engine, ls, 1, "spans", "done", who, expected_version=labeling.ABSENT)
    with pytest.raises(labeling.StaleEdit):
        labeling.set_item_status(engine, ls, 1, "spans", "skipped", who, expected_version=labeling.ABSENT)
    labels = item_annotations(engine, 1, [ls])[ls]
    assert labels.sentence_labels[0].label == "correct"
    assert labels.claim_labels[0].label == "hallucination"


def test_a_label_removed_meanwhile_is_not_silently_recreated(setup) -> None:
    engine, who, ls = setup
    labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    labeling.undo_last(engine, who, [ls], item_id=1)
    with pytest.raises(labeling.StaleEdit):
        labeling.set_sentence_label(engine, ls, 1, 0, "incorrect", who, expected_version=1)


def test_undo_acts_on_the_given_item_only(setup) -> None:
    engine, who, ls = setup
    labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    assert labeling.last_undoable(engine, who, [ls], item_id=2) is None
    assert labeling.undo_last(engine, who, [ls], item_id=2) is None
    assert item_annotations(engine, 1, [ls])[ls].sentence_labels[0].label == "correct"
    undone = labeling.undo_last(engine, who, [ls], item_id=1, task="sentences")
    assert undone is not None and undone.item == "x1"
    assert item_annotations(engine, 1, [ls])[ls].sentence_labels == {}


def test_undo_is_scoped_to_the_task(setup) -> None:
    engine, who, ls = setup
    labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    labeling.add_span(engine, ls, 1, 2, 5, None, who)
    undone = labeling.undo_last(engine, who, [ls], item_id=1, task="sentences")
    assert undone is not None and undone.entity == "sentence_labels"
    assert len(item_annotations(engine, 1, [ls])[ls].spans) == 1


def test_undo_refuses_when_the_shown_action_is_no_longer_the_last(setup) -> None:
    engine, who, ls = setup
    shown = labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    labeling.set_sentence_label(engine, ls, 1, 0, "incorrect", who)  # another session of alice
    with pytest.raises(labeling.StaleEdit, match="changed by you in another tab or window meanwhile"):
        labeling.undo_last(engine, who, [ls], item_id=1, expected_log_id=shown.log_id)
    assert item_annotations(engine, 1, [ls])[ls].sentence_labels[0].label == "incorrect"


def test_undo_refuses_when_someone_else_changed_the_row(setup) -> None:
    engine, who, ls = setup
    bob = get_or_create_annotator(engine, "bob")
    labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    with pytest.raises(Forbidden):  # by hand only alice writes alice's labels …
        labeling.set_sentence_label(engine, ls, 1, 0, "unknown", bob.id, expected_version=1)
    # … but an import may replace them. Its first row may get the id of the row it replaced (SQLite
    # reuses the highest id): undo must not take that row for alice's and delete it.
    labels = [SentenceLabelRecord(1, "correct"), SentenceLabelRecord(0, "unknown")]
    replaced = LabelSetRecord(
        kind="human",
        name="alice",
        annotator="alice",
        annotations=[Annotations(item="x1", sentence_labels=labels)],
    )
    import_bundle(engine, _bundle(label_sets=[replaced]), actor=OPERATOR, replace_existing=True)
    with pytest.raises(labeling.StaleEdit, match="changed by someone else meanwhile"):
        labeling.undo_last(engine, who, [ls], item_id=1)
    stored = item_annotations(engine, 1, [ls])[ls].sentence_labels
    assert {k: v.label for k, v in stored.items()} == {0: "unknown", 1: "correct"}


def test_first_inserts_racing_on_one_row_all_succeed_and_log_in_commit_order(setup) -> None:
    engine, who, ls = setup
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def write(k: int) -> None:
        barrier.wait()
        try:
            labeling.set_sentence_label(engine, ls, 1, 1, ("correct", "incorrect", "unknown")[k % 3], who)
        except BaseException as error:  # noqa: BLE001 - the test reports whatever escaped
            errors.append(error)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with Session(engine) as session:
        row = session.scalar(select(m.SentenceLabel).where(m.SentenceLabel.label_set_id == ls))
        assert row is not None
        last = session.scalars(
            select(m.EditLog).where(m.EditLog.entity == "sentence_labels").order_by(m.EditLog.id)
        ).all()
    assert [e.action for e in last].count("create") == 1 and len(last) == 8
    assert last[-1].after is not None and last[-1].after["label"] == row.label
    versions = [e.after["version"] for e in last if e.after]
    assert versions == sorted(versions) and versions[-1] == row.version  # logged in commit order


def test_store_errors_become_messages(setup, monkeypatch) -> None:
    from sqlalchemy.exc import OperationalError

    engine, who, ls = setup
    calls = {"n": 0}
    original = labeling._upsert

    def failing(*args, **kwargs):
        calls["n"] += 1
        raise OperationalError("UPDATE x", {}, Exception("database is locked"))

    monkeypatch.setattr(labeling, "_upsert", failing)
    with pytest.raises(labeling.StoreBusy) as refused:
        labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    assert "OperationalError" not in str(refused.value) and "try again" in str(refused.value)
    assert calls["n"] > 1  # retried before giving up
    monkeypatch.setattr(labeling, "_upsert", original)


@pytest.mark.parametrize("name", ["gold", "Gold", "eager", "", "   ", "a\x00b", "tab\there", "x\u200by"])
def test_reserved_empty_and_control_character_names_are_refused(setup, name: str) -> None:
    engine, _, _ = setup
    before = list_annotators(engine)
    with pytest.raises(InvalidName):
        validate_name(engine, name)
    with pytest.raises(InvalidName):
        get_or_create_annotator(engine, name)
    assert list_annotators(engine) == before


def test_finding_an_annotator_never_creates_one(setup) -> None:
    engine, _, _ = setup
    assert find_annotator(engine, "zzz123") is None
    assert "zzz123" not in {a.name for a in list_annotators(engine)}
    assert find_annotator(engine, "alice") is not None
