"""Shared fixtures: real databases, never mocks.

``engine`` runs a test twice: on a fresh SQLite file and on the real PostgreSQL server (a schema made
for this test run, emptied between tests). With ``CI=true`` an unreachable PostgreSQL fails the run
instead of skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text

from db.engine import make_engine
from db.migrate import upgrade
from db.models import Base
from tests.cpu_hog import cpu_hog, requested
from tests.pg_schemas import own_schema

PG_URL = os.environ.get("SPANLIGHT_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file copied for each test (migrating once keeps the suite fast)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


@pytest.fixture
def sqlite_url(sqlite_template: Path, tmp_path: Path) -> str:
    path = tmp_path / "store.db"
    shutil.copy(sqlite_template, path)
    return f"sqlite:///{path}"


@pytest.fixture(scope="session")
def pg_schema_url() -> Iterator[str]:
    """A fresh PostgreSQL schema for this test run, migrated once, dropped at the end."""
    admin = create_engine(PG_URL)
    try:
        with admin.connect():
            pass
    except Exception as error:  # noqa: BLE001 - any connection failure means the same thing here
        admin.dispose()
        message = f"PostgreSQL at {PG_URL} is not reachable: {error}"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    admin.dispose()
    with own_schema(PG_URL, "test") as url:
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def bare_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no tables at all, on SQLite and on PostgreSQL (a schema of its own, dropped after)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'bare.db'}"
        return
    request.getfixturevalue("pg_schema_url")  # skips, or fails in CI, when PostgreSQL is unreachable
    with own_schema(PG_URL, "bare") as url:
        yield url


def _empty_postgres(engine: Engine) -> None:
    tables = [t.name for t in Base.metadata.sorted_tables if t.name != "store_revision"]
    with engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
        connection.execute(text("UPDATE store_revision SET revision = 0"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> str:
    """A migrated, empty database URL: each test using it runs on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        return str(request.getfixturevalue("sqlite_url"))
    url = str(request.getfixturevalue("pg_schema_url"))
    engine = make_engine(url)
    _empty_postgres(engine)
    engine.dispose()
    return url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


# --------------------------------------------------------------------------------------- browser tests

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """pytest-playwright's launch arguments, pointed at Debian's chromium (no browser download here)."""
    if not Path(CHROMIUM).exists():
        message = "Debian chromium is not installed (make test installs it when run as root)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    os.environ.setdefault("TMPDIR", str(tmp_path_factory.mktemp("chromium-tmp")))
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session", autouse=True)
def cpu_load(request: pytest.FixtureRequest) -> Iterator[None]:
    """With ``SPANLIGHT_E2E_CPU_HOG=N``, N busy processes load the CPUs while a run with browser tests lasts."""
    browser_tests = any(item.get_closest_marker("e2e") for item in request.session.items)
    with cpu_hog(requested() if browser_tests else 0):
        yield
