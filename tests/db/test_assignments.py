"""Assignments: k distinct annotators per queued item, balanced, stable and idempotent; rights checked in
the repository; progress per annotator and per item; an annotator's queue holds only their items;
annotator weights and the dataset's team settings. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR, Actor, Forbidden
from db.importer import import_bundle
from db.repositories import queue
from db.repositories.accounts import set_disabled
from db.repositories.annotators import get_or_create_annotator
from db.repositories.assignments import (
    DEFAULT_WEIGHT,
    AssignedWork,
    AssignmentError,
    assign,
    assigned_items,
    assigned_work,
    next_assigned_item,
    progress_by_annotator,
    progress_by_item,
    set_weight,
    unassign,
    weights,
)
from db.repositories.datasets import DatasetSettings, dataset_settings, get_dataset, set_dataset_settings
from db.repositories.label_sets import human_label_set
from db.repositories.labeling import set_item_status
from db.repositories.rating_tasks import TaskSpec, create_rating_task
from formats.records import (
    Annotations,
    Bundle,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SpanRecord,
)

N_ITEMS = 12
CLAIMED = (1, 4, 5, 9)  # the items with a claim: the claims queue holds only these


def _bundle(name: str = "ds", n_items: int = N_ITEMS) -> Bundle:
    items = [
        ItemRecord(
            f"it-{k:02}",
            f"A red cube number {k}. The ball is blue.",
            claims=[ClaimRecord("The cube is red.")] if k in CLAIMED else [],
        )
        for k in range(n_items)
    ]
    detector = LabelSetRecord("detector", "det", annotations=[Annotations("it-00", [SpanRecord(2, 5)])])
    return Bundle(DatasetRecord(name, "test"), items=items, label_sets=[detector])


def _dataset(engine: Engine, name: str = "ds", n_items: int = N_ITEMS) -> int:
    import_bundle(engine, _bundle(name, n_items), actor=OPERATOR)
    found = get_dataset(engine, name)
    assert found is not None
    return found.id


def _users(engine: Engine, *names: str, role: str = "annotator") -> list[int]:
    """Accounts without a password (hashing one is slow and beside the point here)."""
    return [get_or_create_annotator(engine, name, role).id for name in names]


def _actor(engine: Engine, name: str, role: str) -> Actor:
    (user_id,) = _users(engine, name, role=role)
    return Actor(user_id, name, role)


def _pairs(engine: Engine, dataset_id: int, task: str) -> list[tuple[str, str]]:
    """(external id, annotator name) of every assignment, in item order then name."""
    with Session(engine) as session:
        return [
            tuple(row)
            for row in session.execute(
                select(m.Item.external_id, m.Annotator.name)
                .select_from(m.Assignment)
                .join(m.Item, m.Item.id == m.Assignment.item_id)
                .join(m.Annotator, m.Annotator.id == m.Assignment.annotator_id)
                .where(m.Assignment.dataset_id == dataset_id, m.Assignment.task == task)
                .order_by(m.Item.position, m.Annotator.name)
            )
        ]


def _count(engine: Engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(m.Assignment)) or 0


def _mark(engine: Engine, dataset_id: int, annotator_id: int, item_id: int, page: str, status: str) -> None:
    own = human_label_set(engine, dataset_id, annotator_id)
    set_item_status(engine, own.id, item_id, page, status, annotator_id)


def test_every_item_gets_k_distinct_annotators_in_a_balanced_round(engine: Engine) -> None:
    dataset_id = _dataset(engine)
    a, b, c = _users(engine, "a", "b", "c")
    counts = assign(engine, dataset_id, "spans", [a, b, c], 2, actor=OPERATOR)
    assert (counts.items, counts.added, counts.kept) == (N_ITEMS, 2 * N_ITEMS, 0)
    assert counts.loads == {a: 8, b: 8, c: 8}
    pairs = _pairs(engine, dataset_id, "spans")
    per_item: dict[str, list[str]] = {}
    for external_id, name in pairs:
        per_item.setdefault(external_id, []).append(name)
    assert all(len(set(names)) == 2 for names in per_item.values()) and len(per_item) == N_ITEMS
    # Least loaded first, ties to the annotator named first: a b, then c a, then b c, and round again.
    assert [per_item[f"it-{k:02}"] for k in range(4)] == [["a", "b"], ["a", "c"], ["b", "c"], ["a", "b"]]


def test_same_inputs_give_the_same_split(engine: Engine) -> None:
    first, second = _dataset(engine, "one"), _dataset(engine, "two")
    a, b, c, d = _users(engine, "a", "b", "c", "d")
    assign(engine, first, "sentences", [c, a, d, b], 3, actor=OPERATOR)
    assign(engine, second, "sentences", [c, a, d, b], 3, actor=OPERATOR)
    assert _pairs(engine, first, "sentences") == _pairs(engine, second, "sentences")
    loads = Counter(name for _, name in _pairs(engine, first, "sentences"))
    assert loads == {"a": 9, "b": 9, "c": 9, "d": 9}
    # The order the annotators are given breaks ties: c is named first, so it has the first item.
    assert [n for e, n in _pairs(engine, first, "sentences") if e == "it-00"] == ["a", "c", "d"]


def test_running_again_adds_only_what_is_missing(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=6)
    a, b, c = _users(engine, "a", "b", "c")
    assign(engine, dataset_id, "spans", [a, b], 1, actor=OPERATOR)
    before = _pairs(engine, dataset_id, "spans")
    again = assign(engine, dataset_id, "spans", [a, b], 1, actor=OPERATOR)
    assert (again.added, again.kept) == (0, 6) and _pairs(engine, dataset_id, "spans") == before
    # New items of the dataset are assigned on the next run; the others keep theirs.
    import_bundle(engine, _bundle("ds", 9), actor=OPERATOR)
    more = assign(engine, dataset_id, "spans", [a, b], 1, actor=OPERATOR)
    assert (more.items, more.added, more.kept) == (9, 3, 6)
    assert set(before) <= set(_pairs(engine, dataset_id, "spans"))
    # A larger k, or another annotator, tops the items up without moving anyone.
    topped = assign(engine, dataset_id, "spans", [a, b, c], 2, actor=OPERATOR)
    assert topped.added == 9 and topped.kept == 9
    assert set(before) <= set(_pairs(engine, dataset_id, "spans"))
    assert max(topped.loads.values()) - min(topped.loads.values()) <= 1
    assert Counter(e for e, _ in _pairs(engine, dataset_id, "spans")) == {f"it-{k:02}": 2 for k in range(9)}


@pytest.mark.parametrize(("n_items", "first_k", "then_k"), [(10, 2, 3), (15, 1, 2), (25, 1, 3)])
def test_topping_up_stays_balanced(engine: Engine, n_items: int, first_k: int, then_k: int) -> None:
    """Taking items in order alone would leave two annotators two items apart here: a least loaded
    annotator already on an item has to be skipped. The run evens the loads out."""
    dataset_id = _dataset(engine, n_items=n_items)
    team = _users(engine, "a", "b", "c", "d", "e")
    assign(engine, dataset_id, "spans", team, first_k, actor=OPERATOR)
    before = set(_pairs(engine, dataset_id, "spans"))
    topped = assign(engine, dataset_id, "spans", team, then_k, actor=OPERATOR)
    assert max(topped.loads.values()) - min(topped.loads.values()) <= 1
    assert sum(topped.loads.values()) == n_items * then_k
    after = _pairs(engine, dataset_id, "spans")
    assert before <= set(after) and len(set(after)) == len(after)
    assert set(Counter(e for e, _ in after).values()) == {then_k}
    assert Counter(n for _, n in after) == {
        n: load for n, load in zip("abcde", topped.loads.values(), strict=True)
    }


def test_earlier_load_is_evened_out(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=10)
    a, b, c = _users(engine, "a", "b", "c")
    assign(engine, dataset_id, "claims", [a], 1, actor=OPERATOR)  # a holds the 4 claim items
    evened = assign(engine, dataset_id, "spans", [a, b, c], 1, actor=OPERATOR)
    assert evened.loads == {a: 4, b: 3, c: 3}  # spans are another task: a's claims do not count
    assign(engine, dataset_id, "sentences", [a], 1, actor=OPERATOR)
    unassign(engine, dataset_id, "sentences", a, actor=OPERATOR)
    assign(engine, dataset_id, "sentences", [b], 1, actor=OPERATOR)  # b holds all 10 sentence items
    topped = assign(engine, dataset_id, "sentences", [a, b, c], 2, actor=OPERATOR)
    assert topped.loads == {a: 5, b: 10, c: 5}  # b can give nothing away; a and c share the rest


def test_only_items_of_the_task_queue_are_assigned(engine: Engine) -> None:
    dataset_id = _dataset(engine)
    a, b = _users(engine, "a", "b")
    counts = assign(engine, dataset_id, "claims", [a, b], 1, actor=OPERATOR)
    assert counts.items == len(CLAIMED)
    assert [e for e, _ in _pairs(engine, dataset_id, "claims")] == [f"it-{k:02}" for k in CLAIMED]
    assert [n for _, n in _pairs(engine, dataset_id, "claims")] == ["a", "b", "a", "b"]
    assert assign(engine, dataset_id, "ratings", [a, b], 2, actor=OPERATOR).items == N_ITEMS


@pytest.mark.parametrize(
    ("k", "annotators", "message"),
    [
        (3, ["a", "b"], "Each item needs 3 different annotators, but only 2 were chosen."),
        (2, ["a", "a"], "Each item needs 2 different annotators, but only 1 was chosen."),
        (0, ["a"], "a whole number of 1 or more"),
        (1, [], "Choose at least one annotator."),
        (1, ["a", "viewer"], "'viewer' has the viewer role, which cannot label."),
        (1, ["a", "off"], "The account 'off' is disabled."),
    ],
)
def test_refused_assignments_say_why_and_write_nothing(
    engine: Engine, k: int, annotators: list[str], message: str
) -> None:
    dataset_id = _dataset(engine, n_items=3)
    ids = dict(zip(("a", "b", "off"), _users(engine, "a", "b", "off"), strict=True))
    ids["viewer"] = _users(engine, "viewer", role="viewer")[0]
    set_disabled(engine, "off", True, actor=OPERATOR)
    with pytest.raises(AssignmentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        assign(engine, dataset_id, "spans", [ids[n] for n in annotators], k, actor=OPERATOR)
    assert _count(engine) == 0


def test_unknown_task_dataset_and_annotator_are_refused(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=3)
    (a,) = _users(engine, "a")
    with pytest.raises(AssignmentError, match="Unknown task 'words'"):
        assign(engine, dataset_id, "words", [a], 1, actor=OPERATOR)
    with pytest.raises(AssignmentError, match="no dataset with id 999"):
        assign(engine, 999, "spans", [a], 1, actor=OPERATOR)
    with pytest.raises(AssignmentError, match="no user with id 999"):
        assign(engine, dataset_id, "spans", [a, 999], 1, actor=OPERATOR)
    assert _count(engine) == 0


@pytest.mark.parametrize("role", ["reviewer", "annotator", "viewer"])
def test_only_who_manages_the_team_assigns_in_team_mode(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, role: str
) -> None:
    dataset_id = _dataset(engine, n_items=3)
    (a,) = _users(engine, "a")
    someone = _actor(engine, "someone", role)
    admin = _actor(engine, "boss", "admin")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    with pytest.raises(Forbidden, match=f"The {role} role cannot manage users and assignments"):
        assign(engine, dataset_id, "spans", [a], 1, actor=someone)
    assign(engine, dataset_id, "spans", [a], 1, actor=admin)
    with pytest.raises(Forbidden):
        unassign(engine, dataset_id, "spans", a, actor=someone)
    with pytest.raises(Forbidden):
        set_weight(engine, dataset_id, a, 2.0, False, actor=someone)
    assert _count(engine) == 3 and weights(engine, dataset_id)[a] == DEFAULT_WEIGHT
    monkeypatch.setenv("SPANLIGHT_MODE", "local")  # one person at their machine holds every right
    assert unassign(engine, dataset_id, "spans", a, actor=someone) == 3


def test_progress_per_annotator_and_per_item(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=6)
    a, b, c = _users(engine, "a", "b", "c")
    assign(engine, dataset_id, "spans", [a, b, c], 2, actor=OPERATOR)
    items = {k: assigned_items(engine, dataset_id, "spans", who) for k, who in (("a", a), ("b", b), ("c", c))}
    assert [len(v) for v in items.values()] == [4, 4, 4]
    _mark(engine, dataset_id, a, items["a"][0], "spans", "done")
    _mark(engine, dataset_id, a, items["a"][1], "spans", "skipped")
    _mark(engine, dataset_id, a, items["a"][2], "spans", "unsure")  # not finished
    _mark(engine, dataset_id, a, items["a"][3], "sentences", "done")  # another task
    _mark(engine, dataset_id, b, items["b"][0], "spans", "done")
    by_annotator = {
        p.name: (p.assigned, p.done, p.skipped, p.remaining)
        for p in progress_by_annotator(engine, dataset_id, "spans")
    }
    assert by_annotator == {"a": (4, 1, 1, 2), "b": (4, 1, 0, 3), "c": (4, 0, 0, 4)}
    rows = progress_by_item(engine, dataset_id, "spans")
    assert [(r.external_id, r.annotators, r.finished) for r in rows] == [
        ("it-00", ("a", "b"), 2),
        ("it-01", ("a", "c"), 1),
        ("it-02", ("b", "c"), 0),
        ("it-03", ("a", "b"), 0),
        ("it-04", ("a", "c"), 0),
        ("it-05", ("b", "c"), 0),
    ]
    # The dataset's count agrees with the table: one item finished by all of its annotators, of six.
    assert assigned_work(engine, dataset_id) == AssignedWork(items=6, finished=1)
    page = progress_by_item(engine, dataset_id, "spans", offset=2, limit=2)
    assert [(r.external_id, r.position) for r in page] == [
        ("it-02", rows[2].position),
        ("it-03", rows[3].position),
    ]
    assert progress_by_annotator(engine, dataset_id, "claims") == []
    assert all(r.annotators == () for r in progress_by_item(engine, dataset_id, "claims"))


def test_an_item_is_finished_on_ratings_once_every_campaign_has_it(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=2)
    (a,) = _users(engine, "a")
    with Session(engine) as session:
        detector = session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == "detector"))
    assert detector is not None
    first = create_rating_task(engine, dataset_id, TaskSpec("first", detector), None, actor=OPERATOR)
    second = create_rating_task(engine, dataset_id, TaskSpec("second", detector), None, actor=OPERATOR)
    assign(engine, dataset_id, "ratings", [a], 1, actor=OPERATOR)
    one, two = assigned_items(engine, dataset_id, f"rating:{first}", a)
    _mark(engine, dataset_id, a, one, f"rating:{first}", "done")
    _mark(engine, dataset_id, a, two, f"rating:{first}", "done")
    _mark(engine, dataset_id, a, two, f"rating:{second}", "skipped")
    (overall,) = progress_by_annotator(engine, dataset_id, "ratings")
    assert (overall.done, overall.skipped, overall.remaining) == (0, 1, 1)
    (campaign,) = progress_by_annotator(engine, dataset_id, f"rating:{first}")
    assert (campaign.done, campaign.skipped, campaign.remaining) == (2, 0, 0)
    assert [r.finished for r in progress_by_item(engine, dataset_id, "ratings")] == [0, 1]
    # The queue of a campaign is the ratings assignment: the annotator's next item there is "one".
    own = human_label_set(engine, dataset_id, a)
    assert (
        next_assigned_item(engine, dataset_id, f"rating:{second}", a, own.id, after_position=None) == "it-00"
    )


def test_unassign_keeps_finished_work_unless_told(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=4)
    a, b = _users(engine, "a", "b")
    assign(engine, dataset_id, "spans", [a, b], 2, actor=OPERATOR)
    first = assigned_items(engine, dataset_id, "spans", a)[0]
    _mark(engine, dataset_id, a, first, "spans", "done")
    assert unassign(engine, dataset_id, "spans", a, actor=OPERATOR) == 3
    assert assigned_items(engine, dataset_id, "spans", a) == [first]
    assert unassign(engine, dataset_id, "spans", a, actor=OPERATOR, only_unfinished=False) == 1
    assert assigned_items(engine, dataset_id, "spans", a) == []
    assert len(assigned_items(engine, dataset_id, "spans", b)) == 4
    with Session(engine) as session:
        logged = session.scalars(select(m.EditLog.entity).where(m.EditLog.entity == "assignments")).all()
    assert len(logged) == 3


def test_an_annotators_queue_holds_only_their_items(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=6)
    a, b = _users(engine, "a", "b")
    assign(engine, dataset_id, "spans", [a, b], 1, actor=OPERATOR)
    own = human_label_set(engine, dataset_id, a)
    assert queue.queue_size(engine, dataset_id, "spans", assigned_to=a) == 3
    assert queue.queue_size(engine, dataset_id, "spans") == 6
    assert queue.next_item(engine, dataset_id, own.id, "spans", assigned_to=a) == "it-00"
    assert queue.next_item(engine, dataset_id, own.id, "spans", assigned_to=b) == "it-01"
    with Session(engine) as session:
        positions = dict(session.execute(select(m.Item.external_id, m.Item.position)).all())
    after_first = positions["it-00"]
    assert next_assigned_item(engine, dataset_id, "spans", a, own.id, after_position=after_first) == "it-02"
    # Whoever else works on the whole dataset: the next item after it-00 is it-01.
    assert queue.next_item(engine, dataset_id, own.id, "spans", after_position=after_first) == "it-01"
    item_ids = assigned_items(engine, dataset_id, "spans", a)
    _mark(engine, dataset_id, a, item_ids[1], "spans", "done")
    with Session(engine) as session:
        unassigned = session.scalar(select(m.Item.id).where(m.Item.external_id == "it-01"))
    assert unassigned is not None
    _mark(engine, dataset_id, a, unassigned, "spans", "done")  # labeled before the assignment, say
    done = queue.progress(engine, dataset_id, own.id, "spans", assigned_to=a)
    assert (done.finished, done.total) == (1, 3)
    assert queue.progress(engine, dataset_id, own.id, "spans").finished == 2
    # Wraps around to the first unfinished assigned item; none left means None.
    assert (
        next_assigned_item(engine, dataset_id, "spans", a, own.id, after_position=positions["it-04"])
        == "it-00"
    )
    for item_id in item_ids:
        _mark(engine, dataset_id, a, item_id, "spans", "done")
    assert next_assigned_item(engine, dataset_id, "spans", a, own.id, after_position=None) is None
    assert queue.next_item(engine, dataset_id, own.id, "spans", assigned_to=999) is None


def test_weights_default_and_set(engine: Engine) -> None:
    dataset_id = _dataset(engine, n_items=1)
    other = _dataset(engine, "other", n_items=1)
    a, b = _users(engine, "a", "b")
    assert (
        weights(engine, dataset_id)
        == {a: DEFAULT_WEIGHT, b: DEFAULT_WEIGHT}
        == {a: (1.0, True), b: (1.0, True)}
    )
    set_weight(engine, dataset_id, a, 2.5, False, actor=OPERATOR)
    set_weight(engine, dataset_id, a, 0.5, False, actor=OPERATOR)
    assert weights(engine, dataset_id) == {a: (0.5, False), b: (1.0, True)}
    assert weights(engine, other)[a] == DEFAULT_WEIGHT
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(AssignmentError):
            set_weight(engine, dataset_id, a, bad, True, actor=OPERATOR)
    with pytest.raises(AssignmentError, match="no user with id 999"):
        set_weight(engine, dataset_id, 999, 1.0, True, actor=OPERATOR)
    assert weights(engine, dataset_id)[a] == (0.5, False)


def test_dataset_team_settings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset_id = _dataset(engine, n_items=1)
    assert dataset_settings(engine, dataset_id) == DatasetSettings(blind=True, allow_preannotation=False)
    reviewer = _actor(engine, "rev", "reviewer")
    admin = _actor(engine, "boss", "admin")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    with pytest.raises(Forbidden):
        set_dataset_settings(engine, dataset_id, blind=False, allow_preannotation=True, actor=reviewer)
    changed = set_dataset_settings(engine, dataset_id, blind=False, allow_preannotation=True, actor=admin)
    assert changed == dataset_settings(engine, dataset_id) == DatasetSettings(False, True)
    with Session(engine) as session:
        log = session.scalars(
            select(m.EditLog).where(m.EditLog.entity == "datasets", m.EditLog.action == "update")
        ).one()
    assert log.annotator_id == admin.id and log.after == {
        "settings": {"blind": False, "allow_preannotation": True, "char_precision": False}
    }


def test_a_bulk_assignment_refreshes_the_planner_statistics(engine: Engine) -> None:
    """PostgreSQL plans an annotator's queue by the table's row counts; right after a bulk assignment
    they must not still say the table is empty."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite plans without table statistics")
    dataset_id = _dataset(engine, n_items=600)
    team = _users(engine, "a", "b")
    assert assign(engine, dataset_id, "spans", team, 2, actor=OPERATOR).added == 1200
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT reltuples FROM pg_class WHERE oid = 'assignments'::regclass"
        ).scalar_one()
    assert rows == 1200


