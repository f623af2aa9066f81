"""Dashboard metric time at AlignBench scale: 89 K sentences, 8 captioning models, 5 detectors.

Synthesizes the dataset straight into a temporary SQLite store (gold sentence labels with error types,
about 3 % "unknown", and five detectors' 0-100 correctness scores with a positional bias and a
preference for their own captions), then times what the Metrics page computes for its AlignBench
section through the same per-revision caches the page uses:

- cold first paint: every cache cleared (as after any label is saved): bulk reads + every table and
  figure's numbers with point estimates; the page draws these first;
- cold complete: the same with the default 1,000 bootstrap resamples for the intervals, which the page
  draws in place of the first paint when they are ready;
- warm: the same call again with the store unchanged (a rerun of the page).

Prints medians of 7 runs, wall-clock and CPU time of this process (the CPU figure is what the code
costs when the machine is shared), and the cold split: reads, point estimates and intervals.

    .venv/bin/python bench/bench_dashboards.py [--sentences 89000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from db.access import OPERATOR  # noqa: E402
from db.engine import make_engine  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.migrate import upgrade  # noqa: E402
from formats.records import (  # noqa: E402
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SentenceScoreRecord,
)
from formats.taxonomies import ALIGNBENCH  # noqa: E402

CAPTIONERS = ("s-gpt", "llava", "qwen-2", "gpt-4o", "cogvlm", "llama-4", "sd", "gpt-gen")
DETECTORS = ("gpt-4o", "llama-4", "qwen-2.5", "gemma-3", "gpt-5-mini")
WORDS = [
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
    "two",
    "three",
    "on",
    "near",
]
SENTENCES_PER_CAPTION = 7
DATASET = "bench-alignbench"


def synthesize(n_sentences: int, seed: int = 7) -> Bundle:
    rng = random.Random(seed)
    n_items = n_sentences // SENTENCES_PER_CAPTION
    items, gold = [], []
    runs: dict[str, list[Annotations]] = {d: [] for d in DETECTORS}
    for k in range(n_items):
        parts, offsets, text = [], [], ""
        for _ in range(SENTENCES_PER_CAPTION):
            sentence = " ".join(rng.choice(WORDS) for _ in range(9)).capitalize() + "."
            start = len(text) + (1 if text else 0)
            text = f"{text} {sentence}" if text else sentence
            offsets.append(SentenceRecord(start, start + len(sentence)))
            parts.append(sentence)
        captioner = CAPTIONERS[k % len(CAPTIONERS)]
        items.append(
            ItemRecord(
                f"cap-{k:06d}",
                text,
                source_model=captioner,
                task_type="text-to-image" if captioner in ("sd", "gpt-gen") else "image-to-text",
                sentences=offsets,
            )
        )
        labels = []
        for s in range(SENTENCES_PER_CAPTION):
            r = rng.random()
            label = "incorrect" if r < 0.12 else "unknown" if r < 0.15 else "correct"
            labels.append(
                SentenceLabelRecord(s, label, rng.choice(ALIGNBENCH) if label == "incorrect" else None)
            )
        gold.append(Annotations(items[-1].external_id, sentence_labels=labels))
        for detector in DETECTORS:
            scores = []
            for s, record in enumerate(labels):
                mean = 35 if record.label == "incorrect" else 70
                if record.label == "incorrect" and detector == captioner:
                    mean += 15  # detectors go easy on their own captions (AlignBench Figure 8)
                value = rng.gauss(mean - 2 * s, 18)  # and favour early sentences (Figure 7)
                scores.append(SentenceScoreRecord(s, float(min(100, max(0, round(value))))))
            runs[detector].append(Annotations(items[-1].external_id, sentence_scores=scores))
    label_sets = [LabelSetRecord("gold", "gold", annotations=gold)]
    label_sets += [LabelSetRecord("detector", name, annotations=anns) for name, anns in runs.items()]
    return Bundle(
        DatasetRecord(DATASET, "canonical", taxonomy=list(ALIGNBENCH), label_kinds=["sentence"]),
        items,
        label_sets,
    )


def timed(
    fn: Callable[[], object], repeats: int, before: Callable[[], None] = lambda: None
) -> dict[str, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        before()
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


def show(label: str, times: dict[str, float]) -> None:
    print(f"  {label:44} {times['wall'] * 1000:8.1f} ms wall   {times['cpu'] * 1000:8.1f} ms cpu")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=89_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    for name in (
        "streamlit.runtime.caching.cache_data_api",
        "streamlit.runtime.scriptrunner_utils.script_run_context",
    ):
        logging.getLogger(name).setLevel(logging.ERROR)
    import streamlit as st

    from analysis.reports import alignbench
    from analysis.reports.base import Report
    from analysis.reports.data import ReportFilter
    from components import live_reports as live
    from db.repositories.datasets import get_dataset

    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        upgrade(engine)
        started = time.perf_counter()
        bundle = synthesize(args.sentences)
        import_bundle(engine, bundle, actor=OPERATOR, source="bench")
        dataset = get_dataset(engine, DATASET)
        if dataset is None:
            raise SystemExit(f"The import did not create the dataset {DATASET!r}.")
        n = sum(len(i.sentences or []) for i in bundle.items)
        print(
            f"AlignBench-scale store: {len(bundle.items):,} captions, {n:,} sentences, {len(DETECTORS)} detectors, "
            f"{len(CAPTIONERS)} captioning models (built in {time.perf_counter() - started:.1f} s)"
        )
        flt = ReportFilter()

        def clear() -> None:
            st.cache_data.clear()
            st.cache_resource.clear()

        def dashboard(n_resamples: int = 1000) -> Report:
            return live.section_report(engine, alignbench.KEY, dataset.id, flt, n_resamples=n_resamples)

        print(f"median of {args.repeats}:")
        show(
            "cold first paint (reads + point estimates)",
            timed(lambda: dashboard(0), args.repeats, before=clear),
        )
        show("cold complete (reads + metrics + intervals)", timed(dashboard, args.repeats, before=clear))
        dashboard()
        show("warm (store unchanged)", timed(dashboard, args.repeats))

        inputs = alignbench.load(engine, dataset.id)
        print("cold split:")
        show("bulk reads", timed(lambda: alignbench.load(engine, dataset.id), args.repeats))
        points = timed(lambda: alignbench.build(inputs, flt, n_resamples=0), args.repeats)
        show("metrics, point estimates", points)
        full = timed(lambda: alignbench.build(inputs, flt), args.repeats)
        show("metrics with 1,000-resample intervals", full)
        show("  of which the intervals", {k: full[k] - points[k] for k in full})
        report = dashboard()
        table = report.tables["table3"].frame.set_index("detector")
        print("sanity: Avg AUROC " + ", ".join(f"{d} {v:.1f}" for d, v in table[alignbench.AVG].items()))
        engine.dispose()


if __name__ == "__main__":
    main()
