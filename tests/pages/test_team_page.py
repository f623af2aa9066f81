"""The Team page: create a user, change their role, assign a task, follow progress, set settings and
weights; reviewers only read the progress; annotators and viewers are refused. And the annotation
pages' queue in team mode: an annotator's Next walks only the items assigned to them."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from components.dataset_picker import WIDGET
from db import models as m
from db.access import OPERATOR
from db.engine import make_engine, read_session
from db.repositories.accounts import get_user, list_users
from db.repositories.annotators import find_annotator, get_or_create_annotator
from db.repositories.assignments import (
    assign,
    assigned_items,
    progress_by_annotator,
    unassign,
    weights,
)
from db.repositories.datasets import DatasetSettings, dataset_settings, get_dataset
from tests.hostile_store import HOSTILE, shown
from tests.pages.conftest import add_small_dataset
from tests.pages.demo_store import APP
from tests.pages.team_store import USERS, signed_in
from tests.pages.team_store import assign as assign_items
from tests.pages.test_literal_text_pages import markdown_sources

DATASET = "pages-test"
HOSTILE_NAME = f"ann {HOSTILE}"


def _open(page: str = "app_pages/team.py", user: str = "lead", **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DATASET, "user": user, **query})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def test_create_user_change_role_assign_and_see_progress(app_db: str) -> None:
    engine = make_engine(app_db)
    at = _open()
    at.text_input(key="team_new_name").input(HOSTILE_NAME)
    at.selectbox(key="team_new_role").set_value("annotator")
    at.text_input(key="team_new_password").input("long enough secret")
    _button(at, "Create user").click().run()
    assert not at.exception
    created = next(u for u in list_users(engine) if u.name == HOSTILE_NAME)
    assert (created.role, created.has_password) == ("annotator", True)
    assert any(shown(s.value) == f"Created the annotator {HOSTILE_NAME!r}." for s in at.success)
    users_table = at.dataframe[0].value
    assert HOSTILE_NAME in users_table["name"].tolist()
    assert set(users_table["locked until"]) == {"—"}  # an empty cell is a dash, never "None"

    # A second annotator, then a role change to reviewer and back.
    at.text_input(key="team_new_name").input("bea")
    at.text_input(key="team_new_password").input("another secret")
    _button(at, "Create user").click().run()
    bea = next(u for u in list_users(engine) if u.name == "bea")
    at.selectbox(key="team_user").set_value(bea.id).run()
    at.selectbox(key=f"team_role_{bea.id}").set_value("reviewer")
    _button(at, "Change role").click().run()
    assert get_user(engine, bea.id).role == "reviewer"
    _button(at, "Disable").click().run()
    assert get_user(engine, bea.id).disabled
    _button(at, "Enable").click().run()
    assert not get_user(engine, bea.id).disabled

    dataset = get_dataset(engine, DATASET)
    assert dataset is not None
    at.selectbox(key="team_assign_task").set_value("spans")
    at.multiselect(key="team_assign_who").set_value([created.id, bea.id])
    at.number_input(key="team_assign_k").set_value(1)
    _button(at, "Assign").click().run()
    assert not at.exception
    n_items = dataset.n_items
    assert len(assigned_items(engine, dataset.id, "spans", created.id)) == (n_items + 1) // 2
    message = next(s.value for s in at.success)
    assert shown(message).startswith(
        f"spans: {n_items} item(s), 1 annotator(s) each — {n_items} assignment(s)"
    )
    assert HOSTILE_NAME in shown(message)
    for source in markdown_sources(at):
        assert "](https://" not in source and "<img" not in source, source

    # Progress: per annotator and the first page of items.
    at.selectbox(key="team_progress_task").set_value("spans").run()
    per_annotator, per_item = at.dataframe[-2].value, at.dataframe[-1].value
    assert per_annotator["annotator"].tolist() == sorted([HOSTILE_NAME, "bea"], key=str.casefold)
    assert per_annotator["assigned"].sum() == n_items and per_annotator["done"].sum() == 0
    assert len(per_item) == min(n_items, 50) and per_item["item"].tolist()[:2] == ["item-0", "item-1"]
    assert per_item["assigned to"].tolist()[:2] == [HOSTILE_NAME, "bea"]


def test_too_large_k_is_refused_with_the_reason(app_db: str) -> None:
    engine = make_engine(app_db)
    only = get_or_create_annotator(engine, "solo")
    at = _open()
    at.multiselect(key="team_assign_who").set_value([only.id])
    at.number_input(key="team_assign_k").set_value(2)
    _button(at, "Assign").click().run()
    assert [e.value for e in at.error] == ["Each item needs 2 different annotators, but only 1 was chosen."]
    assert progress_by_annotator(engine, 1, "spans") == []


def test_settings_and_weights(app_db: str) -> None:
    engine = make_engine(app_db)
    ann = get_or_create_annotator(engine, "ann")
    at = _open()
    at.toggle(key="team_blind_1").set_value(False)
    at.toggle(key="team_preannotation_1").set_value(True)
    at.toggle(key="team_char_precision_1").set_value(True)
    _button(at, "Save settings").click().run()
    assert dataset_settings(engine, 1) == DatasetSettings(
        blind=False, allow_preannotation=True, char_precision=True
    )
    at.selectbox(key="team_weight_who").set_value(ann.id).run()
    at.number_input(key=f"team_weight_1_{ann.id}").set_value(2.5)
    at.checkbox(key=f"team_trusted_1_{ann.id}").uncheck()
    _button(at, "Save weight").click().run()
    assert not at.exception and not at.error
    assert weights(engine, 1)[ann.id] == (2.5, False)


def _toggles(at: AppTest) -> dict[str, bool]:
    return {t.label.split(":")[0]: t.value for t in at.toggle}


def test_settings_and_weights_show_the_dataset_picked_not_the_one_before(app_db: str) -> None:
    """An admin who saved one dataset's settings and weights, then picked another dataset in the
    sidebar, saw the first one's values there, and saving them made a blind dataset seeing."""
    engine = make_engine(app_db)
    add_small_dataset(app_db, "second")
    second = get_dataset(engine, "second")
    assert second is not None
    ann = get_or_create_annotator(engine, "ann")
    at = _open()
    for toggle in at.toggle:
        toggle.set_value(not toggle.value)
    _button(at, "Save settings").click().run()
    at.selectbox(key="team_weight_who").set_value(ann.id).run()
    next(n for n in at.number_input if n.label == "Weight").set_value(3.0)
    next(c for c in at.checkbox if c.label == "Trusted").uncheck()
    _button(at, "Save weight").click().run()
    assert dataset_settings(engine, 1) == DatasetSettings(
        blind=False, allow_preannotation=True, char_precision=True
    )

    at.selectbox(key=WIDGET).set_value("second").run()
    assert not at.exception
    assert _toggles(at) == {"Blind": True, "Allow pre-annotation": False, "Character precision": False}
    assert next(n for n in at.number_input if n.label == "Weight").value == 1.0
    assert next(c for c in at.checkbox if c.label == "Trusted").value is True
    _button(at, "Save settings").click().run()
    _button(at, "Save weight").click().run()
    assert dataset_settings(engine, second.id) == DatasetSettings(
        blind=True, allow_preannotation=False, char_precision=False
    )
    assert weights(engine, second.id)[ann.id] == (1.0, True)


