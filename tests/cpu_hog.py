"""Busy processes that keep the CPUs loaded while the browser tests run (``SPANLIGHT_E2E_CPU_HOG=N``).

Browser tests must pass however slow the machine is; running them next to N processes that only burn
CPU shows whether any step still depends on timing. Each process stops by itself when the test run
that started it is gone or after ``LIMIT_S``, so none outlives the run even if it is killed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "SPANLIGHT_E2E_CPU_HOG"
LIMIT_S = 3 * 60 * 60

# Spins until the parent (the test run) is gone or the time limit is reached.
_SPIN = """
import os, sys, time
parent, stop = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
while os.getppid() == parent and time.monotonic() < stop:
    for _ in range(200_000):
        pass
"""


def requested() -> int:
    """How many busy processes the environment asks for (0 when unset)."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return 0
    count = int(value)
    if count < 0:
        raise ValueError(f"{ENV} must be a number of processes, not {value!r}")
    return count


@contextmanager
def cpu_hog(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes that each keep one CPU busy until the block ends."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid()), str(LIMIT_S)]) for _ in range(count)
    ]
    try:
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
