"""A run's lease renewals: one the store cannot make now is logged naming the run, and tried again."""

from __future__ import annotations

import logging
import threading

import pytest

from detectors.lease import Heartbeat


def test_a_missed_renewal_names_the_run_and_is_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    again = threading.Event()

    def renew() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise TimeoutError("database is locked")
        again.set()

    name = "run 1a2b of detector 'gpt' on dataset 'cars'"
    with caplog.at_level(logging.WARNING, logger="spanlight.detectors"), Heartbeat(renew, 0.01, print, name):
        assert again.wait(timeout=60)
    (record,) = [r for r in caplog.records if "not renewed" in r.getMessage()]
    assert record.getMessage() == (
        "the lease of run 1a2b of detector 'gpt' on dataset 'cars' was not renewed "
        "(TimeoutError: database is locked); trying again"
    )
