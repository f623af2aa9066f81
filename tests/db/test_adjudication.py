"""Adjudication in the store, on SQLite and PostgreSQL: the rules against gold computed by hand, one
transaction per promotion (logged, undoable, all or nothing), rights, idempotence and overrides."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from analysis.adjudication import DISAGREEMENT, RULES, Rule
from db import models as m
from db.access import OPERATOR, Actor, Forbidden
from db.importer import import_bundle
from db.repositories import adjudication as adj
from db.repositories import labeling
from db.repositories import report_inputs as reads
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.label_sets import gold_label_set
from db.repositories.rating_tasks import export_ratings, list_rating_tasks, task_ratings
from formats.records import (
    Annotations,
    Bundle,
    ClaimLabelRecord,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RatingRecord,
    RatingTaskRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SpanRecord,
    TripletRecord,
)

TEXT = "The red cube sits on a blue table near the window. The ball is green. Two cats sleep."
SENTENCES = [SentenceRecord(0, 50), SentenceRecord(51, 69), SentenceRecord(70, 85)]
CLAIMS = [ClaimRecord("The cube is red."), ClaimRecord("The ball is green.")]
# Whitespace tokens: The(0) red(1) cube(2) sits(3) on(4) a(5) blue(6) table(7) …
RED_CUBE, THE_RED_CUBE, BLUE_TABLE = (4, 12), (0, 12), (23, 33)
A, B, C = "ann-a", "ann-b", "ann-c"
c, u = "correct", "unknown"
H, NH = "hallucination", "non-hallucination"


def _incorrect(error_type: str | None = None) -> tuple[str, str | None]:
    return ("incorrect", error_type)


# What each annotator said, item by item (sentence labels, claim labels or spans).
SENTENCE_VOTES = {
    "s1": {A: [c, _incorrect("Object"), c], B: [c, _incorrect("Object"), c], C: [c, c, c]},
    "s2": {A: [c, c, c], B: [c, c, c], C: [c, c, c]},
    "s3": {A: [c, c, c], B: [_incorrect("Object"), c, c], C: [u, c, c]},  # the three-way tie
}
CLAIM_VOTES = {
    "c1": {A: [(H, "object"), (NH, None)], B: [(H, "object"), (NH, None)], C: [(NH, None), (NH, None)]},
    "c2": {A: [(NH, None), (NH, None)], B: [(NH, None), (NH, None)], C: [(H, "object"), (NH, None)]},
}
SPAN_VOTES = {
    "p1": {
        A: [(*RED_CUBE, "Color")],
        B: [(*RED_CUBE, "Color"), (*BLUE_TABLE, "Object")],
        C: [(*THE_RED_CUBE, "Object")],
    },
    "p3": {A: [(*RED_CUBE, "Color")], B: [(*RED_CUBE, "Color")], C: [(*RED_CUBE, "Color")]},
    "p4": {A: [(*RED_CUBE, "Color")], B: [(*RED_CUBE, "Object")], C: [(*RED_CUBE, None)]},  # types tie
    "p5": {A: [(*BLUE_TABLE, "Object")], B: [(*RED_CUBE, "Color")], C: [(*RED_CUBE, "Color")]},
}
# The weighted panel: A counts 3, B and C 1 each (total 5); C is not trusted.
WEIGHTS = {A: (3.0, True), B: (1.0, True), C: (1.0, False)}

CORRECT3 = {0: (c, None), 1: (c, None), 2: (c, None)}
S1_GOLD = {0: (c, None), 1: ("incorrect", "Object"), 2: (c, None)}
C1_GOLD = {0: (H, "object"), 1: (NH, None)}
C2_GOLD = {0: (NH, None), 1: (NH, None)}
RED_CUBE_COLOR = [(*RED_CUBE, "Color")]

# Gold computed by hand; an item missing from a rule's table goes to review.
EXPECTED: dict[tuple[str, str], dict[str, object]] = {
    ("panel", "majority"): {
        "s1": S1_GOLD,  # sentence 2: incorrect carries 2 of 3 > 1.5; A and B both say Object
        "s2": CORRECT3,
        # s3: sentence 1 gets correct 1, incorrect 1, unknown 1 of 3: no majority (the tie) → review
        "c1": C1_GOLD,  # claim 1: hallucination 2 of 3, type object from A and B
        "c2": C2_GOLD,  # claim 1: non-hallucination 2 of 3
        "p1": RED_CUBE_COLOR,  # "red cube" ×2 and "The red cube" match (token IoU 2/3): 3 of 3, the
        # commonest offsets "red cube", Color 2 : Object 1; B's "blue table" has 1 of 3 → left out
        "p3": RED_CUBE_COLOR,
        # p4: three annotators on "red cube", Color 1 : Object 1 (C untyped does not vote) → tie, review
        "p5": RED_CUBE_COLOR,  # B and C 2 of 3; A's "blue table" 1 of 3 → left out
    },
    # unanimity: only where everyone said the same (p4's untyped span differs from the typed ones)
    ("panel", "unanimity"): {"s2": CORRECT3, "p3": RED_CUBE_COLOR},
    # alignbench: every item with a trusted "incorrect"/"hallucination" or a trusted span left out → review
    ("panel", "alignbench"): {"s2": CORRECT3, "p3": RED_CUBE_COLOR},
    ("weighted", "majority"): {
        "s1": S1_GOLD,  # incorrect 4 of 5
        "s2": CORRECT3,
        "s3": CORRECT3,  # A's correct carries 3 of 5 > 2.5: the weighted case settles the tie
        "c1": C1_GOLD,
        "c2": C2_GOLD,
        "p1": RED_CUBE_COLOR,
        "p3": RED_CUBE_COLOR,
        "p4": RED_CUBE_COLOR,  # Color 3 : Object 1
        "p5": [(*BLUE_TABLE, "Object")],  # A alone carries 3 of 5; B + C only 2 → left out
    },
    ("weighted", "unanimity"): {"s2": CORRECT3, "p3": RED_CUBE_COLOR},
    ("weighted", "alignbench"): {
        "s2": CORRECT3,
        "c2": C2_GOLD,  # only the untrusted C said hallucination, and one annotator is not two
        "p3": RED_CUBE_COLOR,
        "p4": RED_CUBE_COLOR,  # no span left out of the majority result
        # p5: trusted B's "red cube" is left out → review; s1, s3, c1, p1: a trusted flag → review
    },
}


def _panel(name: str) -> Bundle:
    items = [
        ItemRecord(external_id=x, response=TEXT, sentences=SENTENCES, claims=CLAIMS)
        for x in (*SENTENCE_VOTES, *CLAIM_VOTES, *SPAN_VOTES, "t1", "r1")
    ]
    label_sets = []
    for who in (A, B, C):
        annotations = [
            Annotations(
                item=item,
                sentence_labels=[
                    SentenceLabelRecord(k, *((v, None) if isinstance(v, str) else v))
                    for k, v in enumerate(votes[who])
                ],
            )
            for item, votes in SENTENCE_VOTES.items()
        ]
        annotations += [
            Annotations(item=item, claim_labels=[ClaimLabelRecord(k, *v) for k, v in enumerate(votes[who])])
            for item, votes in CLAIM_VOTES.items()
        ]
        annotations += [
            Annotations(item=item, spans=[SpanRecord(*span) for span in votes[who]])
            for item, votes in SPAN_VOTES.items()
        ]
        label_sets.append(LabelSetRecord(kind="human", name=who, annotator=who, annotations=annotations))
    extractor = LabelSetRecord(
        kind="detector",
        name="extractor",
        annotations=[
            Annotations(
                item="t1",
                spans=[SpanRecord(*RED_CUBE)],
                triplets=[TripletRecord("cube", "is", "red"), TripletRecord("cube", "on", "table")],
            ),
            Annotations(item="r1", spans=[SpanRecord(*RED_CUBE)]),
        ],
    )
    ratings = RatingTaskRecord(
        "segments",
        "extractor",
        ratings=[RatingRecord("r1", who, score, *RED_CUBE) for who, score in ((A, 3), (B, 3), (C, 1))],
    )
    return Bundle(DatasetRecord(name, "canonical"), items, [*label_sets, extractor], [ratings])


class Panel:
    """The imported panel's ids, read back from the store."""

    def __init__(self, engine, name: str) -> None:
        import_bundle(engine, _panel(name), source="fixture", actor=OPERATOR)
        with Session(engine) as session:
            self.dataset = session.scalar(select(m.Dataset.id).where(m.Dataset.name == name))
            self.items = dict(
                session.execute(
                    select(m.Item.external_id, m.Item.id).where(m.Item.dataset_id == self.dataset)
                ).all()
            )
            self.who = dict(session.execute(select(m.Annotator.name, m.Annotator.id)).all())
            self.sets = dict(
                session.execute(
                    select(m.LabelSet.name, m.LabelSet.id).where(
                        m.LabelSet.dataset_id == self.dataset, m.LabelSet.kind == "human"
                    )
                ).all()
            )
        self.engine = engine

    def weigh(self, weights: dict[str, tuple[float, bool]]) -> None:
        with Session(self.engine) as session, session.begin():
            for name, (weight, trusted) in weights.items():
                session.add(
                    m.AnnotatorWeight(
                        dataset_id=self.dataset, annotator_id=self.who[name], weight=weight, trusted=trusted
                    )
                )

    def gold(self, item: str, task: str) -> object:
        """The item's gold labels of ``task`` as the other pages read them."""
        found = gold_label_set(self.engine, self.dataset)
        if found is None:
            return None
        labels = item_annotations(self.engine, self.items[item], [found.id])[found.id]
        if task == "spans":
            return [(s.start, s.end, s.type) for s in labels.spans] or None
        if task == "sentences":
            return {k: (v.label, v.error_type) for k, v in labels.sentence_labels.items()} or None
        return {k: (v.label, v.type) for k, v in labels.claim_labels.items()} or None


