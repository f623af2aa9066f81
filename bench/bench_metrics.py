"""Time the metric tables at the scale of the papers, next to a plain-Python baseline.

Data are generated with a fixed seed at the size of the published benchmarks:

- MHALO: 2,155 items in 5 subsets (500 x 4 + 155), about 4 gold spans per item, 12 detectors whose
  outputs sometimes fail the format; the table is F1_M, F1_IoU and IF per subset and overall for every
  detector (MHALO Table 3).
- AlignBench: 89 K sentences from 8 captioning models scored 0-100 by 5 detectors; the table is the
  AUROC of every detector within every captioner (AlignBench Table 3).
- HalLoc: 1 M token probabilities; ECE and ACE with 10 bins.

Every row prints the median of 7 runs of the library next to the median of 7 runs of a straightforward
pure-Python implementation of the same definition, computed in the same process on the same data, and
checks that both give the same numbers.

    .venv/bin/python bench/bench_metrics.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402

SEED = 20_240_601
MHALO_SUBSETS = {"RLHF-V": 500, "M-HalDetect": 500, "Geo170K": 500, "MathV360K": 500, "MC": 155}
N_DETECTORS = 12
ALIGNBENCH_SENTENCES = 89_000
CAPTIONERS = ["ShareGPT", "LLaVA", "Qwen-2", "GPT-4o", "CogVLM", "Llama-4", "SD", "GPT-Gen"]
ALIGNBENCH_DETECTORS = ["Qwen-2.5-7B", "Qwen-2.5-32B", "Gemma-3", "Llama-4", "GPT-5-mini"]
N_PROBABILITIES = 1_000_000

Span = tuple[int, int]  # a token interval [start, end)


# --------------------------------------------------------------------------------------------- data


def make_mhalo(
    rng: np.random.Generator, sizes: dict[str, int] | None = None, n_detectors: int = N_DETECTORS
) -> dict[str, Any]:
    """Token spans of gold annotations and of ``n_detectors`` detectors that find, shift, miss and invent
    spans, over subsets of the given sizes (MHALO's by default)."""
    subsets, golds = [], []
    for name, size in (sizes or MHALO_SUBSETS).items():
        for _ in range(size):
            subsets.append(name)
            golds.append(_random_spans(rng, int(rng.poisson(4.0)), length=72))
    preds, ok = [], []
    for d in range(n_detectors):
        skill = 0.3 + 0.04 * d
        detector_preds, detector_ok = [], []
        for gold in golds:
            spans = []
            for start, end in gold:
                if rng.random() < skill:
                    shift = int(rng.integers(-1, 2))
                    grow = int(rng.integers(-1, 3))
                    s = max(0, start + shift)
                    spans.append((s, max(s + 1, end + shift + grow)))
            spans += _random_spans(rng, int(rng.poisson(1.5)), length=72)
            detector_preds.append(spans)
            detector_ok.append(bool(rng.random() < 0.95))
        preds.append(detector_preds)
        ok.append(detector_ok)
    return {"subsets": subsets, "golds": golds, "preds": preds, "ok": ok}


def _random_spans(rng: np.random.Generator, count: int, length: int) -> list[tuple[int, int]]:
    starts = rng.integers(0, length - 1, count)
    widths = rng.integers(1, 7, count)  # MHALO: most hallucinated segments are under 5 tokens
    return [(int(s), int(s + w)) for s, w in zip(starts, widths, strict=True)]


def make_alignbench(rng: np.random.Generator) -> dict[str, Any]:
    groups = rng.choice(CAPTIONERS, ALIGNBENCH_SENTENCES)
    labels = (rng.random(ALIGNBENCH_SENTENCES) < 0.8).astype(np.int8)  # 1 = correct sentence
    scores = {}
    for k, name in enumerate(ALIGNBENCH_DETECTORS):
        signal = rng.normal(50 + (10 + 4 * k) * labels, 25)
        scores[name] = np.clip(np.round(signal), 0, 100)  # detectors answer an integer 0-100
    return {"labels": labels, "groups": groups, "scores": scores}


def make_probabilities(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    probs = rng.beta(0.6, 2.5, N_PROBABILITIES)
    labels = (rng.random(N_PROBABILITIES) < probs**1.2).astype(np.int8)
    return probs, labels


# ------------------------------------------------------------------------------- library versions


def mhalo_table_library(data: dict[str, Any]) -> list[dict[Hashable, dict[str, float]]]:
    return [
        metrics.span_detection_table(data["subsets"], data["preds"][d], data["golds"], data["ok"][d])
        for d in range(N_DETECTORS)
    ]


def alignbench_table_library(data: dict[str, Any], n_resamples: int = 0) -> np.ndarray:
    return metrics.auroc_table(data["labels"], data["scores"], data["groups"], n_resamples=n_resamples).auroc


def calibration_library(probs: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    return metrics.ece(probs, labels), metrics.ace(probs, labels)


# ---------------------------------------------------------------------------- plain-Python baseline


def _py_iou(a: Span, b: Span) -> float:
    inter = min(a[1], b[1]) - max(a[0], b[0])
    if inter <= 0:
        return 0.0
    return inter / ((a[1] - a[0]) + (b[1] - b[0]) - inter)


def _py_matching(pred: list[Span], gold: list[Span], threshold: float) -> int:
    adjacency = [[j for j, g in enumerate(gold) if _py_iou(p, g) >= threshold] for p in pred]
    owner = [-1] * len(gold)

    def augment(i: int, seen: set[int]) -> bool:
        for j in adjacency[i]:
            if j not in seen:
                seen.add(j)
                if owner[j] == -1 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(pred)))


def _py_f1_iou(pred: list[Span], gold: list[Span]) -> float:
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    return 2 * _py_matching(pred, gold, 0.5) / (len(pred) + len(gold))


def _py_f1_m(pred: list[Span], gold: list[Span]) -> float:
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0

    def pm(outer: Span, others: list[Span]) -> float:
        ratios = [(e - s) / (outer[1] - outer[0]) for s, e in others if s >= outer[0] and e <= outer[1]]
        return max(ratios, default=0.0)

    rec = sum(pm(g, pred) for g in gold) / len(gold)
    prec = sum(pm(p, gold) for p in pred) / len(pred)
    return 0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)


