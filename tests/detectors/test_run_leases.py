"""One run of a label set at a time, on both stores: a second run is refused while the first lives.

Two tabs, two app processes, or the page and the command line could each run the same label set at
once and pay for every call twice. The store now holds a lease for the run that opened the label set,
renewed while it runs; a second run (here from a second engine, as another process has) is refused,
naming the run, and asks nothing. A killed process's lease expires and is taken over: see
``tests/test_cli_run_detector.py``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from sqlalchemy import select

from db import models as m
from db.access import OPERATOR
from db.detector_runs import DetectorRunStore
from db.engine import make_engine, write_session
from detectors.runner import RunRefused
from detectors.strategies import get_strategy
from tests.detectors.chat_server import ChatServer, answer
from tests.detectors.live_data import DATASET, item_number, make_dataset, tagged
from tests.detectors.test_live_runs import live_meta, run, spec

LEASE_S = 1.0


@pytest.fixture
def data(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SPANLIGHT_RUN_LEASE_S", str(LEASE_S))
    make_dataset(engine, tmp_path / "images")
    return engine


def wait_for(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def test_a_second_run_of_a_label_set_being_run_is_refused_naming_it_and_asks_nothing(data, db_url):
    asked, release = threading.Event(), threading.Event()

    def holding(text: str, attempt: int):
        k = item_number(text)
        if k == 0:
            asked.set()
            release.wait(60)
        return answer(tagged(k, "red cube"))

    first: dict[str, Any] = {}
    with ChatServer(holding) as server:
        thread = threading.Thread(
            target=lambda: first.update(
                result=run(data, spec(server, concurrency=1, items=("item-0",), timeout_s=60))
            )
        )
        thread.start()
        try:
            assert asked.wait(60), "the first run asked nothing"
            lease = live_meta(data)["lease"]
            # The first run outlives its lease's first term: its heartbeat renews it.
            wait_for(lambda: live_meta(data)["lease"]["renewed"] > lease["expires"])
            other = make_engine(db_url)  # another process's connections
            try:
                with pytest.raises(RunRefused) as refused:
                    run(other, spec(server))
            finally:
                other.dispose()
            assert server.count() == 1  # the first run's held call alone
        finally:
            release.set()
            thread.join(60)
        assert first["result"].ok and first["result"].saved == 1
        assert "lease" not in live_meta(data)  # given back at the end: the next run starts at once
        assert run(data, spec(server)).complete
    message = str(refused.value)
    assert (
        f"the detector 'judge' is already being run on '{DATASET}' (run {lease['run']}, started " in message
    )
    assert "by 'command line'" in message and "would pay for every call again" in message


def test_a_run_not_heard_from_past_its_lease_is_taken_over_and_marked_interrupted(data):
    """A process killed mid-run never gives its label set back: the next run waits only until the lease
    it stopped renewing has expired, then takes the label set over."""
    strategy = get_strategy("mhalo-vanilla")
    with ChatServer(lambda text, n: answer(tagged(item_number(text), "red cube"))) as server:
        dead = DetectorRunStore(data, DATASET, "judge", OPERATOR, lease_s=LEASE_S)
        dead.open_run(spec(server).settings(strategy), "dead-run")
        dead.save_outputs([], {"id": "dead-run", "updated": "2026-01-01", "status": "running", "ledger": {}})
        with pytest.raises(RunRefused, match=r"\(run dead-run, started .*; if its process has stopped"):
            run(data, spec(server))
        assert server.requests == []
        results: list[Any] = []

        def taken_over() -> bool:
            try:
                results.append(run(data, spec(server)))
            except RunRefused as refused:
                assert "dead-run" in str(refused)
                return False
            return True

        wait_for(taken_over, timeout_s=LEASE_S * 20)
    assert results[0].complete and results[0].saved == 10
    statuses = {line["id"]: line["status"] for line in live_meta(data)["runs"]}
    assert statuses.pop("dead-run") == "interrupted" and list(statuses.values()) == ["finished"]


def test_a_run_whose_label_set_was_taken_over_stops_calling_and_leaves_the_new_run_alone(data):
    """A run that was not heard from past its lease (its process paused) may find its label set taken
    over by another run: it then starts no new call, keeps what arrived, and does not give back or
    overwrite the other run's hold."""
    asked = threading.Event()

    def slow(text: str, attempt: int):
        asked.set()
        return answer(tagged(item_number(text), "red cube"), delay_s=0.1)

    results: list[Any] = []
    with ChatServer(slow) as server:
        thread = threading.Thread(target=lambda: results.append(run(data, spec(server, concurrency=1))))
        thread.start()
        assert asked.wait(60)
        with write_session(data) as session:  # as a run of another process that found the lease expired
            label_set = session.scalar(select(m.LabelSet).where(m.LabelSet.name == "judge"))
            live = dict(label_set.meta["live_run"])
            live["lease"] = live["lease"] | {"run": "newer-run", "expires": live["lease"]["expires"] + 3600}
            label_set.meta = {**label_set.meta, "live_run": live}
        thread.join(60)
    (result,) = results
    assert result.status == "stopped" and not result.ok and result.saved < 10
    assert "run newer-run took the label set over" in result.stop_reason
    assert len(server.requests) < 10
    after = live_meta(data)
    assert after["lease"]["run"] == "newer-run" and after["status"] == "running"
    assert [line["status"] for line in after["runs"]] == ["stopped"]


@pytest.mark.parametrize("failing_read", [1, 2])
def test_a_store_error_while_the_run_holds_its_label_set_gives_it_back(data, monkeypatch, failing_read):
    """What the run held is read when it begins (1) and when it ends (2). Either read failing (the store
    went away a moment) ended the run with the label set still 'running' and held from every other run
    until its lease ran out."""
    from sqlalchemy.exc import OperationalError

    held = DetectorRunStore.done
    reads = {"n": 0}

    def done(self: DetectorRunStore) -> Any:
        reads["n"] += 1
        if reads["n"] == failing_read:
            raise OperationalError("SELECT …", {}, Exception("the connection was closed"))
        return held(self)

    monkeypatch.setattr(DetectorRunStore, "done", done)
    with ChatServer(lambda text, attempt: answer(tagged(item_number(text), "red cube"))) as server:
        with pytest.raises(OperationalError):
            run(data, spec(server, items=("item-0",)))
        assert live_meta(data)["status"] != "running"
        monkeypatch.setattr(DetectorRunStore, "done", held)
        assert run(data, spec(server)).ok  # at once, not once the lease has run out
