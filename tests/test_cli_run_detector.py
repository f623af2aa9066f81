"""``cli.py run-detector``: a whole process against a real local chat-completions server, then its
exit codes (0 done, 1 refused or failed with the reason, 2 usage) in-process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cli
from db.engine import make_engine
from tests.detectors.chat_server import ChatServer, answer, status
from tests.detectors.live_data import (
    DATASET,
    N_ITEMS,
    SPANS,
    item_number,
    make_dataset,
    span_words,
    stored,
    tagged,
)

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-cli-93be7a-SECRET"


def script(text: str, attempt: int):
    k = item_number(text)
    if k == 3 and attempt == 1:
        return status(503)
    return answer(tagged(k, *SPANS[k]))


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    engine = make_engine(sqlite_url)
    make_dataset(engine, tmp_path / "images")
    engine.dispose()
    return sqlite_url


def arguments(db_url: str, server: ChatServer, *extra: str) -> list[str]:
    return [
        "run-detector",
        "--db",
        db_url,
        "--dataset",
        DATASET,
        "--detector",
        "judge",
        "--base-url",
        server.base_url,
        "--model",
        "gpt-4o-mini",
        "--strategy",
        "mhalo-vanilla",
        "--timeout",
        "2",
        *extra,
    ]


def test_the_command_runs_a_detector_and_a_second_run_asks_nothing(store, tmp_path):
    env = {**os.environ, "SPANLIGHT_TEST_API_KEY": KEY, "SPANLIGHT_DATA_DIR": str(tmp_path / "data")}
    with ChatServer(script) as server:
        argv = [
            sys.executable,
            "cli.py",
            *arguments(store, server, "--api-key-env", "SPANLIGHT_TEST_API_KEY"),
        ]
        done = subprocess.run(
            [*argv, "--json", "--concurrency", "3"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["ok"] and report["complete"] and report["items_saved"] == N_ITEMS
        assert report["ledger"]["calls"] == N_ITEMS and report["ledger"]["retries"] == 1
        assert len(server.requests) == N_ITEMS + 1
        assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.requests)
        server.forget()
        again = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and server.requests == []
    assert (
        f"0 of 0 items written ({N_ITEMS} already held)" in again.stdout
        and "label set complete" in again.stdout
    )
    assert KEY not in done.stdout + done.stderr + again.stdout + again.stderr
    engine = make_engine(store)
    assert span_words(stored(engine, "judge")) == SPANS
    engine.dispose()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_usage_errors_exit_2_naming_the_problem(store, capsys, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VARIABLE", raising=False)
    with ChatServer(script) as server:
        cases = [
            (["--strategy", "nope"], "--strategy must be one of: mhalo-vanilla"),
            (["--api-key-env", "NO_SUCH_KEY_VARIABLE"], "'NO_SUCH_KEY_VARIABLE' is not set"),
            (["--api-key-env", "sk-proj-REALKEY-1"], "letters, digits and underscores only"),
            (["--concurrency", "0"], "concurrency must be from 1 to 256"),
            (["--samples", "0"], "samples must be at least 1"),
            (["--temperature", "3"], "temperature must be from 0 to 2"),
            (["--base-url", "ftp://example.com"], "must be http:// or https://"),
        ]
        for extra, message in cases:
            code, out, err = run(capsys, *arguments(store, server), *extra)
            assert code == 2 and message in err, (extra, err)
            assert "REALKEY" not in out + err
        monkeypatch.setenv("SPANLIGHT_PRICE_IN", "cheap")
        code, _, err = run(capsys, *arguments(store, server))
        assert code == 2 and "SPANLIGHT_PRICE_IN must be a number" in err
    assert server.requests == []


def test_a_refused_or_failed_run_exits_1_with_the_reason(store, capsys):
    def failing(text: str, attempt: int):
        k = item_number(text)
        return status(500) if k == 5 else answer(tagged(k, "red cube"))

    with ChatServer(failing) as server:
        code, _, err = run(capsys, *arguments(store, server, "--dataset", "missing"))
        assert code == 1 and "there is no dataset named 'missing'" in err
        assert (
            "error: Not started, nothing was called or written: there is no dataset named 'missing'." in err
        )
        code, out, _ = run(capsys, *arguments(store, server, "--attempts", "2", "--items", "item-4,item-5"))
        assert code == 1
        assert (
            "1 of 2 items written" in out
            and "Failed item-5: item: HTTP 500: scripted failure (gave up after 2 attempts)" in out
        )
        code, out, _ = run(capsys, *arguments(store, server, "--model", "other", "--json"))
        assert code == 1 and "was run with other settings" in json.loads(out)["error"]
        assert json.loads(out)["status"] == "refused"
        code, out, _ = run(
            capsys, *arguments(store, server, "--price-in", "2", "--price-out", "4", "--limit", "2", "--json")
        )
    report = json.loads(out)
    assert code == 0 and report["items_saved"] == 2 and not report["complete"]
    assert report["ledger"]["cost"] == pytest.approx(2 * (0.1 * 2 + 0.02 * 4))


def test_ctrl_c_cancels_the_run_keeping_what_arrived(store, tmp_path):
    """Ctrl-C ended the process with a traceback and left the label set marked running. Now it cancels:
    the answers that came are stored, the run says it was cancelled, the summary is printed."""
    import signal
    import threading

    from db.repositories.label_sets import label_set_meta

    held = threading.Event()  # item 5's answer waits until the process was interrupted
    asked = threading.Event()

    def holding(text: str, attempt: int):
        k = item_number(text)
        if k == 5:
            asked.set()
            held.wait(60)
        return answer(tagged(k, *SPANS[k]))

    env = {**os.environ, "SPANLIGHT_DATA_DIR": str(tmp_path / "data")}
    with ChatServer(holding) as server:
        # A test run started as a background job ignores Ctrl-C, and a child inherits that (its Python then
        # makes no KeyboardInterrupt of it): the child starts with Ctrl-C's default, as in a terminal.
        ignoring = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "cli.py",
                    *arguments(store, server, "--concurrency", "1", "--timeout", "60"),
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        finally:
            signal.signal(signal.SIGINT, ignoring)
        assert asked.wait(120), "the run never reached item 5"
        process.send_signal(signal.SIGINT)
        held.set()
        out, err = process.communicate(timeout=120)
    assert "Traceback" not in err, err
    assert "cancelling" in err
    assert "cancelled" in out, (out, err)
    # It said only "…; cancelled; label set incomplete (run again to resume)".
    said = re.search(
        r"cancelled; what arrived is kept: (\d+) of 10 items written \(0 already held\), any other answer in "
        r"the response cache; (\d+) item\(s\) left, which running it again under the same name asks for "
        r"\(nothing else\)\.",
        out,
    )
    assert said, out
    assert int(said[1]) >= 5 and int(said[1]) + int(said[2]) == 10
    engine = make_engine(store)
    live = (label_set_meta(engine, DATASET, "detector", "judge") or {})["live_run"]
    engine.dispose()
    assert live["status"] != "running"
    assert set(stored(make_engine(store), "judge")) >= {f"item-{k}" for k in range(5)}


def test_a_run_killed_mid_way_holds_its_label_set_only_until_its_lease_expires(db_url, tmp_path, monkeypatch):
    """Two processes on one label set: while the command runs, a run from another process is refused
    naming it and asks nothing; once the command is killed (kill -9: it gives nothing back), its lease
    expires and the next run takes the label set over, asks only what never arrived, and marks the
    killed run interrupted. (Nothing stopped a second run, which paid for every call again.)"""
    import signal
    import threading

    from db.access import OPERATOR
    from db.detector_runs import DetectorRunStore, run_live
    from db.repositories.label_sets import label_set_meta
    from detectors.runner import RunRefused, RunSpec

    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    engine = make_engine(db_url)
    make_dataset(engine, tmp_path / "images")
    asked, held = threading.Event(), threading.Event()

    def holding(text: str, attempt: int):
        k = item_number(text)
        if k == 2 and attempt == 1:
            asked.set()
            held.wait(120)
        return answer(tagged(k, *SPANS[k]))

    def live() -> dict:
        return (label_set_meta(engine, DATASET, "detector", "judge") or {}).get("live_run") or {}

    env = {**os.environ, "SPANLIGHT_DATA_DIR": str(tmp_path / "data"), "SPANLIGHT_RUN_LEASE_S": "2"}
    with ChatServer(holding) as server:
        process = subprocess.Popen(
            [sys.executable, "cli.py", *arguments(db_url, server, "--concurrency", "1", "--timeout", "120")],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert asked.wait(120), "the command never reached item 2"
            deadline = time.monotonic() + 60
            while len(DetectorRunStore(engine, DATASET, "judge", OPERATOR).done()) < 2:  # items 0 and 1
                assert time.monotonic() < deadline, "the command wrote nothing"
                time.sleep(0.05)
            killed = live()["runs"][0]["id"]
            again = RunSpec(DATASET, "judge", "mhalo-vanilla", server.base_url, "gpt-4o-mini", timeout_s=5)
            with pytest.raises(
                RunRefused, match=rf"already being run on '{DATASET}' \(run {killed}, started"
            ):
                run_live(engine, again, OPERATOR, api_key=None)
            assert len(server.requests) == 3
            process.send_signal(signal.SIGKILL)
            process.wait(60)
            results = []
            deadline = time.monotonic() + 60
            while not results:
                try:
                    results.append(run_live(engine, again, OPERATOR, api_key=None))
                except RunRefused as refused:
                    assert killed in str(refused) and time.monotonic() < deadline, refused
                    time.sleep(0.1)
        finally:
            held.set()
            if process.poll() is None:
                process.kill()
                process.wait(60)
    (result,) = results
    assert result.complete and result.already_done == 2 and result.saved == N_ITEMS - 2
    statuses = {line["id"]: line["status"] for line in live()["runs"]}
    assert statuses.pop(killed) == "interrupted" and list(statuses.values()) == ["finished"]
    assert "lease" not in live()
    assert span_words(stored(engine, "judge")) == SPANS
    engine.dispose()


def test_the_summary_names_the_items_whose_answers_were_cut_at_max_tokens(store, capsys):
    def cutting(text: str, attempt: int):
        k = item_number(text)
        return answer(tagged(k), finish_reason="length") if k == 4 else answer(tagged(k, *SPANS[k]))

    with ChatServer(cutting) as server:
        code, out, _ = run(capsys, *arguments(store, server, "--max-tokens", "64"))
    assert code == 0, out
    assert (
        "Cut at max tokens (finish_reason 'length'): 1 answer(s) in 1 item(s); a cut answer may read as "
        "no hallucination: raise --max-tokens and run under a new --detector name"
    ) in out
    assert "Cut item-4: item" in out


def test_the_summary_says_the_cost_is_unknown_when_the_endpoint_reports_no_usage(store, capsys):
    """It printed 'cost 0.0000', as if the calls had been free."""
    with ChatServer(lambda text, n: answer(tagged(item_number(text)), usage=False)) as server:
        code, out, _ = run(capsys, *arguments(store, server, "--price-in", "2", "--limit", "3"))
    assert code == 0, out
    assert "tokens 0 in, 0 out; cost unknown (usage not reported for 3 of 3 call(s))" in out


def test_a_run_stopped_early_says_why_and_how_many_items_are_left(store, capsys):
    def revoked(text: str, attempt: int):
        k = item_number(text)
        return answer(tagged(k, *SPANS[k])) if k < 4 else status(403, message="key revoked")

    with ChatServer(revoked) as server:
        code, out, _ = run(capsys, *arguments(store, server, "--concurrency", "1"))
    assert code == 1
    assert (
        "stopped: the endpoint refused the call (HTTP 403: key revoked); every other call would be refused "
        "alike, so no more were made; what arrived is kept: 4 of 10 items written (0 already held), any "
        "other answer in the response cache; 6 item(s) left, which running it again under the same name "
        "asks for (nothing else)."
    ) in out
    assert "Failed" not in out
