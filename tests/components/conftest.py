"""Browser fixtures for component tests: one headless Chromium and one Streamlit server per module.

The fixture names avoid pytest-playwright's (``browser``, ``page``, ...), which launch a bundled
browser that is not installed here.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("SPANLIGHT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() == "true"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("streamlit did not become healthy in time")


def start_streamlit(script: str, env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen, str]:
    """Start ``streamlit run script`` on a free port; return the process and its base URL."""
    port = _free_port()
    streamlit = Path(sys.executable).with_name("streamlit")
    command = [
        str(streamlit),
        "run",
        script,
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    log = log_path.open("w")
    process = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
    except RuntimeError:
        process.terminate()
        process.wait(timeout=10)
        raise RuntimeError(log_path.read_text()) from None
    return process, url


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def chromium_browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A headless Debian Chromium driven by Playwright (``playwright install`` is not available)."""
    if not shutil.which(CHROMIUM):
        if IN_CI:
            pytest.fail(f"Chromium not found at {CHROMIUM}")
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    profile_tmp = tmp_path_factory.mktemp("chromium-tmp")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            env={**os.environ, "TMPDIR": str(profile_tmp)},
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    path = ROOT / "test-artifacts" / "components"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def selector_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The selector test page, served once per test module with the module's ``SELECTOR_ENV``."""
    log = tmp_path_factory.mktemp("selector-server") / "streamlit.log"
    env = getattr(request.module, "SELECTOR_ENV", {})
    process, url = start_streamlit("tests/components/selector_app.py", env, log)
    yield url
    stop(process)
