"""The home page's dataset card in team mode: a blind annotator sees their own items and progress, never
gold coverage or how far colleagues are; the other roles, and anyone on a dataset that is not blind,
see the dataset's counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from db import models as m
from db.engine import make_engine, write_session
from db.repositories.assignments import progress_by_item
from tests.pages.team_store import USERS, assign, set_dataset_settings, signed_in, use_team_copy


def _card(at: AppTest) -> tuple[dict[str, str], str]:
    """The card's metrics (label → value) and its progress bar's text."""
    assert not at.exception, at.exception
    metrics = {metric.label: metric.value for metric in at.metric}
    (progress,) = at.get("progress")
    return metrics, progress.proto.text


def _mark_done(url: str, name: str, *external_ids: str, page: str = "spans") -> None:
    """``name``'s own label set marks the items done on the task's ``page`` (rows written directly)."""
    engine = make_engine(url)
    with write_session(engine) as session:
        own = session.scalars(
            select(m.LabelSet).where(m.LabelSet.name == name, m.LabelSet.kind == "human")
        ).one()
        for external_id in external_ids:
            item_id = session.scalars(select(m.Item.id).where(m.Item.external_id == external_id)).one()
            session.add(m.ItemStatus(label_set_id=own.id, item_id=item_id, page=page, status="done"))
    engine.dispose()


def test_a_blind_annotator_sees_only_their_own_items_and_progress(
    team_template: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    url = use_team_copy(team_template, tmp_path, monkeypatch)
    assign(url, "alice", "spans", "demo-001", "demo-002")
    assign(url, "alice", "sentences", "demo-002")  # one item on two tasks counts once
    _mark_done(url, "alice", "demo-001", "demo-007")  # demo-007 is not hers: it does not count
    _mark_done(url, "bob", "demo-003")

    metrics, progress = _card(signed_in(USERS["annotator"]))
    assert metrics == {"Your items": "2"}  # no detectors (no pre-annotation), no colleagues
    assert progress == "You: 1 / 2 items finished on every task assigned to you"

    viewer = _card(signed_in(USERS["viewer"]))
    assert set(viewer[0]) == {"Items", "Detectors", "Annotators"} and "gold on" in viewer[1]

    # Pre-annotation shows the detectors to annotators anyway, so their number is no secret.
    set_dataset_settings(url, blind=True, allow_preannotation=True)
    assert set(_card(signed_in(USERS["annotator"]))[0]) == {"Your items", "Detectors"}
    # A dataset that is not blind shows everyone everything.
    set_dataset_settings(url, blind=False)
    metrics, progress = _card(signed_in(USERS["annotator"]))
    assert set(metrics) == {"Items", "Detectors", "Annotators"} and "gold on" in progress


def test_an_annotators_card_counts_an_item_only_once_every_task_assigned_on_it_is_finished(
    team_template: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """Alice had no item finished on all its tasks (one done on spans only, one on sentences and
    scoring, one on sentences only), yet her card said "3 / 3 items done": it counted an item done on
    any one of its tasks. Now it counts one once every task assigned to her on it is done or skipped,
    and says so; an item locked for her (gold shown to her) is still neither finished nor remaining."""
    url = use_team_copy(team_template, tmp_path, monkeypatch)
    assign(url, "alice", "spans", "demo-001", "demo-002", "demo-003")
    assign(url, "alice", "sentences", "demo-001", "demo-002", "demo-003")
    assign(url, "alice", "ratings", "demo-002")
    _mark_done(url, "alice", "demo-001")
    _mark_done(url, "alice", "demo-002", "demo-003", page="sentences")
    _mark_done(url, "alice", "demo-002", page="response_scores")

    _, progress = _card(signed_in(USERS["annotator"]))
    assert progress == "You: 0 / 3 items finished on every task assigned to you"

    _mark_done(url, "alice", "demo-001", page="sentences")  # now finished on both of its tasks
    engine = make_engine(url)
    with write_session(engine) as session:
        alice = session.scalars(select(m.Annotator.id).where(m.Annotator.name == "alice")).one()
        item = session.scalars(select(m.Item.id).where(m.Item.external_id == "demo-003")).one()
        session.add(m.GoldSighting(dataset_id=1, item_id=item, annotator_id=alice, page="overrides"))
    engine.dispose()
    _, progress = _card(signed_in(USERS["annotator"]))
    assert progress == (
        "You: 1 / 3 items finished on every task assigned to you · 1 locked: gold was shown to you"
    )


def test_the_admins_card_counts_items_finished_by_their_assigned_annotators_as_the_team_page_does(
    team_template: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """The admin's card said "3 / 60 items done": an item any annotator marked done on any task, though
    the Team page had no item finished by the annotators assigned to it. It now counts the Team page's
    way: of the items assigned, those every assigned annotator finished on every task assigned there."""
    url = use_team_copy(team_template, tmp_path, monkeypatch)
    assign(url, "alice", "spans", "demo-001", "demo-002")
    assign(url, "bob", "spans", "demo-001")
    _mark_done(url, "alice", "demo-001", "demo-002")  # demo-001 waits for bob; demo-002 is finished
    _mark_done(url, "bob", "demo-003")  # not his: it finishes nothing

    metrics, progress = _card(signed_in(USERS["admin"]))
    assert metrics["Items"] == "60"
    assert progress.startswith(
        "Assigned work: 1 / 2 items finished by every annotator assigned to them · gold"
    )

    assign(url, "bob", "sentences", "demo-002")  # demo-002 now waits for his sentences
    _, progress = _card(signed_in(USERS["admin"]))
    assert progress.startswith(
        "Assigned work: 0 / 2 items finished by every annotator assigned to them · gold"
    )

    _mark_done(url, "bob", "demo-002", page="sentences")  # demo-002 is finished on both of its tasks
    _, progress = _card(signed_in(USERS["admin"]))
    assert progress.startswith(
        "Assigned work: 1 / 2 items finished by every annotator assigned to them · gold"
    )
    engine = make_engine(url)
    by_item = {
        p.external_id: p.finished == len(p.annotators)
        for task in ("spans", "sentences")
        for p in progress_by_item(engine, 1, task)
        if p.annotators
    }
    engine.dispose()
    assert by_item == {"demo-001": False, "demo-002": True}  # what the Team page's per-item table says


def test_without_assignments_the_card_says_what_it_counts(
    team_template: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """No work split: the card counts items some annotator marked done on some task, and says exactly
    that (it said "items done", which read as finished)."""
    url = use_team_copy(team_template, tmp_path, monkeypatch)
    _mark_done(url, "alice", "demo-001")
    _mark_done(url, "bob", "demo-002", page="sentences")
    _, progress = _card(signed_in(USERS["admin"]))
    assert progress.startswith(
        "Labeling: 2 / 60 items marked done by at least one annotator on some task · gold"
    )
