"""Refusals name a person's, a dataset's or a task's name as it was written: pages show them with
``str(error)`` and the command line prints them, and ``repr`` doubled the backslash of a name such as
O'Brien\\d (so the message named someone nobody had typed)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR, Forbidden
from db.detector_runs import DetectorRunStore
from db.importer import import_bundle
from db.repositories import accounts, labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.assignments import AssignmentError, assign
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from db.repositories.rating_tasks import TaskSpec, create_rating_task
from detectors.runner import RunRefused
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord

NAME = "O'Brien\\d"  # as typed: one backslash
SHOWN = '"O\'Brien\\d"'  # quoted as repr quotes it, the backslash still single


def _dataset(engine: Engine, name: str) -> int:
    detector = LabelSetRecord("detector", "det", annotations=[Annotations("it-0", [SpanRecord(2, 5)])])
    bundle = Bundle(
        DatasetRecord(name, "test"), items=[ItemRecord("it-0", "A red cube.")], label_sets=[detector]
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    found = get_dataset(engine, name)
    assert found is not None
    return found.id


def test_account_refusals_name_the_user_as_written(engine: Engine) -> None:
    with pytest.raises(accounts.AccountError) as refused:
        accounts.set_role(engine, NAME, "admin", actor=OPERATOR)
    assert str(refused.value) == f"There is no user {SHOWN}."


def test_assignment_refusals_name_the_account_as_written(engine: Engine) -> None:
    dataset_id = _dataset(engine, "ds")
    person = get_or_create_annotator(engine, NAME).id
    accounts.set_disabled(engine, NAME, True, actor=OPERATOR)
    with pytest.raises(AssignmentError) as refused:
        assign(engine, dataset_id, "spans", [person], 1, actor=OPERATOR)
    assert str(refused.value) == f"The account {SHOWN} is disabled."


def test_forbidden_names_the_account_as_written(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset_id = _dataset(engine, "ds")
    person = get_or_create_annotator(engine, NAME).id
    own = human_label_set(engine, dataset_id, person).id
    item = get_item(engine, dataset_id, "it-0")
    assert item is not None
    accounts.set_disabled(engine, NAME, True, actor=OPERATOR)
    with pytest.raises(Forbidden) as refused:
        labeling.set_item_status(engine, own, item.id, "spans", "done", person)
    assert str(refused.value) == f"The account {SHOWN} is disabled."

    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    with pytest.raises(Forbidden) as refused:
        get_or_create_annotator(engine, NAME + "2")
    assert str(refused.value).startswith('There is no account "O\'Brien\\d2";')


def test_rating_task_and_labeling_refusals_name_the_task_and_label_set_as_written(engine: Engine) -> None:
    dataset_id = _dataset(engine, "ds")
    detector = next(v.id for v in list_label_sets(engine, dataset_id, kind="detector"))
    create_rating_task(engine, dataset_id, TaskSpec(NAME, detector), None, actor=OPERATOR)
    with pytest.raises(ValueError) as refused:
        create_rating_task(engine, dataset_id, TaskSpec(NAME, detector), None, actor=OPERATOR)
    assert str(refused.value) == f"This dataset already has a rating task named {SHOWN}."

    person = get_or_create_annotator(engine, NAME).id
    own = human_label_set(engine, dataset_id, person).id
    other = _dataset(engine, "other")
    item = get_item(engine, other, "it-0")
    assert item is not None
    with pytest.raises(ValueError) as refused:
        labeling.set_item_status(engine, own, item.id, "spans", "done", person)
    assert str(refused.value).startswith(f"{SHOWN}'s labels belong to another dataset")


def test_a_run_refusal_names_the_dataset_as_written(engine: Engine) -> None:
    with pytest.raises(RunRefused) as refused:
        DetectorRunStore(engine, NAME, "judge", OPERATOR).items()
    assert str(refused.value) == f"there is no dataset named {SHOWN}"
