"""Browser fixtures for the span selector's tests: its test page served once per module.

The browser is pytest-playwright's (pointed at Debian chromium by the root conftest); the server and
every wait come from the browser-test helpers in ``tests/e2e``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.app_server import ROOT, streamlit_server


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
    with streamlit_server("tests/components/selector_app.py", env, log) as server:
        yield server.url
