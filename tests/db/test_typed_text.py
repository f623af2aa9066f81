"""Text a researcher types into the settings (a dataset's image folder and types, a rating task's name
and rubric) that no store can keep is refused with a message before anything is written, on both
stores: PostgreSQL refused a NUL mid-write, and SQLite kept it to fail later (a folder holding a NUL
cannot be opened)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from db import models as m
from db.access import OPERATOR
from db.engine import read_session
from db.importer import import_bundle
from db.repositories.datasets import set_image_root, set_taxonomy
from db.repositories.rating_tasks import TaskSpec, create_rating_task, list_rating_tasks
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, RawOutputRecord

TEXTS = [("a\x00b", "NUL"), ("\ud800", "surrogate")]


@pytest.fixture
def dataset(engine: Engine) -> int:
    detector = LabelSetRecord(
        "detector", "det", annotations=[Annotations("a", raw_output=RawOutputRecord("x", True))]
    )
    import_bundle(
        engine,
        Bundle(DatasetRecord("typed", "canonical"), [ItemRecord("a", "One.")], [detector]),
        actor=OPERATOR,
    )
    with read_session(engine) as session:
        return session.scalar(select(m.Dataset.id).where(m.Dataset.name == "typed"))


@pytest.mark.parametrize(("text", "says"), TEXTS)
def test_dataset_settings(engine: Engine, dataset: int, text: str, says: str) -> None:
    with pytest.raises(ValueError, match=f"The folder contains .*{says}"):
        set_image_root(engine, dataset, f"/images/{text}", actor=OPERATOR)
    with pytest.raises(ValueError, match=f"The list of types contains .*{says}"):
        set_taxonomy(engine, dataset, ["Object", text], actor=OPERATOR)
    with read_session(engine) as session:
        stored = session.get_one(m.Dataset, dataset)
        assert (stored.image_root, stored.taxonomy) == (None, [])


@pytest.mark.parametrize(("text", "says"), TEXTS)
def test_rating_task_name_and_rubric(engine: Engine, dataset: int, text: str, says: str) -> None:
    with read_session(engine) as session:
        detector = session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == "detector"))
    with pytest.raises(ValueError, match=f"The task's name contains .*{says}"):
        create_rating_task(engine, dataset, TaskSpec(f"quality {text}", detector), None, actor=OPERATOR)
    with pytest.raises(ValueError, match=f"The rubric contains .*{says}"):
        create_rating_task(
            engine, dataset, TaskSpec("quality", detector, rubric={"1": text}), None, actor=OPERATOR
        )
    assert list_rating_tasks(engine, dataset) == []
