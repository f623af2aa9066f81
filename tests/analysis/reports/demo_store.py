"""A SQLite store holding the synthetic demo, for the report, page and command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from db.access import OPERATOR
from db.engine import make_engine
from db.migrate import upgrade

DEMO = "Spanlight demo (synthetic)"


def load_demo_store(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Load the demo into a fresh SQLite file under ``data_dir`` (images there too); returns its URL."""
    from demo.load import load_demo

    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(data_dir))
    url = f"sqlite:///{data_dir / 'store.db'}"
    engine = make_engine(url)
    upgrade(engine)
    load_demo(engine, actor=OPERATOR)
    engine.dispose()
    return url
