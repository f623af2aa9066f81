"""Text a researcher types into the settings (a dataset's image folder and types, a rating task's name
and rubric) that no store can keep is refused with a message before anything is written, on both
stores: PostgreSQL refused a NUL mid-write, and SQLite kept it to fail later (a folder holding a NUL
cannot be opened)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine, func, select

from db import models as m
from db.access import OPERATOR
from db.engine import read_session
from db.importer import import_bundle
from db.repositories import accounts
from db.repositories.datasets import set_image_root, set_taxonomy
from db.repositories.items import ItemFilter, browse_page, count_items, get_item
from db.repositories.rating_tasks import TaskSpec, create_rating_task, list_rating_tasks
from db.transfer import import_file
from formats.base import ReadOptions
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


_ROWS = "\n".join(
    json.dumps(r)
    for r in (
        {"record": "dataset", "format_version": 1, "name": "from the file", "source_format": "canonical"},
        {"record": "item", "external_id": "a", "response": "One."},
    )
).encode()


@pytest.mark.parametrize(("text", "says"), TEXTS)
def test_names_typed_for_an_import_are_refused_by_field_with_nothing_written(
    engine: Engine, text: str, says: str
) -> None:
    """A file's reader checks its records; the dataset's name typed on the import page, or the image
    folder, did not come from the file (PostgreSQL refused a NUL in the name mid-write)."""
    named = import_file(
        engine,
        _ROWS,
        actor=OPERATOR,
        source="f.jsonl",
        format_name="canonical",
        options=ReadOptions(dataset=f"d{text}"),
    )
    foldered = import_file(
        engine, _ROWS, actor=OPERATOR, source="f.jsonl", format_name="canonical", image_root=f"/img/{text}"
    )
    assert [(p.record, p.field) for p in named.errors] == [("dataset", "name")]
    assert [(p.record, p.field) for p in foldered.errors] == [("-", "image folder")]
    assert all(says in o.errors[0].reason and not o.ok for o in (named, foldered))
    with read_session(engine) as session:
        assert session.scalar(select(func.count()).select_from(m.Dataset)) == 0


@pytest.mark.parametrize("text", [t for t, _ in TEXTS])
def test_an_item_id_or_search_no_store_holds_finds_nothing(engine: Engine, dataset: int, text: str) -> None:
    """Typed into a jump box or a search, or sent in an address: PostgreSQL refused the query."""
    assert get_item(engine, dataset, f"a{text}") is None
    for flt in (ItemFilter(text=text), ItemFilter(subsets=(text,)), ItemFilter(external_ids=(text,))):
        assert browse_page(engine, dataset, flt, 1, 10).rows == []
        assert count_items(engine, dataset, flt) == 0
    assert count_items(engine, dataset, ItemFilter(text="One")) == 1


def test_a_new_users_email_is_checked(engine: Engine) -> None:
    with pytest.raises(accounts.AccountError, match="e-mail"):
        accounts.add_user(
            engine, "bob", "annotator", "a long enough password", actor=OPERATOR, email="b\x00@x.org"
        )
    assert accounts.user_for_email(engine, "b\x00@x.org") is None
