"""An item's history from the edit log, the state of a label set at any entry, and restoring it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Actor, Forbidden
from db.importer import import_bundle
from db.repositories import adjudication, history, labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.label_sets import human_label_set
from db.repositories.rating_tasks import TaskSpec, create_rating_task
from formats.records import Annotations, SentenceLabelRecord, SpanRecord
from tests.db.test_importer import _bundle

ITEM, GOLD, DETECTOR = 1, 1, 2


@pytest.fixture
def setup(engine):
    import_bundle(engine, _bundle(), source="tiny.jsonl", actor=OPERATOR)
    alice = get_or_create_annotator(engine, "alice")
    label_set = human_label_set(engine, 1, alice.id)
    return engine, alice.id, label_set.id


def _adjudicate_sentence(engine, reviewer: int, index: int, label: str) -> int:
    """Change one gold sentence label the way gold is changed by hand: an adjudication (logged)."""
    found = item_annotations(engine, ITEM, [GOLD])[GOLD].sentence_labels
    labels = {i: (lab.label, lab.error_type) for i, lab in found.items()} | {index: (label, None)}
    seen = adjudication.imported_gold_replaced(engine, 1, ITEM, "sentences", labels, method="edit")
    done = adjudication.promote_item(
        engine,
        1,
        ITEM,
        "sentences",
        labels,
        method="edit",
        sources=[],
        actor=Actor(reviewer, "r", "reviewer"),
        replacing=seen.digest,  # the file's gold, replaced knowingly
    )
    return done.log_ids[-1]


def _adjudicate_without_span(engine, reviewer: int, position: int) -> None:
    spans = _spans(engine, GOLD)
    del spans[position]
    seen = adjudication.imported_gold_replaced(engine, 1, ITEM, "spans", spans, method="edit")
    adjudication.promote_item(
        engine,
        1,
        ITEM,
        "spans",
        spans,
        method="edit",
        sources=[],
        actor=Actor(reviewer, "r", "reviewer"),
        replacing=seen.digest,  # the file's gold, replaced knowingly
    )


def _log_count(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(m.EditLog))


def _rows(engine, label_set_id: int) -> set[tuple]:
    """The label set's rows on the item now, as the state functions describe them (without ids)."""
    now = history.state_at(engine, label_set_id, ITEM, _newest(engine))
    return _plain(now)


def _plain(state: history.State) -> set[tuple]:
    return {(entity, tuple(sorted(columns.items()))) for (entity, _id), columns in state.items()}


def _newest(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.max(m.EditLog.id)))


def _spans(engine, label_set_id: int) -> list[tuple]:
    return [
        (s.start, s.end, s.type) for s in item_annotations(engine, ITEM, [label_set_id])[label_set_id].spans
    ]


def _sentences(engine, label_set_id: int) -> dict[int, str]:
    found = item_annotations(engine, ITEM, [label_set_id])[label_set_id].sentence_labels
    return {index: label.label for index, label in found.items()}


def test_history_is_newest_first_and_readable(setup) -> None:
    engine, who, ls = setup
    labeling.add_span(engine, ls, ITEM, 2, 5, "Color Attribute", who)
    labeling.set_sentence_label(engine, ls, ITEM, 0, "incorrect", who, error_type="Color Attribute")
    labeling.set_sentence_label(engine, ls, ITEM, 0, "unknown", who)
    labeling.undo_last(engine, who)
    labeling.sync_done(engine, ls, ITEM, "sentences", True, who)

    entries = history.item_history(engine, ITEM, label_set_ids=[ls])
    assert [(e.who, e.action, e.what) for e in entries] == [
        ("alice", "create", "status on sentences: — → done (automatic)"),
        ("alice", "undo", "sentence 1: unknown → incorrect (Color Attribute)"),
        ("alice", "update", "sentence 1: incorrect (Color Attribute) → unknown"),
        ("alice", "create", "sentence 1: — → incorrect (Color Attribute)"),
        ("alice", "create", "span “red” added (Color Attribute)"),
    ]
    assert [e.log_id for e in entries] == sorted((e.log_id for e in entries), reverse=True)
    assert {e.label_set for e in entries} == {"Annotator · alice"}
    update = entries[2]
    assert update.before is not None and update.after is not None
    assert (update.before["label"], update.after["label"]) == ("incorrect", "unknown")
    assert entries[-1].before is None and entries[-1].after["start"] == 2

    everything = history.item_history(engine, ITEM)
    imported = [e for e in everything if e.action == "import"]
    # the import wrote gold and the detector on the item: one line each, by "import", oldest
    assert {(e.who, e.label_set) for e in imported} == {("import", "Gold"), ("import", "Detector · eager")}
    assert all(
        e.what == "imported from tiny.jsonl: rewrote this label set's labels on the item" for e in imported
    )
    assert everything[-2:] == sorted(imported, key=lambda e: -(e.label_set_id or 0))
    assert history.item_history(engine, ITEM, label_set_ids=[GOLD]) == [
        e for e in imported if e.label_set_id == GOLD
    ]


