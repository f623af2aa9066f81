"""A run against an endpoint that cannot answer stops calling and says why once; a throttled one is
given time, by every thread at once.

A revoked key, a server that is gone, or one failing call after call was asked again for every item
of the run, each item failing alike; a 429 paused only the call it answered while the other threads
went on sending. Now the run stops at the first refusal of the endpoint itself (401, 402, 403, 404) or
the first call that could not connect after its retries, and after a few calls failed in a row; what
arrived before is kept, and the items left are neither asked nor listed one by one.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from detectors.client import RetryPolicy
from detectors.runner import FAILURES_IN_A_ROW
from tests.detectors.chat_server import ChatServer, answer, status
from tests.detectors.live_data import DATASET, N_ITEMS, item_number, make_dataset, stored, tagged
from tests.detectors.test_live_runs import KEY, live_meta, run, spec


@pytest.fixture
def data(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    make_dataset(engine, tmp_path / "images")
    return engine


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_stops_the_run_at_once_keeping_what_arrived(data, code):
    def revoked_after_three(text: str, attempt: int):
        k = item_number(text)
        if k < 3:
            return answer(tagged(k, "red cube"))
        return status(code, message=f"Incorrect API key provided: {KEY}")

    with ChatServer(revoked_after_three) as server:
        result = run(data, spec(server, concurrency=1))
    assert len(server.requests) == 4  # items 0-2, then the one refusal: no other item was asked
    assert result.status == "stopped" and not result.ok and not result.complete
    assert result.stop_reason == (
        f"the endpoint refused the call (HTTP {code}: Incorrect API key provided: ***); every other call "
        "would be refused alike, so no more were made"
    )
    assert result.failed == {}  # said once, not item by item
    assert sorted(stored(data, "judge")) == ["item-0", "item-1", "item-2"]
    meta = live_meta(data)
    assert meta["status"] == "stopped" and meta["runs"][0]["stop_reason"] == result.stop_reason
    assert KEY not in str(meta)


def test_calls_in_flight_when_the_key_is_refused_are_not_each_reported(data):
    with ChatServer(lambda text, n: status(401, message="invalid key")) as server:
        result = run(data, spec(server, concurrency=4))
    assert len(server.requests) <= 4 and result.status == "stopped" and result.failed == {}
    assert result.saved == 0 and "HTTP 401: invalid key" in (result.stop_reason or "")


def test_an_endpoint_that_cannot_be_reached_is_given_up_after_one_calls_retries(data):
    with socket.socket() as closed:  # a port with nothing listening on it
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = time.monotonic()
    with ChatServer(lambda text, n: answer("never asked")) as elsewhere:
        result = run(data, spec(elsewhere, base_url=f"http://127.0.0.1:{port}/v1", concurrency=2))
    assert elsewhere.requests == []
    assert result.status == "stopped" and result.failed == {} and result.saved == 0
    assert result.stop_reason == (
        "the endpoint cannot be reached (cannot connect: the connection was refused (gave up after 4 "
        "attempts)); no more calls were made"
    )
    # The first call's retries, and the one beside it: not ten items' worth.
    assert result.ledger["failed_calls"] <= 2 and result.ledger["retries"] <= 2 * 3
    assert time.monotonic() - started < 30


def test_an_endpoint_failing_call_after_call_is_given_up(data):
    """The stop names the last failure in the server's own words, as a refusal's does (it said only
    "HTTP 503")."""
    with ChatServer(lambda text, n: status(503, message="model overloaded")) as server:
        result = run(data, spec(server, concurrency=1))
    attempts = 4  # the tests' retry policy
    assert len(server.requests) == FAILURES_IN_A_ROW * attempts < N_ITEMS * attempts
    assert result.status == "stopped" and result.failed == {}
    assert result.stop_reason == (
        f"the calls of {FAILURES_IN_A_ROW} items in a row got no answer, the last HTTP 503: model overloaded "
        "(gave up after 4 attempts); the endpoint seems down, so no more calls were made"
    )


def test_one_item_failing_among_answers_does_not_stop_the_run(data):
    def one_bad(text: str, attempt: int):
        k = item_number(text)
        return status(400, message="image too large") if k in (2, 5, 6) else answer(tagged(k, "red cube"))

    with ChatServer(one_bad) as server:
        result = run(data, spec(server, concurrency=1))
    assert result.status == "finished" and result.stop_reason is None
    assert sorted(result.failed) == ["item-2", "item-5", "item-6"] and result.saved == N_ITEMS - 3


def test_an_item_the_endpoint_answers_with_an_error_is_never_taken_for_an_endpoint_down(data):
    """An item too long for the model (a 400 to every one of its calls), with five samples asked at once:
    its five failed calls stopped the whole run as "the endpoint seems down", and the item was not named."""

    def too_long(text: str, attempt: int):
        k = item_number(text)
        if k == 0:
            return status(400, message="maximum context length is 128000 tokens")
        return answer(tagged(k, "red cube"))

    with ChatServer(too_long) as server:
        result = run(data, spec(server, samples=5, concurrency=5))
    assert result.status == "finished" and result.stop_reason is None
    assert list(result.failed) == ["item-0"]
    assert "maximum context length" in result.failed["item-0"]
    assert result.saved == N_ITEMS - 1


def test_a_429_holds_back_every_thread_not_only_the_call_it_answered(data):
    """For the first 1.5 s the endpoint answers every call 429 (no Retry-After). The threads wait
    together, one call at a time goes out to try, each wait longer than the last; before, each thread
    backed off on its own and the four of them kept sending."""
    lock = threading.Lock()
    window: dict[str, float] = {}

    def throttling(text: str, attempt: int):
        with lock:
            now = time.monotonic()
            window.setdefault("until", now + 1.5)
            if now < window["until"]:
                return status(429, message="rate limit")
        return answer(tagged(item_number(text), "red cube"))

    policy = RetryPolicy(attempts=6, base_delay_s=0.4, max_delay_s=4.0)
    with ChatServer(throttling) as server:
        result = run(data, spec(server, concurrency=4, retry=policy))
    throttled = [r for r in server.requests if r.at < window["until"]]
    # The first four calls, then one at a time: 0.2-0.4 s, then 0.4-0.8 s, then past the window.
    assert len(throttled) <= 4 + 3, [round(r.at - throttled[0].at, 2) for r in throttled]
    assert result.ok and result.complete and result.saved == N_ITEMS  # nothing lost to the throttling


def test_a_run_whose_label_set_is_deleted_mid_way_breaks_off_and_is_not_called_refused(data):
    """A refusal says nothing was called or written; this run had called and written. It raised the
    refusal all the same, so the page and the command said 'Not started, nothing was called'."""
    from sqlalchemy import delete, select

    from db import models as m
    from db.engine import write_session
    from detectors.runner import RunBroken, RunRefused

    def delete_the_label_set(progress) -> None:
        if progress.saved:
            with write_session(data) as session:
                session.execute(delete(m.LabelSet).where(m.LabelSet.name == "judge"))

    slow = lambda text, n: answer(tagged(item_number(text), "red cube"), delay_s=0.05)  # noqa: E731
    with ChatServer(slow) as server, pytest.raises(RunBroken) as broken:
        run(data, spec(server, concurrency=1, batch_items=1), progress=delete_the_label_set)
    assert not isinstance(broken.value, RunRefused) and len(server.requests) >= 1
    assert f"the label set 'judge' of dataset '{DATASET}' was deleted during the run" in str(broken.value)
    with write_session(data) as session:
        assert session.scalar(select(m.LabelSet.id).where(m.LabelSet.name == "judge")) is None
