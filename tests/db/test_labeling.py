"""Annotator actions: immediate, logged, undoable, version-checked; the queue walks unfinished items."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories import labeling, queue
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import set_dataset_settings
from db.repositories.label_sets import human_label_set
from formats.records import Bundle, DatasetRecord, ItemRecord
from tests.db.test_importer import _bundle


@pytest.fixture
def setup(engine):
    import_bundle(engine, _bundle(), actor=OPERATOR)
    alice = get_or_create_annotator(engine, "alice")
    label_set = human_label_set(engine, 1, alice.id)
    return engine, alice.id, label_set.id


def _log_count(engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(m.EditLog))


def test_span_actions_and_undo(setup) -> None:
    engine, who, ls = setup
    before_log = _log_count(engine)
    added = labeling.add_span(engine, ls, 1, 2, 5, "Color Attribute", who)
    assert "“red”" in added.description
    retyped = labeling.retype_span(engine, added.entity_id, "Object", who, expected_version=1)
    # Receipts name a span by its text, as "added span" does, never by offsets.
    assert retyped.description == "retyped span “red” (Color Attribute → Object)"
    spans = item_annotations(engine, 1, [ls])[ls].spans
    assert [(s.start, s.end, s.type, s.version) for s in spans] == [(2, 5, "Object", 2)]
    with pytest.raises(labeling.StaleEdit):
        labeling.retype_span(engine, added.entity_id, "OCR", who, expected_version=1)
    deleted = labeling.delete_span(engine, added.entity_id, who, expected_version=2)
    assert deleted.description == "deleted span “red” (Object)"
    assert item_annotations(engine, 1, [ls])[ls].spans == ()
    assert labeling.undo_last(engine, who).description == "undid: deleted span “red” (Object)"
    assert [s.type for s in item_annotations(engine, 1, [ls])[ls].spans] == ["Object"]
    labeling.undo_last(engine, who)  # the retype
    assert [s.type for s in item_annotations(engine, 1, [ls])[ls].spans] == ["Color Attribute"]
    labeling.undo_last(engine, who)  # the add
    assert item_annotations(engine, 1, [ls])[ls].spans == ()
    assert labeling.undo_last(engine, who) is None
    assert _log_count(engine) == before_log + 6  # 3 actions + 3 undos, nothing rewritten


def test_a_span_from_mid_word_is_stored_as_whole_words(setup) -> None:
    """A request that skipped the selector's snapping still cannot store half a word."""
    engine, who, ls = setup
    with Session(engine) as session:
        response = session.get_one(m.Item, 1).response
    red = response.index("red")
    added = labeling.add_span(engine, ls, 1, red + 1, red + 2, None, who)  # "e" of "red"
    assert "“red”" in added.description
    spans = item_annotations(engine, 1, [ls])[ls].spans
    assert [(s.start, s.end) for s in spans] == [(red, red + 3)]
    with pytest.raises(ValueError, match="no word"):
        labeling.add_span(engine, ls, 1, red + 3, red + 4, None, who)  # only the space after it


def test_the_same_words_marked_again_from_a_stale_tab_are_refused(setup) -> None:
    """Two tabs of one annotator double-click the same word: the second, which had not seen the first
    mark, must not store it twice (snapped to the same words, even from inside the word)."""
    engine, who, ls = setup
    with Session(engine) as session:
        response = session.get_one(m.Item, 1).response
    red = response.index("red")
    labeling.add_span(engine, ls, 1, red, red + 3, "Object", who)
    with pytest.raises(labeling.StaleEdit, match="“red” is marked already"):
        labeling.add_span(engine, ls, 1, red + 1, red + 2, "OCR", who)
    assert [(s.start, s.end, s.type) for s in item_annotations(engine, 1, [ls])[ls].spans] == [
        (red, red + 3, "Object")
    ]
    labeling.add_span(engine, ls, 1, red, red + 7, "OCR", who)  # other words: a span of its own


def test_character_precision_is_a_dataset_setting(setup) -> None:
    engine, who, ls = setup
    with Session(engine) as session:
        response = session.get_one(m.Item, 1).response
    red = response.index("red")
    set_dataset_settings(engine, 1, char_precision=True, actor=OPERATOR)
    labeling.add_span(engine, ls, 1, red + 1, red + 2, "OCR", who)
    assert [(s.start, s.end) for s in item_annotations(engine, 1, [ls])[ls].spans] == [(red + 1, red + 2)]