def _task(item: str) -> str:
    return {"s": "sentences", "c": "claims", "p": "spans"}[item[0]]


def _count(engine, model) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(model))


@pytest.mark.parametrize("rule", ["majority", "unanimity", "alignbench"])
@pytest.mark.parametrize("panel_name", ["panel", "weighted"])
def test_rules_promote_the_gold_computed_by_hand(engine, panel_name: str, rule: str) -> None:
    panel = Panel(engine, panel_name)
    if panel_name == "weighted":
        panel.weigh(WEIGHTS)
    expected = EXPECTED[(panel_name, rule)]
    reviewed: set[str] = set()
    for task in ("sentences", "claims", "spans"):
        summary = adj.promote_by_rule(engine, panel.dataset, task, RULES[rule], actor=OPERATOR)
        assert set(summary.promoted) == {x for x in expected if _task(x) == task}
        reviewed |= {item for item, _ in summary.review}
    everything = {*SENTENCE_VOTES, *CLAIM_VOTES, *SPAN_VOTES}
    assert reviewed == everything - set(expected)
    for item in everything:
        assert panel.gold(item, _task(item)) == expected.get(item), item


def test_review_reasons_name_the_unit(engine) -> None:
    panel = Panel(engine, "panel")
    reasons = dict(
        adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR).review
    )
    assert reasons == {"s3": "no weighted majority on sentence 1"}
    spans = dict(
        adj.promote_by_rule(engine, panel.dataset, "spans", RULES["alignbench"], actor=OPERATOR).review
    )
    assert spans["p1"] == "a trusted annotator marked span “blue table” (23–33), which the majority left out"
    assert spans["p4"] == "the types given for span “red cube” (4–12) tie"


