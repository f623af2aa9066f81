"""Put the synthetic demo into a store: on first start (empty store) and on `cli.py demo`."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from db.config import data_dir
from db.importer import ImportResult, import_bundle
from db.repositories.datasets import delete_dataset, list_datasets


def demo_image_dir() -> Path:
    return data_dir() / "demo_images"


def load_demo(engine: Engine) -> ImportResult:
    """(Re)create the demo dataset: drop the old copy, draw the images, import the bundle atomically."""
    from demo.build import DEMO_DATASET_NAME, build_demo_bundle

    bundle = build_demo_bundle(demo_image_dir())
    delete_dataset(engine, DEMO_DATASET_NAME)
    return import_bundle(engine, bundle, source="demo")


def ensure_demo(engine: Engine) -> bool:
    """Load the demo when the store holds no dataset at all; True when it did."""
    if list_datasets(engine):
        return False
    load_demo(engine)
    return True
