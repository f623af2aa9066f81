"""A run killed part-way (``kill -9``: nothing of it runs again, nothing is given back), then resumed.

The command is started as a real process against the real local chat server and killed with SIGKILL at
a point the server's script makes certain (a call held unanswered); the resume runs in this process once
the killed run's lease has expired. What the label set says afterwards must be what happened: every
answer the killed process received and paid for counted once in the label set's ledger, its run listed
as interrupted, and every item asked once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from db.access import OPERATOR
from db.detector_runs import DetectorRunStore, run_live
from db.engine import make_engine
from db.repositories.label_sets import label_set_meta
from detectors.ledger import Prices
from detectors.runner import RunRefused, RunResult, RunSpec
from tests.detectors.chat_server import ChatServer, Reply, answer
from tests.detectors.live_data import DATASET, N_ITEMS, SPANS, item_number, make_dataset, tagged
from tests.test_cli_run_detector import ROOT, arguments

LEASE_S = "2"


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not reached in time"
        time.sleep(0.05)


def written(engine: Any) -> set[str]:
    """The items the label set holds an output for (none while it does not exist)."""
    return DetectorRunStore(engine, DATASET, "judge", OPERATOR).done()


def live(engine: Any) -> dict[str, Any]:
    return (label_set_meta(engine, DATASET, "detector", "judge") or {}).get("live_run") or {}


def start(db_url: str, server: ChatServer, data_dir: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPANLIGHT_DATA_DIR": str(data_dir), "SPANLIGHT_RUN_LEASE_S": LEASE_S}
    return subprocess.Popen(
        [sys.executable, "cli.py", *arguments(db_url, server, "--timeout", "120", *extra)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def resume(engine: Any, server: ChatServer, killed: subprocess.Popen[bytes], **changes: Any) -> RunResult:
    """The same run again, in this process, as soon as the killed run's lease lets it."""
    killed.send_signal(signal.SIGKILL)
    killed.wait(60)
    spec = RunSpec(DATASET, "judge", "mhalo-vanilla", server.base_url, "gpt-4o-mini", timeout_s=5, **changes)
    results: list[RunResult] = []

    def resumed() -> bool:
        try:
            results.append(run_live(engine, spec, OPERATOR, api_key=None))
        except RunRefused as refused:
            assert "already being run" in str(refused), refused
            return False
        return True

    wait_for(resumed, "the killed run's lease expiring")
    return results[0]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_answers_a_killed_run_paid_for_before_its_first_batch_stay_in_the_ledger(
    db_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """Killed after one answer came (item 0's first sample) and before any item was whole, the run had
    written nothing but its lease: the resume replayed that answer from the response cache for free, and
    the label set's ledger never counted the call the killed process paid for (19 calls, where the
    endpoint answered 20), nor listed the killed run."""
    engine = make_engine(db_url)
    make_dataset(engine, tmp_path / "images")
    held = threading.Event()

    def second_sample_held(text: str, attempt: int) -> Reply:
        if item_number(text) == 0 and attempt == 2:
            held.wait(120)
        return answer(tagged(item_number(text), *SPANS[item_number(text)]))

    prices = ("--price-in", "1", "--price-out", "2")
    try:
        with ChatServer(second_sample_held) as server:
            process = start(db_url, server, data_dir, "--concurrency", "1", "--samples", "2", *prices)
            try:
                # The second call goes out only once the first answer is in (one call at a time).
                wait_for(lambda: server.count("Item 0: the red cube") == 2, "item 0's second sample asked")
                result = resume(engine, server, process, samples=2, prices=Prices(1, 2))
            finally:
                held.set()
                if process.poll() is None:
                    process.kill()
                    process.wait(60)
        assert result.complete and result.ledger["cached_calls"] == 1
        paid = 2 * N_ITEMS  # every answer that reached a run, the held one (to a dead process) aside
        after = live(engine)
        assert after["ledger"]["calls"] == paid, after["ledger"]
        assert after["ledger"]["prompt_tokens"] == 100 * paid
        assert after["ledger"]["completion_tokens"] == 20 * paid
        assert after["ledger"]["cost"] == pytest.approx(paid * (0.1 * 1 + 0.02 * 2))
        killed = [line for line in after["runs"] if line["status"] == "interrupted"]
        assert len(killed) == 1 and killed[0]["ledger"]["calls"] == 1, after["runs"]
        assert written(engine) == {f"item-{k}" for k in range(N_ITEMS)}
    finally:
        engine.dispose()


def test_answers_a_killed_run_paid_for_after_its_last_batch_stay_in_the_ledger(
    db_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """Killed after its first batch (items 0-2) was written and one more answer came (item 3's first
    sample): the label set's ledger held the calls up to that batch only, and the answer after it was
    replayed free by the resume, counted nowhere."""
    engine = make_engine(db_url)
    make_dataset(engine, tmp_path / "images")
    batch_written, held = threading.Event(), threading.Event()

    def item_3_after_the_batch(text: str, attempt: int) -> Reply:
        k = item_number(text)
        if k == 3 and attempt == 1:
            batch_written.wait(120)
        if k == 3 and attempt == 2:
            held.wait(120)
        return answer(tagged(k, *SPANS[k]))

    try:
        with ChatServer(item_3_after_the_batch) as server:
            process = start(db_url, server, data_dir, "--concurrency", "1", "--samples", "2")
            try:
                wait_for(lambda: len(written(engine)) == 3, "items 0-2 written")
                batch_written.set()
                wait_for(lambda: server.count("Item 3: the red cube") == 2, "item 3's second sample asked")
                result = resume(engine, server, process, samples=2)
            finally:
                batch_written.set()
                held.set()
                if process.poll() is None:
                    process.kill()
                    process.wait(60)
        assert result.complete and result.ledger["cached_calls"] == 1
        after = live(engine)
        assert after["ledger"]["calls"] == 2 * N_ITEMS, after["ledger"]
        killed = [line for line in after["runs"] if line["status"] == "interrupted"]
        assert len(killed) == 1 and killed[0]["ledger"]["calls"] == 7, after["runs"]
    finally:
        engine.dispose()


def test_a_killed_runs_line_counts_the_items_it_wrote(db_url: str, data_dir: Path, tmp_path: Path) -> None:
    """Killed after items 0-2 were written: its line in the label set's history said it had saved 0
    items (each batch's line was written before the batch), so the history of the label set's runs
    added up to 7 items for 10 outputs."""
    engine = make_engine(db_url)
    make_dataset(engine, tmp_path / "images")
    held = threading.Event()

    def item_3_held(text: str, attempt: int) -> Reply:
        k = item_number(text)
        if k == 3 and attempt == 1:
            held.wait(120)
        return answer(tagged(k, *SPANS[k]))

    try:
        with ChatServer(item_3_held) as server:
            process = start(db_url, server, data_dir, "--concurrency", "1")
            try:
                wait_for(lambda: len(written(engine)) == 3, "items 0-2 written")
                wait_for(lambda: live(engine)["runs"][0]["ledger"]["calls"] == 3, "the batch recorded")
                result = resume(engine, server, process)
            finally:
                held.set()
                if process.poll() is None:
                    process.kill()
                    process.wait(60)
        assert result.complete and result.already_done == 3 and result.saved == N_ITEMS - 3
        runs = live(engine)["runs"]
        assert [(line["status"], line["items_saved"]) for line in runs] == [
            ("interrupted", 3),
            ("finished", N_ITEMS - 3),
        ]
    finally:
        engine.dispose()
