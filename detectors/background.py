"""Runs that outlive the page that started them: each in a thread owned by the server process.

A browser tab that starts a run may close or rerun at any moment, so the run is not the page's: it
lives in a :class:`RunRegistry` the server keeps once (the Run detector page holds it in
``st.cache_resource``), with its cancel event, its latest progress and, when it ends, its result or the
reason it failed. Two runs into the same label set at once are refused (they would race for its items).
The registry holds no API key: the work it runs was handed the key in a closure and keeps it there.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from detectors.runner import Progress, RunRefused, RunResult, RunSpec

Work = Callable[[threading.Event, Callable[[Progress], None]], RunResult]


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
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def state(self) -> str:
        if self.running:
            return "cancelling" if self.cancel.is_set() else "running"
        if self.error is not None:
            return "failed"
        return self.result.status if self.result is not None else "starting"


class RunRegistry:
    """The server's detector runs, newest first; safe to use from every session's thread."""

    def __init__(self) -> None:
        self._runs: dict[str, LiveRun] = {}
        self._lock = threading.Lock()

    def start(self, spec: RunSpec, started_by: str, work: Work) -> LiveRun:
        """Start ``work`` in a thread of its own; RunRefused when the label set is already being run."""
        with self._lock:
            for other in self._runs.values():
                if other.running and (other.spec.dataset, other.spec.detector) == (
                    spec.dataset,
                    spec.detector,
                ):
                    raise RunRefused(f"the detector {spec.detector!r} is already running on {spec.dataset!r}")
            run = LiveRun(
                uuid.uuid4().hex[:12], spec, started_by, datetime.now(UTC).isoformat(timespec="seconds")
            )
            run.thread = threading.Thread(
                target=self._work, args=(run, work), name=f"detector-run-{run.id}", daemon=True
            )
            self._runs[run.id] = run
        run.thread.start()
        return run

    @staticmethod
    def _work(run: LiveRun, work: Work) -> None:
        def report(progress: Progress) -> None:
            run.progress = progress

        try:
            run.result = work(run.cancel, report)
        except RunRefused as refused:
            run.error = str(refused)
        except Exception as error:  # noqa: BLE001 - the run's thread reports, it does not crash the server
            run.error = f"{type(error).__name__}: {error}"

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
