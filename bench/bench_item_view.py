"""Server-side time to load and render the item view on a 100 K-item dataset.

Prints the median of 20 reruns of the item page (AppTest, real SQLite file) for a 100 K-item dataset
next to the same page on a 100-item dataset measured in the same run, and their ratio: the page should
cost the same whatever the dataset size.

    .venv/bin/python bench/bench_item_view.py [--items 100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from db.engine import make_engine  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord  # noqa: E402

RESPONSE = "A red cube sits left of a blue ball number {k}. The sign says OPEN. Two cats sleep on the mat."


def build_store(path: Path, n_items: int) -> str:
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    upgrade(engine)
    items = [
        ItemRecord(external_id=f"it-{k}", response=RESPONSE.format(k=k), prompt="Describe.")
        for k in range(n_items)
    ]
    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[
            Annotations(item=f"it-{k}", spans=[SpanRecord(2, 5, "Color Attribute")]) for k in range(n_items)
        ],
    )
    started = time.perf_counter()
    import_bundle(engine, Bundle(DatasetRecord(f"bench-{n_items}", "canonical"), items, [gold]))
    print(f"  built {n_items:,} items in {time.perf_counter() - started:.1f} s")
    engine.dispose()
    return url


def time_item_view(url: str, n_items: int, repeats: int = 20) -> list[float]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["DATABASE_URL"] = url
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"dataset": f"bench-{n_items}", "item": "it-0"})
    at.run()
    at.switch_page("pages/item.py").run()
    assert not at.exception, at.exception
    times = []
    for k in range(repeats):
        at.query_params["item"] = f"it-{(k * 7919) % n_items}"
        started = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - started)
        assert not at.exception, at.exception
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = build_store(Path(tmp) / "small.db", 100)
        large = build_store(Path(tmp) / "large.db", args.items)
        base = statistics.median(time_item_view(small, 100))
        big = statistics.median(time_item_view(large, args.items))
    print(
        f"item view rerun, median of 20: {args.items:,} items {big * 1000:.1f} ms · 100 items {base * 1000:.1f} ms "
        f"· ratio {big / base:.2f}"
    )


if __name__ == "__main__":
    main()
