"""What the Run detector page says once its wait for a new run's checks ends: started, still starting
(it may yet be refused), or failed at once (it was told "still at its checks … nothing has been called
yet" of a run that had already failed)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from detectors.background import RunRegistry
from detectors.runner import RunSpec

SPEC = RunSpec("d", "x", "mhalo-vanilla", "http://127.0.0.1:9/v1", "m", images=False)


def _start(work: Callable[[str, threading.Event, Callable[[Any], None]], Any], settle_s: float) -> Any:
    return RunRegistry().start(SPEC, "ann", work, settle_s=settle_s)


def test_a_run_that_failed_at_once_says_so_with_its_error() -> None:
    def work(_run_id: str, _cancel: threading.Event, _report: Callable[[Any], None]) -> Any:
        raise RuntimeError("the store could not be read")

    live = _start(work, 60)
    kind, notice = live.start_notice()
    assert (kind, live.state) == ("failed", "failed")
    assert notice == "The run of 'x' on 'd' failed at once: RuntimeError: the store could not be read"


def test_a_run_still_at_its_checks_is_starting_and_one_past_them_started() -> None:
    checked, go_on = threading.Event(), threading.Event()

    def work(_run_id: str, _cancel: threading.Event, report: Callable[[Any], None]) -> Any:
        checked.wait(60)
        report(object())  # its first progress: the checks are passed
        go_on.wait(60)

    live = _start(work, 0.01)
    try:
        assert live.start_notice()[0] == "starting"
        assert "still at its checks" in live.start_notice()[1]
        checked.set()
        assert live.settled.wait(60)
        assert live.start_notice() == ("started", "Started 'x' on 'd'.")
    finally:
        checked.set()
        go_on.set()
        assert live.thread is not None
        live.thread.join(60)
