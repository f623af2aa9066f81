"""Benchmark: import 100 K AlignBench sentence rows (14 K captions) into a fresh SQLite store.

Prints Spanlight's time next to the raw floor measured in the same run (``json.loads`` of every line plus
one sqlite3 ``executemany`` of the same rows into a plain table) and the peak memory of the import.
Target: at most 3x the floor. Run with ``make bench`` or ``python bench/bench_import.py [--rows N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from db.access import OPERATOR  # noqa: E402
from db.engine import make_engine  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.transfer import import_file  # noqa: E402
from formats.base import ReadOptions  # noqa: E402

MODELS = ("gpt-4o", "llava-1.6", "cogvlm", "qwen2", "sharegpt4v", "llama-4", "sd-3", "gpt-gen")
WORDS = [
    "a",
    "the",
    "red",
    "blue",
    "small",
    "large",
    "dog",
    "cat",
    "man",
    "woman",
    "table",
    "chair",
    "street",
    "tree",
    "sky",
    "car",
    "sign",
    "on",
    "near",
    "under",
]
ERRORS = ("Object", "Attribute", "Number", "Text", "Relation", "Location", "Direction", "Illusion", "Other")


def make_rows(n_rows: int, n_captions: int, seed: int = 7) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    per_caption = [n_rows // n_captions] * n_captions
    for k in range(n_rows - sum(per_caption)):
        per_caption[k] += 1
    for c, n_sentences in enumerate(per_caption):
        model = MODELS[c % len(MODELS)]
        image = f"img_{c // len(MODELS):06d}.jpg"
        for s in range(n_sentences):
            words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
            label = rng.choices(("correct", "incorrect", "unknown"), (70, 25, 5))[0]
            votes = [rng.randint(0, 3) for _ in range(3)]
            rows.append(
                {
                    "model": model,
                    "image_source": "coco" if c % 2 else "cc12m",
                    "image_name": image,
                    "image_type": f"cluster-{c % 50}",
                    "sentence_index": s,
                    "caption": " ".join(words).capitalize() + ".",
                    "annotation": label,
                    "error_type": rng.choice(ERRORS) if label == "incorrect" else None,
                    "error_words": [words[2]] if label == "incorrect" else None,
                    "agreement_ratio": round(rng.random(), 3),
                    "fleiss_Pi": round(rng.random(), 3),
                    "n_correct": votes[0],
                    "n_incorrect": votes[1],
                    "n_unknown": votes[2],
                    "image_url": f"https://example.org/{image}",
                }
            )
    return rows


def floor(data: bytes, folder: Path) -> tuple[float, float]:
    """json.loads of every line + one executemany of the same rows: the least any importer must do.

    Returns wall-clock and CPU seconds (CPU time is steadier on a shared, busy machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    rows = [json.loads(line) for line in data.splitlines()]
    columns = list(rows[0])
    folder.mkdir()
    connection = sqlite3.connect(folder / "floor.db")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")  # as Spanlight's own SQLite connections
    connection.execute(f"CREATE TABLE rows ({', '.join(columns)})")
    with connection:
        connection.executemany(
            f"INSERT INTO rows VALUES ({', '.join('?' for _ in columns)})",
            [tuple(json.dumps(v) if isinstance(v, list) else v for v in r.values()) for r in rows],
        )
    connection.close()
    return time.perf_counter() - start, time.process_time() - cpu


def ours(data: bytes, folder: Path, *, trace: bool) -> tuple[float, float, int, str]:
    folder.mkdir()
    engine = make_engine(f"sqlite:///{folder / 'store.db'}")
    upgrade(engine)
    gc.collect()
    if trace:
        tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    outcome = import_file(
        engine,
        data,
        actor=OPERATOR,
        source="alignbench.jsonl",
        format_name="alignbench",
        options=ReadOptions(dataset="bench"),
    )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    tracemalloc.stop()
    engine.dispose()
    if not outcome.ok:
        raise SystemExit(f"import failed: {[str(p) for p in outcome.problems[:5]]}")
    return elapsed, cpu, peak, outcome.summary()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--captions", type=int, default=14_000)
    parser.add_argument("--max-ratio", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = make_rows(args.rows, args.captions)
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # Floor and ours take turns, so a busy spell on a shared machine hits both; medians are quoted.
        # Memory is measured in a separate traced run.
        floors, runs = [], []
        for k in range(args.repeat):
            floors.append(floor(data, folder / f"floor{k}"))
            runs.append(ours(data, folder / f"run{k}", trace=False))
        peak = ours(data, folder / "traced", trace=True)[2]
    raw, raw_cpu = median(f[0] for f in floors), median(f[1] for f in floors)
    elapsed, cpu = median(r[0] for r in runs), median(r[1] for r in runs)
    ratio, cpu_ratio = elapsed / raw, cpu / raw_cpu
    print(runs[0][3])
    print(
        f"rows: {args.rows:,} in {args.captions:,} captions ({len(data) / 1e6:.1f} MB JSONL), median of {args.repeat}"
    )
    print(f"floor (json.loads + sqlite3 executemany): {raw:.2f} s wall, {raw_cpu:.2f} s CPU")
    print(f"Spanlight import (read, check, write):   {elapsed:.2f} s wall, {cpu:.2f} s CPU")
    print(f"ratio to the floor:                       {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU")
    print(f"peak Python memory during the import:     {peak / 1e6:.0f} MB")
    if min(ratio, cpu_ratio) > args.max_ratio:
        print(f"SLOWER than {args.max_ratio}x the floor")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
