"""Benchmark: ``python cli.py export`` as a user runs it, whole process, against whole-process floors.

For each size (default 100 K and 1 M AlignBench sentences, six per caption) the bench builds a SQLite
store by writing the AlignBench CSV (:mod:`bench.make_import_files`) and importing it with a whole
``python cli.py import`` — or reuses the one in ``--store DIR`` from an earlier run — then times, taking
turns so a busy spell on a shared machine hits all of them:

- Spanlight: ``python cli.py export --format canonical`` (JSONL) and ``--format alignbench`` (CSV);
- the JSONL floor: a Python process that reads the same rows (items, sentences, sentence labels, spans)
  from the SQLite file with ``sqlite3`` and writes each as a ``json.dumps`` line;
- the CSV floor: one ``sqlite3`` query of each sentence with its caption text and gold label, in dataset
  order, written with ``csv.writer``.

Every figure is the median of ``--repeat`` runs; each process's peak resident memory (``VmHWM``) is
printed next to it. Targets: at most 3x the floor, at most 300 MB. Run
``python bench/bench_export.py [--sizes 100000,1000000] [--store DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_import import Run, measured, report, turns, verdict  # noqa: E402
from bench.make_import_files import write_alignbench  # noqa: E402

JSONL_FLOOR = """
import json, sqlite3, sys
store, out = sys.argv[1], sys.argv[2]
connection = sqlite3.connect(store)
(dataset,) = connection.execute("SELECT id FROM datasets WHERE name = 'bench'").fetchone()
in_dataset = "item_id IN (SELECT id FROM items WHERE dataset_id = ?)"
queries = [
    "SELECT * FROM items WHERE dataset_id = ? ORDER BY position",
    f'SELECT * FROM sentences WHERE {in_dataset} ORDER BY item_id, "index"',
    f"SELECT * FROM sentence_labels WHERE {in_dataset} ORDER BY item_id, sentence_id",
    f"SELECT * FROM spans WHERE {in_dataset} ORDER BY item_id, start",
]
with open(out, "w", encoding="utf-8") as handle:
    for query in queries:
        cursor = connection.execute(query, (dataset,))
        names = [d[0] for d in cursor.description]
        for row in cursor:
            handle.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\\n")
"""

CSV_FLOOR = """
import csv, sqlite3, sys
store, out = sys.argv[1], sys.argv[2]
connection = sqlite3.connect(store)
rows = connection.execute(
    '''SELECT i.source_model, i.image_ref, s."index", substr(i.response, s.start + 1, s."end" - s.start),
              l.label, l.error_type, l.metadata
       FROM items i JOIN datasets d ON d.id = i.dataset_id
       JOIN sentences s ON s.item_id = i.id
       LEFT JOIN sentence_labels l ON l.sentence_id = s.id
       WHERE d.name = 'bench' ORDER BY i.position, s."index"'''
)
with open(out, "w", newline="", encoding="utf-8") as handle:
    writer = csv.writer(handle, lineterminator="\\n")
    writer.writerow(["model", "image_name", "sentence_index", "caption", "annotation", "error_type", "meta"])
    writer.writerows(rows)
"""


def store_of(folder: Path, size: int) -> Path:
    """The store of ``size`` sentences in ``folder``, built by a whole ``cli.py import`` unless there."""
    store = folder / f"export-bench-{size}.db"
    if store.exists():
        print(f"reusing {store}")
        return store
    source = folder / f"alignbench-{size}.csv"
    write_alignbench(source, size)
    built = measured(
        ROOT / "cli.py",
        "import",
        "--db",
        f"sqlite:///{store}",
        "--format",
        "alignbench",
        "--dataset",
        "bench",
        str(source),
    )
    source.unlink()
    print(f"built {store.name} by cli.py import in {built.seconds:.1f} s (peak RSS {built.peak_mb:.0f} MB)")
    return store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="AlignBench sentences, comma separated")
    parser.add_argument("--store", help="folder keeping the built stores for later runs (default: temporary)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-ratio", type=float, default=3.0)
    parser.add_argument("--max-rss-mb", type=float, default=300.0)
    args = parser.parse_args()
    ratios: list[float] = []
    peaks: list[float] = []
    print(f"median of {args.repeat} whole processes each, taking turns; load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="spanlight-bench-export-") as tmp:
        work = Path(tmp)
        stores = Path(args.store) if args.store else work
        stores.mkdir(parents=True, exist_ok=True)
        floors = {"jsonl": work / "jsonl_floor.py", "csv": work / "csv_floor.py"}
        floors["jsonl"].write_text(JSONL_FLOOR)
        floors["csv"].write_text(CSV_FLOOR)

        def floor(kind: str, store: Path) -> Run:
            return measured(floors[kind], str(store), str(work / f"floor.{kind}"))

        def ours(format_name: str, out: str, store: Path) -> Run:
            db = f"sqlite:///{store}"
            command = ("export", "--db", db, "--dataset", "bench", "--format", format_name, "--out")
            return measured(ROOT / "cli.py", *command, str(work / out))

        for size in (int(s) for s in args.sizes.split(",")):
            store = store_of(stores, size)
            contenders: dict[str, Callable[[], Run]] = {
                "floor (sqlite3 + json.dumps lines)": partial(floor, "jsonl", store),
                "Spanlight export canonical JSONL": partial(ours, "canonical", "out.jsonl", store),
                "floor (sqlite3 + csv.writer)": partial(floor, "csv", store),
                "Spanlight export AlignBench CSV": partial(ours, "alignbench", "out.csv", store),
            }
            runs = turns(args.repeat, contenders)
            sizes = ", ".join(
                f"{name} {(work / name).stat().st_size / 1e6:.0f} MB"
                for name in ("out.jsonl", "floor.jsonl", "out.csv", "floor.csv")
            )
            pairs = [
                ("Spanlight export canonical JSONL", "floor (sqlite3 + json.dumps lines)"),
                ("Spanlight export AlignBench CSV", "floor (sqlite3 + csv.writer)"),
            ]
            ratios += report(f"{size:,} AlignBench sentences ({sizes})", runs, pairs)
            peaks += [r.peak_mb for name, rs in runs.items() if name.startswith("Spanlight") for r in rs]
    return verdict(ratios, peaks, max_ratio=args.max_ratio, max_rss_mb=args.max_rss_mb)


if __name__ == "__main__":
    sys.exit(main())