def test_span_outside_the_response_is_refused(setup) -> None:
    engine, who, ls = setup
    with pytest.raises(ValueError, match="inside the response"):
        labeling.add_span(engine, ls, 1, 5, 500, None, who)


def test_sentence_label_consistency_with_spans(setup) -> None:
    engine, who, ls = setup
    labeling.add_span(engine, ls, 1, 2, 5, "Color Attribute", who)
    with pytest.raises(labeling.InconsistentLabel, match="“red”"):
        labeling.set_sentence_label(engine, ls, 1, 0, "correct", who)
    labeling.set_sentence_label(engine, ls, 1, 0, "correct", who, override=True)
    labeling.set_sentence_label(engine, ls, 1, 1, "incorrect", who, error_type="OCR")
    labels = item_annotations(engine, 1, [ls])[ls].sentence_labels
    assert (labels[0].label, labels[0].override) == ("correct", True)
    assert (labels[1].label, labels[1].error_type) == ("incorrect", "OCR")
    labeling.set_sentence_label(engine, ls, 1, 1, "unknown", who, error_type="OCR")
    assert item_annotations(engine, 1, [ls])[ls].sentence_labels[1].error_type is None
    labeling.undo_last(engine, who)
    assert item_annotations(engine, 1, [ls])[ls].sentence_labels[1].label == "incorrect"


def test_claims_triplets_and_statuses(setup) -> None:
    engine, who, ls = setup
    with Session(engine) as session:
        claim_id = session.scalar(select(m.Claim.id).where(m.Claim.index == 1))
        triplet_id = session.scalar(select(m.Triplet.id).where(m.Triplet.label_set_id.is_(None)))
    labeling.set_claim_label(engine, ls, claim_id, "hallucination", who, type_="object", reason="no cats")
    judged = labeling.set_triplet_judgment(engine, ls, triplet_id, "no", who, wrong_part="object2")
    # The receipt names the part as the judging page's button does ("Object"), not as it is stored.
    assert judged.description.endswith("→ no (wrong part: Object)")
    labeling.set_triplet_judgment(engine, ls, triplet_id, "no", who, wrong_part="relation")
    found = item_annotations(engine, 1, [ls])[ls]
    assert found.claim_labels[1].reason == "no cats"
    with Session(engine) as session:
        judgment = session.scalar(select(m.TripletJudgment).where(m.TripletJudgment.label_set_id == ls))
        assert (judgment.verdict, judgment.wrong_part) == ("no", "relation")
    with pytest.raises(ValueError):
        labeling.set_claim_label(engine, ls, claim_id, "maybe", who)


@pytest.mark.parametrize(("text", "says"), [("no\x00cats", "NUL"), ("\ud800", "surrogate")])
def test_typed_text_no_store_can_keep_is_refused_with_a_message(setup, text: str, says: str) -> None:
    """PostgreSQL refused a NUL mid-write, and the page could only say "try again"; now the action is
    refused with what is wrong, on either store, and nothing is written."""
    engine, who, ls = setup
    with Session(engine) as session:
        claim_id = session.scalar(select(m.Claim.id).where(m.Claim.index == 1))
    with pytest.raises(ValueError, match=f"The reason contains .*{says}"):
        labeling.set_claim_label(engine, ls, claim_id, "hallucination", who, reason=text)
    with pytest.raises(ValueError, match=f"The type contains .*{says}"):
        labeling.set_claim_label(engine, ls, claim_id, "hallucination", who, type_=text)
    with pytest.raises(ValueError, match=f"The note contains .*{says}"):
        labeling.set_item_status(engine, ls, 1, "spans", "unsure", who, note=text)
    # A type comes in a request: the page offers only the dataset's types, a hand-made request anything.
    with pytest.raises(ValueError, match=f"The type contains .*{says}"):
        labeling.add_span(engine, ls, 1, 0, 3, text, who)
    with pytest.raises(ValueError, match=f"The error type contains .*{says}"):
        labeling.set_sentence_label(engine, ls, 1, 0, "incorrect", who, error_type=text)
    span = labeling.add_span(engine, ls, 1, 0, 3, "object", who)
    with pytest.raises(ValueError, match=f"The type contains .*{says}"):
        labeling.retype_span(engine, span.entity_id, text, who)
    with Session(engine) as session:
        for model in (m.ClaimLabel, m.ItemStatus, m.SentenceLabel):
            assert session.scalar(select(func.count()).where(model.label_set_id == ls)) == 0
        assert session.scalars(select(m.Span.type).where(m.Span.label_set_id == ls)).all() == ["object"]


