"""Re-imports that would remove or change stored annotations: refused unless replacing, logged, undoable.

Run on real SQLite and PostgreSQL. The hostile file is the one from the data-protection report: five
canonical lines naming three items of the gold label set with nothing on them.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.exporter import export_bundle
from db.import_changes import (
    MetaTexts,
    ReplaceRequired,
    annotation_rows,
    meta_text,
    row_counts,
    unchanged,
)
from db.import_undo import UndoRefused, recent_imports, undo_import
from db.importer import import_bundle
from db.transfer import import_file, import_predictions
from formats.records import (
    Annotations,
    ClaimLabelRecord,
    ItemRecord,
    ItemStatusRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    RawOutputRecord,
    ResponseScoreRecord,
    SentenceLabelRecord,
    SentenceScoreRecord,
    SpanRecord,
    TokenProbabilityRecord,
    TripletJudgmentRecord,
    TripletRecord,
)
from tests.db.import_samples import HOSTILE, SENTENCES, canonical, gold_bundle, response


def _gold(engine) -> Annotations | None:
    return {ls.name: ls for ls in export_bundle(engine, "shapes", actor=OPERATOR).label_sets}[
        "gold"
    ].annotations


def _counts(engine) -> tuple[int, int, int]:
    with Session(engine) as session:
        return (
            session.scalar(select(func.count()).select_from(m.Span)),
            session.scalar(select(func.count()).select_from(m.SentenceLabel)),
            session.scalar(select(func.count()).select_from(m.EditLog)),
        )


def test_the_hostile_file_has_five_lines():
    assert len(HOSTILE.decode().splitlines()) == 5


def test_hostile_reimport_is_refused_with_exact_counts_and_writes_nothing(engine):
    assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    before, counts = _gold(engine), _counts(engine)
    assert counts[:2] == (5, 16)

    outcome = import_file(engine, HOSTILE, source="visitor.jsonl", actor=OPERATOR)

    assert not outcome.ok and outcome.refused_changes is not None
    assert outcome.refused_changes.counts == {
        "gold:gold": {
            "spans": {"removed": 5, "changed": 0, "added": 0},
            "sentence_labels": {"removed": 16, "changed": 0, "added": 0},
        }
    }
    assert outcome.refused_changes.items == ["a", "b", "c"]
    assert "5 removed" in outcome.summary() and "16 removed" in outcome.summary()
    assert outcome.to_dict()["changes"]["first_items"] == ["a", "b", "c"]
    assert _counts(engine) == counts and _gold(engine) == before


def test_replace_applies_logs_the_before_rows_and_undo_restores_gold_exactly(engine):
    assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    before = _gold(engine)

    outcome = import_file(engine, HOSTILE, source="visitor.jsonl", replace_existing=True, actor=OPERATOR)

    assert outcome.ok and _counts(engine)[:2] == (0, 0)
    (entry, first) = recent_imports(engine)
    assert entry.source == "visitor.jsonl" and entry.undoable and first.source == "gold.jsonl"
    with Session(engine) as session:
        logged = session.get(m.EditLog, entry.log_id)
        assert logged is not None and logged.before is not None
        (unit,) = logged.before["label_sets"]
    assert unit["items"] == ["a", "b", "c"]
    assert sum(len(a["spans"]) for a in unit["annotations"]) == 5
    assert sum(len(a["sentence_labels"]) for a in unit["annotations"]) == 16

    result = undo_import(engine, entry.log_id, actor=OPERATOR)

    assert result.undid == entry.log_id and result.rows == {"spans": 5, "sentence_labels": 16}
    assert _gold(engine) == before
    assert recent_imports(engine)[1].undone  # [0] is the undo, which can be undone in turn
    with pytest.raises(UndoRefused, match="undone already"):
        undo_import(engine, entry.log_id, actor=OPERATOR)


def test_undo_is_refused_when_the_rows_changed_since(engine):
    assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    assert import_file(engine, HOSTILE, source="visitor.jsonl", replace_existing=True, actor=OPERATOR).ok
    log_id = recent_imports(engine)[0].log_id
    with Session(engine) as session:
        label_set_id = session.scalar(select(m.LabelSet.id).where(m.LabelSet.name == "gold"))
        item_id = session.scalar(select(m.Item.id).where(m.Item.external_id == "b"))
    with Session(engine) as session, session.begin():  # an annotator's span since the import
        session.add(m.Span(label_set_id=label_set_id, item_id=item_id, start=0, end=3, type="Object"))
    counts = _counts(engine)

    with pytest.raises(UndoRefused, match="label set gold:gold changed since"):
        undo_import(engine, log_id, actor=OPERATOR)
    assert _counts(engine) == counts
    with pytest.raises(UndoRefused, match="no import with log id"):
        undo_import(engine, 10_000, actor=OPERATOR)


def test_an_import_that_only_adds_needs_no_confirmation(engine):
    assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    more = gold_bundle()
    more.items.append(ItemRecord(external_id="d", response=response(2)))
    more.label_sets[0].annotations[0].spans.append(SpanRecord(20, 26, "Object"))
    more.label_sets[0].annotations.append(Annotations(item="d", spans=[SpanRecord(0, 8)]))

    outcome = import_file(engine, canonical(more), source="more.jsonl", actor=OPERATOR)

    assert outcome.ok and outcome.refused_changes is None
    assert outcome.result is not None and outcome.result.rows["spans"] == 4  # a's three and d's one
    assert outcome.result.changes.counts == {"gold:gold": {"spans": {"removed": 0, "changed": 0, "added": 2}}}
    assert _counts(engine)[:2] == (7, 16)


def test_identical_reimport_is_a_no_op(engine):
    data = canonical(gold_bundle())
    assert import_file(engine, data, source="gold.jsonl", actor=OPERATOR).ok
    with Session(engine) as session:
        span_ids = sorted(session.scalars(select(m.Span.id)))

    outcome = import_file(engine, data, source="gold.jsonl", actor=OPERATOR)

    assert outcome.ok and outcome.result is not None
    assert outcome.result.rows == {} and outcome.result.changes.counts == {}
    with Session(engine) as session:
        assert sorted(session.scalars(select(m.Span.id))) == span_ids


def test_changed_labels_and_ratings_count_as_changes(engine):
    bundle = gold_bundle()
    bundle.label_sets.append(
        LabelSetRecord(
            kind="detector", name="eager", annotations=[Annotations(item="a", spans=[SpanRecord(0, 8)])]
        )
    )
    bundle.rating_tasks.append(
        RatingTaskRecord(
            name="quality",
            detector="eager",
            granularity="response",
            ratings=[RatingRecord("a", "rater-1", 3), RatingRecord("b", "rater-1", 2)],
        )
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    bundle.label_sets[0].annotations[1].sentence_labels[2].label = "incorrect"
    bundle.rating_tasks[0].ratings[1].score = 4

    with pytest.raises(ReplaceRequired, match="1 changed") as refused:
        import_bundle(engine, bundle, actor=OPERATOR)
    assert refused.value.changes.counts == {
        "gold:gold": {"sentence_labels": {"removed": 0, "changed": 1, "added": 0}},
        "rating task quality": {"ratings": {"removed": 0, "changed": 1, "added": 0}},
    }
    assert refused.value.changes.items == ["b"]

    result = import_bundle(engine, bundle, replace_existing=True, actor=OPERATOR)
    assert result.rows == {"spans": 2, "sentence_labels": 5, "ratings": 1}
    log_id = recent_imports(engine)[0].log_id
    assert undo_import(engine, log_id, actor=OPERATOR).rows == {
        "spans": 2,
        "sentence_labels": 5,
        "ratings": 1,
    }
    with Session(engine) as session:
        assert sorted(session.scalars(select(m.Rating.score))) == [2, 3]
        assert session.scalar(select(func.count()).where(m.SentenceLabel.label == "incorrect")) == 3


def test_predictions_reimport_needs_replace(engine):
    assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    text = response(SENTENCES["a"])
    tagged = text.replace("number 0", "<hallucination>number 0</hallucination>", 1)
    first, second = (
        json.dumps({"id": "a", "output": f"<Tagged_Text>{output}</Tagged_Text>"}).encode()
        for output in (tagged, text)
    )
    common = {
        "source": "out.jsonl",
        "dataset": "shapes",
        "detector": "det",
        "format_name": "mhalo-outputs",
        "actor": OPERATOR,
    }
    assert import_predictions(engine, first, **common).ok

    refused = import_predictions(engine, second, **common)

    assert not refused.ok and refused.refused_changes is not None
    assert refused.refused_changes.counts["detector:det"]["spans"] == {
        "removed": 1,
        "changed": 0,
        "added": 0,
    }
    assert import_predictions(engine, second, **common, replace_existing=True).ok


def test_an_undo_keeps_what_it_replaced_and_can_be_undone_too(engine):
    assert import_file(engine, canonical(gold_bundle()), source="gold.jsonl", actor=OPERATOR).ok
    gold = _gold(engine)
    first = recent_imports(engine)[0]
    assert first.undoable

    undo = undo_import(
        engine, first.log_id, actor=OPERATOR
    )  # takes the first gold import back: its annotations go

    assert _counts(engine)[:2] == (0, 0)
    (latest, original) = recent_imports(engine)[:2]
    assert latest.log_id == undo.log_id and latest.undoable and original.undone
    again = undo_import(engine, undo.log_id, actor=OPERATOR)
    assert again.rows == {"spans": 5, "sentence_labels": 16} and _gold(engine) == gold


def test_meta_texts_encode_each_dict_once_and_tell_equal_dicts_apart():
    texts = MetaTexts()
    meta = {"n_unknown": 1, "agreement_ratio": 0.5}
    first = texts(meta)
    assert first == json.dumps(meta, sort_keys=True) and texts(meta) is first
    equal = dict(meta)
    assert texts(equal) == first and texts(equal) is not first  # another dict: encoded on its own
    meta["n_unknown"] = 2  # a dict is taken as it was when first encoded, within one batch
    assert texts(meta) is first
    assert texts({}) == "" and texts.stored({}) == "{}" and texts.stored(equal) == first


_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities too: json.dumps writes them as NaN and Infinity
    | st.text()
)
_JSON_VALUES = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), _JSON_VALUES, max_size=6))
def test_meta_text_is_json_dumps_with_sorted_keys(meta) -> None:
    """The plan's encoder (built once, not per call) writes exactly what ``json.dumps`` does, so the
    digests logged by earlier imports still match."""
    assert meta_text(meta) == (json.dumps(meta, sort_keys=True) if meta else "")


def test_meta_text_refuses_what_json_dumps_refuses() -> None:
    for meta in ({"a": object()}, {"a": {1: 2, "b": 3}}):
        with pytest.raises(TypeError):
            meta_text(meta)


META = {"n_unknown": 1, "error_words": ["a", "é"], "agreement_ratio": 0.25}


def _gold_with_meta():
    """The small gold dataset, with meta (keys not in order) on the second label of the first item."""
    bundle = gold_bundle()
    bundle.label_sets[0].annotations[0].sentence_labels[1].meta = dict(META)
    return bundle


def test_sentence_label_meta_is_stored_as_the_plan_fingerprinted_it_and_undo_accepts_it(engine):
    """The writer stores the text the change plan encoded (sorted keys); reading it back gives the
    same rows, so a re-import is a no-op and the import can be undone."""
    first = import_bundle(engine, _gold_with_meta(), actor=OPERATOR)
    with Session(engine) as session:
        stored = session.scalars(select(m.SentenceLabel.meta)).all()
        text = (
            session.connection()
            .exec_driver_sql(
                "SELECT CAST(metadata AS TEXT) FROM sentence_labels WHERE CAST(metadata AS TEXT) <> '{}'"
            )
            .scalar_one()
        )
    assert META in stored and stored.count({}) == len(stored) - 1
    assert text == json.dumps(META, sort_keys=True)
    again = import_bundle(engine, _gold_with_meta(), actor=OPERATOR)
    assert again.rows == {} and not again.changes.needs_replace
    log_id = next(e.log_id for e in recent_imports(engine) if e.rows == first.rows)
    undo_import(engine, log_id, actor=OPERATOR)
    assert _counts(engine)[:2] == (0, 0)


def test_a_reimport_giving_a_stored_number_as_another_type_changes_it(engine):
    """A unit whose records equal the stored ones is taken as unchanged without building its rows, but
    1.0 for a stored 1 (or 1 for True) is another JSON text, as the rows compare it: a change."""
    import_bundle(engine, _gold_with_meta(), actor=OPERATOR)
    for other in (1.0, True):
        bundle = _gold_with_meta()
        bundle.label_sets[0].annotations[0].sentence_labels[1].meta["n_unknown"] = other
        with pytest.raises(ReplaceRequired) as refused:
            import_bundle(engine, bundle, actor=OPERATOR)
        assert refused.value.changes.counts == {
            "gold:gold": {"sentence_labels": {"removed": 0, "changed": 1, "added": 0}}
        }


@given(_JSON_VALUES, _JSON_VALUES)
def test_records_taken_as_unchanged_have_equal_rows(stored, given_value) -> None:
    """:func:`unchanged` never says so of records whose rows differ (a stored meta is one read back
    from JSON; the incoming one is anything a file gives)."""
    try:
        stored = json.loads(json.dumps(stored))
    except ValueError:
        return
    old = Annotations(item="a", sentence_labels=[SentenceLabelRecord(0, "correct", meta={"m": stored})])
    new = Annotations(item="a", sentence_labels=[SentenceLabelRecord(0, "correct", meta={"m": given_value})])
    if unchanged(old, new):
        assert annotation_rows(old) == annotation_rows(new)
    if annotation_rows(old) != annotation_rows(new):
        assert not unchanged(old, new)


def test_row_counts_count_the_rows_of_every_table() -> None:
    """An unchanged unit adds to the counts of unchanged rows what its rows would (one per record, the
    same spans twice counted twice), table by table in the same order."""
    annotations = Annotations(
        item="a",
        spans=[SpanRecord(0, 4, "Object"), SpanRecord(0, 4, "Object"), SpanRecord(5, 9)],
        sentence_labels=[SentenceLabelRecord(0, "correct"), SentenceLabelRecord(1, "incorrect")],
        claim_labels=[ClaimLabelRecord(0, "hallucination")],
        triplets=[TripletRecord("a", "on", "b")],
        triplet_judgments=[TripletJudgmentRecord("gold", "g", 0, "yes")],
        raw_output=RawOutputRecord("text", True),
        sentence_scores=[SentenceScoreRecord(0, 0.5), SentenceScoreRecord(1, 0.25)],
        token_probabilities=[TokenProbabilityRecord(0, 0, 4, 0.5)],
        response_score=ResponseScoreRecord(3.0),
        statuses=[ItemStatusRecord("spans", "done")],
    )
    for record in (annotations, Annotations(item="b"), Annotations(item="c", spans=[SpanRecord(0, 1)])):
        rows = annotation_rows(record)
        counts = row_counts(record)
        assert list(counts.items()) == [(t, sum(map(len, g.values()))) for t, g in rows.items()]
