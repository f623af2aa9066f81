"""Starting from a detector: one atomic, logged, recorded copy into the annotator's own label set, never
over their labels unasked, and in team mode only where the dataset allows it (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Actor, Forbidden
from db.engine import store_revision
from db.importer import import_bundle
from db.repositories import history, labeling, preannotation
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import set_dataset_settings
from db.repositories.gold_sightings import record_gold_shown
from db.repositories.label_sets import human_label_set
from formats.records import Annotations, ItemRecord, LabelSetRecord, SentenceLabelRecord, SpanRecord
from tests.db.test_importer import RESPONSE, _bundle

X1, X2 = 1, 2  # item ids of x1 and x2


@pytest.fixture
def store(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> tuple[Engine, int, int, dict[str, int]]:
    """Dataset ``tiny`` (x1, x2); detector ``eager`` (one untyped span 2-10 on x1), detector ``judge``
    (typed spans and its own sentence labels on x1 and x2); annotator alice with an empty label set."""
    monkeypatch.delenv("SPANLIGHT_MODE", raising=False)
    judge = LabelSetRecord(
        kind="detector",
        name="judge",
        annotations=[
            Annotations(
                item=item,
                spans=[SpanRecord(2, 5, "Color Attribute"), SpanRecord(57, 60, "Numerical Attribute")],
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect", "Color Attribute"),
                    SentenceLabelRecord(1, "correct"),
                ],
            )
            for item in ("x1", "x2")
        ],
    )
    bundle = _bundle()
    bundle = _bundle(
        items=[*bundle.items, ItemRecord(external_id="x2", response=RESPONSE)],
        label_sets=[*bundle.label_sets, judge],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    alice = get_or_create_annotator(engine, "alice")
    own = human_label_set(engine, 1, alice.id).id
    with Session(engine) as session:
        detectors = dict(
            session.execute(select(m.LabelSet.name, m.LabelSet.id).where(m.LabelSet.kind == "detector")).all()
        )
    return engine, alice.id, own, detectors


def _footprint(engine: Engine) -> tuple[int, int]:
    with Session(engine) as session:
        return store_revision(engine), session.scalar(select(func.count()).select_from(m.EditLog)) or 0


def _spans(engine: Engine, label_set: int, item: int = X1) -> list[tuple[int, int, str | None]]:
    return [(s.start, s.end, s.type) for s in item_annotations(engine, item, [label_set])[label_set].spans]


def test_spans_are_copied_logged_recorded_and_undone_row_by_row(store) -> None:
    engine, who, own, detectors = store
    done = preannotation.preannotate(engine, own, X1, "spans", detectors["judge"], who)
    assert done.description == "started from judge: 2 span(s) copied"
    assert _spans(engine, own) == [(2, 5, "Color Attribute"), (57, 60, "Numerical Attribute")]
    record = preannotation.preannotation_of(engine, own, X1, "spans")
    assert record is not None and (record.detector, record.detector_id, record.copied) == (
        "judge",
        detectors["judge"],
        2,
    )
    assert preannotation.preannotation_of(engine, own, X2, "spans") is None
    assert preannotation.preannotation_of(engine, own, X1, "sentences") is None
    with Session(engine) as session:
        entries = session.scalars(
            select(m.EditLog).where(m.EditLog.item_id == X1).order_by(m.EditLog.id)
        ).all()
    assert [(e.action, e.entity) for e in entries] == [
        ("create", "spans"),
        ("create", "spans"),
        ("preannotate", "label_sets"),
    ]
    assert {e.after["preannotated_from"] for e in entries[:2]} == {"judge"}
    assert entries[2].after["detector"] == "judge" and entries[2].after["task"] == "spans"
    # The item's history lists the copied spans; Undo takes them back one by one, the record stays.
    assert [h.what for h in history.item_history(engine, X1, label_set_ids=[own])] == [
        "span “Two” added (Numerical Attribute)",
        "span “red” added (Color Attribute)",
    ]
    assert labeling.undo_last(engine, who, [own], item_id=X1, task="spans").description == (
        "undid: from judge: added span “Two” (Numerical Attribute)"
    )
    assert _spans(engine, own) == [(2, 5, "Color Attribute")]
    assert preannotation.preannotation_of(engine, own, X1, "spans") is not None


def test_own_labels_are_not_overwritten_unasked(store) -> None:
    engine, who, own, detectors = store
    labeling.add_span(engine, own, X1, 11, 15, "Object", who)
    before = _footprint(engine)
    with pytest.raises(preannotation.AlreadyLabeled, match="already have 1 span"):
        preannotation.preannotate(engine, own, X1, "spans", detectors["eager"], who)
    assert _footprint(engine) == before and _spans(engine, own) == [(11, 15, "Object")]
    assert preannotation.preannotation_of(engine, own, X1, "spans") is None
    done = preannotation.preannotate(engine, own, X1, "spans", detectors["eager"], who, replace=True)
    assert done.description == "started from eager: 1 span(s) copied, 1 of yours replaced"
    assert _spans(engine, own) == [(2, 10, None)]
    with Session(engine) as session:
        removed = session.scalar(
            select(m.EditLog).where(m.EditLog.action == "delete", m.EditLog.entity == "spans")
        )
    assert removed is not None and removed.before["start"] == 11
    # A second start from the same detector is refused too (the draft is theirs now): idempotent-safe.
    with pytest.raises(preannotation.AlreadyLabeled):
        preannotation.preannotate(engine, own, X1, "spans", detectors["eager"], who)


def test_the_copy_is_one_transaction(store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure after the first copied row leaves nothing: no span, no log entry, no record."""
    engine, who, own, detectors = store
    real = preannotation._log
    calls: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the store went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(preannotation, "_log", failing)
    before = _footprint(engine)
    with pytest.raises(RuntimeError):
        preannotation.preannotate(engine, own, X1, "spans", detectors["judge"], who)
    assert len(calls) == 2
    assert _footprint(engine) == before and _spans(engine, own) == []
    assert preannotation.preannotation_of(engine, own, X1, "spans") is None


