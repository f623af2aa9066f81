"""Adjudication over gold imported with the dataset, on SQLite and PostgreSQL: a promotion that would
change or remove such a label names it and writes nothing until the reviewer confirms exactly those
labels; gold written by adjudication is the reviewers' own to change again."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from sqlalchemy import Engine, event, select, text
from sqlalchemy.orm import Session

from analysis.adjudication import RULES
from db import models as m
from db.access import OPERATOR, Actor
from db.importer import import_bundle
from db.repositories import adjudication as adj
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import delete_dataset
from db.repositories.gold_origin import ReplacesImportedGold
from db.repositories.labeling import StaleEdit
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SpanRecord,
    TripletJudgmentRecord,
)
from tests.db.test_adjudication import (
    C1_GOLD,
    CORRECT3,
    RED_CUBE_COLOR,
    S1_GOLD,
    THE_RED_CUBE,
    A,
    B,
    C,
    Panel,
    _count,
    _panel,
)

NAME = "panel"


def _with_gold(engine: Engine, annotations: list[Annotations]) -> Panel:
    """The panel, then its benchmark's gold from a file holding ``annotations``."""
    panel = Panel(engine, NAME)
    gold = LabelSetRecord(kind="gold", name="gold", annotations=annotations)
    bundle = _panel(NAME)
    import_bundle(
        engine,
        Bundle(DatasetRecord(NAME, "canonical"), bundle.items, [gold]),
        source="gold.jsonl",
        actor=OPERATOR,
    )
    return panel


def _with_imported_gold(engine: Engine) -> Panel:
    """The panel, then its benchmark's gold from a file: s1 all correct (the annotators' majority calls
    sentence 2 incorrect), p3 "The red cube" as an object (the majority: "red cube", a colour), c1 as the
    majority has it."""
    panel = _with_gold(
        engine,
        [
            Annotations(item="s1", sentence_labels=[SentenceLabelRecord(k, "correct") for k in range(3)]),
            Annotations(item="p3", spans=[SpanRecord(*THE_RED_CUBE, "Object")]),
        ],
    )
    assert panel.gold("s1", "sentences") == CORRECT3
    return panel


def _footprint(engine: Engine) -> tuple[int, ...]:
    return tuple(
        _count(engine, model) for model in (m.EditLog, m.Promotion, m.SentenceLabel, m.Span, m.LabelSet)
    )


def test_promoting_over_imported_gold_waits_for_the_reviewer_to_confirm_what_it_replaces(engine) -> None:
    panel = _with_imported_gold(engine)
    reviewer = get_or_create_annotator(engine, "rita", role="reviewer")
    rita = Actor(reviewer.id, reviewer.name, reviewer.role)
    s1 = panel.items["s1"]
    votes = adj.item_votes(engine, panel.dataset, s1, "sentences")
    merged = votes.labels_of(panel.who[A])
    assert merged == S1_GOLD

    seen = adj.imported_gold_replaced(engine, panel.dataset, s1, "sentences", merged, method="merge")
    assert seen.per_item() == [("s1", ["sentence 2: correct"])]  # which labels, on which item
    before = _footprint(engine)
    with pytest.raises(ReplacesImportedGold, match=r"1 gold label on 1 item \(s1\) that no promotion wrote"):
        adj.promote_item(
            engine, panel.dataset, s1, "sentences", merged, method="merge", sources=[], actor=rita
        )
    with pytest.raises(ReplacesImportedGold):  # confirming other labels than these confirms nothing
        adj.promote_item(
            engine,
            panel.dataset,
            s1,
            "sentences",
            merged,
            method="merge",
            sources=[],
            actor=rita,
            replacing="x",
        )
    assert _footprint(engine) == before and panel.gold("s1", "sentences") == CORRECT3  # nothing written

    done = adj.promote_item(
        engine,
        panel.dataset,
        s1,
        "sentences",
        merged,
        method="merge",
        sources=[panel.who[A]],
        actor=rita,
        expected_digest=votes.digest,
        replacing=seen.digest,
    )
    assert done.changes == 1 and panel.gold("s1", "sentences") == S1_GOLD
    # Gold written by adjudication is the reviewers' own: changing it again asks nothing.
    again = adj.imported_gold_replaced(engine, panel.dataset, s1, "sentences", CORRECT3, method="edit")
    assert again.rows == ()
    # Accepting an annotator who labelled one unit as gold has it replaces nothing.
    assert not adj.imported_gold_replaced(
        engine, panel.dataset, s1, "sentences", {0: ("correct", None)}, method="accept"
    ).rows
    # The reviewer's undo puts the file's label back: it is the benchmark's gold again.
    labeling.undo_last(engine, reviewer.id)
    assert panel.gold("s1", "sentences") == CORRECT3
    back = adj.imported_gold_replaced(engine, panel.dataset, s1, "sentences", merged, method="merge")
    assert back.per_item() == [("s1", ["sentence 2: correct"])]


