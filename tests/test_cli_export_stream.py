"""``python cli.py export`` in its own process, on a dataset of several export batches: the file it
writes as it goes is the file the whole dataset written at once gives, and a refused export leaves none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import BATCH_ITEMS, export_batches, export_bundle
from formats.registry import get_format
from tests.db.test_export_stream import alignbench_csv

ROOT = Path(__file__).resolve().parents[1]


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "cli.py", *argv], cwd=ROOT, capture_output=True, text=True, timeout=240
    )


def test_a_multi_batch_export_writes_the_whole_file_and_a_refused_one_none(db_url: str, tmp_path: Path):
    source = tmp_path / "ab.csv"
    source.write_bytes(alignbench_csv(BATCH_ITEMS * 2 + 100))
    done = cli("import", "--db", db_url, "--format", "alignbench", "--dataset", "ab", str(source))
    assert done.returncode == 0, done.stdout + done.stderr
    engine = make_engine(db_url)
    try:
        assert len(list(export_batches(engine, "ab", actor=OPERATOR))) == 3
        whole = export_bundle(engine, "ab", actor=OPERATOR, batch_items=BATCH_ITEMS * 10)
    finally:
        engine.dispose()
    out_dir = tmp_path / "out"
    for name, filename in (
        ("canonical", "ab-canonical.jsonl"),
        ("alignbench", "ab.csv"),
        ("alignbench", "ab.jsonl"),
    ):
        out = out_dir / filename
        done = cli("export", "--db", db_url, "--dataset", "ab", "--format", name, "--out", str(out))
        assert done.returncode == 0, done.stderr
        expected = get_format(name).write(whole, filename=filename)
        assert out.read_bytes() == expected, (name, filename)
        assert done.stdout.strip() == f"Wrote 'ab' as {name} to {out} ({len(expected):,} bytes)"
    assert source.read_bytes() == (out_dir / "ab.csv").read_bytes()
    refused = out_dir / "nope.jsonl"
    done = cli("export", "--db", db_url, "--dataset", "nope", "--format", "canonical", "--out", str(refused))
    assert done.returncode == 1 and "no dataset named 'nope'" in done.stderr
    assert sorted(p.name for p in out_dir.iterdir()) == ["ab-canonical.jsonl", "ab.csv", "ab.jsonl"]
