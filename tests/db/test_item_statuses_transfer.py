"""Where a person stands on each item (done, skipped, unsure with a note) moves with a canonical export.

"Done" is how a person says they finished an item, also one where they found nothing: the metrics count
such an item as annotated. These tests mark items through the same repository call the pages make, on
real SQLite and PostgreSQL, then move the dataset as a canonical file: the statuses must arrive in the
copy (a rating campaign's queue on the copy's campaign of the same name), a second import must change
nothing, and a file giving a status no store can place must be refused by record and field.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.exporter import export_batches, export_bundle
from db.import_changes import ReplaceRequired
from db.import_undo import recent_imports, undo_import
from db.importer import import_bundle
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
    ItemStatusRecord,
    LabelSetRecord,
    RatingTaskRecord,
    SpanRecord,
)
from formats.registry import get_format


def _bundle() -> Bundle:
    items = [ItemRecord(external_id=ext, response="A cat sits on a red mat.") for ext in ("a", "b", "c")]
    detector = LabelSetRecord(
        kind="detector", name="tagger", annotations=[Annotations("a", spans=[SpanRecord(2, 5, "object")])]
    )
    campaign = RatingTaskRecord(name="tagger quality", detector="tagger", granularity="response")
    return Bundle(
        dataset=DatasetRecord(name="cats", source_format="canonical", label_kinds=["span", "sentence"]),
        items=items,
        label_sets=[detector],
        rating_tasks=[campaign],
    )


@pytest.fixture
def marked(engine):
    """alice finished item a finding nothing, is unsure about b (with a note), skipped c's sentences and
    finished a in the rating campaign; the engine."""
    import_bundle(engine, _bundle(), actor=OPERATOR)
    alice = get_or_create_annotator(engine, "alice")
    label_set = human_label_set(engine, 1, alice.id)
    with Session(engine) as session:
        ids = {ext: item_id for ext, item_id in session.execute(select(m.Item.external_id, m.Item.id))}
        campaign = session.scalar(select(m.RatingTask.id))
    mark = labeling.set_item_status
    mark(engine, label_set.id, ids["a"], "spans", "done", alice.id)
    mark(engine, label_set.id, ids["b"], "spans", "unsure", alice.id, note="is that a cat?")
    mark(engine, label_set.id, ids["c"], "sentences", "skipped", alice.id)
    mark(engine, label_set.id, ids["a"], f"rating:{campaign}", "done", alice.id)
    return engine


def _statuses(engine, dataset: str) -> set[tuple[str, str, str, str, str | None]]:
    """Every stored status of a person in ``dataset``: (person, item, task, status, note), a rating
    campaign's queue named by the campaign's name."""
    with Session(engine) as session:
        campaigns = {
            f"rating:{task_id}": f"rating:{name}"
            for task_id, name in session.execute(select(m.RatingTask.id, m.RatingTask.name))
        }
        rows = session.execute(
            select(
                m.LabelSet.name, m.Item.external_id, m.ItemStatus.page, m.ItemStatus.status, m.ItemStatus.note
            )
            .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
            .join(m.Item, m.Item.id == m.ItemStatus.item_id)
            .join(m.Dataset, m.Dataset.id == m.Item.dataset_id)
            .where(m.Dataset.name == dataset, m.LabelSet.kind == "human")
        ).all()
    return {(name, ext, campaigns.get(page, page), status, note) for name, ext, page, status, note in rows}


MARKED = {
    ("alice", "a", "spans", "done", None),
    ("alice", "b", "spans", "unsure", "is that a cat?"),
    ("alice", "c", "sentences", "skipped", None),
    ("alice", "a", "rating:tagger quality", "done", None),
}


def _canonical(engine, dataset: str = "cats") -> bytes:
    return get_format("canonical").write(export_bundle(engine, dataset, actor=OPERATOR))


def _last_import(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.max(m.EditLog.id)).where(m.EditLog.action == "import"))


def test_the_export_carries_each_status_with_its_task_and_a_campaign_by_name(marked) -> None:
    lines = [json.loads(line) for line in _canonical(marked).splitlines()]
    alice = {
        row["item"]: row
        for row in lines
        if row["record"] == "annotations" and row["label_set"]["name"] == "alice"
    }
    assert alice["a"]["statuses"] == [
        {"task": "rating:tagger quality", "status": "done", "note": None},
        {"task": "spans", "status": "done", "note": None},
    ]
    assert alice["b"]["statuses"] == [{"task": "spans", "status": "unsure", "note": "is that a cat?"}]
    assert alice["a"]["spans"] == []  # done, and found nothing
    # The detector's one record carries its run's coverage mark: the run was given item a.
    tagger = [row for row in lines if row.get("label_set", {}).get("name") == "tagger"]
    assert [row["statuses"] for row in tagger] == [[{"task": "spans", "status": "done", "note": None}]]


def test_the_statuses_arrive_in_the_copy_and_a_second_import_changes_nothing(marked) -> None:
    data = _canonical(marked)
    first = import_file(
        marked, data, source="cats.jsonl", actor=OPERATOR, options=ReadOptions(dataset="copy")
    )
    assert first.ok, first.problems
    assert first.result.rows["item_statuses"] == 5  # alice's four, and the detector run's coverage of a
    assert _statuses(marked, "copy") == MARKED
    with Session(marked) as session:  # the copy's own campaign, not the original's
        pages = set(
            session.scalars(
                select(m.ItemStatus.page)
                .join(m.Item, m.Item.id == m.ItemStatus.item_id)
                .join(m.Dataset, m.Dataset.id == m.Item.dataset_id)
                .where(m.Dataset.name == "copy", m.ItemStatus.page.like("rating:%"))
            )
        )
        copy_campaign = session.scalar(
            select(m.RatingTask.id).join(m.Dataset).where(m.Dataset.name == "copy")
        )
    assert pages == {f"rating:{copy_campaign}"}

    again = import_file(
        marked, data, source="cats.jsonl", actor=OPERATOR, options=ReadOptions(dataset="copy")
    )
    assert again.ok, again.problems
    assert "item_statuses" not in again.result.rows
    assert not again.result.changes.needs_replace
    assert _statuses(marked, "copy") == MARKED
    assert _canonical(marked, "copy") == data.replace(b'"name": "cats"', b'"name": "copy"')


def test_a_changed_status_needs_replacing_and_the_import_undoes_and_redoes(marked) -> None:
    bundle = export_bundle(marked, "cats", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    b = next(a for a in alice.annotations if a.item == "b")
    b.statuses = [ItemStatusRecord("spans", "done")]
    with pytest.raises(ReplaceRequired) as refused:
        import_bundle(marked, bundle, actor=OPERATOR)
    assert refused.value.changes.counts["human:alice"] == {
        "item_statuses": {"removed": 0, "changed": 1, "added": 0}
    }
    import_bundle(marked, bundle, actor=OPERATOR, replace_existing=True)
    changed = MARKED - {("alice", "b", "spans", "unsure", "is that a cat?")} | {
        ("alice", "b", "spans", "done", None)
    }
    assert _statuses(marked, "cats") == changed
    undo = undo_import(marked, _last_import(marked), actor=OPERATOR)
    assert _statuses(marked, "cats") == MARKED
    undo_import(marked, undo.log_id, actor=OPERATOR)
    assert _statuses(marked, "cats") == changed


def test_a_record_replaces_the_statuses_of_the_tasks_it_gives_only(marked) -> None:
    bundle = export_bundle(marked, "cats", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    a = next(x for x in alice.annotations if x.item == "a")
    a.statuses = [ItemStatusRecord("spans", "skipped")]  # says nothing of the rating campaign
    import_bundle(marked, Bundle(bundle.dataset, label_sets=[alice]), actor=OPERATOR, replace_existing=True)
    assert _statuses(marked, "cats") == (
        MARKED - {("alice", "a", "spans", "done", None)} | {("alice", "a", "spans", "skipped", None)}
    )
    undo_import(marked, _last_import(marked), actor=OPERATOR)
    assert _statuses(marked, "cats") == MARKED


def test_a_file_without_statuses_leaves_them_as_they_are(marked) -> None:
    alice = LabelSetRecord(
        kind="human",
        name="alice",
        annotator="alice",
        annotations=[Annotations("b", spans=[SpanRecord(2, 5, "object")])],
    )
    result = import_bundle(marked, Bundle(_bundle().dataset, label_sets=[alice]), actor=OPERATOR)
    assert result.rows == {"spans": 1} and not result.changes.needs_replace
    assert _statuses(marked, "cats") == MARKED
    undo_import(marked, _last_import(marked), actor=OPERATOR)
    assert _statuses(marked, "cats") == MARKED


@pytest.mark.parametrize(
    ("status", "field", "says"),
    [
        (ItemStatusRecord("tags", "done"), "statuses[0].task", "'tags' is not one of spans"),
        (ItemStatusRecord("rating: ", "done"), "statuses[0].task", "or rating: and a rating task's name"),
        (ItemStatusRecord("spans", "finished"), "statuses[0].status", "'finished' is not one of done"),
        (ItemStatusRecord("rating:nobody", "done"), "statuses[0].task", "has no rating task 'nobody'"),
    ],
)
def test_a_status_no_store_can_place_is_refused_by_record_and_field_with_nothing_written(
    marked, status, field, says
) -> None:
    bundle = export_bundle(marked, "cats", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].statuses = [status]
    before = _statuses(marked, "cats")
    with pytest.raises(ImportRejected) as refused:
        import_bundle(marked, bundle, actor=OPERATOR, replace_existing=True)
    [problem] = [p for p in refused.value.problems if p.severity == "error"]
    assert problem.record == "#0 (id=a)" and problem.field == f"alice.{field}"
    assert says in problem.reason
    assert _statuses(marked, "cats") == before


def test_the_same_task_twice_in_a_record_is_refused(marked) -> None:
    bundle = export_bundle(marked, "cats", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    alice.annotations[0].statuses.append(ItemStatusRecord("spans", "skipped"))
    with pytest.raises(ImportRejected) as refused:
        import_bundle(marked, bundle, actor=OPERATOR, replace_existing=True)
    assert [p.field for p in refused.value.problems] == ["alice.statuses[2].task"]


def test_only_a_lossless_format_gets_records_of_nothing_but_statuses(marked) -> None:
    [batch] = export_batches(marked, "cats", ["alice"], actor=OPERATOR, lossless=False)
    assert batch.label_sets[0].annotations == []  # not "alice found nothing in a, b and c"


def test_a_gold_record_of_statuses_only_does_not_mark_its_item_as_checked_for_spans(marked) -> None:
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[Annotations("c", statuses=[ItemStatusRecord("sentences", "done")])],
    )
    import_bundle(marked, Bundle(_bundle().dataset, label_sets=[gold]), actor=OPERATOR)
    with Session(marked) as session:
        pages = session.scalars(
            select(m.ItemStatus.page).join(m.LabelSet).where(m.LabelSet.kind == "gold")
        ).all()
    assert pages == ["sentences"]


def test_a_skipping_import_leaves_out_a_status_on_an_unknown_campaign_and_still_undoes(marked) -> None:
    bundle = export_bundle(marked, "cats", actor=OPERATOR)
    alice = next(ls for ls in bundle.label_sets if ls.name == "alice")
    b = next(a for a in alice.annotations if a.item == "b")
    b.statuses = [ItemStatusRecord("spans", "done"), ItemStatusRecord("rating:nobody", "done")]
    result = import_bundle(
        marked,
        Bundle(bundle.dataset, label_sets=[alice]),
        actor=OPERATOR,
        allow_skip=True,
        replace_existing=True,
    )
    assert [p.field for p in result.problems] == ["alice.statuses[1].task"]
    assert ("alice", "b", "spans", "done", None) in _statuses(marked, "cats")
    undo_import(marked, _last_import(marked), actor=OPERATOR)
    assert _statuses(marked, "cats") == MARKED


def test_an_export_of_some_label_sets_names_only_the_campaigns_it_holds_and_imports(marked) -> None:
    """alice's label set without the tagger's run: the file holds no rating campaign, so it carries no
    status on one's queue (it would name a campaign the file does not have); it imports into a new
    dataset, and back into its own leaves the campaign's status as it is."""
    data = get_format("canonical").write(export_bundle(marked, "cats", ["alice"], actor=OPERATOR))
    assert b"rating:" not in data
    copy = import_file(
        marked, data, source="alice.jsonl", actor=OPERATOR, options=ReadOptions(dataset="copy")
    )
    assert copy.ok, copy.problems
    assert _statuses(marked, "copy") == {s for s in MARKED if not s[2].startswith("rating:")}
    back = import_file(marked, data, source="alice.jsonl", actor=OPERATOR)
    assert back.ok and not back.result.changes.needs_replace
    assert _statuses(marked, "cats") == MARKED


