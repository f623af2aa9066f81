"""Start the real app (`streamlit run app.py`) on a free port against its own store, for browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"


@dataclass(frozen=True)
class RunningApp:
    url: str
    database_url: str
    data_dir: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environment(data_dir: Path, database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"DATABASE_URL": database_url, "SPANLIGHT_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"})
    return env


def prepare_store(data_dir: Path) -> str:
    """Create the store and load the demo through the CLI, exactly as `make run` does."""
    database_url = f"sqlite:///{data_dir / 'spanlight.db'}"
    subprocess.run(
        [sys.executable, "cli.py", "init"],
        cwd=ROOT,
        env=_environment(data_dir, database_url),
        check=True,
        timeout=300,
    )
    return database_url


@contextmanager
def running_app(data_dir: Path, database_url: str) -> Iterator[RunningApp]:
    """A freshly started server; stopped (and its log kept) when the block ends."""
    port = free_port()
    log_path = data_dir / f"streamlit-{port}.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", "app.py",
                "--server.headless", "true",
                "--server.address", "127.0.0.1",
                "--server.port", str(port),
                "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none",
            ],
            cwd=ROOT,
            env=_environment(data_dir, database_url),
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                        if answer.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the app did not start; log:\n{log_path.read_text()}")
                time.sleep(0.2)
            yield RunningApp(url=url, database_url=database_url, data_dir=data_dir)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_ready(page: Page) -> None:
    """Streamlit has drawn the app and finished the script run (the running indicator is gone)."""
    page.wait_for_selector('[data-testid="stSidebar"]', timeout=30_000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000
    )