def test_a_span_from_a_hand_made_request_must_have_whole_offsets_and_a_text_type(setup) -> None:
    """The selector sends offsets and a type; a hand-made request may send a list, an object or a
    fraction. PostgreSQL stored a list type as an array's text and SQLite failed on it (the page said
    "try again"); now each is refused with what is wrong, and nothing is written."""
    engine, who, ls = setup
    for type_ in (["Object"], {"t": 1}, 7):
        with pytest.raises(ValueError, match="A span's type must be text"):
            labeling.add_span(engine, ls, 1, 0, 3, type_, who)  # type: ignore[arg-type]
    for start, end in ((0.5, 3), (0, "3"), (True, 3)):
        with pytest.raises(ValueError, match="offsets must be whole numbers"):
            labeling.add_span(engine, ls, 1, start, end, None, who)  # type: ignore[arg-type]
    span = labeling.add_span(engine, ls, 1, 0, 3, "object", who)
    with pytest.raises(ValueError, match="A span's type must be text"):
        labeling.retype_span(engine, span.entity_id, ["Object"], who)  # type: ignore[arg-type]
    with Session(engine) as session:
        assert session.scalars(select(m.Span.type).where(m.Span.label_set_id == ls)).all() == ["object"]


def test_queue_walks_unfinished_items_in_order(setup) -> None:
    engine, who, ls = setup
    more = [ItemRecord(external_id=f"y{k}", response=f"Item {k}.") for k in range(3)]
    import_bundle(engine, Bundle(DatasetRecord("tiny", "canonical"), more), actor=OPERATOR)
    assert queue.next_item(engine, 1, ls, "sentences") == "x1"
    labeling.set_item_status(engine, ls, 1, "sentences", "done", who)
    assert queue.next_item(engine, 1, ls, "sentences") == "y0"
    assert queue.next_item(engine, 1, ls, "spans") == "x1"  # other tasks are separate
    labeling.set_item_status(engine, ls, 3, "sentences", "skipped", who, note="blurry")
    assert queue.next_item(engine, 1, ls, "sentences", after_position=2) == "y2"
    assert queue.next_item(engine, 1, ls, "sentences", after_position=4) == "y0"  # wraps around
    labeling.set_item_status(engine, ls, 4, "sentences", "unsure", who, note="?")
    assert queue.progress(engine, 1, ls, "sentences") == queue.Progress(
        finished=2, flagged=2, total=4, skipped=1
    )
    assert queue.item_status(engine, ls, 3, "sentences") == queue.ItemStatusView("skipped", "blurry")
    # The way back to a skipped item, which the queue passes over; clearing the mark puts it back.
    assert queue.next_skipped(engine, 1, ls, "sentences", after_position=3) == "y1"  # wraps around
    status = queue.item_status(engine, ls, 3, "sentences")
    assert status is not None
    with pytest.raises(labeling.StaleEdit, match="^The item status was changed by you in another tab"):
        labeling.clear_item_status(engine, ls, 3, "sentences", who, expected_version=status.version + 1)
    labeling.clear_item_status(engine, ls, 3, "sentences", who, expected_version=status.version)
    assert queue.next_skipped(engine, 1, ls, "sentences") is None
    assert queue.next_item(engine, 1, ls, "sentences", after_position=2) == "y1"
    with pytest.raises(ValueError, match="nothing to clear"):
        labeling.clear_item_status(engine, ls, 1, "sentences", who)  # done, not skipped


def test_ratings_respect_the_scale_and_undo(setup) -> None:
    engine, who, _ = setup
    with Session(engine) as session, session.begin():
        task = m.RatingTask(dataset_id=1, detector_label_set_id=2, name="segments", scale_min=1, scale_max=4)
        session.add(task)
        session.flush()
        task_id = task.id
    labeling.set_rating(engine, task_id, 1, who, score=3, segment=(2, 10))
    labeling.set_rating(engine, task_id, 1, who, score=4, segment=(2, 10))
    with pytest.raises(ValueError, match="from 1 to 4"):
        labeling.set_rating(engine, task_id, 1, who, score=5, segment=(2, 10))
    with Session(engine) as session:
        assert session.scalars(select(m.Rating.score)).all() == [4.0]
    labeling.undo_last(engine, who)
    with Session(engine) as session:
        assert session.scalars(select(m.Rating.score)).all() == [3.0]