def test_an_item_is_finished_on_ratings_by_its_score_until_the_dataset_has_a_campaign(
    engine: Engine,
) -> None:
    """Scoring a response is ratings work, but its status was never counted: an item scored counted 0
    on the Team page and the command line while the scoring page said it was done. Now a dataset
    without a rating campaign is rated by scoring its responses, and every view says the same; once it
    has a campaign, the campaigns finish an item and a score is extra."""
    dataset_id = _dataset(engine, n_items=3)
    (a,) = _users(engine, "a")
    assign(engine, dataset_id, "ratings", [a], 1, actor=OPERATOR)
    one, two, three = assigned_items(engine, dataset_id, "ratings", a)
    _mark(engine, dataset_id, a, one, "response_scores", "done")
    _mark(engine, dataset_id, a, two, "response_scores", "skipped")
    own = human_label_set(engine, dataset_id, a).id
    # No campaign: the score alone finishes an item.
    (overall,) = progress_by_annotator(engine, dataset_id, "ratings")
    assert (overall.done, overall.skipped, overall.remaining) == (1, 1, 1)
    assert [r.finished for r in progress_by_item(engine, dataset_id, "ratings")] == [1, 1, 0]
    header = queue.task_progress(engine, dataset_id, own, "response_scores", assigned_to=a)
    assert (header.finished, header.skipped, header.total) == (2, 1, 3)
    # A campaign is added: the campaign's ratings finish an item now, a score alone does not.
    with Session(engine) as session:
        detector = session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == "detector"))
    assert detector is not None
    campaign = create_rating_task(engine, dataset_id, TaskSpec("c", detector), None, actor=OPERATOR)
    _mark(engine, dataset_id, a, three, f"rating:{campaign}", "done")
    (overall,) = progress_by_annotator(engine, dataset_id, "ratings")
    assert (overall.done, overall.skipped, overall.remaining) == (1, 0, 2)
    assert [r.finished for r in progress_by_item(engine, dataset_id, "ratings")] == [0, 0, 1]
    _mark(engine, dataset_id, a, one, f"rating:{campaign}", "done")
    (overall,) = progress_by_annotator(engine, dataset_id, "ratings")
    assert (overall.done, overall.skipped, overall.remaining) == (2, 0, 1)
    for page in ("response_scores", f"rating:{campaign}"):
        header = queue.task_progress(engine, dataset_id, own, page, assigned_to=a)
        assert (header.finished, header.skipped, header.total) == (2, 0, 3)
    home = queue.own_progress(engine, dataset_id, a, assigned_only=True)
    assert (home.finished, home.total) == (2, 3)


