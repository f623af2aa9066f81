"""Time of assigning a large dataset's task to a team and of reading the team's progress.

Builds a dataset of ``--items`` items in a fresh store (SQLite file by default, or ``--db`` — an empty,
migrated database), creates ``--annotators`` annotators, and times:

* ``assign`` of the spans task with k = 2, then again (nothing left to add), then topped up to k = 3;
* ``progress_by_annotator`` and the first and last pages of ``progress_by_item``, after half of each
  annotator's items are marked done or skipped;
* one annotator's queue as the annotation pages read it: ``queue_size``, ``progress`` and ``next_item``
  narrowed to their assigned items.

    .venv/bin/python bench/bench_assignments.py [--items 10000] [--annotators 5] [--db URL]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from db import models as m  # noqa: E402
from db.access import OPERATOR  # noqa: E402
from db.engine import make_engine, write_session  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.repositories import queue  # noqa: E402
from db.repositories.annotators import get_or_create_annotator  # noqa: E402
from db.repositories.assignments import (  # noqa: E402
    assign,
    assigned_items,
    progress_by_annotator,
    progress_by_item,
)
from db.repositories.datasets import get_dataset  # noqa: E402
from db.repositories.label_sets import human_label_set  # noqa: E402
from formats.records import Bundle, DatasetRecord, ItemRecord  # noqa: E402

T = TypeVar("T")
RESPONSE = "A red cube sits left of a blue ball number {k}. The sign says OPEN."


def timed(label: str, action: Callable[[], T]) -> T:
    start = time.perf_counter()
    result = action()
    print(f"{label:58} {1000 * (time.perf_counter() - start):9.1f} ms")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=5)
    parser.add_argument("--db", help="an empty, migrated database (default: a new SQLite file)")
    parser.add_argument("--analyze", action="store_true", help="PostgreSQL: ANALYZE before the reads")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.db or f"sqlite:///{Path(folder) / 'bench.db'}"
        engine = make_engine(url)
        upgrade(engine)
        print(f"{engine.dialect.name}, {args.items} items, {args.annotators} annotators")
        items = [ItemRecord(f"it-{k}", RESPONSE.format(k=k)) for k in range(args.items)]
        timed(
            "import",
            lambda: import_bundle(
                engine, Bundle(DatasetRecord("bench-team", "test"), items=items), actor=OPERATOR
            ),
        )
        dataset = get_dataset(engine, "bench-team")
        assert dataset is not None
        team = [get_or_create_annotator(engine, f"annotator-{n}").id for n in range(args.annotators)]

        counts = timed(
            "assign spans, k = 2", lambda: assign(engine, dataset.id, "spans", team, 2, actor=OPERATOR)
        )
        print(f"  added {counts.added}, loads {sorted(counts.loads.values())}")
        again = timed(
            "assign again (nothing to add)",
            lambda: assign(engine, dataset.id, "spans", team, 2, actor=OPERATOR),
        )
        assert again.added == 0
        more = timed(
            "assign topped up to k = 3", lambda: assign(engine, dataset.id, "spans", team, 3, actor=OPERATOR)
        )
        print(f"  added {more.added}, loads {sorted(more.loads.values())}")

        # Half of each annotator's items finished (done, every tenth skipped), written in bulk.
        label_sets = {a: human_label_set(engine, dataset.id, a).id for a in team}
        rows = []
        for annotator_id in team:
            mine = assigned_items(engine, dataset.id, "spans", annotator_id)
            rows += [
                {
                    "label_set_id": label_sets[annotator_id],
                    "item_id": item_id,
                    "page": "spans",
                    "status": "skipped" if n % 10 == 0 else "done",
                    "version": 1,
                }
                for n, item_id in enumerate(mine[: len(mine) // 2])
            ]
        with write_session(engine) as session:
            session.execute(insert(m.ItemStatus), rows)
        if args.analyze and engine.dialect.name == "postgresql":
            with engine.begin() as connection:
                connection.exec_driver_sql("ANALYZE")

        per_annotator = timed(
            "progress_by_annotator", lambda: progress_by_annotator(engine, dataset.id, "spans")
        )
        print(f"  {[(p.assigned, p.done, p.skipped) for p in per_annotator[:2]]} …")
        timed(
            "progress_by_item, first page of 50", lambda: progress_by_item(engine, dataset.id, "spans", 0, 50)
        )
        last = max(0, args.items - 50)
        timed(
            "progress_by_item, last page of 50",
            lambda: progress_by_item(engine, dataset.id, "spans", last, 50),
        )
        first = team[0]
        own = label_sets[first]
        timed(
            "queue_size of one annotator",
            lambda: queue.queue_size(engine, dataset.id, "spans", assigned_to=first),
        )
        timed(
            "progress of one annotator",
            lambda: queue.progress(engine, dataset.id, own, "spans", assigned_to=first),
        )
        timed(
            "next_item of one annotator (past the finished half)",
            lambda: queue.next_item(engine, dataset.id, own, "spans", assigned_to=first),
        )
        timed(
            "next_item on the whole dataset, for comparison",
            lambda: queue.next_item(engine, dataset.id, own, "spans"),
        )
        timed(
            "progress on the whole dataset, for comparison",
            lambda: queue.progress(engine, dataset.id, own, "spans"),
        )
        engine.dispose()


if __name__ == "__main__":
    main()