def mhalo_table_baseline(data: dict[str, Any]) -> list[dict[str, dict[str, float]]]:
    tables = []
    for d in range(N_DETECTORS):
        sums: dict[str, list[float]] = {}
        for subset, pred, gold, ok in zip(
            data["subsets"], data["preds"][d], data["golds"], data["ok"][d], strict=True
        ):
            row = sums.setdefault(subset, [0.0, 0.0, 0.0, 0])
            if ok:
                row[0] += _py_f1_m(pred, gold)
                row[1] += _py_f1_iou(pred, gold)
                row[2] += 1
            row[3] += 1
        table = {
            s: {"f1_m": m / n, "f1_iou": i / n, "if_rate": f / n, "n": n} for s, (m, i, f, n) in sums.items()
        }
        total = sum(r[3] for r in sums.values())
        table["overall"] = {
            key: sum(r[k] for r in sums.values()) / total
            for k, key in enumerate(["f1_m", "f1_iou", "if_rate"])
        }
        table["overall"]["n"] = total
        tables.append(table)
    return tables


def _py_auroc(labels: list[int], scores: list[float]) -> float:
    order = sorted(range(len(scores)), key=scores.__getitem__)
    rank = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            rank[order[k]] = (i + j + 2) / 2
        i = j + 1
    n_pos = sum(labels)
    n_neg = len(labels) - n_pos
    rank_sum = sum(r for r, y in zip(rank, labels, strict=True) if y == 1)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def alignbench_table_baseline(data: dict[str, Any]) -> np.ndarray:
    labels = data["labels"].tolist()
    groups = data["groups"].tolist()
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    table = np.empty((len(ALIGNBENCH_DETECTORS), len(members)))
    for d, name in enumerate(ALIGNBENCH_DETECTORS):
        scores = data["scores"][name].tolist()
        for c, idx in enumerate(members.values()):
            table[d, c] = _py_auroc([labels[i] for i in idx], [scores[i] for i in idx])
    return table


