"""Adjudication over gold imported with the dataset, on SQLite and PostgreSQL: a promotion that would
change or remove such a label names it and writes nothing until the reviewer confirms exactly those
labels; gold written by adjudication is the reviewers' own to change again."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from analysis.adjudication import RULES
from db import models as m
from db.access import OPERATOR, Actor
from db.importer import import_bundle
from db.repositories import adjudication as adj
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.gold_origin import ReplacesImportedGold
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SpanRecord,
)
from tests.db.test_adjudication import (
    C1_GOLD,
    CORRECT3,
    RED_CUBE_COLOR,
    S1_GOLD,
    THE_RED_CUBE,
    A,
    Panel,
    _count,
    _panel,
)

NAME = "panel"


def _with_imported_gold(engine: Engine) -> Panel:
    """The panel, then its benchmark's gold from a file: s1 all correct (the annotators' majority calls
    sentence 2 incorrect), p3 "The red cube" as an object (the majority: "red cube", a colour), c1 as the
    majority has it."""
    panel = Panel(engine, NAME)
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(item="s1", sentence_labels=[SentenceLabelRecord(k, "correct") for k in range(3)]),
            Annotations(item="p3", spans=[SpanRecord(*THE_RED_CUBE, "Object")]),
        ],
    )
    bundle = _panel(NAME)
    import_bundle(
        engine,
        Bundle(DatasetRecord(NAME, "canonical"), bundle.items, [gold]),
        source="gold.jsonl",
        actor=OPERATOR,
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
    with pytest.raises(
        ReplacesImportedGold, match=r"1 gold label imported with the dataset on 1 item \(s1\)"
    ):
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
