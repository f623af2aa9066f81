"""Benchmark: ``python cli.py import`` as a user runs it, whole process, against whole-process floors.

For each size (default 100 K and 1 M AlignBench sentence rows, six per caption, as a CSV file) the bench
times, taking turns so a busy spell on a shared machine hits all of them:

- the floor: a Python process that parses the CSV with ``csv`` and inserts the same rows with one
  ``sqlite3`` ``executemany`` into a plain table — the least any importer must do;
- Spanlight: ``python cli.py import --format alignbench FILE`` into a fresh SQLite store;
- Spanlight again: the same import into a store that holds the file already (it finds nothing to write:
  an import is idempotent, and must not cost more than the first, which it did while each batch read
  the whole stored label set back);
- with ``--stores sqlite,postgres``: the ``COPY`` floor (the same CSV parse, the rows sent by psycopg's
  ``COPY … FROM STDIN`` into a plain table) and Spanlight importing into a fresh PostgreSQL schema.

Then the canonical JSONL file (120 K items, 240 K spans, 480 K sentence labels) against a floor of
``json.loads`` of every line plus one ``executemany`` of a row per line. Every figure is the median of
``--repeat`` runs; each process's peak resident memory (``VmHWM``) is printed next to it. Targets: at
most 3x the floor, at most 300 MB. Run ``python bench/bench_import.py [--sizes 100000,1000000]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.make_import_files import write_alignbench, write_canonical  # noqa: E402
from tests.peak_rss import run_measured  # noqa: E402

PG_URL = "postgresql://postgres@127.0.0.1:5432/test"

CSV_FLOOR = """
import csv, sqlite3, sys
source, store = sys.argv[1], sys.argv[2]
with open(source, newline="", encoding="utf-8") as handle:
    reader = csv.reader(handle)
    header = next(reader)
    connection = sqlite3.connect(store)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(f"CREATE TABLE rows ({', '.join(header)})")
    with connection:
        connection.executemany(f"INSERT INTO rows VALUES ({', '.join('?' for _ in header)})", reader)
    connection.close()
"""

COPY_FLOOR = """
import csv, sys
import psycopg
source, url, schema = sys.argv[1], sys.argv[2], sys.argv[3]
with open(source, newline="", encoding="utf-8") as handle, psycopg.connect(url) as connection:
    reader = csv.reader(handle)
    header = next(reader)
    connection.execute(f'SET search_path TO "{schema}"')
    connection.execute(f"CREATE TABLE rows ({', '.join(c + ' text' for c in header)})")
    with connection.cursor().copy(f"COPY rows ({', '.join(header)}) FROM STDIN") as copy:
        for row in reader:
            copy.write_row(row)
"""

JSONL_FLOOR = """
import json, sqlite3, sys
source, store = sys.argv[1], sys.argv[2]
connection = sqlite3.connect(store)
connection.execute("PRAGMA journal_mode=WAL")
connection.execute("PRAGMA synchronous=NORMAL")
connection.execute("CREATE TABLE lines (record, body)")
with open(source, encoding="utf-8") as handle, connection:
    connection.executemany(
        "INSERT INTO lines VALUES (?, ?)",
        ((r["record"], json.dumps(r)) for r in map(json.loads, handle)),
    )
