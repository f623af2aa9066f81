"""Which run holds a detector label set: a lease kept in the label set, renewed while its run lives.

Two runs of one label set at once (two tabs, two app processes, the page and the command line) would
pay for every call twice and race for the same items, and a lock held in one process's memory cannot
see the others. So the run that opens a label set writes a lease into ``meta["live_run"]["lease"]``:
its run id, who started it, and when the lease expires. The run renews it every quarter of its length
(:class:`detectors.lease.Heartbeat`) and gives it back when it ends. Another run finding a lease that
has not expired is refused, naming the run that holds it; a run whose process died (killed, the
machine lost) stops renewing, and once its lease has expired the next run takes the label set over
and marks that run's line ``interrupted``.

Times are the store's own clock (PostgreSQL's; for a SQLite file, the machine's, which every process
using that file shares), so app processes on machines whose clocks differ agree on when a lease ends.
The lease is read and written with the label set's row locked (SQLite: the store's write lock), so two
runs opening it at once cannot both take it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from db.config import setting
from detectors.lease import LeaseLost
from detectors.outcome import busy_text
from detectors.runner import RunRefused

LEASE_KEY = "lease"
# How long a run that is no longer heard from (its process killed) keeps its label set.
DEFAULT_LEASE_S = 60.0
INTERRUPTED = "interrupted"


def lease_seconds() -> float:
    """The lease length from the ``SPANLIGHT_RUN_LEASE_S`` setting (unset: 60 s); ValueError naming the
    setting when it is not a number of seconds from 1 up."""
    text_value = setting("RUN_LEASE_S")
    if text_value is None:
        return DEFAULT_LEASE_S
    try:
        value = float(text_value)
    except ValueError:
        value = 0.0
    if not value >= 1:
        raise ValueError(f"SPANLIGHT_RUN_LEASE_S must be a number of seconds from 1 up, got {text_value!r}")
    return value


def store_clock(session: Session) -> float:
    """Seconds since the epoch by the store's clock."""
    if session.get_bind().dialect.name == "postgresql":
        return float(session.execute(text("SELECT EXTRACT(EPOCH FROM clock_timestamp())")).scalar_one())
    return time.time()


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def _held_by_another(live: dict[str, Any], run_id: str, now: float) -> dict[str, Any] | None:
    lease = live.get(LEASE_KEY)
    if not isinstance(lease, dict) or lease.get("run") == run_id:
        return None
    expires = lease.get("expires")
    if not isinstance(expires, int | float) or expires <= now:
        return None
    return lease


def busy_message(name: str, dataset: str, lease: dict[str, Any], now: float) -> str:
    """Why a second run of a label set is refused: which run holds it, and until when."""
    renewed = lease.get("renewed")
    return busy_text(
        name,
        dataset,
        str(lease.get("run")),
        str(lease.get("started")),
        str(lease.get("by")),
        heard_s_ago=max(0, round(now - renewed)) if isinstance(renewed, int | float) else None,
        free_from=_when(float(lease["expires"])),
    )


def take(
    live: dict[str, Any], run_id: str, by: str, now: float, lease_s: float, *, name: str, dataset: str
) -> dict[str, Any]:
    """``live`` with the lease taken by ``run_id``; RunRefused naming the run that holds it when another
    does. A run whose lease expired while it was still marked running is marked :data:`INTERRUPTED`."""
    holder = _held_by_another(live, run_id, now)
    if holder is not None:
        raise RunRefused(busy_message(name, dataset, holder, now))
    expired = live.get(LEASE_KEY)
    runs = list(live.get("runs") or [])
    if isinstance(expired, dict) and expired.get("run") != run_id:
        runs = [
            run | {"status": INTERRUPTED}
            if run.get("id") == expired.get("run") and run.get("status") == "running"
            else run
            for run in runs
        ]
    lease = {"run": run_id, "by": by, "started": _when(now), "renewed": now, "expires": now + lease_s}
    return live | {"runs": runs, LEASE_KEY: lease}


def renew(live: dict[str, Any], run_id: str, now: float, lease_s: float) -> dict[str, Any]:
    """``live`` with ``run_id``'s lease extended; LeaseLost when another run took the label set over."""
    lease = live.get(LEASE_KEY)
    if not isinstance(lease, dict) or lease.get("run") != run_id:
        other = f"run {lease.get('run')}" if isinstance(lease, dict) else "another run"
        raise LeaseLost(
            f"{other} took the label set over after this run was not heard from for {lease_s:g} s "
            "(its process paused, or the store was out of reach); this run stopped so that no call is "
            "paid for twice"
        )
    return live | {LEASE_KEY: lease | {"renewed": now, "expires": now + lease_s}}


def holds(live: dict[str, Any], run_id: str) -> bool:
    """Whether ``run_id`` holds the lease (or nobody does: a label set written before leases)."""
    lease = live.get(LEASE_KEY)
    return not isinstance(lease, dict) or lease.get("run") == run_id


def release(live: dict[str, Any], run_id: str) -> dict[str, Any]:
    """``live`` without ``run_id``'s lease (another run's is left alone)."""
    lease = live.get(LEASE_KEY)
    if isinstance(lease, dict) and lease.get("run") == run_id:
        return {k: v for k, v in live.items() if k != LEASE_KEY}
    return live
