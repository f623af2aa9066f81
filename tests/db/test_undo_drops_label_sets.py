"""An undo takes away the label sets its import made once they hold nothing (a detector run's first
import, undone, left an empty run in every list of detectors), and an undo of that undo makes them again
as they were."""

from __future__ import annotations

import threading

from sqlalchemy import Engine, delete, insert, select

from db import models as m
from db.access import OPERATOR
from db.engine import read_session, write_session
from db.import_undo import recent_imports, undo_import
from tests.db.test_undo_summary import import_run, store_gold

GOLD = [
    {
        "id": "a",
        "test_solution": "Two cats.",
        "hallucinated_solution": "<hallucination>Two</hallucination> cats.",
    },
    {"id": "b", "test_solution": "A dog.", "hallucinated_solution": "A dog."},
]
RUN = [{"id": "a", "output": "Two <hallucination>cats</hallucination>."}]
MORE = [{"id": "b", "output": "A <hallucination>dog</hallucination>."}]


def _gold(engine: Engine) -> None:
    store_gold(engine, GOLD)


def _run(engine: Engine, records: list[dict[str, str]], source: str = "o.json") -> int:
    assert import_run(engine, records, source).ok
    return recent_imports(engine)[0].log_id


def _label_sets(engine: Engine) -> dict[tuple[str, str], dict[str, object]]:
    with read_session(engine) as session:
        return {
            (ls.kind, ls.name): dict(ls.meta or {})
            for ls in session.scalars(select(m.LabelSet).order_by(m.LabelSet.id))
        }


def test_undoing_a_runs_first_import_takes_the_run_away(engine: Engine) -> None:
    _gold(engine)
    first = _run(engine, RUN)
    with read_session(engine) as session:  # a live run or a judgments file gives a run such attributes
        run = session.scalar(select(m.LabelSet).where(m.LabelSet.name == "det"))
        assert run is not None
    with write_session(engine) as session:
        stored = session.get(m.LabelSet, run.id)
        assert stored is not None
        stored.meta = {"answering_model": "llava"}
        stored.detector_version = "v2"
    done = undo_import(engine, first, actor=OPERATOR)
    assert ("detector", "det") not in _label_sets(engine)
    assert ("gold", "gold") in _label_sets(engine)  # the gold import's own label set stays
    assert done.dropped == ["detector:det"]
    assert done.summary().endswith("removed the label sets it had made, now empty: detector:det")
    assert recent_imports(engine)[0].summary() == done.summary()
    assert done.to_dict()["label_sets_removed"] == ["detector:det"]

    # Undoing the undo makes the run again, with its attributes and its span.
    again = undo_import(engine, done.log_id, actor=OPERATOR)
    assert again.dropped == []
    assert _label_sets(engine)[("detector", "det")] == {"answering_model": "llava"}
    with read_session(engine) as session:
        run = session.scalar(select(m.LabelSet).where(m.LabelSet.name == "det"))
        assert run is not None and run.detector_version == "v2"
        assert session.scalar(select(m.Span.id).where(m.Span.label_set_id == run.id)) is not None
    # …and undoing that takes it away once more.
    thrice = undo_import(engine, again.log_id, actor=OPERATOR)
    assert thrice.dropped == ["detector:det"]
    assert ("detector", "det") not in _label_sets(engine)


def test_a_run_that_holds_a_later_imports_rows_stays(engine: Engine) -> None:
    _gold(engine)
    first = _run(engine, RUN)
    _run(engine, MORE, source="more.json")  # the run now holds item b's output as well
    done = undo_import(engine, first, actor=OPERATOR)
    assert done.dropped == []
    assert ("detector", "det") in _label_sets(engine)
    assert "removed the label sets" not in done.summary()


def test_the_run_goes_once_the_import_that_made_it_and_every_later_one_are_undone(engine: Engine) -> None:
    """Undoing the run's first import while a later one's rows kept it, then the later one: the run,
    holding nothing and made by an import since undone, goes (it stayed, empty, in every detector list);
    undoing that undo makes it again with the later import's rows."""
    _gold(engine)
    first = _run(engine, RUN)
    later = _run(engine, MORE, source="more.json")
    assert undo_import(engine, first, actor=OPERATOR).dropped == []  # item b's output still holds it
    done = undo_import(engine, later, actor=OPERATOR)
    assert done.dropped == ["detector:det"]
    assert ("detector", "det") not in _label_sets(engine)
    again = undo_import(engine, done.log_id, actor=OPERATOR)
    assert ("detector", "det") in _label_sets(engine)
    with read_session(engine) as session:
        run = session.scalar(select(m.LabelSet).where(m.LabelSet.name == "det"))
        assert run is not None
        assert session.scalars(select(m.Span.item_id).where(m.Span.label_set_id == run.id)).all()
    assert undo_import(engine, again.log_id, actor=OPERATOR).dropped == ["detector:det"]