connection.close()
"""

# What an import costs before it reads a byte: Python and the modules ``cli.py import`` loads.
START_UP = """
import sys
sys.path.insert(0, sys.argv[1])
import cli, db.access, db.transfer, formats.alignbench, formats.base, formats.faithscore
"""

# The rows an import wrote, inserted again into an empty store of Spanlight's own schema (its indexes,
# checks and foreign keys) with plain ``sqlite3``: what SQLite itself costs, timed inside the process.
SCHEMA_FLOOR = """
import sqlite3, sys, time
source, store = sys.argv[1], sys.argv[2]
tables = ("datasets", "label_sets", "items", "sentences", "sentence_labels", "spans", "item_statuses")
given = sqlite3.connect(source)
rows = {t: given.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
made = sqlite3.connect(store, isolation_level=None)
made.execute("PRAGMA journal_mode=WAL")
made.execute("PRAGMA synchronous=NORMAL")
made.execute("PRAGMA foreign_keys=ON")
for (sql,) in given.execute(
    "SELECT sql FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT NULL "
    "AND name NOT LIKE 'sqlite_%' ORDER BY type DESC"
):
    made.execute(sql)
start = time.perf_counter()
made.execute("BEGIN")
for table in tables:
    if rows[table]:
        marks = ", ".join("?" for _ in rows[table][0])
        made.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
made.execute("COMMIT")
print(time.perf_counter() - start, sum(len(r) for r in rows.values()))
"""


@dataclass
class Run:
    seconds: float
    peak_mb: float


def measured(script: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """Run ``script`` in a fresh Python process; its wall time and its own peak resident memory."""
    return measured_out(script, *args, env=env)[0]


def measured_out(script: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Run, str]:
    """:func:`measured`, with what the process printed."""
    start = time.perf_counter()
    code, out, err, peak_kb = run_measured(script, *args, env=env or {}, cwd=ROOT)
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"{script.name} {' '.join(args)} failed:\n{out[-2000:]}\n{err[-3000:]}")
    return Run(seconds, peak_kb / 1024), out


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A schema made for one run in the PostgreSQL database, dropped afterwards."""
    import psycopg

    schema = f"bench_import_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


class Bench:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.scripts = {}
        for name, body in (
            ("csv_floor", CSV_FLOOR),
            ("copy_floor", COPY_FLOOR),
            ("jsonl_floor", JSONL_FLOOR),
            ("start_up", START_UP),
            ("schema_floor", SCHEMA_FLOOR),
        ):
            path = folder / f"{name}.py"
            path.write_text(body)
            self.scripts[name] = path
        self.runs = 0

    def _store(self) -> Path:
        self.runs += 1
        return self.folder / f"store{self.runs}.db"

    def csv_floor(self, source: Path) -> Run:
        return measured(self.scripts["csv_floor"], str(source), str(self._store()))

    def jsonl_floor(self, source: Path) -> Run:
        return measured(self.scripts["jsonl_floor"], str(source), str(self._store()))

    def copy_floor(self, source: Path) -> Run:
        with postgres_schema() as schema:
            return measured(self.scripts["copy_floor"], str(source), PG_URL, schema)

    def start_up(self) -> Run:
        return measured(self.scripts["start_up"], str(ROOT))

    def schema_floor(self, source: Path, repeat: int) -> tuple[float, int]:
        """Import ``source`` once, then time inserting its rows again into the same schema: the median
        seconds, and how many rows."""
        store = self._store()
        command = ["import", "--format", "alignbench", "--dataset", "bench", "--db", f"sqlite:///{store}"]
        measured(ROOT / "cli.py", *command, str(source))
        times = []
        for _ in range(repeat):
            _, out = measured_out(self.scripts["schema_floor"], str(store), str(self._store()))
            seconds, rows = out.split()
            times.append(float(seconds))
        return median(times), int(rows)

    def ours(self, source: Path, format_name: str, store: str = "sqlite", *, again: bool = False) -> Run:
        command = ["import", "--format", format_name, "--dataset", "bench"]
        if store == "sqlite":
            url = f"sqlite:///{self._store()}"
            if again:  # the file is stored already: only the second import is timed
                measured(ROOT / "cli.py", *command, "--db", url, str(source))
            return measured(ROOT / "cli.py", *command, "--db", url, str(source))
        with postgres_schema() as schema:
            url = f"postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"
            return measured(ROOT / "cli.py", *command, "--db", url, str(source))


def turns(repeat: int, contenders: dict[str, Callable[[], Run]]) -> dict[str, list[Run]]:
    """Each contender ``repeat`` times, taking turns."""
    runs: dict[str, list[Run]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, run in contenders.items():
            runs[name].append(run())
    return runs


def report(title: str, runs: dict[str, list[Run]], pairs: list[tuple[str, str]]) -> list[float]:
    """Print each contender's medians and each (ours, floor) pair's ratio; the ratios."""
    print(f"\n{title}")
    for name, measured_runs in runs.items():
        seconds = median(r.seconds for r in measured_runs)
        peak = median(r.peak_mb for r in measured_runs)
        every = ", ".join(f"{r.seconds:.2f}" for r in measured_runs)
        print(f"  {name:34} {seconds:7.2f} s  (runs {every})   peak RSS {peak:6.0f} MB")
    ratios = []
    for ours, floor in pairs:
        ratio = median(r.seconds for r in runs[ours]) / median(r.seconds for r in runs[floor])
        ratios.append(ratio)
        print(f"  ratio {ours} / {floor}: {ratio:.2f}x")
    return ratios


def where_the_time_goes(bench: Bench, source: Path, repeat: int, runs: dict[str, list[Run]]) -> None:
    """What no importer of this schema avoids, beside the SQLite import's time: its start-up and SQLite's
    own work on the rows it writes (more rows than the floor's one per line, into indexed tables)."""
    start_up = median(bench.start_up().seconds for _ in range(repeat))
    inserts, rows = bench.schema_floor(source, repeat)
    ours = median(r.seconds for r in runs["Spanlight import, SQLite"])
    print(f"  where the time goes: start-up (Python and the modules an import loads) {start_up:.2f} s;")
    print(
        f"    the {rows:,} rows it writes, into an empty store of its schema with sqlite3: {inserts:.2f} s;"
    )
    print(f"    the rest (reading, checking, planning, building rows): {ours - start_up - inserts:.2f} s")


def verdict(ratios: list[float], peaks: list[float], *, max_ratio: float, max_rss_mb: float) -> int:
    """Print the load and whether any ratio or peak broke its bound; the exit code (1 if one did)."""
    print(f"\nload after the runs {os.getloadavg()[0]:.2f}")
    failed = False
    if ratios and max(ratios) > max_ratio:
        print(f"SLOWER than {max_ratio}x a floor")
        failed = True
    if peaks and max(peaks) > max_rss_mb:
        print(f"MORE memory than {max_rss_mb:.0f} MB")
        failed = True
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="AlignBench sentence rows, comma separated")
    parser.add_argument(
        "--canonical-items", type=int, default=120_000, help="0 to leave the canonical file out"
    )
    parser.add_argument("--stores", default="sqlite", help="sqlite, or sqlite,postgres")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-ratio", type=float, default=3.0)
    parser.add_argument("--max-rss-mb", type=float, default=300.0)
    args = parser.parse_args()
    stores = args.stores.split(",")
    ratios: list[float] = []
    peaks: list[float] = []
    print(f"median of {args.repeat} whole processes each, taking turns; load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="spanlight-bench-import-") as tmp:
        bench = Bench(Path(tmp))
        for size in (int(s) for s in args.sizes.split(",")):
            source = Path(tmp) / f"alignbench-{size}.csv"
            write_alignbench(source, size)
            contenders: dict[str, Callable[[], Run]] = {
                "floor (csv + sqlite3 executemany)": partial(bench.csv_floor, source),
                "Spanlight import, SQLite": partial(bench.ours, source, "alignbench"),
                "Spanlight import again, SQLite": partial(bench.ours, source, "alignbench", again=True),
            }
            pairs = [
                ("Spanlight import, SQLite", "floor (csv + sqlite3 executemany)"),
                ("Spanlight import again, SQLite", "floor (csv + sqlite3 executemany)"),
            ]
            if "postgres" in stores:
                contenders["floor (csv + PostgreSQL COPY)"] = partial(bench.copy_floor, source)
                contenders["Spanlight import, PostgreSQL"] = partial(bench.ours, source, "alignbench", "pg")
                pairs.append(("Spanlight import, PostgreSQL", "floor (csv + PostgreSQL COPY)"))
            size_mb = source.stat().st_size / 1e6
            runs = turns(args.repeat, contenders)
            ratios += report(f"AlignBench CSV, {size:,} sentences ({size_mb:.0f} MB)", runs, pairs)
            where_the_time_goes(bench, source, args.repeat, runs)
            peaks += [r.peak_mb for name, rs in runs.items() if name.startswith("Spanlight") for r in rs]
            source.unlink()
        if args.canonical_items:
            source = Path(tmp) / "canonical.jsonl"
            write_canonical(source, args.canonical_items)
            size_mb = source.stat().st_size / 1e6
            runs = turns(
                args.repeat,
                {
                    "floor (json.loads + executemany)": lambda: bench.jsonl_floor(source),
                    "Spanlight import, SQLite": lambda: bench.ours(source, "canonical"),
                },
            )
            title = f"canonical JSONL, {args.canonical_items:,} items ({size_mb:.0f} MB)"
            report(title, runs, [("Spanlight import, SQLite", "floor (json.loads + executemany)")])
            peaks += [r.peak_mb for r in runs["Spanlight import, SQLite"]]
    return verdict(ratios, peaks, max_ratio=args.max_ratio, max_rss_mb=args.max_rss_mb)


if __name__ == "__main__":
    sys.exit(main())
