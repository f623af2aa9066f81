"""Team mode, one browser tab shared by two people in turn (a lab's workstation): what the first one
did stays out of what the next one sees. A blind annotator logging in where a reviewer has just
logged out must not be shown the reviewer's labels through anything the tab still held."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update
from streamlit.testing.v1 import AppTest

from db import models as m
from db.engine import make_engine, write_session
from tests.pages.demo_store import DEMO
from tests.pages.team_store import assign, is_login_form, log_in, signed_in

ITEM = "demo-004"


def _sentences(at: AppTest) -> AppTest:
    at.query_params.update({"dataset": DEMO, "item": ITEM})
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    return at


def _receipts(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("✓ Saved")]


def _end_every_login(url: str) -> None:
    """The reviewer walked away: their login timed out, with no logout."""
    engine = make_engine(url)
    with write_session(engine) as session:
        session.execute(update(m.LoginSession).values(expires_at=m.utcnow() - timedelta(seconds=1)))
    engine.dispose()


@pytest.mark.parametrize("leaving", ["logged out", "timed out"])
def test_the_next_person_in_the_tab_sees_no_receipt_of_the_last_ones_label(
    team_db: str, leaving: str
) -> None:
    """Alice opened the item the reviewer had just labeled, and read "✓ Saved · sentence 1 →
    incorrect" under her own name: the reviewer's label, shown as if it were hers."""
    assign(team_db, "alice", "sentences", ITEM)
    at = _sentences(signed_in("rev"))
    next(b for b in at.button if b.key == "sentence_now_incorrect").click().run()
    assert _receipts(at) and "incorrect" in _receipts(at)[0]
    if leaving == "logged out":
        next(b for b in at.sidebar.button if b.label == "Log out").click().run()
    else:
        _end_every_login(team_db)
        at.run()
    assert is_login_form(at)

    at = _sentences(log_in(at, "alice"))
    assert [m.value for m in at.sidebar.markdown][0] == "Signed in as alice (annotator)"
    assert _receipts(at) == []
