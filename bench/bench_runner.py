"""The detector runner's own cost per call, against the scripted local server answering at once.

A run of MHALO Vanilla over synthetic items, text only, with 1, 8 and 32 calls in flight, the store kept
in memory (the store's writes are the importer's, measured by bench_import.py): what is left is the
runner itself — building each call, the HTTP client with its kept-alive connections, parsing the
answer with the formats' reader, batching — plus the local server's own time, so the numbers are an
upper bound of the overhead. Each setting runs ``--repeats`` times, with the response cache off and on
(on: every answer appended and synced to disk before it counts); the medians are printed.

    .venv/bin/python bench/bench_runner.py [--calls 400] [--repeats 5]

Exits non-zero when 32 calls in flight, cache off, make fewer than 200 calls a second.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from detectors.base import RunItem  # noqa: E402
from detectors.cache import ResponseCache  # noqa: E402
from detectors.runner import RunSpec, run_detector  # noqa: E402
from formats.records import Annotations  # noqa: E402
from tests.detectors.chat_server import ChatServer, Reply, answer  # noqa: E402

TARGET_CALLS_PER_S = 200.0
RESPONSE = "Item {k}: the red cube sits on a blue mat near the window."


class MemoryStore:
    """A run's store held in memory: the runner's protocol, with no database behind it."""

    def __init__(self, n: int) -> None:
        self._items = [
            RunItem(f"item-{k}", RESPONSE.format(k=k), prompt="Describe the image.") for k in range(n)
        ]
        self.saved: list[Annotations] = []

    def items(self) -> list[RunItem]:
        return self._items

    renew_every_s = 60.0

    def open_run(self, settings: dict[str, Any], run_id: str, line: dict[str, Any] | None = None) -> None:
        return None

    def renew_run(self, run_id: str) -> None:
        return None

    def done(self) -> set[str]:
        return {a.item for a in self.saved}

    def image_url(self, external_id: str) -> str:
        raise AssertionError("a text-only run asks for no image")

    def save_outputs(self, outputs: list[Annotations], run: dict[str, Any]) -> dict[str, str]:
        self.saved += outputs
        return {}

    def close_run(self, run: dict[str, Any], complete: bool) -> None:
        return None


def instant(text: str, attempt: int) -> Reply:
    k = text.rsplit("Item ", 1)[1].split(":", 1)[0]
    tagged = RESPONSE.format(k=k).replace("red cube", "<hallucination>red cube</hallucination>")
    return answer(
        f"Here is the response with hallucinated content tagged:\n<Tagged_Text>{tagged}</Tagged_Text>"
    )


def one_run(server: ChatServer, calls: int, concurrency: int, cache_dir: Path | None) -> float:
    """Calls per second of one run."""
    store = MemoryStore(calls)
    spec = RunSpec(
        dataset="bench",
        detector="bench",
        strategy="mhalo-vanilla",
        base_url=server.base_url,
        model="bench",
        concurrency=concurrency,
        images=False,
    )
    cache = ResponseCache(cache_dir / f"{time.monotonic_ns()}.jsonl" if cache_dir else None)
    started = time.perf_counter()
    result = run_detector(spec, store, cache=cache)
    elapsed = time.perf_counter() - started
    cache.close()
    assert result.ok and result.saved == calls and result.ledger["calls"] == calls, result.to_dict()
    return calls / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    medians: dict[tuple[int, bool], float] = {}
    with ChatServer(instant) as server, tempfile.TemporaryDirectory() as folder:
        one_run(server, 50, 8, None)  # warm up: imports, first connections
        for cached in (False, True):
            for concurrency in (1, 8, 32):
                rates = [
                    one_run(server, args.calls, concurrency, Path(folder) if cached else None)
                    for _ in range(args.repeats)
                ]
                medians[(concurrency, cached)] = statistics.median(rates)
                print(
                    f"concurrency={concurrency:<3} cache={'on ' if cached else 'off'} "
                    f"calls_per_s={medians[(concurrency, cached)]:8.1f} "
                    f"ms_per_call={1000 / medians[(concurrency, cached)]:6.2f} (median of {args.repeats})"
                )
    best = medians[(32, False)]
    print(f"calls_per_s_at_32={best:.1f} target={TARGET_CALLS_PER_S:.0f}")
    return 0 if best >= TARGET_CALLS_PER_S else 1


if __name__ == "__main__":
    sys.exit(main())