def test_span_retype_delete_and_ratings_are_described(setup) -> None:
    engine, who, ls = setup
    span = labeling.add_span(engine, ls, ITEM, 2, 10, None, who)
    labeling.retype_span(engine, span.entity_id, "Object", who)
    labeling.delete_span(engine, span.entity_id, who)
    task = create_rating_task(engine, 1, TaskSpec("check", DETECTOR), who, actor=OPERATOR)
    labeling.set_rating(engine, task, ITEM, who, score=2, segment=(2, 10), label_set_id=ls)
    labeling.set_rating(engine, task, ITEM, who, score=3, segment=(2, 10), label_set_id=ls)
    # a rating filed under no label set still counts as the rater's own
    labeling.set_rating(engine, task, ITEM, who, score=None, nothing_flagged_correct=True)
    whats = [e.what for e in history.item_history(engine, ITEM, label_set_ids=[ls])]
    assert whats == [
        "check: rating of the response: — → nothing flagged, right",
        "check: rating of segment “red cube”: 2 → 3",
        "check: rating of segment “red cube”: — → 2",
        "span “red cube” removed (Object)",
        "span “red cube”: untyped → Object",
        "span “red cube” added (untyped)",
    ]


def test_state_at_follows_create_update_delete_and_undo(setup) -> None:
    engine, who, ls = setup
    start = _newest(engine)  # the import: alice had nothing yet
    a = labeling.add_span(engine, ls, ITEM, 2, 5, "Color Attribute", who).log_id
    s = labeling.set_sentence_label(engine, ls, ITEM, 0, "incorrect", who).log_id
    span_id = item_annotations(engine, ITEM, [ls])[ls].spans[0].id
    retyped = labeling.retype_span(engine, span_id, "Object", who).log_id
    b = labeling.add_span(engine, ls, ITEM, 57, 60, "Number", who).log_id
    deleted = labeling.delete_span(engine, span_id, who).log_id
    undone = labeling.undo_last(engine, who)
    assert undone is not None and undone.description == "undid: deleted span “red” (Object)"
    unknown = labeling.set_sentence_label(engine, ls, ITEM, 0, "unknown", who).log_id

    red = ("spans", (2, 5, "Color Attribute"))
    red_object = ("spans", (2, 5, "Object"))
    two = ("spans", (57, 60, "Number"))

    def summary(log_id: int) -> set[tuple]:
        found = set()
        for (entity, _id), columns in history.state_at(engine, ls, ITEM, log_id).items():
            if entity == "spans":
                found.add((entity, (columns["start"], columns["end"], columns["type"])))
            else:
                found.add((entity, columns["label"]))
        return found

    assert summary(start) == set()
    assert summary(a) == {red}
    assert summary(s) == {red, ("sentence_labels", "incorrect")}
    assert summary(retyped) == {red_object, ("sentence_labels", "incorrect")}
    assert summary(b) == {red_object, two, ("sentence_labels", "incorrect")}
    assert summary(deleted) == {two, ("sentence_labels", "incorrect")}
    assert summary(undone.log_id) == {red_object, two, ("sentence_labels", "incorrect")}
    assert summary(unknown) == {red_object, two, ("sentence_labels", "unknown")}
    with pytest.raises(history.RestoreRefused, match="no log entry"):
        history.state_at(engine, ls, ITEM, 10_000)


