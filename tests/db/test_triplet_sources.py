"""Which label sets of a dataset extracted triplets (the triplets page offers those to judge)."""

from __future__ import annotations

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories.annotations import triplet_sources
from db.repositories.datasets import get_dataset
from db.repositories.label_sets import list_label_sets
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, TripletRecord


def _bundle(name: str, extractors: tuple[str, ...]) -> Bundle:
    items = [ItemRecord(f"i{k}", f"A red cube {k}.") for k in range(3)]
    label_sets = [
        LabelSetRecord(
            "detector",
            detector,
            annotations=[Annotations("i1", triplets=[TripletRecord("cube", "is", "red", "yes")])]
            if detector in extractors
            else [],
        )
        for detector in ("extracts", "silent")
    ]
    return Bundle(DatasetRecord(name, "canonical"), items, label_sets)


def test_only_label_sets_with_triplets_of_this_dataset(engine) -> None:
    import_bundle(engine, _bundle("first", ("extracts",)), actor=OPERATOR)
    import_bundle(engine, _bundle("second", ("extracts", "silent")), actor=OPERATOR)
    first = get_dataset(engine, "first")
    assert first is not None
    names = {ls.id: ls.name for ls in list_label_sets(engine, first.id)}
    assert [names[i] for i in triplet_sources(engine, first.id)] == ["extracts"]
    second = get_dataset(engine, "second")
    assert second is not None
    assert len(triplet_sources(engine, second.id)) == 2
