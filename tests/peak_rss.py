"""Run a Python script in a child process and read that process's own peak resident memory.

The peak is the child's ``VmHWM`` from ``/proc/self/status``: the high-water mark of the memory map the
script ran in. ``ru_maxrss`` would not do: it survives ``exec``, so a child forked from a large test
process reports the parent's size.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PEAK_RSS_LIMIT_KB = 500 * 1024

_WRAPPER = """
import runpy, sys
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, __import__("os").path.dirname(script))
code = 0
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
finally:
    sys.stdout.flush()
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    sys.stderr.write(f"\\npeak-rss-kb: {peak}\\n")
sys.exit(code)
"""


def run_measured(script: Path, *args: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str, int]:
    """Exit code, standard output, standard error and peak RSS in KiB of the script."""
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(script), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        check=False,
    )
    lines = done.stderr.rstrip().splitlines()
    assert lines and lines[-1].startswith("peak-rss-kb: "), done.stderr[-2000:]
    return done.returncode, done.stdout, "\n".join(lines[:-1]), int(lines[-1].split()[1])