def test_restore_puts_the_earlier_state_back_as_logged_changes(setup) -> None:
    engine, who, ls = setup
    labeling.add_span(engine, ls, ITEM, 2, 5, "Color Attribute", who)
    chosen = labeling.set_sentence_label(engine, ls, ITEM, 0, "incorrect", who).log_id
    wanted = _rows(engine, ls)
    labeling.add_span(engine, ls, ITEM, 57, 60, "Number", who)
    labeling.set_sentence_label(engine, ls, ITEM, 0, "unknown", who)
    labeling.set_sentence_label(engine, ls, ITEM, 1, "correct", who)
    span_id = next(s.id for s in item_annotations(engine, ITEM, [ls])[ls].spans if s.start == 2)
    labeling.delete_span(engine, span_id, who)
    before = _rows(engine, ls)
    latest = history.latest_change(engine, ls, ITEM)
    logged = _log_count(engine)

    done = history.restore_state(engine, ls, ITEM, chosen, annotator_id=who, expected_latest=latest)

    assert _rows(engine, ls) == wanted
    assert _spans(engine, ls) == [(2, 5, "Color Attribute")]
    assert _sentences(engine, ls) == {0: "incorrect"}
    assert done.changed == 4 == _log_count(engine) - logged  # one entry per row, in one go
    entries = history.item_history(engine, ITEM, label_set_ids=[ls])[: done.changed]
    assert {e.action for e in entries} == {"restore"}
    assert all("(restored to the state of " in e.what for e in entries)
    assert sorted(done.descriptions) == sorted(
        [
            "span “Two” removed (Number)",
            "sentence 1: unknown → incorrect",
            "sentence 2: correct → —",
            "span “red” added (Color Attribute)",
        ]
    )

    # the restore is a change like any other: the state before it can be restored in turn
    right_before = entries[-1].log_id - 1
    assert _plain(history.state_at(engine, ls, ITEM, right_before)) == before
    history.restore_state(
        engine,
        ls,
        ITEM,
        right_before,
        annotator_id=who,
        expected_latest=history.latest_change(engine, ls, ITEM),
    )
    assert _rows(engine, ls) == before


def test_undo_offers_nothing_across_a_restore(setup) -> None:
    """A restore is taken back from the history, not row by row by Undo, and the actions before it are
    not offered since it changed their rows; a new action after it is undoable as usual."""
    engine, who, ls = setup
    first = labeling.add_span(engine, ls, ITEM, 2, 5, "Color Attribute", who).log_id
    labeling.add_span(engine, ls, ITEM, 57, 60, "Number", who)
    history.restore_state(
        engine, ls, ITEM, first, annotator_id=who, expected_latest=history.latest_change(engine, ls, ITEM)
    )
    assert labeling.undoable(engine, who, [ls], item_id=ITEM, task="spans") is None
    assert labeling.undo_last(engine, who, [ls], item_id=ITEM, task="spans") is None
    # other tasks of the item, untouched by the restore, keep their undo
    labeling.set_sentence_label(engine, ls, ITEM, 1, "correct", who)
    assert labeling.undoable(engine, who, [ls], item_id=ITEM, task="sentences") is not None
    later = labeling.add_span(engine, ls, ITEM, 6, 10, None, who)
    offered = labeling.undoable(engine, who, [ls], item_id=ITEM, task="spans")
    assert offered is not None and offered.log_id == later.log_id
    labeling.undo_last(engine, who, [ls], item_id=ITEM, task="spans", expected_log_id=later.log_id)
    assert _spans(engine, ls) == [(2, 5, "Color Attribute")]
    assert labeling.undoable(engine, who, [ls], item_id=ITEM, task="spans") is None


