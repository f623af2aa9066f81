"""The synthetic demo in a SQLite store, shared by the report tests of this folder (loaded once)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from db.engine import make_engine
from db.migrate import upgrade
from db.repositories.datasets import get_dataset
from demo.build import DEMO_DATASET_NAME


def load_demo_store(data_dir, monkeypatch: pytest.MonkeyPatch) -> str:  # type: ignore[no-untyped-def]
    """Load the demo into a fresh SQLite file under ``data_dir``; returns its URL."""
    from demo.load import load_demo

    monkeypatch.setenv("HALLUSCOPE_DATA_DIR", str(data_dir))
    url = f"sqlite:///{data_dir / 'store.db'}"
    engine = make_engine(url)
    upgrade(engine)
    load_demo(engine)
    engine.dispose()
    return url


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