def _gold_marks(engine) -> list[tuple[str, str]]:
    with Session(engine) as session:
        return sorted(
            session.execute(
                select(m.Item.external_id, m.ItemStatus.status)
                .join(m.Item, m.Item.id == m.ItemStatus.item_id)
                .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
                .where(m.LabelSet.kind == "gold", m.ItemStatus.page == "spans")
            ).all()
        )


def test_undoing_a_gold_import_takes_away_the_coverage_marks_it_added(engine) -> None:
    """A gold import marks its items checked; left behind by its undo, the marks read as "gold checked
    this item and found nothing" in the metrics and in every export."""
    dataset = DatasetRecord(name="cats", source_format="mhalo", label_kinds=["span"])
    items = [ItemRecord(external_id=ext, response="A cat sits on a red mat.") for ext in ("a", "b", "c")]
    import_bundle(engine, Bundle(dataset, items=items), actor=OPERATOR)
    first = LabelSetRecord(kind="gold", name="gold", annotations=[Annotations("c")])
    import_bundle(engine, Bundle(dataset, label_sets=[first]), actor=OPERATOR)  # c: checked, nothing found
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[Annotations("a", spans=[SpanRecord(2, 5, "object")]), Annotations("b")],
    )
    import_bundle(engine, Bundle(dataset, label_sets=[gold]), actor=OPERATOR)
    assert _gold_marks(engine) == [("a", "done"), ("b", "done"), ("c", "done")]
    undo = undo_import(engine, _last_import(engine), actor=OPERATOR)
    assert _gold_marks(engine) == [("c", "done")]  # the earlier import's mark stays
    exported = export_bundle(engine, "cats", actor=OPERATOR)
    assert [a.item for ls in exported.label_sets for a in ls.annotations] == ["c"]
    undo_import(engine, undo.log_id, actor=OPERATOR)
    assert _gold_marks(engine) == [("a", "done"), ("b", "done"), ("c", "done")]