def test_the_home_card_counts_an_item_finished_only_on_every_task_assigned_on_it(engine: Engine) -> None:
    """An item done on one of its tasks but not another counted as done: an annotator with no item
    finished on all its tasks read "3 done". Now an item counts once every task assigned to her on it
    is done or skipped."""
    dataset_id = _dataset(engine, n_items=4)
    (a,) = _users(engine, "a")
    for task in ("spans", "sentences", "ratings"):
        assign(engine, dataset_id, task, [a], 1, actor=OPERATOR)
    one, two, three, four = assigned_items(engine, dataset_id, "spans", a)
    _mark(engine, dataset_id, a, one, "spans", "done")  # spans only
    _mark(engine, dataset_id, a, two, "sentences", "done")  # sentences and scoring
    _mark(engine, dataset_id, a, two, "response_scores", "done")
    _mark(engine, dataset_id, a, three, "sentences", "done")  # sentences only
    home = queue.own_progress(engine, dataset_id, a, assigned_only=True)
    assert (home.finished, home.total, home.remaining) == (0, 4, 4)
    _mark(engine, dataset_id, a, two, "spans", "skipped")
    for page in ("spans", "sentences", "response_scores"):
        _mark(engine, dataset_id, a, four, page, "done")
    home = queue.own_progress(engine, dataset_id, a, assigned_only=True)
    assert (home.finished, home.skipped, home.total, home.remaining) == (2, 1, 4, 2)
    # Without assignments, the tasks she began on an item are the ones it needs.
    free = queue.own_progress(engine, dataset_id, a, assigned_only=False)
    assert (free.finished, free.total) == (4, 4)
