"""The import and export commands as a user runs them — ``python cli.py …`` in its own process — where
the exit code and every printed line are what the user gets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RECORDS = [
    {
        "id": f"r{k}",
        "test_solution": "A red cube.",
        "hallucinated_solution": "A <hallucination>red</hallucination> cube.",
    }
    for k in range(300)
]


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "cli.py", *argv], cwd=ROOT, capture_output=True, text=True, timeout=240
    )


def test_canonical_on_a_pretty_printed_array_says_once_that_it_wants_json_lines(db_url: str, tmp_path: Path):
    pretty = tmp_path / "bench.json"
    pretty.write_text(json.dumps(RECORDS, indent=2))
    done = cli("import", "--db", db_url, "--format", "canonical", str(pretty))
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stdout.splitlines() if line.strip().startswith("error:")]
    assert len(errors) == 1, done.stdout[:2000]
    assert "record line 1" in errors[0]
    assert "canonical files are JSON Lines: one JSON object per line" in errors[0]
    assert "it looks like MHALO (tagged JSON): choose the format 'mhalo'" in errors[0]
    assert len(done.stdout) < 1000


def test_export_to_a_format_that_cannot_hold_the_labels_fails_and_writes_nothing(db_url: str, tmp_path: Path):
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(RECORDS[:3]))
    assert cli("import", "--db", db_url, "--dataset", "spans", str(bench)).returncode == 0
    out = tmp_path / "out.jsonl"
    done = cli("export", "--db", db_url, "--dataset", "spans", "--format", "alignbench", "--out", str(out))
    assert done.returncode == 1, done.stdout
    assert "sentence labels" in done.stderr and "3 spans" in done.stderr, done.stderr
    assert not out.exists() and not list(tmp_path.glob("out*"))
    # The same dataset in a format that holds spans is written.
    done = cli("export", "--db", db_url, "--dataset", "spans", "--format", "mhalo", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert len(json.loads(out.read_text())) == 3