def test_a_mark_added_to_an_item_the_import_leaves_as_it_was_is_logged_and_undone(engine) -> None:
    """Importing a gold file again marks the items an earlier import left unmarked; those are not among
    the units the import rewrites, so the entry lists them, and its undo takes them away."""
    dataset = DatasetRecord(name="cats", source_format="mhalo", label_kinds=["span"])
    items = [ItemRecord(external_id=ext, response="A cat sits on a red mat.") for ext in ("a", "b")]
    gold = LabelSetRecord(kind="gold", name="gold", annotations=[Annotations("a"), Annotations("b")])
    import_bundle(engine, Bundle(dataset, items=items, label_sets=[gold]), actor=OPERATOR)
    with Session(engine) as session:  # as a store written before the marks were made
        session.execute(
            delete(m.ItemStatus).where(
                m.ItemStatus.item_id == select(m.Item.id).where(m.Item.external_id == "b").scalar_subquery()
            )
        )
        session.commit()
    again = import_bundle(engine, Bundle(dataset, items=items, label_sets=[gold]), actor=OPERATOR)
    assert again.rows == {"item_statuses": 1}  # the mark, and nothing else
    with Session(engine) as session:
        logged = session.get(m.EditLog, _last_import(engine)).after["coverage"]
    assert logged == {"added": [{"kind": "gold", "name": "gold", "items": ["b"]}], "removed": []}
    assert _gold_marks(engine) == [("a", "done"), ("b", "done")]
    [entry, *_] = recent_imports(engine)
    assert entry.undoable and entry.marks == 1  # listed as "1 coverage marks", not "no annotations changed"
    undo = undo_import(engine, _last_import(engine), actor=OPERATOR)
    assert _gold_marks(engine) == [("a", "done")]
    assert undo.rows == {} and undo.marks == {"took away": 1}
    assert undo.summary() == "took away 1 coverage marks; restored no rows"