def _external_ids(url: str, item_ids: list[int]) -> list[str]:
    with read_session(make_engine(url)) as session:
        found = dict(
            session.execute(select(m.Item.id, m.Item.external_id).where(m.Item.id.in_(item_ids))).all()
        )
    return [found[i] for i in item_ids]


def _signed_in_on(page: str, role: str) -> AppTest:
    at = signed_in(USERS[role])
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_reviewers_read_progress_only(team_db: str) -> None:
    engine = make_engine(team_db)
    alice = find_annotator(engine, USERS["annotator"])
    assert alice is not None
    assign(engine, 1, "spans", [alice.id], 1, actor=OPERATOR)
    at = _signed_in_on("app_pages/team.py", "reviewer")
    assert not at.tabs
    assert not any(b.label in ("Create user", "Assign", "Save weight") for b in at.button)
    assert at.dataframe[0].value["annotator"].tolist() == [USERS["annotator"]]


@pytest.mark.parametrize("role", ["annotator", "viewer"])
def test_annotators_and_viewers_are_refused(team_db: str, role: str) -> None:
    at = _signed_in_on("app_pages/team.py", role)
    assert [e.value for e in at.error] == [f"The {role} role cannot see everyone's progress; ask an admin."]
    assert not at.dataframe and not [b for b in at.button if b.label != "Log out"]


def test_an_annotators_next_opens_their_next_assigned_item(team_db: str) -> None:
    engine = make_engine(team_db)
    me, other = (find_annotator(engine, name) for name in (USERS["annotator"], "bob"))
    assert me is not None and other is not None
    assign(engine, 1, "spans", [me.id, other.id], 1, actor=OPERATOR)  # me: every other item
    mine = _external_ids(team_db, assigned_items(engine, 1, "spans", me.id))
    at = _signed_in_on("app_pages/spans.py", "annotator")
    assert at.query_params["item"] == mine[0]
    next_button = next(b for b in at.button if b.key == "frame_next")
    assert "only items assigned to you" in next_button.help
    next_button.click().run()
    assert at.query_params["item"] == mine[1]
    assert any(f"0 / {len(mine)} done" in p.proto.text for p in at.get("progress"))


def test_an_annotator_with_nothing_assigned_is_told_so(team_db: str) -> None:
    at = _signed_in_on("app_pages/spans.py", "annotator")
    assert any("No item of this dataset is assigned to you" in i.value for i in at.info)


def _header(at: AppTest) -> tuple[list[str], list[str]]:
    """The annotation header's progress and the size of the queue it names."""
    sizes = [c.value.split(" · ")[1] for c in at.caption if c.value.startswith("Item **")]
    return [p.proto.text for p in at.get("progress")], sizes


def test_an_annotators_header_counts_the_items_still_assigned_after_an_admin_takes_some_away(
    team_db: str,
) -> None:
    """An admin took an annotator's items away while she had one open: her next key was refused, but the
    header still said "8 assigned to you" and counted her work out of 8 until she reloaded the page."""
    engine = make_engine(team_db)
    alice = find_annotator(engine, USERS["annotator"])
    assert alice is not None
    assign_items(team_db, USERS["annotator"], "sentences", *(f"demo-{k:03d}" for k in range(1, 9)))
    at = signed_in(USERS["annotator"], item="demo-004")
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception
    progress, sizes = _header(at)
    assert sizes == ["8 assigned to you)"] and progress[0].endswith(" / 8 done")

    unassign(engine, 1, "sentences", alice.id, actor=OPERATOR, only_unfinished=False)
    next(b for b in at.button if b.key == "sentence_now_unknown").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["This item is not assigned to you on the sentences task."]
    assert _header(at) == (["0 / 0 done"], ["0 assigned to you)"])