def test_a_rule_names_the_imported_gold_it_would_replace_and_writes_nothing_unconfirmed(engine) -> None:
    panel = _with_imported_gold(engine)
    preview = adj.promote_by_rule(
        engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR, dry_run=True
    )
    assert set(preview.promoted) == {"s1", "s2"}
    assert preview.imported.per_item() == [("s1", ["sentence 2: correct"])]
    assert preview.to_dict()["replaced_imported_gold"] == {
        "labels": 1,
        "items": [{"item": "s1", "labels": ["sentence 2: correct"]}],
    }
    before = _footprint(engine)
    with pytest.raises(ReplacesImportedGold, match=r"on 1 item \(s1\)"):
        adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR)
    assert _footprint(engine) == before  # s2, which replaces nothing, is not written either
    done = adj.promote_by_rule(
        engine,
        panel.dataset,
        "sentences",
        RULES["majority"],
        actor=OPERATOR,
        replacing=preview.imported.digest,
    )
    assert done.promoted == preview.promoted and done.imported == preview.imported
    assert (panel.gold("s1", "sentences"), panel.gold("s2", "sentences")) == (S1_GOLD, CORRECT3)

    spans = adj.promote_by_rule(
        engine, panel.dataset, "spans", RULES["majority"], actor=OPERATOR, dry_run=True
    )
    assert spans.imported.per_item() == [("p3", ["span “The red cube” (Object)"])]
    claims = adj.promote_by_rule(engine, panel.dataset, "claims", RULES["majority"], actor=OPERATOR)
    assert claims.imported.rows == () and panel.gold("c1", "claims") == C1_GOLD  # no gold there to replace
    adj.promote_by_rule(
        engine, panel.dataset, "spans", RULES["majority"], actor=OPERATOR, replacing=spans.imported.digest
    )
    assert panel.gold("p3", "spans") == RED_CUBE_COLOR


def _gold_rows(engine: Engine, model: type[m.SentenceLabel] | type[m.TripletJudgment]) -> list[tuple]:
    """Every gold row of the table, with what a promotion may change in it."""
    columns = (
        (m.SentenceLabel.id, m.SentenceLabel.label, m.SentenceLabel.override)
        if model is m.SentenceLabel
        else (m.TripletJudgment.id, m.TripletJudgment.verdict, m.TripletJudgment.wrong_part)
    )
    with Session(engine) as session:
        return sorted(
            tuple(row)
            for row in session.execute(
                select(*columns)
                .join(m.LabelSet, m.LabelSet.id == model.label_set_id)
                .where(m.LabelSet.kind == "gold")
            )
        )


