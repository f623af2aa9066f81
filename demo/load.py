"""Put the synthetic demo into a store: on first start (empty store) and on `cli.py demo`."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from db.access import Actor, require_now
from db.config import data_dir
from db.importer import ImportResult, import_bundle
from db.repositories.datasets import delete_dataset, list_datasets


def demo_image_dir() -> Path:
    return data_dir() / "demo_images"


def load_demo(engine: Engine, *, actor: Actor) -> ImportResult:
    """(Re)create the demo dataset: drop the old copy, draw the images, import the bundle atomically.

    Needs the actor's ``manage_data`` right, like any removal and import: checked before the images are
    drawn, and again by both writes."""
    from demo.build import DEMO_DATASET_NAME, build_demo_bundle

    require_now(engine, actor, "manage_data")
    bundle = build_demo_bundle(demo_image_dir())
    delete_dataset(engine, DEMO_DATASET_NAME, actor=actor)
    return import_bundle(engine, bundle, actor=actor, source="demo")


def ensure_demo(engine: Engine, *, actor: Actor) -> bool:
    """Load the demo when the store holds no dataset at all; True when it did (the actor needs the
    ``manage_data`` right either way, so a refusal does not depend on what the store holds)."""
    require_now(engine, actor, "manage_data")
    if list_datasets(engine):
        return False
    load_demo(engine, actor=actor)
    return True
