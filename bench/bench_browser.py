"""Click → confirmed "✓ Saved" receipt in a real browser, against a trivial Streamlit app's round trip.

Target: on every annotation page, the time from a person's key press (or double-click) to the page
showing the "✓ Saved" receipt of that action is at most 1.5× a trivial Streamlit app's key press → DOM
round trip measured in the same run, on a 100-item and on a 100 K-item dataset. Also printed for each
action: the time until its run is over and drawn (the whole unit redrawn), against the trivial app's. Also printed: each
page's first content on the demo dataset (navigation → something of the page in its main area drawn;
target ≤ 1 s), and the whole page (navigation → its first script run finished and drawn).

One run starts two servers on the same machine: the app on a store holding the demo and two bench
datasets (100 and ``--items`` items, each item with three sentences, three claims, a reference scene
graph, and a detector's spans and extracted triplets, plus a rating task on that detector), and a
trivial app (a button with a key that bumps a counter shown in a caption). One headless Chromium tab
(``tests.e2e.browser.AppTab``) then takes turns: the trivial floor, then each action on each dataset
size, item after item, so whatever else the machine does weighs on all alike. Every measurement is the
same: the key is pressed, and the clock stops on the animation frame where the expected receipt is on
the page; then, untimed, the tab waits until the run is over before the next action.

    .venv/bin/python bench/bench_browser.py [--items 100000] [--rounds 8] [--store DIR]

``--store DIR`` keeps the built store in DIR and reuses it on the next run (building 100 K items takes
minutes). Prints the median and p90 per action and size, and the ratio of each median to the floor.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from db.access import OPERATOR  # noqa: E402
from db.engine import make_engine  # noqa: E402
from db.importer import import_bundle  # noqa: E402
from db.repositories.datasets import list_dataset_infos  # noqa: E402
from db.repositories.label_sets import list_label_sets  # noqa: E402
from db.repositories.rating_tasks import TaskSpec, create_rating_task, list_rating_tasks  # noqa: E402
from formats.records import (  # noqa: E402
    Annotations,
    Bundle,
    ClaimRecord,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SpanRecord,
    TripletRecord,
)
from formats.taxonomies import MHALO  # noqa: E402
from page_table import pages  # noqa: E402
from tests.e2e.app_server import prepare_store, running_app, streamlit_server  # noqa: E402
from tests.e2e.browser import WAIT_MS, AppTab  # noqa: E402

RESPONSE = "A red cube sits left of a blue ball number {k}. The sign says OPEN. Two cats sleep on the mat."
SPAN_WORDS = ("cube", "sign", "cats")  # marked, retyped and deleted on the span page
DETECTOR_SPANS = ((2, 5), (26, 30), (31, 35))  # "red", "blue", "ball": the segments rated
DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1440, "height": 900}
PERCENT = 100
PAGE_TARGET_S = 1.0  # every page's first content after navigation, on the demo

TRIVIAL_APP = """import streamlit as st

st.session_state.setdefault("n", 0)


def bump() -> None:
    st.session_state.n += 1


