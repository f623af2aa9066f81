"""A run's hold on its label set, kept alive from a thread of its own while the run lasts.

The store holds a lease for the run (:mod:`db.run_leases`): other processes see the label set taken as
long as the lease is renewed, and free once a dead run has stopped renewing it. Renewals cannot wait for
the run's own loop, which may sit in a long write or wait on slow calls, so a :class:`Heartbeat` renews
on a timer. A renewal the store cannot make now (busy, briefly out of reach) is tried again at the next
beat; one that finds the label set taken over by another run (:class:`LeaseLost`) is reported, and the
run stops calling.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("spanlight.detectors")


class LeaseLost(Exception):
    """Another run holds the label set now; the message says why this run must stop."""


class Heartbeat:
    """Calls ``renew`` every ``every_s`` seconds until stopped; ``lost`` gets LeaseLost's reason once.
    ``run`` names the run in the log (several may run in one app process)."""

    def __init__(
        self, renew: Callable[[], None], every_s: float, lost: Callable[[str], None], run: str = "the run"
    ) -> None:
        self._renew = renew
        self._run = run
        self._every_s = every_s
        self._lost = lost
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="detector-run-lease", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                self._renew()
            except LeaseLost as lost:
                self._lost(str(lost))
                return
            except Exception as error:  # noqa: BLE001 - a missed renewal is tried again at the next beat
                log.warning(
                    "the lease of %s was not renewed (%s: %s); trying again",
                    self._run,
                    type(error).__name__,
                    error,
                )
