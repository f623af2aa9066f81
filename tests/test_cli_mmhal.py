"""MMHal-Bench on the command line: import the benchmark with a judge's ratings, import gold ratings
and evaluate, each its own process; then the JSON report, the export and a refused file in-process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main
from tests.formats.mmhal_sample import IDS, sample_bytes

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "cli.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=240
    )


def test_import_rate_evaluate_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    bench = tmp_path / "mmhal_sample.json"
    bench.write_bytes(sample_bytes())
    gold = tmp_path / "gold.csv"
    gold.write_text(f"id,rating\n{IDS[0]},0\n{IDS[1]},6\n{IDS[2]},3\n{IDS[3]},3\n")

    done = _cli("import", "--db", db, "--dataset", "mm", str(bench))
    assert done.returncode == 0, done.stderr
    assert "mmhal → dataset 'mm': 4 new items" in done.stdout and "3 response_scores" in done.stdout
    done = _cli(
        "import-predictions",
        "--db",
        db,
        "--dataset",
        "mm",
        "--detector",
        "gold",
        "--label-set-kind",
        "gold",
        str(gold),
    )
    assert done.returncode == 0, done.stderr
    assert "mmhal-ratings" in done.stdout and "4 response_scores" in done.stdout

    done = _cli("evaluate", "--db", db, "--dataset", "mm", "--resamples", "0")
    assert done.returncode == 0, done.stderr
    assert "MMHal-Bench · response ratings" in done.stdout
    gold_line = next(line for line in done.stdout.splitlines() if line.strip().startswith("gold"))
    assert gold_line.split()[3:8] == ["4", "3.00", "25.00", "1.50", "4.50"]
    assert "Raters against gold on the same responses" in done.stdout

    assert main(["evaluate", "--db", db, "--dataset", "mm", "--resamples", "50", "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    rows = {r["rater"]: r for r in report["tables"]["scores"]["rows"]}
    assert rows["gpt-4"]["Overall score"] == pytest.approx(8 / 3)
    assert rows["gpt-4"]["Hallucination rate (%)"] == pytest.approx(200 / 3)
    (against,) = report["tables"]["agreement"]["rows"]
    assert against["rater"] == "gpt-4" and against["Score match (%)"] == 0.0

    out = tmp_path / "judge.jsonl"
    export = ["export", "--db", db, "--dataset", "mm", "--format", "mmhal-ratings", "--label-set", "gpt-4"]
    assert main([*export, "--out", str(out)]) == 0
    assert [json.loads(line) for line in out.read_text().splitlines()][0] == {
        "id": IDS[0],
        "rating": 1,
        "hallucination": True,
    }


def test_a_rating_off_the_scale_is_refused_with_its_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    bench = tmp_path / "bad.json"
    bench.write_bytes(sample_bytes(r1={"gpt4_review": "Rating: 8"}))
    assert main(["import", "--db", db, "--dataset", "mm", str(bench)]) == 1
    out = capsys.readouterr().out
    assert "record #1: field 'gpt4_review': 8 is outside the scale 0-6" in out
    assert "nothing imported" in out