def test_a_rule_run_twice_changes_nothing_until_labels_change(engine) -> None:
    panel = Panel(engine, "panel")
    first = adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR)
    assert set(first.promoted) == {"s1", "s2"} and first.unchanged == 0
    log_size, promotions = _count(engine, m.EditLog), _count(engine, m.Promotion)
    again = adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR)
    assert (again.promoted, again.unchanged) == ((), 2)
    assert (_count(engine, m.EditLog), _count(engine, m.Promotion)) == (log_size, promotions)
    # C now agrees that sentence 2 of s1 is wrong, with another error type: s1 is decided afresh
    labeling.set_sentence_label(
        engine, panel.sets[C], panel.items["s1"], 1, "incorrect", panel.who[C], error_type="Color"
    )
    third = adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=OPERATOR)
    assert (third.promoted, third.unchanged) == (("s1",), 1)
    assert panel.gold("s1", "sentences") == S1_GOLD  # Object 2 : Color 1


def test_a_dry_run_counts_and_writes_nothing(engine) -> None:
    panel = Panel(engine, "panel")
    before = (_count(engine, m.EditLog), _count(engine, m.LabelSet), _count(engine, m.Promotion))
    summary = adj.promote_by_rule(
        engine, panel.dataset, "spans", RULES["majority"], actor=OPERATOR, dry_run=True
    )
    assert summary.dry_run and set(summary.promoted) == {"p1", "p3", "p5"}
    assert [item for item, _ in summary.review] == ["p4"]
    assert summary.to_dict()["promoted"] == 3
    assert (_count(engine, m.EditLog), _count(engine, m.LabelSet), _count(engine, m.Promotion)) == before


