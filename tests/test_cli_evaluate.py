"""`python cli.py evaluate`: the dashboards' tables on the command line, as text and as JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main
from tests.analysis.reports.demo_store import DEMO, load_demo_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return load_demo_store(tmp_path_factory.mktemp("cli-evaluate"), monkeypatch)


def test_json_holds_every_report_with_provenance(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--db", demo_url, "--dataset", DEMO, "--json", "--resamples", "50"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["dataset"] == DEMO
    keys = [r["key"] for r in payload["reports"]]
    assert keys == [
        "mhalo",
        "alignbench",
        "mhalubench",
        "trihe",
        "halloc",
        "correlation",
        "agreement.spans",
        "agreement.sentences",
        "agreement.claims",
        "agreement.ratings",
    ]
    mhalo = payload["reports"][0]
    assert mhalo["provenance"]["n_items"] == 60 and len(mhalo["provenance"]["sha256"]) == 12
    rows = {r["detector"]: r for r in mhalo["tables"]["table3"]["rows"]}
    assert rows["sloppy"]["Average · IF"] == pytest.approx(100 * 58 / 60)
    best = mhalo["tables"]["table3"]["marks"]["Average · F1_IoU"]["best"]
    assert [mhalo["tables"]["table3"]["rows"][i]["detector"] for i in best] != ["sloppy"]


def test_text_marks_best_values(demo_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "cli.py", "evaluate", "--db", demo_url, "--dataset", DEMO, "--resamples", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert "Table 3 · F1_M, F1_IoU and IF per subset (%)" in out
    assert "Table 3 · AUROC per detector and captioning model (%)" in out
    assert "Computed from: Spanlight demo (synthetic)" in out
    assert "*" in out and "Marks: * best" in out


def test_unknown_dataset_fails(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--db", demo_url, "--dataset", "no such dataset"]) == 1
    assert "no dataset named 'no such dataset'" in capsys.readouterr().err


def test_evaluate_runs_without_streamlit() -> None:
    """The command line computes the reports without loading the web framework (no cache, no warnings)."""
    script = (
        "import sys, cli, analysis.reports, render.report_text, db.repositories.datasets; "
        "assert 'streamlit' not in sys.modules, sorted(m for m in sys.modules if m.startswith('streamlit'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
