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

from bench.bench_annotation import build_store, dataset_name  # noqa: E402  (same 100 K-item store)


def time_item_view(url: str, n_items: int, repeats: int = 20) -> list[float]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["DATABASE_URL"] = url
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"dataset": dataset_name(n_items), "item": "it-0"})
    at.run()
    at.switch_page("app_pages/item.py").run()
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