def test_a_rule_names_the_imported_confirmations_it_would_clear(engine) -> None:
    """The benchmark's gold calls every sentence of s2 correct, confirmed so although a span lies in it;
    the annotators agree they are correct. The rule writes "correct" without that confirmation, so it
    replaces all three: the preview names them and the run waits for them (it cleared them while its
    preview said nothing imported would be replaced)."""
    confirmed = [SentenceLabelRecord(k, "correct", override=True) for k in range(3)]
    panel = _with_gold(engine, [Annotations(item="s2", sentence_labels=confirmed)])
    preview = adj.promote_by_rule(
        engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR, dry_run=True
    )
    assert preview.imported.per_item() == [
        ("s2", [f"sentence {k}: correct (confirmed correct despite a span in it)" for k in (1, 2, 3)])
    ]
    assert set(preview.promoted) == {"s1", "s2"} and preview.replaced == 1  # s1 had no gold
    before, rows = _footprint(engine), _gold_rows(engine, m.SentenceLabel)
    assert [override for _id, _label, override in rows] == [True] * 3
    with pytest.raises(ReplacesImportedGold, match=r"3 gold labels .*on 1 item \(s2\)"):
        adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR)
    assert (_footprint(engine), _gold_rows(engine, m.SentenceLabel)) == (before, rows)

    adj.promote_by_rule(
        engine,
        panel.dataset,
        "sentences",
        RULES["majority"],
        actor=OPERATOR,
        replacing=preview.imported.digest,
    )
    assert panel.gold("s2", "sentences") == CORRECT3
    assert not any(override for _id, _label, override in _gold_rows(engine, m.SentenceLabel))


def test_undecided_imported_verdicts_are_named_and_accepting_one_judge_keeps_the_rest(engine) -> None:
    """The benchmark's gold holds t1's two triplets undecided (the judge could not say); the annotators
    judge both supported. The rule would decide them: its preview names them as "not decided" and the
    run waits (it decided them, or removed them, without a word). Accepting an annotator who judged
    one triplet keeps the other's undecided gold, as it keeps any unit they left unjudged."""
    undecided = [TripletJudgmentRecord("detector", "extractor", k) for k in range(2)]
    panel = _with_gold(engine, [Annotations(item="t1", triplet_judgments=undecided)])
    t1 = panel.items["t1"]
    with Session(engine) as session:
        triplets = list(
            session.scalars(select(m.Triplet.id).where(m.Triplet.item_id == t1).order_by(m.Triplet.index))
        )
    for who in (A, B, C):
        for triplet in triplets:
            labeling.set_triplet_judgment(engine, panel.sets[who], triplet, "yes", panel.who[who])
    rows = _gold_rows(engine, m.TripletJudgment)
    assert [verdict for _id, verdict, _part in rows] == [None, None]

    preview = adj.promote_by_rule(
        engine, panel.dataset, "triplets", RULES["majority"], actor=OPERATOR, dry_run=True
    )
    assert preview.imported.per_item() == [("t1", ["triplet 1: not decided", "triplet 2: not decided"])]
    assert preview.promoted == ("t1",) and preview.replaced == 1
    before = _footprint(engine)
    with pytest.raises(ReplacesImportedGold, match=r"2 gold labels .*on 1 item \(t1\)"):
        adj.promote_by_rule(engine, panel.dataset, "triplets", RULES["majority"], actor=OPERATOR)
    assert (_footprint(engine), _gold_rows(engine, m.TripletJudgment)) == (before, rows)

    one = {triplets[0]: ("yes", None)}
    seen = adj.imported_gold_replaced(engine, panel.dataset, t1, "triplets", one, method="accept")
    assert seen.per_item() == [("t1", ["triplet 1: not decided"])]
    adj.promote_item(
        engine,
        panel.dataset,
        t1,
        "triplets",
        one,
        method="accept",
        sources=[panel.who[A]],
        actor=OPERATOR,
        replacing=seen.digest,
    )
    assert [verdict for _id, verdict, _part in _gold_rows(engine, m.TripletJudgment)] == ["yes", None]


def _reviewer(engine: Engine, name: str) -> Actor:
    row = get_or_create_annotator(engine, name, role="reviewer")
    return Actor(row.id, row.name, row.role)


def _until_waiting_on(engine: Engine, holder: int, waiter: threading.Thread, pids: dict[int, int]) -> None:
    """Until ``waiter``'s session waits on a lock the session ``holder`` (a backend pid) holds, or
    ``waiter`` is done (nothing made it wait)."""
    deadline = time.monotonic() + 120
    with engine.connect() as watching:
        while time.monotonic() < deadline and waiter.is_alive():
            pid = pids.get(waiter.ident or 0)
            if (
                pid is not None
                and watching.execute(
                    text("SELECT :holder = ANY(pg_blocking_pids(:pid))"), {"holder": holder, "pid": pid}
                ).scalar_one()
            ):
                return
            watching.rollback()
    assert not waiter.is_alive(), "the other session neither waited nor finished"


