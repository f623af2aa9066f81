"""The synthetic demo in a SQLite store, shared by the report tests of this folder (loaded once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from db.engine import make_engine
from db.repositories.datasets import get_dataset
from demo.build import DEMO_DATASET_NAME
from tests.analysis.reports.demo_store import load_demo_store


@pytest.fixture(scope="module")
def demo_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        url = load_demo_store(tmp_path_factory.mktemp("demo-store"), monkeypatch)
        engine = make_engine(url)
        yield engine
        engine.dispose()


@pytest.fixture(scope="module")
def demo_id(demo_engine: Engine) -> int:
    dataset = get_dataset(demo_engine, DEMO_DATASET_NAME)
    assert dataset is not None
    return dataset.id


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Engine, int]]:
    """A demo store of the test's own, to write labels into, and the demo dataset's id."""
    engine = make_engine(load_demo_store(tmp_path, monkeypatch))
    dataset = get_dataset(engine, DEMO_DATASET_NAME)
    assert dataset is not None
    yield engine, dataset.id
    engine.dispose()
