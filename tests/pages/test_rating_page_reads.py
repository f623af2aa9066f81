"""What one run of the Rate detector outputs page reads, for a blind annotator in team mode on a dataset
with two rating campaigns: whether their queue holds items back, and the campaigns of the ratings
task, are decided once per run and passed down; the items held back are counted only where N has
nowhere to go (its reason is said only then), beside the header's count of them."""

from __future__ import annotations

from sqlalchemy import Engine, event

from db.access import OPERATOR
from db.engine import make_engine
from db.repositories.rating_tasks import TaskSpec, create_rating_task, list_rating_tasks
from tests.pages.team_store import assign, signed_in


def _statements_of_one_run(url: str, item: str) -> tuple[list[str], list[str]]:
    """Every SQL statement one run of the rate page sends (spaces squeezed), and its progress texts."""
    engine = make_engine(url)
    first = list_rating_tasks(engine, 1)[0]
    create_rating_task(engine, 1, TaskSpec("second", first.detector_label_set_id), None, actor=OPERATOR)
    engine.dispose()
    at = signed_in("alice", item=item)
    at.query_params.update(item=item, task=str(first.id))
    statements: list[str] = []

    def seen(_connection: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(" ".join(statement.split()))

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        at.switch_page("app_pages/rate.py").run()
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    assert not at.exception, at.exception
    return statements, [bar.proto.text for bar in at.get("progress")]


def test_a_run_decides_holding_and_the_campaigns_once(team_db: str) -> None:
    """It read the dataset's settings 4 times a run (the held-back check, the next item for the header,
    the keyboard's reason for N, …), the campaigns twice, and counted the held items for N's reason
    though N had an item to open."""
    assign(team_db, "alice", "spans", "demo-001")  # demo-001 waits for her spans
    assign(team_db, "alice", "ratings", "demo-001", "demo-002", "demo-003")
    statements, bars = _statements_of_one_run(team_db, "demo-002")
    assert bars == [
        "0 / 3 done on this page · ratings task: 0 / 3 done · 1 held back until your labeling is done"
    ]
    settings = [s for s in statements if s.startswith("SELECT datasets.settings FROM datasets")]
    # Once for whether her queue holds items back, once for what she may see (gold, detectors).
    assert len(settings) == 2, settings
    campaigns = [s for s in statements if s.startswith("SELECT rating_tasks.id FROM rating_tasks")]
    assert len(campaigns) == 1, campaigns
    # Her open labeling is read once for the item shown (is it held back?) and once for the header's
    # count of the items held back; N opens demo-003, so its reason does not count them again.
    open_labeling = [
        s for s in statements if s.startswith("SELECT assignments_1.task, assignments_1.item_id")
    ]
    assert len(open_labeling) == 2, open_labeling