def test_restore_refuses_a_stale_page(setup) -> None:
    engine, who, ls = setup
    first = labeling.add_span(engine, ls, ITEM, 2, 5, "Color Attribute", who).log_id
    seen = labeling.add_span(engine, ls, ITEM, 57, 60, "Number", who).log_id
    assert history.latest_change(engine, ls, ITEM) == seen
    labeling.add_span(engine, ls, ITEM, 6, 10, None, who)  # another session of alice, meanwhile
    logged, rows = _log_count(engine), _rows(engine, ls)
    with pytest.raises(labeling.StaleEdit, match="changed meanwhile"):
        history.restore_state(engine, ls, ITEM, first, annotator_id=who, expected_latest=seen)
    assert (_log_count(engine), _rows(engine, ls)) == (logged, rows)


def test_restore_refuses_across_an_import_of_the_label_set(setup) -> None:
    """Gold edited after its import: its imported rows are restorable (their later changes are logged);
    a re-import that replaced them is a boundary."""
    engine, _who, _ls = setup
    reviewer = get_or_create_annotator(engine, "rita", role="reviewer").id
    imported = _newest(engine)
    edit = _adjudicate_sentence(engine, reviewer, 1, "unknown")
    _adjudicate_without_span(engine, reviewer, 1)
    # back to right after the edit: the imported span (never logged by itself) comes back
    history.restore_state(
        engine,
        GOLD,
        ITEM,
        edit,
        annotator_id=reviewer,
        expected_latest=history.latest_change(engine, GOLD, ITEM),
    )
    assert _spans(engine, GOLD) == [(2, 5, "Color Attribute"), (57, 60, "Numerical Attribute")]
    assert _sentences(engine, GOLD) == {0: "incorrect", 1: "unknown"}
    # right after the import: as imported (the later changes' first "before" says so)
    at_import = history.state_at(engine, GOLD, ITEM, imported).values()
    assert sorted(c["label"] for c in at_import if "sentence_id" in c) == ["correct", "incorrect"]
    assert len([c for c in at_import if "start" in c]) == 2

    bundle = _bundle()
    gold = replace(
        bundle.label_sets[0],
        annotations=[
            Annotations(
                item="x1",
                spans=[SpanRecord(6, 10, "Object")],
                sentence_labels=[SentenceLabelRecord(0, "correct")],
            )
        ],
    )
    import_bundle(
        engine,
        replace(bundle, label_sets=[gold]),
        source="fixed.jsonl",
        replace_existing=True,
        actor=OPERATOR,
    )
    reimport = _newest(engine)
    latest = history.latest_change(engine, GOLD, ITEM)
    assert latest == reimport  # the page's "newest change" includes the import
    logged = _log_count(engine)
    with pytest.raises(history.RestoreRefused, match=r"rewritten by an import \(fixed\.jsonl"):
        history.restore_state(engine, GOLD, ITEM, edit, annotator_id=reviewer, expected_latest=latest)
    with pytest.raises(history.RestoreRefused, match="import"):
        history.state_at(engine, GOLD, ITEM, imported)
    assert _log_count(engine) == logged
    # the detector was not in the re-import: its states before it are still fine
    assert history.state_at(engine, DETECTOR, ITEM, imported)

    # after the import, restoring works again
    _adjudicate_sentence(engine, reviewer, 0, "incorrect")
    history.restore_state(
        engine,
        GOLD,
        ITEM,
        reimport,
        annotator_id=reviewer,
        expected_latest=history.latest_change(engine, GOLD, ITEM),
    )
    assert _sentences(engine, GOLD) == {0: "correct"}
    assert _spans(engine, GOLD) == [(6, 10, "Object")]


