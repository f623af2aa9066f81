"""Start a real Streamlit server (`streamlit run <script>`) on a free port, for browser tests.

The server says when it listens (the "URL:" line of its output); the helper reads its output as it
comes, so start-up is awaited however long a busy machine takes, never guessed with a sleep.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.browser import WAIT_MS

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
START_ATTEMPTS = 3  # another program may take the free port between choosing it and binding it
_servers = itertools.count(1)  # numbers the logs of the servers started on one store


@dataclass(frozen=True)
class RunningApp:
    url: str
    database_url: str
    data_dir: Path
    pid: int  # the server process, for a test that kills it the hard way


@dataclass(frozen=True)
class Server:
    url: str
    pid: int


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _environment(data_dir: Path, database_url: str) -> dict[str, str]:
    # Local mode unless a test asks for team mode, whatever the shell running the tests has set.
    return {"DATABASE_URL": database_url, "SPANLIGHT_DATA_DIR": str(data_dir), "SPANLIGHT_MODE": "local"}


def prepare_store(data_dir: Path) -> str:
    """Create the store and load the demo through the CLI, exactly as `make run` does."""
    database_url = f"sqlite:///{data_dir / 'spanlight.db'}"
    subprocess.run(
        [sys.executable, "cli.py", "init"],
        cwd=ROOT,
        env={**os.environ, **_environment(data_dir, database_url)},
        check=True,
        timeout=600,
    )
    return database_url


def _copy_until_listening(
    process: subprocess.Popen[str], log_path: Path, url: str, ready: threading.Event
) -> None:
    """Copy the server's output to its log; set ``ready`` when it announces ``url`` or when it exits."""
    assert process.stdout is not None
    with log_path.open("a") as log:
        for line in process.stdout:
            log.write(line)
            log.flush()
            if line.strip() == f"URL: {url}":
                ready.set()
    ready.set()


def _start(script: str, env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", script,
            "--server.headless", "true",
            "--server.address", "127.0.0.1",
            "--server.port", str(port),
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
        ],
        cwd=ROOT,
        env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    ready = threading.Event()
    threading.Thread(target=_copy_until_listening, args=(process, log_path, url, ready), daemon=True).start()
    if ready.wait(WAIT_MS / 1000) and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=WAIT_MS / 1000) as answer:
                if answer.read().strip() == b"ok":
                    return process, url
        except OSError:
            pass
    _stop(process)
    raise RuntimeError(f"streamlit did not start on port {port}")


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def streamlit_server(script: str, env: dict[str, str], log_path: Path) -> Iterator[Server]:
    """A freshly started ``streamlit run script`` (its base URL and process id); stopped, its log kept,
    when the block ends."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            process, url = _start(script, env, log_path)
            break
        except RuntimeError:
            if attempt == START_ATTEMPTS:
                raise RuntimeError(f"the app did not start; log:\n{log_path.read_text()}") from None
    try:
        yield Server(url, process.pid)
    finally:
        _stop(process)


@contextmanager
def running_app(data_dir: Path, database_url: str, env: dict[str, str] | None = None) -> Iterator[RunningApp]:
    """A freshly started app on its own store (``env``: more settings, e.g. team mode); stopped (and
    its log kept) when the block ends."""
    log_path = data_dir / f"streamlit-{next(_servers)}.log"
    environment = {**_environment(data_dir, database_url), **(env or {})}
    with streamlit_server("server.py", environment, log_path) as server:
        yield RunningApp(url=server.url, database_url=database_url, data_dir=data_dir, pid=server.pid)