def test_a_rule_counts_gold_it_replaces(engine) -> None:
    panel = Panel(engine, "panel")
    adj.promote_item(
        engine,
        panel.dataset,
        panel.items["p3"],
        "spans",
        [(*THE_RED_CUBE, "Object")],
        method="edit",
        sources=[],
        actor=OPERATOR,
    )
    # A retypes their span: p3's labels changed since that promotion, so the rule decides it again
    (span,) = item_annotations(engine, panel.items["p3"], [panel.sets[A]])[panel.sets[A]].spans
    labeling.retype_span(engine, span.id, "Object", panel.who[A])
    summary = adj.promote_by_rule(engine, panel.dataset, "spans", RULES["majority"], actor=OPERATOR)
    assert summary.replaced == 1 and "p3" in summary.promoted  # Color 2 : Object 1 replaces the edit
    assert panel.gold("p3", "spans") == RED_CUBE_COLOR


def test_promote_item_writes_logs_and_can_be_undone(engine) -> None:
    panel = Panel(engine, "panel")
    reviewer = get_or_create_annotator(engine, "rita", role="reviewer")
    actor = Actor(reviewer.id, reviewer.name, reviewer.role)
    votes = adj.item_votes(engine, panel.dataset, panel.items["s1"], "sentences")
    assert list(votes.annotators.values()) == [A, B, C]
    log_before = _count(engine, m.EditLog)
    done = adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s1"],
        "sentences",
        votes.labels_of(panel.who[C]),
        method="accept",
        sources=[panel.who[C]],
        actor=actor,
        expected_digest=votes.digest,
    )
    assert done.changes == 3  # three gold sentence labels created
    assert panel.gold("s1", "sentences") == CORRECT3
    with Session(engine) as session:
        promotion = session.scalars(select(m.Promotion)).one()
        assert (promotion.method, promotion.sources, promotion.reviewer_id) == (
            "accept",
            [panel.who[C]],
            reviewer.id,
        )
        entries = session.scalars(select(m.EditLog).where(m.EditLog.id > 0).order_by(m.EditLog.id)).all()[
            log_before:
        ]
    # the gold label set was created, three labels written (before: none, after: the row), one promotion
    assert [(e.entity, e.action) for e in entries] == [
        ("label_sets", "create"),
        *[("sentence_labels", "create")] * 3,
        ("promotions", "create"),
    ]
    assert all(e.before is None and e.after["label"] == "correct" for e in entries[1:4])
    assert entries[-1].after["digest"] == votes.digest and entries[-1].after["method"] == "accept"
    assert [e.id for e in entries[1:]] == list(done.log_ids)
    # accepting A's labels instead changes one label: logged with before and after
    second = adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s1"],
        "sentences",
        votes.labels_of(panel.who[A]),
        method="accept",
        sources=[panel.who[A]],
        actor=actor,
    )
    assert second.changes == 1
    with Session(engine) as session:
        change = session.get(m.EditLog, second.log_ids[0])
        assert (change.before["label"], change.after["label"], change.after["error_type"]) == (
            "correct",
            "incorrect",
            "Object",
        )
        assert change.annotator_id == reviewer.id and "adjudicated (accept)" in change.after["description"]
    # the reviewer's undo reverts that gold label like any labeling action
    assert labeling.undo_last(engine, reviewer.id).description.startswith("undid: adjudicated (accept)")
    assert panel.gold("s1", "sentences") == CORRECT3