def test_a_run_made_again_by_a_later_import_stays_when_that_one_is_not_undone(engine: Engine) -> None:
    """The run's first import undone took it away; a later import made it afresh: undoing an import in
    between that held nothing of it leaves it alone."""
    _gold(engine)
    first = _run(engine, RUN)
    assert undo_import(engine, first, actor=OPERATOR).dropped == ["detector:det"]
    _run(engine, MORE, source="more.json")  # makes the run again
    assert ("detector", "det") in _label_sets(engine)
    redo = undo_import(engine, recent_imports(engine)[1].log_id, actor=OPERATOR)  # the undo of the first
    assert redo.dropped == []
    assert ("detector", "det") in _label_sets(engine)


def test_undoing_a_later_import_into_a_stored_run_keeps_the_run(engine: Engine) -> None:
    _gold(engine)
    _run(engine, RUN)
    later = _run(engine, MORE, source="more.json")
    done = undo_import(engine, later, actor=OPERATOR)
    assert done.dropped == []
    assert ("detector", "det") in _label_sets(engine)


def test_undoing_a_datasets_first_import_drops_its_gold_only_when_empty(engine: Engine) -> None:
    _gold(engine)
    gold_import = recent_imports(engine)[0].log_id
    _run(engine, RUN)
    done = undo_import(engine, gold_import, actor=OPERATOR)
    # Gold's spans and marks are gone and nothing else is in it: it goes; the run stays.
    assert done.dropped == ["gold:gold"]
    assert set(_label_sets(engine)) == {("detector", "det")}


def test_a_gold_of_marks_alone_comes_back_with_its_marks(engine: Engine) -> None:
    """An all-clean file's gold holds nothing but its coverage marks. The undo of its undo found no
    label set to put the marks on, said "restored no rows", and the marks were lost for good."""

    store_gold(
        engine, [{"id": k, "test_solution": "A dog.", "hallucinated_solution": "A dog."} for k in ("a", "b")]
    )
    first = recent_imports(engine)[0].log_id

    def marks() -> int:
        with read_session(engine) as session:
            return len(
                session.scalars(
                    select(m.ItemStatus.id)
                    .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
                    .where(m.LabelSet.kind == "gold")
                ).all()
            )

    assert marks() == 2
    undone = undo_import(engine, first, actor=OPERATOR)
    assert undone.dropped == ["gold:gold"] and marks() == 0
    again = undo_import(engine, undone.log_id, actor=OPERATOR)
    assert ("gold", "gold") in _label_sets(engine) and marks() == 2
    assert "2 coverage marks" in again.summary()
    thrice = undo_import(engine, again.log_id, actor=OPERATOR)
    assert thrice.dropped == ["gold:gold"] and marks() == 0


def test_a_row_added_meanwhile_keeps_the_label_set_on_postgresql(engine: Engine) -> None:
    """Another session adds a span to the label set while an undo checks it is empty. Not locked, the
    delete waited for that insert and its cascade then removed the span just committed."""
    import pytest

    from db.label_set_drops import drop_empty

    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writer at a time")
    _gold(engine)
    _run(engine, RUN)
    with write_session(engine) as session:
        run = session.scalar(select(m.LabelSet).where(m.LabelSet.name == "det"))
        assert run is not None
        session.execute(delete(m.Span).where(m.Span.label_set_id == run.id))
        session.execute(delete(m.RawOutput).where(m.RawOutput.label_set_id == run.id))
        session.execute(delete(m.ItemStatus).where(m.ItemStatus.label_set_id == run.id))
        item_id = session.scalar(select(m.Item.id).where(m.Item.external_id == "a"))
        run_id = run.id
    dataset_id = _dataset_id(engine)
    adding = engine.connect()
    writer = adding.begin()
    adding.execute(insert(m.Span).values(label_set_id=run_id, item_id=item_id, start=0, end=3, version=1))
    dropped: list[list[dict[str, object]]] = []

    def undo_side() -> None:
        with write_session(engine) as session:
            dropped.append(drop_empty(session, dataset_id, [("detector", "det")]))

    thread = threading.Thread(target=undo_side)
    thread.start()
    _wait_until_blocked(engine, thread)  # the undo waits on the other session's insert…
    writer.commit()  # …which then commits
    adding.close()
    thread.join(timeout=60)
    assert dropped == [[]]
    with read_session(engine) as session:
        assert session.scalar(select(m.Span.id).where(m.Span.label_set_id == run_id)) is not None


def _dataset_id(engine: Engine) -> int:
    with read_session(engine) as session:
        found = session.scalar(select(m.Dataset.id).where(m.Dataset.name == "d"))
        assert found is not None
        return found


def _wait_until_blocked(engine: Engine, thread: threading.Thread) -> None:
    """Until a session of the store waits on a lock (or the thread has finished: the check then failed)."""
    import time

    from sqlalchemy import text

    deadline = time.monotonic() + 120
    with engine.connect() as watching:
        while time.monotonic() < deadline and thread.is_alive():
            waiting = watching.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE wait_event_type = 'Lock' AND datname = current_database()"
                )
            ).scalar_one()
            watching.rollback()
            if waiting:
                return
    raise AssertionError("the undo never waited for the other session")