def test_restore_checks_rights_in_team_mode(setup, monkeypatch) -> None:
    engine, who, ls = setup
    first = labeling.add_span(engine, ls, ITEM, 2, 5, "Color Attribute", who).log_id
    labeling.add_span(engine, ls, ITEM, 57, 60, "Number", who)
    labeling.set_sentence_label(engine, ls, ITEM, 1, "correct", who)
    latest = history.latest_change(engine, ls, ITEM)
    bob = get_or_create_annotator(engine, "bob").id
    viewer = get_or_create_annotator(engine, "vera", role="viewer").id
    reviewer = get_or_create_annotator(engine, "rita", role="reviewer").id
    monkeypatch.setenv("SPANLIGHT_MODE", "team")  # the accounts exist; an admin made them
    logged = _log_count(engine)

    def restore(label_set: int, by: int, log_id: int = first) -> history.Restored:
        return history.restore_state(
            engine,
            label_set,
            ITEM,
            log_id,
            annotator_id=by,
            expected_latest=history.latest_change(engine, label_set, ITEM),
        )

    with pytest.raises(Forbidden, match="not assigned to you on the sentences task"):
        restore(ls, who)  # alice is assigned nothing yet
    with Session(engine) as session, session.begin():
        session.add(m.Assignment(dataset_id=1, task="spans", item_id=ITEM, annotator_id=who))
    with pytest.raises(Forbidden, match="sentences task"):
        restore(ls, who)  # the restore would change a sentence label too
    with Session(engine) as session, session.begin():
        session.add(m.Assignment(dataset_id=1, task="sentences", item_id=ITEM, annotator_id=bob))
        session.add(m.Assignment(dataset_id=1, task="spans", item_id=ITEM, annotator_id=bob))
    with pytest.raises(Forbidden, match="only change your own"):
        restore(ls, bob)
    with pytest.raises(Forbidden, match="viewer role cannot label"):
        restore(ls, viewer)
    with pytest.raises(Forbidden, match="adjudicate"):
        restore(GOLD, who, _newest(engine))
    with pytest.raises(Forbidden, match="not restored by hand"):
        restore(DETECTOR, reviewer, _newest(engine))
    assert _log_count(engine) == logged  # nothing written by any refusal

    with Session(engine) as session, session.begin():
        session.add(m.Assignment(dataset_id=1, task="sentences", item_id=ITEM, annotator_id=who))
    assert restore(ls, who).changed == 2
    assert _spans(engine, ls) == [(2, 5, "Color Attribute")] and _sentences(engine, ls) == {}
    assert latest < history.latest_change(engine, ls, ITEM)
    before_edit = history.latest_change(engine, GOLD, ITEM) or _newest(engine)
    _adjudicate_sentence(engine, reviewer, 1, "unknown")
    assert restore(GOLD, reviewer, before_edit).changed == 1  # a reviewer adjudicates gold
    assert _sentences(engine, GOLD) == {0: "incorrect", 1: "correct"}


def test_restore_refuses_someone_elses_label_set_in_local_mode(setup) -> None:
    engine, who, ls = setup
    first = labeling.add_span(engine, ls, ITEM, 2, 5, None, who).log_id
    labeling.add_span(engine, ls, ITEM, 57, 60, None, who)
    bob = get_or_create_annotator(engine, "bob").id
    with pytest.raises(Forbidden, match="only change your own"):
        history.restore_state(
            engine, ls, ITEM, first, annotator_id=bob, expected_latest=history.latest_change(engine, ls, ITEM)
        )
    assert len(_spans(engine, ls)) == 2


def test_restore_covers_the_raters_own_ratings(setup) -> None:
    """Ratings belong to no label set; those the label set's annotator gave on the item are its rows."""
    engine, who, ls = setup
    task = create_rating_task(engine, 1, TaskSpec("check", DETECTOR), who, actor=OPERATOR)
    chosen = labeling.set_rating(engine, task, ITEM, who, score=2, segment=(2, 10), label_set_id=ls).log_id
    labeling.set_rating(engine, task, ITEM, who, score=4, segment=(2, 10), label_set_id=ls)
    labeling.set_rating(
        engine, task, ITEM, who, score=None, nothing_flagged_correct=False
    )  # under no label set
    bob = get_or_create_annotator(engine, "bob").id
    labeling.set_rating(engine, task, ITEM, bob, score=1, segment=(2, 10))  # not alice's: left alone
    done = history.restore_state(
        engine, ls, ITEM, chosen, annotator_id=who, expected_latest=history.latest_change(engine, ls, ITEM)
    )
    assert sorted(done.descriptions) == [
        "check: rating of segment “red cube”: 4 → 2",
        "check: rating of the response: nothing flagged, wrong → —",
    ]
    with Session(engine) as session:
        scores = session.execute(
            select(m.Rating.annotator_id, m.Rating.score).order_by(m.Rating.annotator_id)
        )
        assert list(scores) == [(who, 2.0), (bob, 1.0)]