def test_sentences_from_the_detectors_labels_or_derived_from_its_spans(store) -> None:
    engine, who, own, detectors = store
    preannotation.preannotate(engine, own, X1, "sentences", detectors["judge"], who)
    labels = item_annotations(engine, X1, [own])[own].sentence_labels
    assert {i: (v.label, v.error_type) for i, v in labels.items()} == {
        0: ("incorrect", "Color Attribute"),
        1: ("correct", None),
    }
    # eager has no sentence labels: its span 2-10 makes sentence 1 incorrect, the others correct — but
    # not sentence 3 on x2 once alice marked a span there herself (never "correct" over her own span).
    labeling.add_span(engine, own, X2, 57, 60, None, who)
    done = preannotation.preannotate(engine, own, X2, "sentences", detectors["eager"], who)
    labels = item_annotations(engine, X2, [own])[own].sentence_labels
    assert {i: v.label for i, v in labels.items()} == {0: "correct", 1: "correct"}
    assert done.description == "started from eager: 2 sentence label(s) copied"


def test_eager_derivation_on_x1(store) -> None:
    engine, who, own, detectors = store
    preannotation.preannotate(engine, own, X1, "sentences", detectors["eager"], who)
    labels = item_annotations(engine, X1, [own])[own].sentence_labels
    assert {i: v.label for i, v in labels.items()} == {0: "incorrect", 1: "correct", 2: "correct"}


def test_team_mode_needs_the_dataset_to_allow_it(store, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, who, own, detectors = store
    with Session(engine) as session:
        session.get_one(m.Annotator, who).role = "annotator"
        session.add(m.Assignment(dataset_id=1, task="spans", item_id=X1, annotator_id=who))
        session.commit()
    alice = Actor(who, "alice", "annotator")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    assert preannotation.detector_sources(engine, alice, 1, "spans") == []  # blind: not even listed
    before = _footprint(engine)
    with pytest.raises(Forbidden, match="not allowed on dataset 'tiny'"):
        preannotation.preannotate(engine, own, X1, "spans", detectors["judge"], who)
    with pytest.raises(Forbidden, match="not allowed"):
        preannotation.preannotate_dataset(engine, own, "spans", detectors["judge"], who)
    assert _footprint(engine) == before
    set_dataset_settings(engine, 1, allow_preannotation=True, actor=OPERATOR)
    assert [ls.name for ls in preannotation.detector_sources(engine, alice, 1, "spans")] == ["eager", "judge"]
    with pytest.raises(Forbidden, match="not assigned"):  # x2 is not hers
        preannotation.preannotate(engine, own, X2, "spans", detectors["judge"], who)
    preannotation.preannotate(engine, own, X1, "spans", detectors["judge"], who)
    assert len(_spans(engine, own)) == 2


def test_a_detector_of_another_kind_or_dataset_is_refused(store) -> None:
    engine, who, own, _detectors = store
    with Session(engine) as session:
        gold = session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == "gold"))
    assert gold is not None
    with pytest.raises(ValueError, match="no detector"):
        preannotation.preannotate(engine, own, X1, "spans", gold, who)
    with pytest.raises(ValueError, match="Pre-annotation is for"):
        preannotation.preannotate(engine, own, X1, "claims", gold, who)