def test_accepting_an_annotator_keeps_gold_of_units_they_left_unlabeled(engine) -> None:
    panel = Panel(engine, "panel")
    votes = adj.item_votes(engine, panel.dataset, panel.items["s1"], "sentences")
    adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s1"],
        "sentences",
        votes.labels_of(panel.who[C]),
        method="accept",
        sources=[panel.who[C]],
        actor=OPERATOR,
    )
    # an annotator who labelled only sentence 2 (index 1): accepting them changes that one, not the others
    done = adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s1"],
        "sentences",
        {1: ("incorrect", "Object")},
        method="accept",
        sources=[panel.who[A]],
        actor=OPERATOR,
    )
    assert done.changes == 1
    assert panel.gold("s1", "sentences") == S1_GOLD
    # an edit still removes gold labels on purpose
    adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s1"],
        "sentences",
        {1: ("incorrect", "Object")},
        method="edit",
        sources=[],
        actor=OPERATOR,
    )
    assert panel.gold("s1", "sentences") == {1: ("incorrect", "Object")}


def test_a_failure_midway_writes_nothing(engine) -> None:
    panel = Panel(engine, "panel")
    before = {model: _count(engine, model) for model in (m.EditLog, m.LabelSet, m.Promotion, m.SentenceLabel)}
    with pytest.raises(ValueError, match="no sentence 7"):
        adj.promote_item(
            engine,
            panel.dataset,
            panel.items["s1"],
            "sentences",
            {0: (c, None), 1: (c, None), 7: (c, None)},  # the first two are written before 7 fails
            method="edit",
            sources=[],
            actor=OPERATOR,
        )
    with pytest.raises(ValueError, match="inside the response"):
        adj.promote_item(
            engine,
            panel.dataset,
            panel.items["p1"],
            "spans",
            [(0, 3, None), (80, 500, None)],
            method="edit",
            sources=[],
            actor=OPERATOR,
        )

    class Breaks:
        """The majority rule until the fourth item, then a failure: nothing of the run may remain."""

        name = "majority"

        def __init__(self) -> None:
            self.seen = 0

        def spans(self, *args, **kwargs):
            self.seen += 1
            if self.seen == 4:
                raise RuntimeError("the rule broke")
            return RULES["majority"].spans(*args, **kwargs)

        def units(self, *args, **kwargs):
            return RULES["majority"].units(*args, **kwargs)

    with pytest.raises(RuntimeError, match="broke"):
        adj.promote_by_rule(engine, panel.dataset, "spans", Breaks(), actor=OPERATOR)
    assert {model: _count(engine, model) for model in before} == before


def test_stale_labels_are_refused(engine) -> None:
    panel = Panel(engine, "panel")
    votes = adj.item_votes(engine, panel.dataset, panel.items["s2"], "sentences")
    labeling.set_sentence_label(engine, panel.sets[B], panel.items["s2"], 0, "unknown", panel.who[B])
    with pytest.raises(labeling.StaleEdit, match="changed their labels"):
        adj.promote_item(
            engine,
            panel.dataset,
            panel.items["s2"],
            "sentences",
            votes.labels_of(panel.who[A]),
            method="accept",
            sources=[panel.who[A]],
            actor=OPERATOR,
            expected_digest=votes.digest,
        )


