"""A long command's progress on a terminal: an import says how far through its file it has read and for
how long, then erases the line before its report; a detector run's last state stays on its own line above the summary.
A file or a pipe gets none of it. Whole processes on a pseudo-terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from bench.make_import_files import write_alignbench
from db.engine import make_engine
from tests.detectors.chat_server import ChatServer, answer
from tests.detectors.live_data import DATASET, N_ITEMS, item_number, make_dataset, tagged
from tests.terminal import on_terminal

ROOT = Path(__file__).resolve().parents[1]
ERASE = "\r\x1b[K"
ROWS = 12_000  # three of the reader's batches


def _import(db: str, source: Path) -> list[str]:
    return [
        sys.executable,
        "cli.py",
        "import",
        "--format",
        "alignbench",
        "--dataset",
        "bench",
        "--db",
        db,
        str(source),
    ]


def test_an_import_on_a_terminal_shows_how_far_it_has_read_then_erases_the_line(
    sqlite_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "bench\x1b[31m.csv"  # a file's name is untrusted text too
    write_alignbench(source, ROWS)
    code, screen = on_terminal(_import(sqlite_url, source), cwd=ROOT, columns=300)
    assert code == 0, screen
    shown = re.findall(r"Checking and writing items \(([\d,]+) read, (\d+)% of the file\)… · \d+ s", screen)
    assert shown and shown[0] == ("834", "41"), screen  # the first batch's (5,004 of 12,000 rows), at once
    assert f"{ERASE}Reading {tmp_path}/bench\\u001b[31m.csv as AlignBench" in screen
    # Erased before the report, which begins the line.
    assert f"{ERASE}{tmp_path}/bench\\u001b[31m.csv: alignbench → dataset 'bench': 2000 new items" in screen
    assert "\x1b" not in screen.replace(ERASE, ""), "only the erase of the line reaches the terminal"


def test_on_a_narrow_terminal_the_progress_is_cut_to_fit_its_line(sqlite_url: str, tmp_path: Path) -> None:
    source = tmp_path / "bench.csv"
    write_alignbench(source, ROWS)
    code, screen = on_terminal(_import(sqlite_url, source), cwd=ROOT, columns=30)
    assert code == 0, screen
    shown = screen.split(ERASE)[1:-1]  # what each rewrite wrote, before the report
    assert shown and all(len(text) <= 29 for text in shown), shown
    assert "Checking and writing items (8" in shown


def test_an_import_into_a_pipe_writes_no_progress(sqlite_url: str, tmp_path: Path) -> None:
    source = tmp_path / "bench.csv"
    write_alignbench(source, ROWS)
    done = subprocess.run(_import(sqlite_url, source), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"{source}: alignbench → dataset 'bench': 2000 new items")
    assert "Checking" not in done.stdout and "\x1b" not in done.stdout


def test_a_detector_run_on_a_terminal_leaves_its_last_progress_above_the_summary(
    sqlite_url: str, tmp_path: Path
) -> None:
    engine = make_engine(sqlite_url)
    make_dataset(engine, tmp_path / "images")
    engine.dispose()
    env = {**os.environ, "SPANLIGHT_DATA_DIR": str(tmp_path / "data"), "SPANLIGHT_TEST_API_KEY": "sk-x"}
    with ChatServer(lambda text, attempt: answer(tagged(item_number(text), "red cube"))) as server:
        argv = [
            *(sys.executable, "cli.py", "run-detector", "--db", sqlite_url, "--dataset", DATASET),
            *("--detector", "judge", "--base-url", server.base_url, "--model", "gpt-4o-mini"),
            *("--strategy", "mhalo-vanilla", "--api-key-env", "SPANLIGHT_TEST_API_KEY"),
        ]
        code, screen = on_terminal(argv, cwd=ROOT, env=env)
    assert code == 0, screen
    # The terminal turns each newline into a carriage return and a newline.
    last = re.search(rf"{re.escape(ERASE)}({N_ITEMS}/{N_ITEMS} items · [^\r\n]* tokens)\r\n", screen)
    assert last is not None, screen
    assert screen[last.end() :].startswith(f"Detector 'judge' on '{DATASET}'"), screen


def test_an_export_on_a_terminal_shows_how_many_items_it_has_written_then_erases_the_line(
    sqlite_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "bench.csv"
    write_alignbench(source, 30_000)  # 5,000 items: three of the exporter's batches
    done = subprocess.run(_import(sqlite_url, source), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out.jsonl"
    argv = [
        sys.executable,
        "cli.py",
        "export",
        "--db",
        sqlite_url,
        "--dataset",
        "bench",
        "--format",
        "canonical",
    ]
    code, screen = on_terminal([*argv, "--out", str(out)], cwd=ROOT, columns=200)
    assert code == 0, screen
    assert f"{ERASE}Writing items (2,000 of 5,000 written)… · " in screen  # the first batch's, at once
    assert f"{ERASE}Wrote 'bench' as canonical to {out} (" in screen
    assert out.stat().st_size > 0