def test_bulk_starts_the_unlabeled_items_the_detector_ran_on(store) -> None:
    engine, who, own, detectors = store
    assert preannotation.preannotate_dataset(engine, own, "spans", detectors["eager"], who) == 1  # x1 only
    # The annotator removes the draft's only span (the detector was wrong): the next bulk start must not
    # put it back, as x1 was started already.
    (copied,) = item_annotations(engine, X1, [own])[own].spans
    labeling.delete_span(engine, copied.id, who)
    assert preannotation.preannotate_dataset(engine, own, "spans", detectors["eager"], who) == 0
    assert _spans(engine, own) == []
    labeling.add_span(engine, own, X2, 11, 15, None, who)  # x2 labeled by hand: left alone
    assert preannotation.preannotate_dataset(engine, own, "spans", detectors["judge"], who) == 0
    assert _spans(engine, own, X2) == [(11, 15, None)]
    assert preannotation.preannotate_dataset(engine, own, "sentences", detectors["judge"], who) == 2
    assert preannotation.preannotation_of(engine, own, X2, "sentences") is not None


def test_anchoring_units_pair_the_draft_with_the_labels_now(store) -> None:
    engine, who, own, detectors = store
    preannotation.preannotate(engine, own, X1, "spans", detectors["judge"], who)
    preannotation.preannotate(engine, own, X1, "sentences", detectors["eager"], who)
    spans = item_annotations(engine, X1, [own])[own].spans
    labeling.delete_span(engine, spans[1].id, who)
    labeling.set_sentence_label(engine, own, X1, 2, "incorrect", who)
    units = preannotation.anchoring_units(engine, 1)
    assert [(u.annotator, u.detector, u.task, u.item) for u in units] == [
        ("alice", "judge", "spans", "x1"),
        ("alice", "eager", "sentences", "x1"),
    ]
    assert units[0].detector_spans == ((2, 5, "Color Attribute"), (57, 60, "Numerical Attribute"))
    assert units[0].annotator_spans == ((2, 5, "Color Attribute"),)
    assert units[1].detector_labels == {0: "incorrect", 1: "correct", 2: "correct"}
    assert units[1].annotator_labels == {0: "incorrect", 1: "correct", 2: "incorrect"}
    assert preannotation.anchoring_units(engine, 1, [own + 100]) == []
    # Exported into another store, the recorded id may name another label set there: the name decides.
    with Session(engine) as session:
        label_set = session.get_one(m.LabelSet, own)
        stored = label_set.meta["preannotation"]
        stored["spans"]["x1"]["detector_id"] = detectors["eager"]
        label_set.meta = {**label_set.meta, "preannotation": stored}
        session.commit()
    assert preannotation.anchoring_units(engine, 1)[0].detector == "judge"


def test_starting_every_item_leaves_an_item_whose_gold_was_shown_alone(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gold of x1, the first item, was shown to her (Overridden labels) before she marked anything on it:
    "start all from a detector" was refused whole, naming x1, though x2 was hers to start."""
    engine, who, own, detectors = store
    with Session(engine) as session:
        session.get_one(m.Annotator, who).role = "annotator"
        for item in (X1, X2):
            session.add(m.Assignment(dataset_id=1, task="spans", item_id=item, annotator_id=who))
        session.commit()
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    set_dataset_settings(engine, 1, allow_preannotation=True, actor=OPERATOR)
    record_gold_shown(engine, Actor(who, "alice", "annotator"), 1, [X1])
    assert preannotation.preannotate_dataset(engine, own, "spans", detectors["judge"], who) == 1
    assert _spans(engine, own, X1) == []
    assert len(_spans(engine, own, X2)) == 2


def test_a_detector_is_offered_for_a_task_only_where_it_holds_output_for_it(store) -> None:
    """Spans drafts come from detectors with spans; sentence drafts from those with spans or sentence
    labels. Asked one label set at a time, each by its index (a query planned for gold's many rows had
    scanned every sentence label for each detector without any)."""
    engine, who, _, _ = store
    labels_only = LabelSetRecord(
        kind="detector",
        name="labeller",
        annotations=[Annotations(item="x2", sentence_labels=[SentenceLabelRecord(1, "incorrect")])],
    )
    silent = LabelSetRecord(kind="detector", name="silent", annotations=[Annotations(item="x1")])
    bundle = _bundle()
    import_bundle(engine, _bundle(items=bundle.items, label_sets=[labels_only, silent]), actor=OPERATOR)
    with Session(engine) as session:  # the silent detector is stored, with nothing of its own
        assert session.scalar(select(m.LabelSet.id).where(m.LabelSet.name == "silent")) is not None
    alice = Actor(who, "alice", "admin")
    assert [ls.name for ls in preannotation.detector_sources(engine, alice, 1, "spans")] == ["eager", "judge"]
    names = [ls.name for ls in preannotation.detector_sources(engine, alice, 1, "sentences")]
    assert names == ["eager", "judge", "labeller"]
