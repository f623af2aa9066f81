"""A whole command run on a pseudo-terminal, as a person runs it: what it does only for a terminal
(a password prompt without echo, a progress line rewritten in place) happens, and the screen's bytes are
kept."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def on_terminal(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    answer: Callable[[bytes], bytes | None] = lambda seen: None,
    columns: int = 80,
    wait: float = 120.0,
) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal ``columns`` wide as its stdin, stdout and stderr; the exit code
    and everything it wrote. After each read, ``answer(what was seen so far)`` may give bytes to type.
    ``wait`` only bounds how long a broken test hangs."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    given = os.environ if env is None else env
    # The terminal's own size, as a person's: COLUMNS and LINES would override it.
    env = {name: value for name, value in given.items() if name not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )
    os.close(follower)
    seen, deadline = b"", time.monotonic() + wait
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], deadline - time.monotonic())
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the command closed the terminal: it has ended
                break
            if not chunk:
                break
            seen += chunk
            typed = answer(seen)
            if typed is not None:
                os.write(leader, typed)
        return process.wait(timeout=wait), seen.decode(errors="replace")
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