st.button("Count", shortcut="1", on_click=bump)
st.caption(f"✓ Saved · count {st.session_state.n}")
"""

# The receipt shown now (text of the newest caption starting "✓ Saved", outside stale elements).
_RECEIPT_JS = """() => {
  const found = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .filter((e) => !e.closest('[data-stale="true"]') && e.textContent.includes("✓ Saved · "));
  return found.length ? found[found.length - 1].textContent : "";
}"""
_RECEIPT_SHOWS_JS = f"""([expected, before]) => {{
  const text = ({_RECEIPT_JS})();
  return text !== before && text.includes("✓ Saved · " + expected);
}}"""


def dataset_name(n_items: int) -> str:
    return f"bench-browser-{n_items}"


def bundle(n_items: int) -> Bundle:
    items = [
        ItemRecord(
            external_id=f"it-{k}",
            response=RESPONSE.format(k=k),
            prompt="Describe the image.",
            claims=[
                ClaimRecord("The cube is red."),
                ClaimRecord("The ball is blue."),
                ClaimRecord("Two cats sleep."),
            ],
            reference_triplets=[TripletRecord("cube", "left of", "ball"), TripletRecord("cat", "on", "mat")],
        )
        for k in range(n_items)
    ]
    detector = LabelSetRecord(
        "detector",
        "bench-detector",
        annotations=[
            Annotations(
                item=f"it-{k}",
                spans=[SpanRecord(s, e, "Color Attribute") for s, e in DETECTOR_SPANS],
                triplets=[
                    TripletRecord("cube", "is", "red"),
                    TripletRecord("ball", "is", "blue"),
                    TripletRecord("cats", "sleep on", "mat"),
                ],
            )
            for k in range(n_items)
        ],
    )
    dataset = DatasetRecord(
        dataset_name(n_items),
        "canonical",
        taxonomy=list(MHALO),
        label_kinds=["span", "sentence", "claim", "triplet"],
    )
    return Bundle(dataset, items, [detector])


def build_store(data_dir: Path, sizes: tuple[int, ...]) -> str:
    """The demo (as `make run` loads it) and one bench dataset per size, with a rating task each."""
    url = f"sqlite:///{data_dir / 'spanlight.db'}"
    engine = make_engine(url)
    have = {d.name for d in list_dataset_infos(engine)} if (data_dir / "spanlight.db").exists() else set()
    if DEMO not in have:
        url = prepare_store(data_dir)
    for n in sizes:
        if dataset_name(n) in have:
            continue
        started = time.perf_counter()
        import_bundle(engine, bundle(n), source="bench", actor=OPERATOR)
        info = next(d for d in list_dataset_infos(engine) if d.name == dataset_name(n))
        detector = next(ls for ls in list_label_sets(engine, info.id) if ls.kind == "detector")
        create_rating_task(engine, info.id, TaskSpec("bench rating", detector.id), None, actor=OPERATOR)
        print(f"  built {n:,} items in {time.perf_counter() - started:.1f} s", flush=True)
    engine.dispose()
    return url


@dataclass
class Bench:
    tab: AppTab
    url: str
    times: dict[tuple[str, int], list[float]]
    settled: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    run: str = time.strftime("%H%M%S")  # each run labels as new users, so a reused store starts blank

    @property
    def page(self) -> Page:
        return self.tab.page

    def receipt(self) -> str:
        text: str = self.page.evaluate(_RECEIPT_JS)
        return text

    def timed(self, name: str, n: int, action: Callable[[], object], expected: str) -> None:
        """Time ``action`` until the receipt of ``expected`` shows; then wait, untimed, for the run's end."""
        before = self.receipt()
        started = time.perf_counter()
        action()
        try:
            self.page.wait_for_function(
                _RECEIPT_SHOWS_JS, arg=[expected, before], polling="raf", timeout=WAIT_MS
            )
        except PlaywrightTimeout:
            shot = Path(tempfile.gettempdir()) / "bench-browser-stuck.png"
            self.page.screenshot(path=str(shot))
            raise SystemExit(
                f"{name} ({n:,} items, {self.page.url}): the receipt {expected!r} never showed; the page "
                f"shows {self.receipt()!r} (screenshot: {shot})"
            ) from None
        self.times.setdefault((name, n), []).append(time.perf_counter() - started)
        self.tab.idle()
        self.settled.setdefault((name, n), []).append(time.perf_counter() - started)

    def press(self, key: str) -> Callable[[], None]:
        """Press ``key``; again if no handler took it (a shortcut not yet attached): timed from the first."""

        def pressing() -> None:
            deadline = time.monotonic() + WAIT_MS / 1000
            while True:
                self.page.keyboard.press(key)
                if self.page.evaluate("() => window.__lastKeydown?.defaultPrevented === true"):
                    return
                assert time.monotonic() < deadline, f"no handler took the key {key!r}"
                self.page.wait_for_timeout(10)

        return pressing

    def open(self, path: str, n: int, item: str, user: str, **more: str) -> None:
        query = {"dataset": dataset_name(n), "item": item, "user": f"{user}-{self.run}", **more}
        self.tab.goto(f"{self.url}/{path}?{urlencode(query)}")


