"""The fast numeric reads return what the ordinary bulk reads return, on SQLite and PostgreSQL."""

from __future__ import annotations

import numpy as np
import pytest

from db.access import OPERATOR
from db.importer import import_bundle
from db.repositories import report_inputs as reads
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    SentenceLabelRecord,
    SentenceScoreRecord,
    SpanRecord,
)


def _bundle() -> Bundle:
    items = [
        ItemRecord(
            f"i{k}", f"A red cube {k}. The ball is blue. It is big.", subset="s", image_ref=f"{k % 2}.png"
        )
        for k in range(4)
    ]
    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[
            Annotations(
                f"i{k}",
                spans=[SpanRecord(2, 5, "Color")],
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect", "Color"),
                    SentenceLabelRecord(1, "correct"),
                    SentenceLabelRecord(2, "unknown"),
                ],
            )
            for k in range(4)
        ],
    )
    full = LabelSetRecord(
        "detector",
        "full",
        annotations=[
            Annotations(
                f"i{k}",
                sentence_scores=[SentenceScoreRecord(s, 10.0 * s + k, parsed=s != 1) for s in range(3)],
            )
            for k in range(4)
        ],
    )
    partial = LabelSetRecord(
        "detector", "partial", annotations=[Annotations("i0", sentence_scores=[SentenceScoreRecord(2, 77.5)])]
    )
    task = RatingTaskRecord(
        "task", "full", ratings=[RatingRecord("i0", "r1", 3.0, 2, 5)], scale_min=1, scale_max=5
    )
    return Bundle(DatasetRecord("reads", "canonical"), items, [gold, full, partial], [task])