@pytest.mark.parametrize(("item", "first", "second"), [("s1", C, A), ("p5", A, B)])
def test_a_promotion_over_gold_changed_since_it_was_shown_is_refused(
    engine, item: str, first: str, second: str
) -> None:
    """Two reviewers open one item; the first promotes one annotator's labels, the second (from the
    page as it was) another's. The second silently replaced the first's gold; now it is refused, says
    who changed gold and when, and writes nothing."""
    panel = Panel(engine, "panel")
    task = _task(item)
    rita, sam = (get_or_create_annotator(engine, name, role="reviewer") for name in ("rita", "sam"))
    votes = adj.item_votes(engine, panel.dataset, panel.items[item], task)
    seen = adj.gold_version(engine, panel.dataset, panel.items[item], task)

    def promote(who, annotator: str) -> adj.PromotionResult:
        return adj.promote_item(
            engine,
            panel.dataset,
            panel.items[item],
            task,
            votes.labels_of(panel.who[annotator]),
            method="accept",
            sources=[panel.who[annotator]],
            actor=Actor(who.id, who.name, who.role),
            expected_digest=votes.digest,
            expected_gold=seen,
        )

    assert promote(rita, first).changes > 0
    gold = panel.gold(item, task)
    assert gold is not None
    assert adj.gold_version(engine, panel.dataset, panel.items[item], task) != seen
    before = {model: _count(engine, model) for model in (m.EditLog, m.Promotion, m.Span, m.SentenceLabel)}
    with pytest.raises(adj.GoldChanged, match=r"changed by rita on \d{4}-\d\d-\d\d \d\d:\d\d .*reload"):
        promote(sam, second)
    assert {model: _count(engine, model) for model in before} == before
    assert panel.gold(item, task) == gold
    # Once the second reviewer has seen the gold as it is now, their promotion goes through.
    seen = adj.gold_version(engine, panel.dataset, panel.items[item], task)
    assert promote(sam, second).changes > 0


def test_rights_in_team_mode(engine, monkeypatch: pytest.MonkeyPatch) -> None:
    panel = Panel(engine, "panel")
    users = {
        role: get_or_create_annotator(engine, f"a {role}", role=role) for role in ("annotator", "viewer")
    }
    users["reviewer"] = get_or_create_annotator(engine, "rita", role="reviewer")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")  # the accounts exist; an admin made them
    labels = {0: (c, None), 1: (c, None), 2: (c, None)}
    for role in ("annotator", "viewer"):
        user = users[role]
        actor = Actor(user.id, user.name, role)
        with pytest.raises(Forbidden, match=f"The {role} role cannot adjudicate"):
            adj.promote_item(
                engine,
                panel.dataset,
                panel.items["s2"],
                "sentences",
                labels,
                method="edit",
                sources=[],
                actor=actor,
            )
        with pytest.raises(Forbidden):
            adj.promote_by_rule(
                engine, panel.dataset, "sentences", RULES["majority"], actor=actor, dry_run=True
            )
    # the role is read from the store: a page's stale "reviewer" does not pass for a viewer
    viewer = get_or_create_annotator(engine, "a viewer")
    with pytest.raises(Forbidden):
        adj.promote_item(
            engine,
            panel.dataset,
            panel.items["s2"],
            "sentences",
            labels,
            method="edit",
            sources=[],
            actor=Actor(viewer.id, viewer.name, "reviewer"),
        )
    assert _count(engine, m.Promotion) == 0
    reviewer = users["reviewer"]
    adj.promote_item(
        engine,
        panel.dataset,
        panel.items["s2"],
        "sentences",
        labels,
        method="edit",
        sources=[],
        actor=Actor(reviewer.id, reviewer.name, "reviewer"),
    )
    assert panel.gold("s2", "sentences") == CORRECT3


