"""A Tri-HE file's own ``id`` fields, and the item ids an export adds.

A Tri-HE file numbers each image's questions (items ``<image id>/<n>``); an export of a dataset of
another format writes each item's own id beside its question, under a key of Spanlight's own, so that a
file's own ``id`` field (a per-image number, say) stays one of its fields: read as the item's id, it
merged items or renamed them, and came back as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from db.access import OPERATOR
from db.engine import make_engine
from db.importer import import_bundle
from db.migrate import upgrade
from formats.base import FormatError, ReadOptions
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, TripletRecord
from formats.trihe import FORMAT


def _numbered_file() -> bytes:
    def image(*questions: str) -> dict[str, object]:
        instances = [
            {"id": n, "question": q, "answer": "A cat.", "triplet": []} for n, q in enumerate(questions)
        ]
        return {"instance": instances, "triplets": ["(cat, on, mat)"], "all_object": [], "object": []}

    return json.dumps({"img1": image("Q a?", "Q b?"), "img2": image("Q c?")}).encode()


def test_a_files_own_id_field_neither_renames_nor_merges_items(tmp_path: Path) -> None:
    read = FORMAT.read(_numbered_file(), source="trihe.json", options=ReadOptions(dataset="t"))
    assert read.bundle is not None
    assert [i.external_id for i in read.bundle.items] == ["img1/0", "img1/1", "img2/0"]
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    assert import_bundle(engine, read.bundle, actor=OPERATOR, source="trihe.json").rows["items"] == 3
    written = json.loads(FORMAT.write(read.bundle))
    assert [i["id"] for i in written["img1"]["instance"]] == [0, 1]  # as the file gave them: integers
    assert all("spanlight_id" not in i for image in written.values() for i in image["instance"])


def test_items_of_another_dataset_and_a_run_named_id_keep_their_ids() -> None:
    items = [ItemRecord("q1", "A cat.", prompt="What?"), ItemRecord("q2", "A dog.", prompt="What?")]
    run = LabelSetRecord(
        "detector",
        "id",
        annotations=[Annotations("q1", triplets=[TripletRecord("cat", "on", "mat", "correct")])],
    )
    written = FORMAT.write(Bundle(DatasetRecord("x", "canonical"), items, [run]))
    read = FORMAT.read(written, source="x.json", options=ReadOptions(dataset="x"))
    assert read.bundle is not None
    assert [i.external_id for i in read.bundle.items] == ["q1", "q2"]


def test_a_run_named_after_the_id_key_is_refused() -> None:
    items = [ItemRecord("q1", "A cat.", prompt="What?")]
    run = LabelSetRecord(
        "detector",
        "spanlight_id",
        annotations=[Annotations("q1", triplets=[TripletRecord("cat", "on", "mat", "correct")])],
    )
    with pytest.raises(FormatError, match="spanlight_id"):
        FORMAT.write(Bundle(DatasetRecord("x", "canonical"), items, [run]))
