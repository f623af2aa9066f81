"""Dashboards and pages at scale: 89 K and 1 M AlignBench sentences, MHALO at 10 K items × 12 detectors.

Targets (issue "Scale"): the AlignBench tables with 1,000-resample intervals cold ≤ 1 s at 89 K
sentences and ≤ 3 s at 1 M; the MHALO tables and the failure finder at 10 K items × 12 detectors
≤ 1 s cold; warm ≤ 50 ms everywhere; and browsing (home, browse, item, the annotation pages, the
next-item queue) at 1 M sentences within 1.5× of the same pages on a 100-item dataset.

Stores. Each store is a SQLite file built once and kept in ``<tempdir>/spanlight-bench-scale`` (keyed by
its parameters and the schema's migration head), so a rerun starts measuring at once; ``--rebuild``
builds them again. A store is made by importing a synthetic seed through the importer (what a user's
import writes) and, for the 1 M store, copying the seed's rows ``--copies`` times inside the database
(``INSERT … SELECT`` with shifted ids, positions and external ids): the same rows an import would
write, at the speed of the database.

Measures, through the same per-revision caches the pages use (``components.live_reports``,
``components.span_cache``):

- cold: every cache cleared, as after any label is saved: bulk reads + every table with its intervals;
- warm: the same call again with the store unchanged (a rerun of the page);
- pages: median server time of a page rerun (Streamlit AppTest, the real app) on the 1 M-sentence
  dataset and on a 100-item dataset of the same shape, taking turns, and their ratio.

With ``--store postgres`` the dashboards and the pages are measured on PostgreSQL (127.0.0.1:5432,
database ``test``): the stores are built the same way, each in a schema of its own that is kept for
later runs.

    .venv/bin/python bench/bench_scale.py [--only dashboards|pages] [--repeats 5] [--large 1000000]
        [--case "browse: search"] [--store postgres]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("STREAMLIT_LOGGER_LEVEL", "error")  # AppTest outside a server warns on every run

import numpy as np  # noqa: E402
from sqlalchemy import Engine, text  # noqa: E402

from bench.bench_dashboards import DATASET as ALIGNBENCH_DATASET  # noqa: E402
from bench.bench_dashboards import synthesize as alignbench_bundle  # noqa: E402
from bench.bench_metrics import make_mhalo  # noqa: E402
from db import models as m  # noqa: E402
from db.access import OPERATOR  # noqa: E402
from db.engine import bump_revision, make_engine, write_session  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from formats.records import (  # noqa: E402
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SpanRecord,
)

BUILDER_VERSION = 2  # bump when what the builders write changes, so cached stores are rebuilt
MHALO_DATASET = "bench-mhalo"
MHALO_TOKENS = 72
MISSES_DETECTOR = "detector-00"  # X of the finder's misses preset: what it misses that the others find
# Child tables copied with their items, and the columns that point at rows copied alongside.
_COPIED = (
    ("sentences", {"item_id": "items"}),
    ("sentence_labels", {"item_id": "items", "sentence_id": "sentences"}),
    ("sentence_scores", {"item_id": "items", "sentence_id": "sentences"}),
    ("spans", {"item_id": "items"}),
    ("raw_outputs", {"item_id": "items"}),
)


# ------------------------------------------------------------------------------------------- stores


def _migration_head() -> str:
    versions = sorted((ROOT / "db" / "migrations" / "versions").glob("[0-9]*.py"))
    return versions[-1].stem.split("_")[0] if versions else "0"


def cached_store(name: str, build: Callable[[Engine], None], rebuild: bool) -> str:
    """The SQLite URL of store ``name``, built by ``build`` unless a copy from an earlier run exists."""
    folder = Path(tempfile.gettempdir()) / "spanlight-bench-scale"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}-schema{_migration_head()}-v{BUILDER_VERSION}.db"
    if rebuild or not path.exists():
        partial = path.with_suffix(".building")
        partial.unlink(missing_ok=True)
        engine = make_engine(f"sqlite:///{partial}")
        upgrade(engine)
        started = time.perf_counter()
        build(engine)
        engine.dispose()
        partial.replace(path)
        for sidecar in folder.glob(f"{partial.name}-*"):  # the engine's lock and journal files
            sidecar.unlink(missing_ok=True)
        print(f"  built {name} in {time.perf_counter() - started:.1f} s", flush=True)
    return f"sqlite:///{path}"


def copy_dataset(engine: Engine, dataset_name: str, copies: int) -> None:
    """Make ``copies`` of the dataset's items (with their sentences, labels, scores, spans and raw
    outputs) inside the database: ids, positions and external ids shifted, everything else the same.

    Assumes the dataset is the only one in a fresh store (ids are shifted by the tables' largest id).
    """
    with write_session(engine) as session:
        connection = session.connection()
        dataset_id = connection.execute(
            text("SELECT id FROM datasets WHERE name = :name"), {"name": dataset_name}
        ).scalar_one()
        tables = [m.Base.metadata.tables[name] for name in ("items", *(name for name, _ in _COPIED))]
        top = {
            t.name: connection.execute(text(f"SELECT COALESCE(MAX(id), 0) FROM {t.name}")).scalar_one()
            for t in tables
        }
        positions = connection.execute(
            text("SELECT MAX(position) + 1 FROM items WHERE dataset_id = :d"), {"d": dataset_id}
        ).scalar_one()
        refs: dict[str, dict[str, str]] = {"items": {}}
        refs.update(dict(_COPIED))
        for k in range(1, copies):
            for table in tables:
                shifted = {"id": f"id + {k * top[table.name]}"}
                shifted.update(
                    {col: f"{col} + {k * top[target]}" for col, target in refs[table.name].items()}
                )
                if table.name == "items":
                    shifted["position"] = f"position + {k * positions}"
                    shifted["external_id"] = f"external_id || '~{k}'"
                names = [c.name for c in table.columns]
                quoted = ", ".join(f'"{n}"' for n in names)
                values = ", ".join(shifted.get(n, f'"{n}"') for n in names)
                owner = (
                    "dataset_id = :d"
                    if table.name == "items"
                    else "item_id IN (SELECT id FROM items WHERE dataset_id = :d)"
                )
                connection.execute(
                    text(
                        f"INSERT INTO {table.name} ({quoted}) SELECT {values} FROM {table.name} "
                        f"WHERE id <= {top[table.name]} AND {owner}"
                    ),
                    {"d": dataset_id},
                )
        bump_revision(session)


PG_URL = "postgresql://postgres@127.0.0.1:5432/test"


def cached_postgres_store(name: str, build: Callable[[Engine], None], rebuild: bool) -> str:
    """:func:`cached_store` on PostgreSQL: the URL of a schema of its own, built unless built before."""
    import psycopg

    schema = f"bench_scale_{name.replace('-', '_')}_schema{_migration_head()}_v{BUILDER_VERSION}"
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        built = connection.execute("SELECT to_regclass(%s)", (f'"{schema}".bench_built',)).fetchone()
        if built is not None and built[0] is not None and not rebuild:
            return url
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        connection.execute(f'CREATE SCHEMA "{schema}"')
    engine = make_engine(url)
    upgrade(engine)
    started = time.perf_counter()
    build(engine)
    engine.dispose()
    # As autovacuum leaves a store a minute after an import (PostgreSQL vacuums after many inserts too):
    # the visibility map set, so a count an index holds is answered by the index alone.
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        tables = connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
        for (table,) in tables.fetchall():
            connection.execute(f'VACUUM ANALYZE "{schema}"."{table}"')
        connection.execute(f'CREATE TABLE "{schema}".bench_built (at timestamptz DEFAULT now())')
    print(f"  built {name} on PostgreSQL in {time.perf_counter() - started:.1f} s", flush=True)
    return url


def alignbench_store(n_sentences: int, copies: int, rebuild: bool, store: str = "sqlite") -> str:
    """AlignBench-shaped store of about ``n_sentences`` sentences (``copies`` copies of a seed)."""

    def build(engine: Engine) -> None:
        import_bundle(engine, alignbench_bundle(n_sentences // copies), actor=OPERATOR, source="bench")
        if copies > 1:
            copy_dataset(engine, ALIGNBENCH_DATASET, copies)

    cached = cached_postgres_store if store == "postgres" else cached_store
    return cached(f"alignbench-{n_sentences}-x{copies}", build, rebuild)


def mhalo_bundle(n_items: int, n_detectors: int, seed: int = 11) -> Bundle:
    """MHALO-shaped dataset: 72-token responses, gold spans and ``n_detectors`` detectors' spans
    (about 5 % of their outputs broke the format), in five subsets."""
    sizes = {name: n_items // 5 for name in ("RLHF-V", "M-HalDetect", "Geo170K", "MathV360K", "MC")}
    data = make_mhalo(np.random.default_rng(seed), sizes, n_detectors)
    response = " ".join(f"w{k}" for k in range(MHALO_TOKENS))
    starts = [0]
    for k in range(1, MHALO_TOKENS):
        starts.append(starts[-1] + len(f"w{k - 1}") + 1)

    def chars(spans: list[tuple[int, int]], typed: bool) -> list[SpanRecord]:
        out = []
        for s, e in spans:
            s, e = min(s, MHALO_TOKENS - 1), min(e, MHALO_TOKENS)
            end = starts[e - 1] + len(f"w{e - 1}")
            out.append(
                SpanRecord(starts[s], end, ("Object", "Attribute", "Relation")[s % 3] if typed else None)
            )
        return out

    ids = [f"m-{k:06d}" for k in range(len(data["golds"]))]
    items = [
        ItemRecord(i, response, subset=subset, source_model=f"model-{k % 4}")
        for k, (i, subset) in enumerate(zip(ids, data["subsets"], strict=True))
    ]
    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[Annotations(i, spans=chars(g, True)) for i, g in zip(ids, data["golds"], strict=True)],
    )
    detectors = [
        LabelSetRecord(
            "detector",
            f"detector-{d:02d}",  # detector-00 is MISSES_DETECTOR
            annotations=[
                Annotations(
                    i,
                    spans=chars(p, False),
                    raw_output=RawOutputRecord("…", follows_format=ok),
                )
                for i, p, ok in zip(ids, preds, oks, strict=True)
            ],
        )
        for d, (preds, oks) in enumerate(zip(data["preds"], data["ok"], strict=True))
    ]
    return Bundle(
        DatasetRecord(
            MHALO_DATASET, "canonical", taxonomy=["Object", "Attribute", "Relation"], label_kinds=["span"]
        ),
        items,
        [gold, *detectors],
    )


def mhalo_store(n_items: int, n_detectors: int, rebuild: bool, store: str = "sqlite") -> str:
    def build(engine: Engine) -> None:
        import_bundle(engine, mhalo_bundle(n_items, n_detectors), actor=OPERATOR, source="bench")

    cached = cached_postgres_store if store == "postgres" else cached_store
    return cached(f"mhalo-{n_items}-d{n_detectors}", build, rebuild)


# --------------------------------------------------------------------------------------- dashboards


def _quiet_streamlit() -> None:
    for name in (
        "streamlit",
        "streamlit.runtime.scriptrunner_utils.script_runner",
        "streamlit.runtime.scriptrunner.script_runner",
        "streamlit.runtime.caching.cache_data_api",
        "streamlit.runtime.scriptrunner_utils.script_run_context",
    ):
        logging.getLogger(name).setLevel(logging.ERROR)


def _dataset_id(engine: Engine, name: str) -> int:
    from db.repositories.datasets import get_dataset

    dataset = get_dataset(engine, name)
    if dataset is None:
        raise SystemExit(f"The store has no dataset {name!r}.")
    return dataset.id


def dashboard_calls(url: str, dataset: str, kind: str) -> tuple[Engine, Callable[[], object]]:
    """What the page computes for one dashboard, through the page's per-revision caches."""
    from analysis.failure_finder import FinderQuery
    from analysis.reports import alignbench, mhalo
    from analysis.reports.data import ReportFilter
    from components import live_reports as live
    from components import span_cache

    engine = make_engine(url)
    dataset_id = _dataset_id(engine, dataset)
    flt = ReportFilter()
    if kind == "alignbench":
        return engine, lambda: live.section_report(engine, alignbench.KEY, dataset_id, flt, n_resamples=1000)
    if kind == "mhalo":
        return engine, lambda: live.section_report(engine, mhalo.KEY, dataset_id, flt)

    # "finder: misses" opens on the preset that needs every detector's matching itself (which gold
    # spans it pairs), worked out only when a view asks for it.
    query = (
        FinderQuery(preset="misses", detector=MISSES_DETECTOR) if kind == "finder: misses" else FinderQuery()
    )

    def finder() -> object:
        span_cache.finder_tables(engine, dataset_id, 0.5)
        return span_cache.finder_selection(engine, dataset_id, query)

    return engine, finder


def dashboards(args: argparse.Namespace) -> None:
    import streamlit as st

    from bench.bench_dashboards import timed

    _quiet_streamlit()  # again: importing streamlit sets its loggers' levels

    def clear() -> None:
        st.cache_data.clear()
        st.cache_resource.clear()

    cases = [
        (
            f"AlignBench tables, {args.sentences:,} sentences",
            alignbench_store(args.sentences, 1, args.rebuild, args.store),
            ALIGNBENCH_DATASET,
            "alignbench",
            1.0,
        ),
        (
            f"AlignBench tables, {args.large:,} sentences",
            alignbench_store(args.large, args.copies, args.rebuild, args.store),
            ALIGNBENCH_DATASET,
            "alignbench",
            3.0,
        ),
        (
            f"MHALO tables, {args.mhalo_items:,} items x {args.detectors}",
            mhalo_store(args.mhalo_items, args.detectors, args.rebuild, args.store),
            MHALO_DATASET,
            "mhalo",
            1.0,
        ),
        (
            f"failure finder, {args.mhalo_items:,} items x {args.detectors}",
            mhalo_store(args.mhalo_items, args.detectors, args.rebuild, args.store),
            MHALO_DATASET,
            "finder",
            1.0,
        ),
        (
            f"failure finder, misses, {args.mhalo_items:,} x {args.detectors}",
            mhalo_store(args.mhalo_items, args.detectors, args.rebuild, args.store),
            MHALO_DATASET,
            "finder: misses",
            1.0,
        ),
    ]
    print(f"\ndashboards ({args.store}), median of {args.repeats} (wall; cpu of this process)")
    print(f"{'dashboard':<44}{'cold ms':>10}{'cpu ms':>9}{'target':>8}{'warm ms':>10}  verdict")
    for label, url, dataset, kind, target in cases:
        engine, call = dashboard_calls(url, dataset, kind)
        cold = timed(call, args.repeats, before=clear)
        call()
        warm = timed(call, args.repeats)
        ok = cold["wall"] <= target and warm["wall"] <= 0.050
        print(
            f"{label:<44}{cold['wall'] * 1000:>10.1f}{cold['cpu'] * 1000:>9.1f}{target * 1000:>8.0f}"
            f"{warm['wall'] * 1000:>10.1f}  {'meets' if ok else 'MISSES'}",
            flush=True,
        )
        engine.dispose()


# -------------------------------------------------------------------------------------------- pages

USER = "bench-annotator"


class Page:
    """One page of the real app in AppTest on one store, showing items spread over the dataset."""

    def __init__(self, url: str, page: str) -> None:
        from streamlit.testing.v1 import AppTest

        self.url = url
        engine = make_engine(url)
        dataset_id = _dataset_id(engine, ALIGNBENCH_DATASET)
        with engine.connect() as connection:
            ids = [
                row[0]
                for row in connection.execute(
                    text("SELECT external_id FROM items WHERE dataset_id = :d ORDER BY position"),
                    {"d": dataset_id},
                )
            ]
        engine.dispose()
        self.items = [ids[(k * 7919) % len(ids)] for k in range(64)]
        os.environ["DATABASE_URL"] = url
        self.at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        self.at.query_params.update({"dataset": ALIGNBENCH_DATASET, "item": self.items[0], "user": USER})
        self.at.run()
        _quiet_streamlit()  # the app's first run sets Streamlit's loggers' levels again
        self.at.switch_page(page).run()
        self.check()
        from db.repositories import text_search

        # Opening the browser starts reading the dataset's texts for search: a person takes longer to type
        # a word than that takes (the first search's own cost is measured apart: ``search_texts``).
        text_search.settle()

    def check(self) -> None:
        assert not self.at.exception, self.at.exception

    def timed(self, action: Callable[[Any, int], object], k: int) -> float:
        os.environ["DATABASE_URL"] = self.url  # the sessions take turns; the app reads the variable
        started = time.perf_counter()
        action(self.at, k)
        elapsed = time.perf_counter() - started
        self.check()
        return elapsed


def _rerun(at: Any, k: int) -> object:
    return at.run()


def _other_item(at: Any, k: int, items: list[str]) -> object:
    at.query_params["item"] = items[k % len(items)]
    return at.run()


def _search(at: Any, k: int) -> object:
    return at.text_input(key="browse_q").set_value(f"cap-{k % 7:03d}" if k % 2 else "street").run()


def _rare_search(at: Any, k: int) -> object:
    # Found nowhere: no early stop, so every item's texts are searched (a new word each time, so no page
    # cache answers it; the texts held in memory do, once read: ``db.repositories.text_search``).
    return at.text_input(key="browse_q").set_value(f"zebra {k}").run()


def _filter(at: Any, k: int) -> object:
    from bench.bench_dashboards import CAPTIONERS

    return at.multiselect(key="browse_models").set_value([CAPTIONERS[k % len(CAPTIONERS)]]).run()


def _paging(at: Any, k: int) -> object:
    return at.number_input(key="browse_page").set_value(2 + k % 5).run()


def _next(at: Any, k: int) -> object:
    return at.button(key="frame_next").click().run()


def pages(args: argparse.Namespace) -> None:
    from functools import partial

    small = alignbench_store(700, 1, args.rebuild, args.store)  # 100 captions of seven sentences
    large = alignbench_store(args.large, args.copies, args.rebuild, args.store)
    # What each rerun does: "rerun" the page as it is, show another "item", or an action on a widget.
    cases: list[tuple[str, str, str | Callable[[Any, int], object]]] = [
        ("home", "app_pages/home.py", "rerun"),
        ("browse", "app_pages/browse.py", "rerun"),
        ("browse: search", "app_pages/browse.py", _search),
        ("browse: search, no match", "app_pages/browse.py", _rare_search),
        ("browse: filter", "app_pages/browse.py", _filter),
        ("browse: next page", "app_pages/browse.py", _paging),
        ("item", "app_pages/item.py", "item"),
        ("sentences (annotate)", "app_pages/sentences.py", "item"),
        ("spans (annotate)", "app_pages/spans.py", "item"),
        ("claims (annotate)", "app_pages/claims.py", "item"),
        ("triplets (annotate)", "app_pages/triplets.py", "item"),
        ("next item (sentences queue)", "app_pages/sentences.py", _next),
    ]
    print(
        f"\npages ({args.store}): server time of a rerun, median of {args.page_repeats}, 100 items vs "
        f"{args.large:,} sentences"
    )
    print(f"{'page':<30}{'100 items ms':>14}{'1 M ms':>10}{'ratio':>8}  verdict")
    for label, page, action in cases:
        if args.case and args.case not in label:
            continue
        sessions = {"small": Page(small, page), "large": Page(large, page)}
        times: dict[str, list[float]] = {name: [] for name in sessions}
        for k in range(args.page_repeats):
            for name, session in sessions.items():
                if action == "item":
                    act: Callable[[Any, int], object] = partial(_other_item, items=session.items)
                elif action == "rerun":
                    act = _rerun
                else:
                    assert callable(action)
                    act = action
                times[name].append(session.timed(act, k))
        base, big = statistics.median(times["small"]), statistics.median(times["large"])
        print(
            f"{label:<30}{base * 1000:>14.1f}{big * 1000:>10.1f}{big / base:>8.2f}  {'meets' if big / base <= 1.5 else 'MISSES'}",
            flush=True,
        )
    if not args.case or args.case in "browse: search, no match":
        search_texts(large)


def search_texts(url: str) -> None:
    """The first search of a dataset in an app process: the store answers it, and a thread reads and
    indexes the dataset's texts for the searches after it. How long that reading takes, and how much
    the index holds."""
    import tracemalloc

    from db.engine import read_session
    from db.repositories import text_search

    engine = make_engine(url)
    dataset_id = _dataset_id(engine, ALIGNBENCH_DATASET)

    def first_search() -> float:
        text_search.forget()
        started = time.perf_counter()
        with read_session(engine) as session:
            text_search.matching_items(engine, session, dataset_id, "zebra", 1000)
        text_search.settle()
        return time.perf_counter() - started

    took = statistics.median(first_search() for _ in range(3))
    tracemalloc.start()  # a run of its own: tracing slows the reading threefold
    first_search()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    with read_session(engine) as session:
        found = text_search.matching_items(engine, session, dataset_id, "zebra", 1000)
        assert found is not None and found.ids == []
    print(
        f"search texts read and indexed in {took:.2f} s (median of 3; once per app process and dataset),"
        f" holding {text_search.held_bytes() / 1e6:.0f} MB; {peak / 1e6:.0f} MB at the peak of reading"
    )
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=("dashboards", "pages"))
    parser.add_argument("--sentences", type=int, default=89_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument(
        "--copies", type=int, default=12, help="the large store is this many copies of a seed"
    )
    parser.add_argument("--mhalo-items", type=int, default=10_000)
    parser.add_argument("--detectors", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--page-repeats", type=int, default=15)
    parser.add_argument("--case", default="", help="only the pages whose label holds this text")
    parser.add_argument("--rebuild", action="store_true", help="build the stores again")
    parser.add_argument(
        "--store",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="the store the dashboards and pages read",
    )
    args = parser.parse_args()
    _quiet_streamlit()
    print("stores:", flush=True)
    if args.only != "pages":
        dashboards(args)
    if args.only != "dashboards":
        pages(args)


if __name__ == "__main__":
    main()
