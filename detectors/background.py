"""Runs that outlive the page that started them: each in a thread owned by the server process.

A browser tab that starts a run may close or rerun at any moment, so the run is not the page's: it
lives in a :class:`RunRegistry` the server keeps once (the Run detector page holds it in
``st.cache_resource``), with its cancel event, its latest progress and, when it ends, its result or the
reason it failed. Two runs into the same label set at once are refused (they would race for its items,
and pay for every call twice; the store refuses a run of another process alike). Starting a run waits a
moment for it to pass its checks, so a run refused before its first call is said to be refused, not
started; a run still at its checks when the wait ends (the store busy, another process holding the
label set's row) is ``starting`` until its first progress, as it may yet be refused. The registry holds
no API key: the work it runs was handed the key in a closure and keeps it there.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from detectors.outcome import busy_text
from detectors.runner import Progress, RunRefused, RunResult, RunSpec

# (the run's id, its cancel event, its progress report) -> its result; the id is the one the store records.
Work = Callable[[str, threading.Event, Callable[[Progress], None]], RunResult]
# How long starting a run waits for it to pass its checks (its first progress), at most.
SETTLE_S = 5.0


@dataclass
class LiveRun:
    id: str
    spec: RunSpec
    started_by: str
    started_at: str
    cancel: threading.Event = field(default_factory=threading.Event)
    progress: Progress | None = None
    result: RunResult | None = None
    error: str | None = None
    refused: bool = False  # the error is a refusal: nothing was called or written
    thread: threading.Thread | None = None
    # Set once the run has passed its checks (its first progress) or ended.
    settled: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def started(self) -> bool:
        """Whether the run has passed its checks (its first progress): until then it may be refused."""
        return self.progress is not None

    def start_notice(self) -> tuple[str, str]:
        """What starting the run has come to when the page's wait for its checks ends: ("started", …),
        ("starting", …) while it is still at its checks (it may yet be refused), or ("failed", …) when it
        ended at once with an error that is no refusal (a refusal is raised by :meth:`RunRegistry.start`)."""
        what = f"{self.spec.detector!r} on {self.spec.dataset!r}"
        if self.running and not self.started:
            return "starting", (
                f"Starting {what}: the run is still at its checks (the store is busy, or another run holds "
                "the label set), and nothing has been called yet. Below, under “Runs on this server”, it "
                "shows as running once it has started, or says why it was refused."
            )
        if self.error is not None and not self.refused:
            return "failed", f"The run of {what} failed at once: {self.error}"
        return "started", f"Started {what}."

    @property
    def state(self) -> str:
        if self.running:
            if self.cancel.is_set():
                return "cancelling"
            return "running" if self.started else "starting"
        if self.error is not None:
            return "refused" if self.refused else "failed"
        return self.result.status if self.result is not None else "starting"


class RunRegistry:
    """The server's detector runs, newest first; safe to use from every session's thread."""

    def __init__(self) -> None:
        self._runs: dict[str, LiveRun] = {}
        self._lock = threading.Lock()

    def start(self, spec: RunSpec, started_by: str, work: Work, *, settle_s: float | None = None) -> LiveRun:
        """Start ``work`` in a thread of its own; RunRefused when the label set is already being run, or
        when the run is refused within ``settle_s`` (default :data:`SETTLE_S`; it is then not listed: it
        never ran; 0: no wait, a refusal is listed with the run). The run returned may still be at its
        checks (not :attr:`LiveRun.started`) when the wait ran out: it must not be called started."""
        if settle_s is None:
            settle_s = SETTLE_S
        with self._lock:
            for other in self._runs.values():
                if other.running and (other.spec.dataset, other.spec.detector) == (
                    spec.dataset,
                    spec.detector,
                ):
                    raise RunRefused(
                        busy_text(spec.detector, spec.dataset, other.id, other.started_at, other.started_by)
                    )
            run = LiveRun(
                uuid.uuid4().hex[:12], spec, started_by, datetime.now(UTC).isoformat(timespec="seconds")
            )
            run.thread = threading.Thread(
                target=self._work, args=(run, work), name=f"detector-run-{run.id}", daemon=True
            )
            self._runs[run.id] = run
        run.thread.start()
        if settle_s > 0:
            run.settled.wait(settle_s)
            if run.refused:  # also one refused just as the wait ran out
                with self._lock:
                    self._runs.pop(run.id, None)
                raise RunRefused(run.error)
        return run

    @staticmethod
    def _work(run: LiveRun, work: Work) -> None:
        def report(progress: Progress) -> None:
            run.progress = progress
            run.settled.set()

        try:
            run.result = work(run.id, run.cancel, report)
        except RunRefused as refused:
            run.error, run.refused = str(refused), True
        except Exception as error:  # noqa: BLE001 - the run's thread reports, it does not crash the server
            run.error = f"{type(error).__name__}: {error}"
        finally:
            run.settled.set()

    def runs(self) -> list[LiveRun]:
        with self._lock:
            return list(self._runs.values())[::-1]

    def get(self, run_id: str) -> LiveRun | None:
        with self._lock:
            return self._runs.get(run_id)

    def cancel(self, run_id: str) -> None:
        run = self.get(run_id)
        if run is not None:
            run.cancel.set()
