"""Time of promoting agreed items by a rule over gold imported with the dataset: the dry run the page
and ``cli.py promote --dry-run`` show, and the real run, which holds the store's write lock throughout
(on SQLite, annotators' saves wait for it).

Builds a dataset of ``--items`` items of three sentences in a fresh SQLite store (or ``--db``: an empty,
migrated database), two annotators who call sentence 2 incorrect on every item, and gold imported with
the dataset that calls it correct, so the rule replaces one imported label per item and the run must
name them all. ``--log`` edit-log entries on those items (other label sets' edits) stand for a store in
use: the check of where gold came from reads the log item by item. Each run starts from a copy of the
store as built; the medians of ``--repeat`` runs are printed.

    .venv/bin/python bench/bench_promote.py [--items 20000] [--log 200000] [--repeat 3] [--db URL]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import Engine, insert, select  # noqa: E402

from analysis.adjudication import RULES  # noqa: E402
from db import models as m  # noqa: E402
from db.access import OPERATOR  # noqa: E402
from db.engine import make_engine  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from db.repositories.adjudication import promote_by_rule  # noqa: E402
from formats.records import (  # noqa: E402
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SentenceRecord,
)

TEXT = "The red cube sits on a blue table near the window. The ball is green. Two cats sleep."
SENTENCES = [SentenceRecord(0, 50), SentenceRecord(51, 69), SentenceRecord(70, 85)]
NAME = "bench-promote"


def _build(engine: Engine, items: int, log: int) -> int:
    records = [ItemRecord(f"it-{k:06d}", TEXT, sentences=SENTENCES) for k in range(items)]

    def labels(second: str) -> list[Annotations]:
        return [
            Annotations(
                item=r.external_id,
                sentence_labels=[
                    SentenceLabelRecord(0, "correct"),
                    SentenceLabelRecord(1, second, "Object" if second == "incorrect" else None),
                    SentenceLabelRecord(2, "correct"),
                ],
            )
            for r in records
        ]

    label_sets = [
        *(
            LabelSetRecord(kind="human", name=who, annotator=who, annotations=labels("incorrect"))
            for who in "ab"
        ),
        LabelSetRecord(kind="gold", name="gold", annotations=labels("correct")),
    ]
    import_bundle(
        engine, Bundle(DatasetRecord(NAME, "canonical"), records, label_sets), source="bench", actor=OPERATOR
    )
    with engine.begin() as connection:
        dataset = connection.scalar(select(m.Dataset.id).where(m.Dataset.name == NAME))
        item_ids = list(connection.scalars(select(m.Item.id).where(m.Item.dataset_id == dataset)))
        human = list(connection.scalars(select(m.LabelSet.id).where(m.LabelSet.kind == "human")))
        rows = [
            {
                "action": "update",
                "entity": "sentence_labels",
                "entity_id": k,
                "item_id": item_ids[k % len(item_ids)],
                "label_set_id": human[k % len(human)],
                "before": {"label": "correct"},
                "after": {"label": "incorrect", "description": "an annotator's edit"},
            }
            for k in range(log)
        ]
        for start in range(0, len(rows), 20_000):
            connection.execute(insert(m.EditLog), rows[start : start + 20_000])
    assert dataset is not None
    return int(dataset)


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--log", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", help="an empty, migrated database (default: a new SQLite file per run)")
    args = parser.parse_args()
    rule = RULES["majority"]
    with tempfile.TemporaryDirectory() as folder:
        built = Path(folder) / "built.db"
        engine = make_engine(args.db or f"sqlite:///{built}")
        upgrade(engine)
        start = time.perf_counter()
        dataset = _build(engine, args.items, args.log)
        print(
            f"{engine.dialect.name}: {args.items} items, {args.log} edit-log entries, built in {time.perf_counter() - start:.1f} s"
        )
        engine.dispose()
        dry: list[float] = []
        real: list[float] = []
        for run in range(args.repeat):
            if args.db:
                url = args.db
            else:
                copy = Path(folder) / f"run-{run}.db"
                shutil.copy(built, copy)
                url = f"sqlite:///{copy}"
            engine = make_engine(url)
            took, preview = _timed(
                partial(promote_by_rule, engine, dataset, "sentences", rule, actor=OPERATOR, dry_run=True)
            )
            dry.append(took)
            imported = getattr(preview, "imported", None)  # older versions named none
            confirm = {"replacing": imported.digest} if imported is not None else {}
            took, done = _timed(
                partial(promote_by_rule, engine, dataset, "sentences", rule, actor=OPERATOR, **confirm)
            )
            real.append(took)
            named = len(imported.rows) if imported is not None else "-"
            print(
                f"run {run + 1}: dry run {dry[-1]:.2f} s, real run {real[-1]:.2f} s ({len(done.promoted)} promoted, {named} imported labels named)"
            )
            engine.dispose()
            if args.db:
                break  # the database now holds the promotions: a second run would find nothing to do
        print(f"median: dry run {statistics.median(dry):.2f} s, real run {statistics.median(real):.2f} s")


if __name__ == "__main__":
    main()