def floor(bench: Bench, trivial_url: str, rounds: int) -> None:
    bench.tab.goto(trivial_url)
    for k in range(1, rounds * 3 + 1):
        bench.timed("trivial app (floor)", 0, bench.press("1"), f"count {k}")


def sentences(bench: Bench, n: int, item: str) -> None:
    bench.open("sentences", n, item, "bench-sentences")
    for k, (key, value) in enumerate((("2", "incorrect"), ("3", "unknown"), ("1", "correct"))):
        bench.timed("sentence label", n, bench.press(key), f"sentence {k + 1} → {value}")


def claims(bench: Bench, n: int, item: str) -> None:
    bench.open("claims", n, item, "bench-claims")
    for k, (key, value) in enumerate(
        (("1", "hallucination"), ("2", "non-hallucination"), ("1", "hallucination"))
    ):
        bench.timed("claim verdict", n, bench.press(key), f"claim {k + 1} → {value}")


def triplets(bench: Bench, n: int, item: str) -> None:
    bench.open("triplets", n, item, "bench-triplets")
    steps = (("1", "triplet 1 → yes"), ("2", "triplet 2 → no"), ("3", "triplet 2 → no (wrong part: Subject)"))
    for key, expected in steps:
        bench.timed("triplet verdict", n, bench.press(key), expected)


def ratings(bench: Bench, n: int, item: str, task: int) -> None:
    bench.open("rate", n, item, "bench-rater", task=str(task))
    text = RESPONSE.format(k=item.removeprefix("it-"))
    for k, (start, end) in enumerate(DETECTOR_SPANS):
        score = 1 + k
        bench.timed("rating", n, bench.press(str(score)), f"rated segment “{text[start:end]}”: {score}")


_WORD_CENTRE_JS = """(root, word) => {
  const at = root.textContent.indexOf(word);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let seen = 0, node;
  while ((node = walker.nextNode())) {
    if (at < seen + node.data.length) {
      const range = document.createRange();
      range.setStart(node, at - seen);
      range.setEnd(node, Math.min(node.data.length, at - seen + word.length));
      const box = range.getClientRects()[0];
      return {x: box.left + box.width / 2, y: box.top + box.height / 2};
    }
    seen += node.data.length;
  }
  throw new Error("no " + word);
}"""


def spans(bench: Bench, n: int, item: str) -> None:
    bench.open("spans", n, item, "bench-spans")
    text = bench.page.locator(".hs-text")
    for word in SPAN_WORDS:
        centre = text.evaluate(_WORD_CENTRE_JS, word)
        bench.timed(
            "span add",
            n,
            partial(bench.page.mouse.dblclick, centre["x"], centre["y"]),
            f"added span “{word}”",
        )
        centre = text.evaluate(_WORD_CENTRE_JS, word)
        bench.page.mouse.click(centre["x"], centre["y"])  # select the span: in the browser, untimed
        bench.timed("span retype", n, bench.press("2"), f"retyped span “{word}” (Object → OCR)")
        bench.timed("span delete", n, bench.press("Delete"), f"deleted span “{word}” (OCR)")