def test_numeric_reads_match_the_bulk_reads(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    table = reads.sentence_table(engine, 1)
    rows = reads.sentence_rows(engine, 1)
    assert table["sentence_id"].tolist() == rows["sentence_id"] and table["index"].tolist() == rows["index"]
    columns = reads.sentence_columns(engine, 1)
    scores = reads.sentence_scores(engine, 1)
    expected = sorted(
        zip(scores["label_set_id"], scores["sentence_id"], scores["score"], scores["parsed"], strict=True)
    )
    got = sorted(
        zip(
            *(columns["scores"][k].tolist() for k in ("label_set_id", "sentence_id", "score", "parsed")),
            strict=True,
        )
    )
    assert got == expected
    labels = reads.sentence_labels(engine, 1)
    codes = {
        (a, b): c
        for a, b, c in zip(
            *(columns["labels"][k].tolist() for k in ("label_set_id", "sentence_id", "code")), strict=True
        )
    }
    assert {k: ["correct", "incorrect", "unknown"][v] for k, v in codes.items()} == {
        (a, b): label
        for a, b, label in zip(labels["label_set_id"], labels["sentence_id"], labels["label"], strict=True)
    }
    assert columns["error_types"]["error_type"].tolist() == ["Color"] * 4
    counts = reads.annotation_counts(engine, 1)
    assert counts["spans"] == {"gold": 4} and counts["sentence_scores"] == {"detector": 13}
    assert counts["ratings"] == {"human": 1}
    assert reads.annotation_counts(engine, 1, kinds=("spans",)) == {"spans": {"gold": 4}}
    assert reads.annotation_counts(engine, 1, kinds=("ratings", "sentence_scores")) == {
        "sentence_scores": counts["sentence_scores"],
        "ratings": counts["ratings"],
    }
    assert reads.rating_scales(engine, 1) == {1: (1, 5)}
    assert set(reads.item_images(engine, 1).values()) == {"0.png", "1.png"}
    assert reads.gold_types(engine, 1) == ["Color"]
    assert reads.dataset_name(engine, 1) == "reads"
    assert reads.done_items(engine, 1) == {}
    with pytest.raises(LookupError):
        reads.dataset_name(engine, 99)


def test_sentence_arrays_hold_the_table_and_columns_in_one_read(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    arrays = reads.sentence_arrays(engine, 1, offsets=True)
    table = reads.sentence_table(engine, 1)
    by_id = sorted(
        zip(*(table[k].tolist() for k in ("sentence_id", "item_id", "index", "start", "end")), strict=True)
    )
    got = arrays["sentences"]
    assert got["sentence_id"].tolist() == sorted(table["sentence_id"].tolist())
    assert (
        list(
            zip(*(got[k].tolist() for k in ("sentence_id", "item_id", "index", "start", "end")), strict=True)
        )
        == by_id
    )
    columns = reads.sentence_columns(engine, 1)
    for block in ("labels", "scores", "error_types"):
        names = list(columns[block])
        assert sorted(zip(*(arrays[block][k].tolist() for k in names), strict=True)) == sorted(
            zip(*(columns[block][k].tolist() for k in names), strict=True)
        )
    assert set(reads.sentence_arrays(engine, 1)["sentences"]) == {"sentence_id", "item_id", "index"}


def test_item_facets_leave_the_responses_out(engine) -> None:
    import_bundle(engine, _bundle(), actor=OPERATOR)
    facets = reads.item_facets(engine, 1)
    index = reads.item_index(engine, 1)
    assert facets["id"] == index.ids and facets["external_id"] == index.external_ids
    assert facets["subset"] == index.subsets and facets["source_model"] == index.source_models
    assert facets["image_ref"] == ["0.png", "1.png", "0.png", "1.png"]
    assert "response" not in facets


def test_scores_that_text_would_round_arrive_exactly(engine) -> None:
    # Whole scores from 0 to 254 travel packed with their sentence, the others as rows: fractional ones
    # here, and (written past the import's check of 0-100) ones outside that range below.
    odd = [0.1 + 0.2, 1e-300, 100.0, 99.99999999999999, 1 / 3, 0.0, 50.5, 95.0, 7.0, 64.0]
    items = [ItemRecord(f"i{k}", f"Sentence {k}. Another one.") for k in range(len(odd) // 2)]
    run = LabelSetRecord(
        "detector",
        "odd",
        annotations=[
            Annotations(f"i{k}", sentence_scores=[SentenceScoreRecord(s, odd[2 * k + s]) for s in range(2)])
            for k in range(len(odd) // 2)
        ],
    )
    import_bundle(engine, Bundle(DatasetRecord("odd", "canonical"), items, [run]), actor=OPERATOR)
    from sqlalchemy import update

    from db import models as m

    with engine.begin() as connection:  # 7.0 and 64.0 become 255 (the marker itself) and -2
        for before, after in ((7.0, 255.0), (64.0, -2.0)):
            connection.execute(
                update(m.SentenceScore).where(m.SentenceScore.score == before).values(score=after)
            )
    odd[-2:] = [255.0, -2.0]
    scores = reads.sentence_arrays(engine, 1)["scores"]
    table = reads.sentence_table(engine, 1)
    assert scores["sentence_id"].tolist() == sorted(table["sentence_id"].tolist())
    order = {sid: k for k, sid in enumerate(table["sentence_id"].tolist())}
    got = [
        score
        for _, score in sorted(
            zip(scores["sentence_id"].tolist(), scores["score"].tolist(), strict=True),
            key=lambda p: order[p[0]],
        )
    ]
    assert got == odd


def _spans_bundle(types: list[str | None]) -> Bundle:
    items = [ItemRecord(f"i{k}", "A red cube sits on a blue ball.") for k in range(3)]
    run = LabelSetRecord(
        "detector",
        "typed",
        annotations=[
            Annotations(f"i{k}", spans=[SpanRecord(2 + s, 5 + s, t) for s, t in enumerate(types)])
            for k in range(3)
        ],
    )
    return Bundle(DatasetRecord("spans", "canonical"), items, [run])


def _span_rows(engine) -> list[tuple]:
    from sqlalchemy import select

    from db import models as m
    from db.engine import read_session

    with read_session(engine) as session:
        return sorted(
            session.execute(
                select(m.Span.label_set_id, m.Span.item_id, m.Span.start, m.Span.end, m.Span.type)
            ).all(),
            key=repr,
        )


@pytest.mark.parametrize(
    "types", [[None, "Object", "", 'ünï 🙂, "q"'], ["Object", "a\x1fb", None]], ids=["plain", "separator"]
)
def test_span_columns_match_the_stored_rows(engine, types) -> None:
    import_bundle(engine, _spans_bundle(types), actor=OPERATOR)
    columns = reads.span_columns(engine, 1)
    got = zip(
        columns.label_set_ids.tolist(),
        columns.item_ids.tolist(),
        columns.starts.tolist(),
        columns.ends.tolist(),
        columns.types.tolist(),
        strict=True,
    )
    assert sorted(got, key=repr) == [tuple(row) for row in _span_rows(engine)]
    assert len(columns.types) == 3 * len(types)


def _many_label_sets_bundle(name: str, n_label_sets: int) -> Bundle:
    items = [ItemRecord(f"i{k}", "A red cube sits on a blue ball.") for k in range(3)]
    runs = [
        LabelSetRecord(
            "detector",
            f"run {r}",
            annotations=[
                Annotations(f"i{k}", spans=[SpanRecord(r % 5, r % 5 + 3, "Object" if r % 2 else None)])
                for k in range(r % 3 + 1)
            ],
        )
        for r in range(n_label_sets)
    ]
    return Bundle(DatasetRecord(name, "canonical"), items, runs)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_span_columns_read_in_parts_hold_every_span_once(engine, monkeypatch, n) -> None:
    import_bundle(engine, _many_label_sets_bundle("spans", 7), actor=OPERATOR)
    import_bundle(engine, _many_label_sets_bundle("other", 3), actor=OPERATOR)  # never read with it
    monkeypatch.setattr(reads.os, "cpu_count", lambda: n)  # as many parts as a machine of n cores makes
    parts: list[list[reads.SpanColumns]] = []
    joined = reads.SpanColumns.joined

    def recorded(given):
        parts.append(list(given))
        return joined(given)

    monkeypatch.setattr(reads.SpanColumns, "joined", staticmethod(recorded))
    columns = reads.span_columns(engine, 1)
    got = zip(
        *(
            getattr(columns, name).tolist()
            for name in ("label_set_ids", "item_ids", "starts", "ends", "types")
        ),
        strict=True,
    )
    rows = [row for row in _span_rows(engine) if row[0] <= 7]  # the first dataset's label sets: ids 1-7
    assert len(rows) == sum(r % 3 + 1 for r in range(7))
    assert sorted(got, key=repr) == [tuple(row) for row in rows]
    [read] = parts
    assert len(read) == n
    for k, part in enumerate(read):  # part k holds the label sets whose id is k modulo n, all of them
        assert set(part.label_set_ids.tolist()) == {i for i in range(1, 8) if i % n == k}


def test_joined_span_columns_of_no_part_are_empty() -> None:
    empty = reads.SpanColumns.joined([])
    assert empty.label_set_ids.dtype == np.int64 and empty.types.dtype == object
    assert all(
        getattr(empty, name).size == 0 for name in ("label_set_ids", "item_ids", "starts", "ends", "types")
    )


def test_reads_that_a_write_lands_between_are_read_again_as_one_state(engine, monkeypatch) -> None:
    from sqlalchemy import update

    from db import models as m
    from db.engine import write_session

    import_bundle(engine, _bundle(), actor=OPERATOR)
    before = reads.sentence_arrays(engine, 1)
    assert 2 in before["labels"]["code"].tolist()
    monkeypatch.setattr(reads.os, "cpu_count", lambda: 2)  # the reads run at once even on one core
    plans = []
    original = reads._label_reads

    def plan_then_write(connection, dataset_id):
        plans.append(dataset_id)
        if len(plans) == 1:  # an annotator saves after the plan's snapshot began, before the reads
            with write_session(engine) as session:
                session.execute(
                    update(m.SentenceLabel).where(m.SentenceLabel.label == "unknown").values(label="correct")
                )
        return original(connection, dataset_id)

    monkeypatch.setattr(reads, "_label_reads", plan_then_write)
    arrays = reads.sentence_arrays(engine, 1)
    assert len(plans) == 2  # the reads saw a newer store than the plan: planned and read again
    monkeypatch.setattr(reads, "_label_reads", original)
    after = reads.sentence_arrays(engine, 1)
    assert 2 not in after["labels"]["code"].tolist()
    for block in ("labels", "scores", "sentences"):
        for name, column in after[block].items():
            assert arrays[block][name].tolist() == column.tolist(), (block, name)


def test_reads_at_once_keep_their_order_and_run_in_turn_on_a_store_in_memory(engine) -> None:
    import threading

    from db.engine import make_engine
    from db.repositories.report_inputs import read_at_once

    def where(k: int):
        return lambda: (k, threading.get_ident())

    here = threading.get_ident()
    done = read_at_once(engine, *(where(k) for k in range(5)))
    assert [k for k, _ in done] == list(range(5))
    assert all(thread != here for _, thread in done)
    in_memory = make_engine("sqlite://")
    assert [thread for _, thread in read_at_once(in_memory, *(where(k) for k in range(3)))] == [here] * 3


@pytest.mark.parametrize("odd_type", ['Ünïcode, "quoted"', "a\x1fb"], ids=["plain", "separator"])
def test_error_types_arrive_with_their_sentences(engine, odd_type) -> None:
    items = [ItemRecord(f"i{k}", "One. Two. Three.") for k in range(3)]
    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[
            Annotations(
                f"i{k}",
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect", odd_type if k == 1 else "Color"),
                    SentenceLabelRecord(1, "correct"),
                    SentenceLabelRecord(2, "incorrect", None),
                ],
            )
            for k in range(3)
        ],
    )
    import_bundle(engine, Bundle(DatasetRecord("types", "canonical"), items, [gold]), actor=OPERATOR)
    typed = reads.sentence_columns(engine, 1)["error_types"]
    bulk = reads.sentence_labels(engine, 1)
    expected = sorted(
        (ls, sid, t)
        for ls, sid, t in zip(bulk["label_set_id"], bulk["sentence_id"], bulk["error_type"], strict=True)
        if t is not None
    )
    got = sorted(
        zip(*(typed[k].tolist() for k in ("label_set_id", "sentence_id", "error_type")), strict=True)
    )
    assert got == expected
    assert [t for _, _, t in got].count(odd_type) == 1 and len(got) == 3


def test_sentence_inputs_stand_in_dataset_order_whatever_order_their_ids_are_in(engine) -> None:
    # Items moved after the import: their sentences' ids no longer run in dataset order, and every
    # column must still follow the items' positions, then the sentences' indices.
    from sqlalchemy import text

    from analysis.reports.sentences import load_sentence_inputs
    from db.engine import bump_revision, write_session

    import_bundle(engine, _bundle(), actor=OPERATOR)
    in_order = load_sentence_inputs(engine, 1)
    with write_session(engine) as session:
        session.execute(text("UPDATE items SET position = 10 - position WHERE dataset_id = 1"))
        bump_revision(session)
    moved = load_sentence_inputs(engine, 1)
    assert moved.items["external_id"].tolist() == ["i3", "i2", "i1", "i0"]
    # Each sentence keeps its own values; the order is by item (now reversed), then index.
    old = {sid: k for k, sid in enumerate(in_order.sentence_id.tolist())}
    at = [old[sid] for sid in moved.sentence_id.tolist()]
    assert moved.index.tolist() == [0, 1, 2] * 4
    assert [moved.items["external_id"][p] for p in moved.item_pos.tolist()] == [
        in_order.items["external_id"][p] for p in in_order.item_pos[at].tolist()
    ]
    assert moved.item_pos.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    for name in ("labels", "scores", "parsed"):
        before, after = getattr(in_order, name), getattr(moved, name)
        assert before.keys() == after.keys()
        for key in before:
            assert np.array_equal(after[key], before[key][at], equal_nan=after[key].dtype.kind == "f")
    assert moved.start is not None and in_order.start is not None
    assert moved.start.tolist() == in_order.start[at].tolist()
