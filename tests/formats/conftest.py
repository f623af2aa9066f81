"""Fixtures for format tests: the shared real benchmark files, and an import → export → import check."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR
from db.export_files import export_file
from db.exporter import export_bundle
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions

# The shared data folder sits beside the repository (see the project README).
SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real public benchmark files; skipped when absent, required under CI."""
    if not (SHARED_DATA / "mhalo").is_dir():
        message = f"the shared benchmark files are not at {SHARED_DATA.resolve()}"
        if IN_CI:
            pytest.fail(message + " (required when CI=true)")
        pytest.skip(message)
    return SHARED_DATA


def comparable(engine: Engine, dataset: str) -> dict[str, Any]:
    """Everything stored for a dataset except its name, in a form that compares with ``==``."""
    bundle = export_bundle(engine, dataset, actor=OPERATOR)
    label_sets = {}
    for label_set in bundle.label_sets:
        annotations = {}
        for a in label_set.annotations:
            plain = dataclasses.asdict(a)
            plain["spans"] = sorted(plain["spans"], key=lambda s: (s["start"], s["end"], s["type"] or ""))
            annotations[a.item] = plain
        label_sets[(label_set.kind, label_set.name)] = {
            "annotator": label_set.annotator,
            "annotations": annotations,
        }
    return {
        "items": [dataclasses.asdict(i) for i in bundle.items],
        "label_sets": label_sets,
        "rating_tasks": [dataclasses.asdict(t) for t in bundle.rating_tasks],
    }


RoundTrip = Callable[..., tuple[dict[str, Any], bytes]]


@pytest.fixture
def round_trip(engine: Engine) -> RoundTrip:
    """Import ``data`` as ``fmt``, export it in ``fmt``, import the export as a second dataset, and
    assert both datasets hold identical items, spans, labels and scores. Returns the first dataset's
    content and the exported bytes."""

    def run(fmt: str, data: bytes, *, source: str = "input.json", filename: str = "", **options: Any):
        first = import_file(
            engine,
            data,
            source=source,
            format_name=fmt,
            options=ReadOptions(dataset="one", **options),
            actor=OPERATOR,
        )
        assert first.ok, [str(p) for p in first.problems]
        exported = export_file(engine, "one", fmt, filename=filename or source, actor=OPERATOR)
        again = import_file(
            engine,
            exported,
            source=filename or source,
            format_name=fmt,
            options=ReadOptions(dataset="two", **options),
            actor=OPERATOR,
        )
        assert again.ok, [str(p) for p in again.problems]
        content = comparable(engine, "one")
        assert comparable(engine, "two") == content
        return content, exported

    return run


@pytest.fixture
def prediction_round_trip(engine: Engine) -> RoundTrip:
    """Import a benchmark, then detector outputs for it; export the outputs in the same format, import
    them as a second detector run, and assert both runs say exactly the same."""

    def run(
        bench_fmt: str,
        bench: bytes,
        fmt: str,
        data: bytes,
        *,
        source: str = "outputs.json",
        **options: Any,
    ):
        base = import_file(
            engine,
            bench,
            source="bench",
            format_name=bench_fmt,
            options=ReadOptions(dataset="d"),
            actor=OPERATOR,
        )
        assert base.ok, [str(p) for p in base.problems]
        first = import_predictions(
            engine,
            data,
            source=source,
            dataset="d",
            detector="run1",
            format_name=fmt,
            options=ReadOptions(**options),
            actor=OPERATOR,
        )
        assert first.ok, [str(p) for p in first.problems]
        exported = export_file(
            engine, "d", fmt, label_sets=["detector:run1"], filename=source, actor=OPERATOR
        )
        second = import_predictions(
            engine,
            exported,
            source=source,
            dataset="d",
            detector="run2",
            format_name=fmt,
            options=ReadOptions(**options),
            actor=OPERATOR,
        )
        assert second.ok, [str(p) for p in second.problems]
        content = comparable(engine, "d")["label_sets"]
        one, two = content[("detector", "run1")], content[("detector", "run2")]
        assert one == two
        return one, exported

    return run