# Something of the page in its main area that a person can see: text, an image or a chart, drawn.
_FIRST_CONTENT_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')]
  .some((e) => e.offsetHeight > 0 && (e.innerText.trim() !== '' || e.querySelector('img, canvas, svg')))"""


def first_content(bench: Bench, rounds: int) -> None:
    """Each page of the app on the demo: navigation → its first content on screen (the target), and
    navigation → its first script run finished and drawn (the whole page)."""
    page = bench.page
    for spec in pages():
        path = "" if spec.default else spec.url_path or Path(spec.path).stem
        key = (f"page: {spec.title}", 0)
        for _ in range(rounds):
            started = time.perf_counter()
            page.goto(
                f"{bench.url}/{path}?{urlencode({'dataset': DEMO, 'user': 'bench-pages'})}",
                wait_until="commit",
            )
            page.wait_for_function(_FIRST_CONTENT_JS, polling="raf", timeout=WAIT_MS)
            bench.times.setdefault(key, []).append(time.perf_counter() - started)
            bench.tab.idle()
            bench.settled.setdefault(key, []).append(time.perf_counter() - started)


@contextmanager
def browser_tab() -> Iterator[AppTab]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
        page.set_default_timeout(WAIT_MS)
        try:
            yield AppTab(page)
        finally:
            browser.close()


def p90(times: list[float]) -> float:
    return statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]


def report(
    times: dict[tuple[str, int], list[float]], settled: dict[tuple[str, int], list[float]], target: float
) -> None:
    """Receipt: key press → "✓ Saved" on the page (the target). Settled: → the run is over and drawn
    (the whole unit redrawn), against the trivial app's settled round trip."""
    floor_key = ("trivial app (floor)", 0)
    base, settled_base = statistics.median(times[floor_key]), statistics.median(settled[floor_key])
    print(
        f"\n{'action':<30}{'items':>9}{'n':>4}{'receipt ms':>12}{'p90 ms':>9}{'× floor':>9}"
        f"{'settled ms':>12}{'× floor':>9}"
    )
    worst = 0.0
    slowest_page = 0.0
    for (name, n), found in times.items():
        median = statistics.median(found)
        is_page = name.startswith("page:")
        ratio = f"{median / base:>9.2f}" if not is_page else f"{'':>9}"
        size = f"{n:,}" if n else "demo" if is_page else "-"
        line = f"{name:<30}{size:>9}{len(found):>4}{median * 1000:>12.0f}{p90(found) * 1000:>9.0f}{ratio}"
        if (name, n) in settled:
            whole = statistics.median(settled[(name, n)])
            line += f"{whole * 1000:>12.0f}" + (f"{whole / settled_base:>9.2f}" if not is_page else "")
        if is_page:
            slowest_page = max(slowest_page, median)
        elif not name.startswith("trivial"):
            worst = max(worst, median / base)
        print(line)
    verdict = "meets" if worst <= target else "MISSES"
    print(
        f"\nslowest receipt median {worst:.2f}× the trivial app's round trip: {verdict} the {target}× target"
    )
    if slowest_page:
        verdict = "meets" if slowest_page <= PAGE_TARGET_S else "MISSES"
        print(
            f"slowest page's first content (median) {slowest_page:.2f} s after navigation: "
            f"{verdict} the {PAGE_TARGET_S:g} s target (the 'settled' column: the whole page drawn)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=8, help="items visited per action and size")
    parser.add_argument("--store", type=Path, help="build the store here once and reuse it")
    parser.add_argument("--page-rounds", type=int, default=3, help="loads of each page (0: skip)")
    args = parser.parse_args()
    sizes = (100, args.items)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.store or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        url = build_store(data_dir, sizes)
        engine = make_engine(url)
        tasks = {}
        for info in list_dataset_infos(engine):
            if info.name in {dataset_name(n) for n in sizes}:
                tasks[int(info.name.rsplit("-", 1)[1])] = list_rating_tasks(engine, info.id)[0].id
        engine.dispose()
        trivial = Path(tmp) / "trivial_app.py"
        trivial.write_text(TRIVIAL_APP, encoding="utf-8")
        with (
            running_app(data_dir, url) as app,
            streamlit_server(str(trivial), {}, Path(tmp) / "trivial.log") as floor_app,
            browser_tab() as tab,
        ):
            bench = Bench(tab, app.url, {})
            floor(bench, floor_app.url, 1)  # warm both up, then forget it
            sentences(bench, 100, "it-0")
            bench.times.clear()
            bench.settled.clear()
            for r in range(args.rounds):
                floor(bench, floor_app.url, 1)
                for n in sizes:
                    item = f"it-{(r * 7919 + 1) % n}"
                    sentences(bench, n, item)
                    claims(bench, n, item)
                    triplets(bench, n, item)
                    ratings(bench, n, item, tasks[n])
                    spans(bench, n, item)
            if args.page_rounds:
                first_content(bench, args.page_rounds)
    report(bench.times, bench.settled, 1.5)


if __name__ == "__main__":
    main()