def test_items_in_disagreement_most_first_with_everyones_labels(engine) -> None:
    panel = Panel(engine, "panel")
    rows = adj.items_in_disagreement(engine, panel.dataset, "sentences", measure=DISAGREEMENT)
    # s1: sentence 2 differs (1 of 3); s3: sentence 1 differs (1 of 3); s2 agrees → not listed
    assert [(r.votes.external_id, round(r.disagreement, 3)) for r in rows] == [("s1", 0.333), ("s3", 0.333)]
    assert rows[0].votes.units[panel.who[C]][1] == (c, None)
    assert rows[0].promotion is None
    # spans: p1 pairs A–B 2/3, A–C 1, B–C 2/3 → 1 − 7/9; p5 A–B 0, A–C 0, B–C 1 → 2/3; p4 agrees in offsets
    spans = adj.items_in_disagreement(engine, panel.dataset, "spans", measure=DISAGREEMENT)
    assert [(r.votes.external_id, round(r.disagreement, 3)) for r in spans] == [("p5", 0.667), ("p1", 0.222)]
    # AlignBench's rule lists what it would review even where everyone agrees (p4's types tie)
    reviewed = adj.items_in_disagreement(
        engine, panel.dataset, "spans", measure=DISAGREEMENT, rule=RULES["alignbench"]
    )
    assert [(r.votes.external_id, r.review is not None) for r in reviewed] == [
        ("p5", True),
        ("p1", True),
        ("p4", True),
    ]
    adj.promote_by_rule(engine, panel.dataset, "spans", RULES["majority"], actor=OPERATOR)
    after = {
        r.votes.external_id: r
        for r in adj.items_in_disagreement(engine, panel.dataset, "spans", measure=DISAGREEMENT)
    }
    assert after["p1"].promotion is not None and after["p1"].promotion.method == "majority"
    assert after["p1"].promoted_current


def test_overrides_show_an_annotator_where_gold_differs(engine) -> None:
    panel = Panel(engine, "panel")
    reviewer = get_or_create_annotator(engine, "rita", role="reviewer")
    actor = Actor(reviewer.id, reviewer.name, "reviewer")
    adj.promote_by_rule(engine, panel.dataset, "sentences", RULES["majority"], actor=actor)
    adj.promote_by_rule(engine, panel.dataset, "spans", RULES["majority"], actor=actor)
    found = adj.overrides_for(engine, panel.dataset, panel.who[C])
    assert sorted((o.external_id, o.task, o.unit, o.theirs, o.gold) for o in found) == [
        ("p1", "spans", "span 0–12", "“The red cube” (Object)", "“red cube” (Color)"),
        ("s1", "sentences", "sentence 2", "correct", "incorrect (Object)"),
    ]
    assert {(o.reviewer, o.method) for o in found} == {("rita", "majority")}
    # A gave "blue table" on p5, which gold left out, and had no "red cube" there
    mine = adj.overrides_for(engine, panel.dataset, panel.who[A])
    assert [(o.external_id, o.unit, o.theirs, o.gold) for o in mine if o.external_id == "p5"] == [
        ("p5", "span 23–33", "“blue table” (Object)", "no span here"),
        ("p5", "span 4–12", "no span here", "“red cube” (Color)"),
    ]
    theirs = adj.overrides_for(engine, panel.dataset, panel.who[B])
    assert [(o.external_id, o.unit, o.theirs, o.gold) for o in theirs] == [
        ("p1", "span 23–33", "“blue table” (Object)", "no span here")
    ]


def test_triplets_by_rule(engine) -> None:
    panel = Panel(engine, "panel")
    with Session(engine) as session:
        triplets = list(
            session.scalars(
                select(m.Triplet.id).where(m.Triplet.item_id == panel.items["t1"]).order_by(m.Triplet.index)
            )
        )
    judged = {
        A: [("yes", None), ("no", "relation")],
        B: [("yes", None), ("no", "relation")],
        C: [("yes", None), ("yes", None)],
    }
    for who, verdicts in judged.items():
        for triplet, (verdict, part) in zip(triplets, verdicts, strict=True):
            labeling.set_triplet_judgment(
                engine, panel.sets[who], triplet, verdict, panel.who[who], wrong_part=part
            )
    votes = adj.item_votes(engine, panel.dataset, panel.items["t1"], "triplets")
    assert votes.unit_names[triplets[1]] == "triplet 2 of extractor"
    review = adj.promote_by_rule(engine, panel.dataset, "triplets", RULES["alignbench"], actor=OPERATOR)
    assert review.review == (("t1", "a trusted annotator labelled triplet 2 of extractor “no”"),)
    adj.promote_by_rule(engine, panel.dataset, "triplets", RULES["majority"], actor=OPERATOR)
    gold = gold_label_set(engine, panel.dataset)
    with Session(engine) as session:
        found = session.execute(
            select(
                m.TripletJudgment.triplet_id, m.TripletJudgment.verdict, m.TripletJudgment.wrong_part
            ).where(m.TripletJudgment.label_set_id == gold.id)
        ).all()
    assert sorted(found) == [(triplets[0], "yes", None), (triplets[1], "no", "relation")]