def test_an_undo_between_the_check_and_the_write_waits_for_the_promotion(engine, monkeypatch) -> None:
    """PostgreSQL reads what others committed statement by statement: rob's promotion checked that it
    replaces only rita's adjudicated label, her undo then put the file's label back and committed, and
    rob's write replaced that imported label unconfirmed. The gold rows a promotion replaces are locked
    before the check now: the undo waits for the promotion, then finds the row changed and reverts
    nothing."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time")
    panel = _with_imported_gold(engine)
    s1 = panel.items["s1"]
    rita, rob = _reviewer(engine, "rita"), _reviewer(engine, "rob")
    seen = adj.imported_gold_replaced(engine, panel.dataset, s1, "sentences", S1_GOLD, method="merge")
    adj.promote_item(
        engine,
        panel.dataset,
        s1,
        "sentences",
        S1_GOLD,
        method="merge",
        sources=[],
        actor=rita,
        replacing=seen.digest,
    )
    robs = {0: ("correct", None), 1: ("unknown", None), 2: ("correct", None)}
    assert not adj.imported_gold_replaced(engine, panel.dataset, s1, "sentences", robs, method="edit").rows

    pids: dict[int, int] = {}  # thread → the backend of the connection it took last

    def taken(connection: Any, _record: Any, _proxy: Any) -> None:
        pids[threading.get_ident()] = connection.info.backend_pid

    event.listen(engine, "checkout", taken)
    undone: list[object] = []

    def undo() -> None:
        try:
            undone.append(labeling.undo_last(engine, rita.id))
        except StaleEdit as refused:
            undone.append(refused)

    undoing = threading.Thread(target=undo)
    check = adj._refuse_unseen

    def checked_then_undone(imported: Any, replacing: str | None) -> None:
        check(imported, replacing)
        promoting = pids[threading.get_ident()]
        undoing.start()
        _until_waiting_on(engine, promoting, undoing, pids)

    monkeypatch.setattr(adj, "_refuse_unseen", checked_then_undone)
    adj.promote_item(engine, panel.dataset, s1, "sentences", robs, method="edit", sources=[], actor=rob)
    undoing.join(timeout=120)
    assert [type(found) for found in undone] == [StaleEdit]  # it found rob's label, not its own
    assert panel.gold("s1", "sentences") == robs
    with Session(engine) as session:
        replaced = session.scalars(
            select(m.EditLog.before).where(
                m.EditLog.entity == "sentence_labels", m.EditLog.annotator_id == rob.id
            )
        ).all()
    assert [before["label"] for before in replaced] == ["incorrect"]  # rita's label, not the file's


def test_gold_imported_again_after_its_dataset_was_deleted_is_not_taken_for_adjudicated(engine) -> None:
    """SQLite hands a deleted row's id to the next row written: s1 adjudicated, its dataset deleted and
    imported again from a file with the same gold, and the new gold rows had the ids, and said what,
    the adjudicated rows had, whose log entries then passed them for adjudicated, replaced without
    asking. A log entry older than the row's last write is not of that row."""
    panel = Panel(engine, NAME)
    adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s1"],
        "sentences",
        S1_GOLD,
        method="edit",
        sources=[],
        actor=OPERATOR,
    )
    assert delete_dataset(engine, NAME, actor=OPERATOR)
    labels = [SentenceLabelRecord(k, label, detail) for k, (label, detail) in S1_GOLD.items()]
    again = _with_gold(engine, [Annotations(item="s1", sentence_labels=labels)])
    assert again.gold("s1", "sentences") == S1_GOLD
    seen = adj.imported_gold_replaced(
        engine, again.dataset, again.items["s1"], "sentences", CORRECT3, method="edit"
    )
    assert seen.per_item() == [("s1", ["sentence 2: incorrect (Object)"])]
    with pytest.raises(ReplacesImportedGold):
        adj.promote_item(
            engine,
            again.dataset,
            again.items["s1"],
            "sentences",
            CORRECT3,
            method="edit",
            sources=[],
            actor=OPERATOR,
        )
    assert again.gold("s1", "sentences") == S1_GOLD