def test_undoing_an_older_gold_import_keeps_a_mark_a_later_import_stands_behind(engine) -> None:
    dataset = DatasetRecord(name="cats", source_format="mhalo", label_kinds=["span"])
    items = [ItemRecord(external_id=ext, response="A cat sits on a red mat.") for ext in ("a", "b")]
    first = LabelSetRecord(kind="gold", name="gold", annotations=[Annotations("a"), Annotations("b")])
    import_bundle(engine, Bundle(dataset, items=items, label_sets=[first]), actor=OPERATOR)
    older = _last_import(engine)
    with Session(engine) as session:  # records that hold nothing are no units: the marks are listed
        coverage = session.get(m.EditLog, older).after["coverage"]
    assert coverage["added"] == [{"kind": "gold", "name": "gold", "items": ["a", "b"]}]
    later = LabelSetRecord(
        kind="gold", name="gold", annotations=[Annotations("b", spans=[SpanRecord(2, 5, "object")])]
    )
    import_bundle(engine, Bundle(dataset, label_sets=[later]), actor=OPERATOR)
    undo_import(engine, older, actor=OPERATOR)
    assert _gold_marks(engine) == [("b", "done")]  # b's spans come from the later import, which checked it


def test_a_new_gold_label_sets_marks_are_logged_as_its_units_items_and_the_others(engine) -> None:
    dataset = DatasetRecord(name="cats", source_format="mhalo", label_kinds=["span"])
    items = [ItemRecord(external_id=ext, response="A cat sits on a red mat.") for ext in ("a", "b")]
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[Annotations("a", spans=[SpanRecord(2, 5, "object")]), Annotations("b")],
    )
    import_bundle(engine, Bundle(dataset, items=items, label_sets=[gold]), actor=OPERATOR)
    with Session(engine) as session:
        coverage = session.get(m.EditLog, _last_import(engine)).after["coverage"]
    # a is a unit the import wrote; b, found to hold nothing, is not: it is listed.
    assert coverage["added"] == [{"kind": "gold", "name": "gold", "unit_items": True, "items": ["b"]}]
    undo = undo_import(engine, _last_import(engine), actor=OPERATOR)
    assert _gold_marks(engine) == []
    undo_import(engine, undo.log_id, actor=OPERATOR)
    assert _gold_marks(engine) == [("a", "done"), ("b", "done")]