def test_adjudicated_ratings_are_gold_not_a_rater(engine) -> None:
    panel = Panel(engine, "panel")
    votes = adj.item_votes(engine, panel.dataset, panel.items["r1"], "ratings")
    (segment,) = votes.unit_names
    assert votes.unit_names[segment] == "segments: segment 4–12"
    assert adj.items_in_disagreement(engine, panel.dataset, "ratings", measure=DISAGREEMENT)[
        0
    ].disagreement == (
        pytest.approx(2 / 3)  # scores 3, 3, 1 on a 1–4 scale
    )
    unanimous = adj.promote_by_rule(engine, panel.dataset, "ratings", RULES["unanimity"], actor=OPERATOR)
    assert unanimous.promoted == ()  # 3, 3 and 1 are not one score
    with Session(engine) as session:  # a run that promotes no rating makes no account to hold them
        assert session.scalar(select(m.Annotator).where(m.Annotator.name == adj.GOLD_RATER)) is None
    summary = adj.promote_by_rule(engine, panel.dataset, "ratings", RULES["majority"], actor=OPERATOR)
    assert summary.promoted == ("r1",)  # 3 carries 2 of 3
    with Session(engine) as session:
        holder = session.scalar(select(m.Annotator).where(m.Annotator.name == adj.GOLD_RATER))
        assert (holder.role, holder.disabled, holder.password_hash) == ("viewer", True, None)
        gold = session.scalar(select(m.LabelSet).where(m.LabelSet.kind == "gold"))
        assert gold.annotator_id == holder.id
        scores = (
            session.execute(select(m.Rating.score).where(m.Rating.annotator_id == holder.id)).scalars().all()
        )
    assert scores == [3.0]
    assert sorted(reads.ratings(engine, panel.dataset)["rater"]) == [A, B, C]
    assert adj.gold_ratings(engine, panel.dataset)["score"] == [3.0]
    # the task's own views (progress, agreement, export) list the raters, not the adjudicated gold
    (task,) = list_rating_tasks(engine, panel.dataset)
    assert sorted(task_ratings(engine, task.id)["rater"]) == [A, B, C]
    assert adj.GOLD_RATER.encode() not in export_ratings(engine, task, filename="r.csv", actor=OPERATOR)
    # the reviewer edits the adjudicated score; raters' own ratings stay as they were
    adj.promote_item(
        engine,
        panel.dataset,
        panel.items["r1"],
        "ratings",
        {segment: ((2.0, None), None)},
        method="edit",
        sources=[],
        actor=OPERATOR,
    )
    assert adj.gold_ratings(engine, panel.dataset)["score"] == [2.0]
    assert sorted(reads.ratings(engine, panel.dataset)["score"]) == [1.0, 3.0, 3.0]
    with pytest.raises(ValueError, match="lies from 1 to 4"):
        adj.promote_item(
            engine,
            panel.dataset,
            panel.items["r1"],
            "ratings",
            {segment: ((9.0, None), None)},
            method="edit",
            sources=[],
            actor=OPERATOR,
        )


def test_unknown_task_or_method_is_refused(engine) -> None:
    panel = Panel(engine, "panel")
    with pytest.raises(ValueError, match="Unknown task"):
        adj.items_in_disagreement(engine, panel.dataset, "boxes", measure=DISAGREEMENT)
    with pytest.raises(ValueError, match="Unknown method"):
        adj.promote_item(
            engine,
            panel.dataset,
            panel.items["s1"],
            "sentences",
            {},
            method="vote",
            sources=[],
            actor=OPERATOR,
        )
    assert isinstance(RULES["majority"], Rule)
