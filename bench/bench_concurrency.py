"""Many annotators saving labels at once, on SQLite and on PostgreSQL: nothing lost, no raw errors.

Writer processes label the sentences of one item for a fixed time through the repository functions
the annotation pages call (``item_annotations`` to read what a page shows, ``set_sentence_label`` to
save), in four modes per store:

* ``own``: each writer labels their own label set (no row is shared);
* ``shared``: every writer labels one label set as its one annotator (one person saving from many
  browser tabs: only its owner writes a label set), so all of them race for the same six rows;
* each with versions (the page passes the version it showed, or ``ABSENT``) and without (last write
  wins, as a script would).

Afterwards it checks, from the store alone:

* every confirmed write is present in the edit log with the value it saved (``lost`` counts those
  missing, and, with versions, confirmed writes that did not see the write logged before them on the
  same row: a lost update);
* raw errors: any exception other than the clear refusals (``StaleEdit`` when the row changed since it
  was read, ``StoreBusy`` when the store stayed busy too long);
* for every row, the last logged value and version equal the stored ones, and the row's log entries
  follow its versions in order (``log_mismatches``);
* the time each save took (the wait for the store included): p50, p95, max, and the spread of
  confirmed writes between writers (fairness).

Prints one line per store and mode, then as its last line the totals over all runs with the worst p95:
``confirmed=N present=N lost=0 raw_errors=0 log_mismatches=0 p95_ms=X``. Exits non-zero when anything
was lost, a raw error escaped, the log disagrees with the store, or the worst p95 exceeds 250 ms.

    .venv/bin/python bench/bench_concurrency.py [--processes 20] [--seconds 30] [--stores sqlite,postgres]

PostgreSQL runs in a schema made for the run and dropped afterwards (``--pg-url``, default the local
test database with trust authentication).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from db import models as m  # noqa: E402
from db.access import OPERATOR  # noqa: E402
from db.engine import make_engine, read_session  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.repositories import labeling  # noqa: E402
from db.repositories.annotations import item_annotations  # noqa: E402
from db.repositories.annotators import get_or_create_annotator  # noqa: E402
from db.repositories.datasets import list_datasets  # noqa: E402
from db.repositories.items import get_item  # noqa: E402
from db.repositories.label_sets import human_label_set  # noqa: E402
from formats.records import Bundle, DatasetRecord, ItemRecord  # noqa: E402
from tests.pg_schemas import own_schema  # noqa: E402

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
P95_TARGET_MS = 250.0
RESPONSE = "The cube is red. The ball is blue. A cat sleeps. Two dogs run. The sky is grey. A sign says OPEN."
MODES = ("own", "own+versions", "shared", "shared+versions")


@dataclass
class WorkerResult:
    writer: int
    # (log id, label set, sentence index, label, expected version or None) of each confirmed write
    confirmed: list[tuple[int, int, int, str, int | None]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    refused: int = 0
    busy: int = 0
    raw: dict[str, int] = field(default_factory=dict)


@dataclass
class RunResult:
    store: str
    mode: str
    workers: list[WorkerResult]
    present: int = 0
    lost: int = 0
    log_mismatches: int = 0

    @property
    def confirmed(self) -> int:
        return sum(len(w.confirmed) for w in self.workers)

    @property
    def raw_errors(self) -> int:
        return sum(sum(w.raw.values()) for w in self.workers)

    @property
    def seconds(self) -> list[float]:
        return [s for w in self.workers for s in w.seconds]

    def percentile_ms(self, q: float) -> float:
        values = sorted(self.seconds)
        if not values:
            return 0.0
        return 1000 * values[min(len(values) - 1, int(q * len(values)))]

    def line(self) -> str:
        per_writer = [len(w.confirmed) for w in self.workers]
        raw = {k: v for w in self.workers for k, v in w.raw.items()}
        return (
            f"store={self.store} mode={self.mode} writers={len(self.workers)} confirmed={self.confirmed} "
            f"present={self.present} lost={self.lost} refused={sum(w.refused for w in self.workers)} "
            f"busy={sum(w.busy for w in self.workers)} raw_errors={self.raw_errors} "
            f"log_mismatches={self.log_mismatches} p50_ms={self.percentile_ms(0.5):.1f} "
            f"p95_ms={self.percentile_ms(0.95):.1f} max_ms={self.percentile_ms(1.0):.1f} "
            f"per_writer_min={min(per_writer, default=0)} per_writer_max={max(per_writer, default=0)}"
            + (f" raw={raw}" if raw else "")
        )


# ------------------------------------------------------------------------------------------ the stores


@contextmanager
def sqlite_store() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="spanlight-concurrency-") as folder:
        yield f"sqlite:///{Path(folder) / 'store.db'}"


@contextmanager
def postgres_store(base_url: str) -> Iterator[str]:
    """A schema made for this run in the PostgreSQL database, dropped afterwards."""
    with own_schema(base_url, "bench") as url:
        yield url


@dataclass(frozen=True)
class Setup:
    item_id: int
    sentences: int
    writers: list[int]  # annotator ids
    own: list[int]  # each writer's own label set
    shared: int  # the label set every writer shares
    team: int  # the annotator owning ``shared``, whom every writer acts as in the shared modes

    @property
    def label_sets(self) -> set[int]:
        return {*self.own, self.shared}


def prepare(url: str, processes: int, modes: tuple[str, ...]) -> dict[str, Setup]:
    """Migrate the store and give each mode its own dataset (one item of six sentences)."""
    engine = make_engine(url)
    upgrade(engine)
    writers = [get_or_create_annotator(engine, f"writer-{k}").id for k in range(processes)]
    team = get_or_create_annotator(engine, "team").id
    setups = {}
    for mode in modes:
        dataset = DatasetRecord(f"concurrency {mode}", "canonical", label_kinds=["sentence"])
        item_record = ItemRecord(external_id="c1", response=RESPONSE)
        import_bundle(engine, Bundle(dataset=dataset, items=[item_record]), actor=OPERATOR)
        dataset_id = next(d.id for d in list_datasets(engine) if d.name == dataset.name)
        item = get_item(engine, dataset_id, "c1")
        assert item is not None
        own = [human_label_set(engine, dataset_id, who).id for who in writers]
        shared = human_label_set(engine, dataset_id, team).id
        setups[mode] = Setup(item.id, len(item.sentences), writers, own, shared, team)
    engine.dispose()
    return setups


# ----------------------------------------------------------------------------------------- the writers


def _write(url: str, setup: Setup, writer: int, mode: str, until: float, out: Any) -> None:
    """One writer process: label random sentences until ``until`` (a ``time.time()``)."""
    engine = make_engine(url)
    rng = random.Random(writer)
    result = WorkerResult(writer)
    label_set = setup.shared if mode.startswith("shared") else setup.own[writer]
    versioned = mode.endswith("versions")
    who = setup.team if mode.startswith("shared") else setup.writers[writer]
    while time.time() < until:
        index = rng.randrange(setup.sentences)
        label = rng.choice(m.SENTENCE_LABELS)
        expected: int | None = None
        try:
            if versioned:
                shown = item_annotations(engine, setup.item_id, [label_set])[label_set].sentence_labels
                expected = shown[index].version if index in shown else labeling.ABSENT
            started = time.perf_counter()
            try:
                done = labeling.set_sentence_label(
                    engine, label_set, setup.item_id, index, label, who, expected_version=expected
                )
            finally:
                result.seconds.append(time.perf_counter() - started)
            result.confirmed.append((done.log_id, label_set, index, label, expected))
        except labeling.StaleEdit:
            result.refused += 1
        except labeling.StoreBusy:
            result.busy += 1
        except Exception as error:  # noqa: BLE001 - counting whatever escapes is the point
            name = type(error).__name__
            result.raw[name] = result.raw.get(name, 0) + 1
    engine.dispose()
    out.put(result)


def run_mode(url: str, setup: Setup, mode: str, processes: int, seconds: float, store: str) -> RunResult:
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    start = time.time() + 0.5  # every process is up before the clock starts
    workers = [
        context.Process(target=_start_at, args=(start, url, setup, k, mode, start + seconds, out))
        for k in range(processes)
    ]
    for worker in workers:
        worker.start()
    results = [out.get() for _ in workers]
    for worker in workers:
        worker.join()
    run = RunResult(store, mode, sorted(results, key=lambda r: r.writer))
    verify(url, run, setup.label_sets)
    return run


def _start_at(start: float, *args: Any) -> None:
    time.sleep(max(0.0, start - time.time()))
    _write(*args)


# ------------------------------------------------------------------------------------------- the check


def verify(url: str, run: RunResult, label_sets: set[int]) -> None:
    """Compare what the writers were told with what the store and its log hold (these label sets)."""
    engine = make_engine(url)
    with read_session(engine) as session:
        sentences = {s.id: s.index for s in session.scalars(select(m.Sentence))}
        entries = {
            e.id: e
            for e in session.scalars(
                select(m.EditLog)
                .where(m.EditLog.entity == "sentence_labels", m.EditLog.label_set_id.in_(label_sets))
                .order_by(m.EditLog.id)
            )
        }
        rows = {
            r.id: r
            for r in session.scalars(
                select(m.SentenceLabel).where(m.SentenceLabel.label_set_id.in_(label_sets))
            )
        }
    engine.dispose()
    by_row: dict[int | None, list[Any]] = {}
    for entry in entries.values():
        by_row.setdefault(entry.entity_id, []).append(entry)
    confirmed = {c[0]: c for w in run.workers for c in w.confirmed}
    for log_id, (_, label_set, index, label, expected) in confirmed.items():
        found = entries.get(log_id)
        row = rows.get(found.entity_id or 0) if found is not None else None
        if (
            found is None
            or row is None
            or (found.after or {}).get("label") != label
            or (row.label_set_id, sentences[row.sentence_id]) != (label_set, index)
        ):
            run.lost += 1
            continue
        run.present += 1
        if expected is None:
            continue
        earlier = [e for e in by_row[found.entity_id] if e.id < log_id]
        seen = (earlier[-1].after or {}).get("version") if earlier else labeling.ABSENT
        if seen != expected:  # saved over a write it never saw
            run.lost += 1
    for row_id, row in rows.items():
        logged = by_row.get(row_id, [])
        versions = [(e.after or {}).get("version", 0) for e in logged]
        last = logged[-1].after if logged else None
        if (
            last is None
            or (last.get("label"), last.get("version")) != (row.label, row.version)
            or versions != sorted(versions)
        ):
            run.log_mismatches += 1


# ------------------------------------------------------------------------------------------------ main


def run_store(
    store: str, processes: int, seconds: float, modes: tuple[str, ...] = MODES, pg_url: str = PG_URL
) -> list[RunResult]:
    """Every mode on one fresh store ("sqlite" or "postgres"), one after the other."""
    with sqlite_store() if store == "sqlite" else postgres_store(pg_url) as url:
        setups = prepare(url, processes, modes)
        return [run_mode(url, setups[mode], mode, processes, seconds, store) for mode in modes]


def summary(results: list[RunResult]) -> str:
    """The totals over all runs, with the worst run's p95."""
    return (
        f"confirmed={sum(r.confirmed for r in results)} present={sum(r.present for r in results)} "
        f"lost={sum(r.lost for r in results)} raw_errors={sum(r.raw_errors for r in results)} "
        f"log_mismatches={sum(r.log_mismatches for r in results)} "
        f"p95_ms={max((r.percentile_ms(0.95) for r in results), default=0.0):.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--processes", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--pg-url", default=PG_URL)
    args = parser.parse_args()
    results: list[RunResult] = []
    for store in args.stores.split(","):
        for result in run_store(
            store, args.processes, args.seconds, tuple(args.modes.split(",")), args.pg_url
        ):
            print(result.line(), flush=True)
            results.append(result)
    print(summary(results))
    bad = any(r.lost or r.raw_errors or r.log_mismatches for r in results)
    slow = max((r.percentile_ms(0.95) for r in results), default=0.0) > P95_TARGET_MS
    return 1 if bad or slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
