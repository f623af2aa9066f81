"""Browser tests drive the running app in headless Chromium (pytest-playwright, Debian chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page

from tests.e2e.app_server import ARTIFACTS, RunningApp, prepare_store, running_app
from tests.e2e.browser import WAIT_MS, AppTab


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e" in str(item.path):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def context(context: BrowserContext) -> BrowserContext:
    """pytest-playwright's context, with the one wait bound for every action and navigation."""
    context.set_default_timeout(WAIT_MS)
    context.set_default_navigation_timeout(WAIT_MS)
    return context


@pytest.fixture
def tab(page: Page) -> AppTab:
    return AppTab(page)


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data folder with the demo loaded by `cli.py init`, shared by the browser tests."""
    data_dir = tmp_path_factory.mktemp("e2e-data")
    return data_dir, prepare_store(data_dir)


@pytest.fixture(scope="session")
def app(demo_store: tuple[Path, str]) -> Iterator[RunningApp]:
    data_dir, database_url = demo_store
    with running_app(data_dir, database_url) as running:
        yield running


@pytest.fixture(scope="module")
def private_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """An app on a demo store of its own, for a module whose writes (a detector run, an annotator who
    started from a detector) would change what the shared store's tests count."""
    data_dir = tmp_path_factory.mktemp("e2e-private")
    with running_app(data_dir, prepare_store(data_dir)) as running:
        yield running


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
