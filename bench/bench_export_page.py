"""Benchmark: the Export page in a real browser, preparing and downloading a large AlignBench CSV.

The store holds one dataset of ``--size`` AlignBench sentences (default 1 M), built by a whole
``cli.py import`` as :mod:`bench.bench_export` builds it (``--store DIR`` keeps it for later runs). Two
servers are started in turn on it, each fresh, and one headless Chromium tab does what a person does:
open Export, choose the CSV encoding, press "Prepare file", wait for the download to be offered, press
it and wait until the browser has the whole file.

- ``server.py`` (what ``make run`` serves): the file is written to disk and streamed by the download
  route;
- ``app.py`` alone: the same pages without the route, where the page offers the prepared file's bytes
  to a download button (how every export was offered before the route).

Printed for each: seconds to prepare, seconds to download, the file's size and the server process's peak
resident memory (``VmHWM``). Target: the server stays within 300 MB. Run
``python bench/bench_export_page.py [--size 1000000] [--store DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect  # noqa: E402

from bench.bench_browser import browser_tab  # noqa: E402
from bench.bench_export import store_of  # noqa: E402
from tests.e2e.app_server import streamlit_server  # noqa: E402
from tests.e2e.browser import AppTab  # noqa: E402

# A 1 M-sentence file takes a while to write; the page's wait is for the file, not for the machine.
PREPARE_MS = 600_000


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def export_once(script: str, store: Path, work: Path, tab: AppTab) -> tuple[float, float, int, float]:
    """Prepare and download the CSV through ``script``'s server: (prepare s, download s, bytes, peak MB)."""
    env = {
        "DATABASE_URL": f"sqlite:///{store}",
        "SPANLIGHT_DATA_DIR": str(work / "data"),
        "SPANLIGHT_MODE": "local",
    }
    with streamlit_server(script, env, work / f"{Path(script).stem}.log") as server:
        page = tab.page
        tab.goto(f"{server.url}/export_data?{urlencode({'dataset': 'bench'})}")
        tab.after_run(page.get_by_text(".csv", exact=True).click)
        started = time.perf_counter()
        page.get_by_role("button", name="Prepare file").click()
        offered = page.get_by_role("link", name="Download").or_(page.get_by_role("button", name="Download"))
        expect(offered).to_be_visible(timeout=PREPARE_MS)
        prepared = time.perf_counter() - started
        tab.idle()
        started = time.perf_counter()
        with page.expect_download(timeout=PREPARE_MS) as downloading:
            offered.click()
        saved = work / "downloaded.csv"
        downloading.value.save_as(saved)
        downloaded = time.perf_counter() - started
        size = saved.stat().st_size
        saved.unlink()
        return prepared, downloaded, size, peak_mb(server.pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="AlignBench sentences")
    parser.add_argument("--store", help="folder keeping the built store for later runs (default: temporary)")
    parser.add_argument("--max-rss-mb", type=float, default=300.0)
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="spanlight-bench-export-page-") as tmp:
        work = Path(tmp)
        stores = Path(args.store) if args.store else work
        stores.mkdir(parents=True, exist_ok=True)
        store = store_of(stores, args.size)
        peaks = {}
        with browser_tab() as tab:
            for script, what in (
                ("server.py", "streamed by the route"),
                ("app.py", "bytes in a download button"),
            ):
                prepared, downloaded, size, peak = export_once(script, store, work, tab)
                peaks[script] = peak
                print(
                    f"{script:<10} {what:<28} prepare {prepared:6.1f} s   download {downloaded:6.1f} s   "
                    f"{size / 1e6:6.0f} MB   server peak RSS {peak:6.0f} MB"
                )
    print(f"load after the runs {os.getloadavg()[0]:.2f}")
    ok = peaks["server.py"] <= args.max_rss_mb
    print("server within" if ok else "server ABOVE", f"{args.max_rss_mb:.0f} MB while streaming")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