def calibration_baseline(probs: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    p, y, n_bins = probs.tolist(), labels.tolist(), 10
    count, conf, acc = [0] * n_bins, [0.0] * n_bins, [0.0] * n_bins
    for pi, yi in zip(p, y, strict=True):
        b = min(int(pi * n_bins), n_bins - 1)
        count[b] += 1
        conf[b] += pi
        acc[b] += yi
    n = len(p)
    ece = sum(count[b] / n * abs(acc[b] / count[b] - conf[b] / count[b]) for b in range(n_bins) if count[b])
    order = sorted(range(n), key=p.__getitem__)
    size, extra = divmod(n, n_bins)
    gaps, start = [], 0
    for b in range(n_bins):
        stop = start + size + (b < extra)
        group = order[start:stop]
        if group:
            gaps.append(abs(sum(y[i] for i in group) / len(group) - sum(p[i] for i in group) / len(group)))
        start = stop
    return ece, sum(gaps) / len(gaps)


# -------------------------------------------------------------------------------------------- runner


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def same_tables(
    a: Sequence[Mapping[Any, Mapping[str, float]]], b: Sequence[Mapping[Any, Mapping[str, float]]]
) -> bool:
    return all(
        np.isclose(ta[s][k], tb[s][k], rtol=0, atol=1e-12)
        for ta, tb in zip(a, b, strict=True)
        for s in ta
        for k in ta[s]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    mhalo = make_mhalo(rng)
    alignbench = make_alignbench(rng)
    probs, prob_labels = make_probabilities(rng)
    n_gold = sum(map(len, mhalo["golds"]))
    n_pred = sum(len(p) for detector in mhalo["preds"] for p in detector)
    print(
        f"MHALO scale: {len(mhalo['golds']):,} items, {n_gold:,} gold spans, {N_DETECTORS} detectors, {n_pred:,} predicted spans"
    )
    print(
        f"AlignBench scale: {ALIGNBENCH_SENTENCES:,} sentences, {len(CAPTIONERS)} captioners, {len(ALIGNBENCH_DETECTORS)} detectors"
    )
    print(f"HalLoc scale: {N_PROBABILITIES:,} token probabilities")
    print(f"median of {args.repeats} runs each\n")

    rows = [
        (
            "MHALO table: F1_M, F1_IoU, IF (12 det x 5 subsets)",
            lambda: mhalo_table_library(mhalo),
            lambda: mhalo_table_baseline(mhalo),
            same_tables,
            0.3,
        ),
        (
            "AlignBench AUROC table (5 det x 8 captioners)",
            lambda: alignbench_table_library(alignbench),
            lambda: alignbench_table_baseline(alignbench),
            lambda a, b: np.allclose(a, b, rtol=0, atol=1e-12),
            0.2,
        ),
        (
            "ECE + ACE, 10 bins, 1 M probabilities",
            lambda: calibration_library(probs, prob_labels),
            lambda: calibration_baseline(probs, prob_labels),
            lambda a, b: np.allclose(a, b, rtol=0, atol=1e-9),
            0.2,
        ),
    ]
    header = f"{'table':<52} {'library s':>10} {'baseline s':>11} {'speed-up':>9} {'target s':>9}  result"
    print(header)
    print("-" * len(header))
    all_ok = True
    for name, library, baseline, agree, target in rows:
        t_lib, r_lib = median_time(library, args.repeats)
        t_base, r_base = median_time(baseline, args.repeats)
        same = agree(r_lib, r_base)
        within = t_lib <= target
        all_ok &= same and within
        verdict = ("ok" if within else "SLOW") + ("" if same else ", RESULTS DIFFER")
        print(f"{name:<52} {t_lib:>10.4f} {t_base:>11.4f} {t_base / t_lib:>8.1f}x {target:>9.2f}  {verdict}")

    print("\nWithout a target (library only):")
    extras = [
        (
            "AlignBench AUROC table + 1000-resample 95% CIs",
            lambda: alignbench_table_library(alignbench, 1000),
            1,
        ),
        (
            "MHALO F1_IoU curve, 9 thresholds, 12 detectors",
            lambda: [
                metrics.f1_iou_curve(p, mhalo["golds"], follows_format=ok)
                for p, ok in zip(mhalo["preds"], mhalo["ok"], strict=True)
            ],
            args.repeats,
        ),
    ]
    for name, fn, repeats in extras:
        seconds, _ = median_time(fn, repeats)
        print(f"{name:<52} {seconds:>10.4f}  (median of {repeats})")
    if not all_ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
