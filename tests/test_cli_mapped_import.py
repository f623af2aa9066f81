"""``cli.py import --map`` and ``export-mapping``: once as whole processes, the way a user runs them, and
the refusals in-process (quicker, same code)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cli as spanlight_cli

ROOT = Path(__file__).resolve().parent.parent

ROWS = [
    {"item": "a", "caption": "A red cube. Two balls.", "labels": "[0, 1]", "model": "m1"},
    {"item": "b", "caption": "A dog sleeps.", "labels": "[1]", "model": "m2"},
]
MAPPING = {
    "version": 1,
    "fields": {"id": "item", "response": "caption", "source_model": "model"},
    "gold": {"shape": "sentence_labels", "field": "labels", "values": {"0": "incorrect", "1": "correct"}},
}


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "cli.py", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> subprocess.CompletedProcess[str]:
    code = spanlight_cli.main(list(argv))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, out, err)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_import_with_a_mapping_exports_it_and_imports_again_alike(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    data = write_csv(tmp_path / "captions.csv", ROWS)
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(MAPPING))
    done = cli("import", "--db", db, "--json", "--map", str(mapping), "--dataset", "caps", str(data))
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["files"]
    assert (report["format"], report["dataset"], report["items_created"]) == ("mapped", "caps", 2)
    assert report["rows"]["sentence_labels"] == 3

    saved = tmp_path / "saved.json"
    done = cli("export-mapping", "--db", db, "--dataset", "caps", "--out", str(saved))
    assert done.returncode == 0, done.stderr
    assert json.loads(saved.read_text()) == MAPPING

    done = cli("import", "--db", db, "--json", "--map", str(saved), "--dataset", "caps", str(data))
    assert done.returncode == 0, done.stderr
    (again,) = json.loads(done.stdout)["files"]
    assert (again["items_created"], again["items_existing"], again["rows"]) == (0, 2, {})


def test_a_bad_mapping_or_record_is_refused_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = partial(in_process, capsys)
    db = f"sqlite:///{tmp_path / 'store.db'}"
    data = write_csv(tmp_path / "captions.csv", [*ROWS, {**ROWS[1], "item": "c", "labels": "[5]"}])
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({**MAPPING, "gold": {"shape": "sentences", "field": "labels"}}))
    done = cli("import", "--db", db, "--map", str(wrong), str(data))
    assert done.returncode == 2
    assert "gold.shape: 'sentences' is not one of" in done.stderr

    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(MAPPING))
    done = cli("import", "--db", db, "--map", str(mapping), str(data))
    assert done.returncode == 1
    assert "record #2 (id=c): field 'labels[0]': 5 is not in the value mapping (gold.values)" in done.stdout
    done = cli("stats", "--db", db, "--json")
    assert json.loads(done.stdout)["datasets"] == []
    done = cli("export-mapping", "--db", db, "--dataset", "captions", "--out", str(tmp_path / "x.json"))
    assert done.returncode == 1 and "does not exist" in done.stderr


def test_a_recognised_dataset_folder_imports_without_a_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = partial(in_process, capsys)
    db = f"sqlite:///{tmp_path / 'store.db'}"
    folder = tmp_path / "mhal"
    (folder / "data").mkdir(parents=True)
    segments = [
        {
            "question": "Describe.",
            "response": "A cat. It is red.",
            "image": "1.jpg",
            "annotations": [
                {"start": 0, "end": 6, "text": "A cat.", "label": "ACCURATE"},
                {"start": 7, "end": 17, "text": "It is red.", "label": "INACCURATE"},
            ],
        }
    ]
    pq.write_table(pa.Table.from_pylist(segments), folder / "data" / "train-00000-of-00001.parquet")
    (folder / "README.md").write_text("---\npretty_name: Tiny\n---\n# Tiny\n\nOne response.\n")
    done = cli("import", "--db", db, "--json", str(folder))
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["files"]
    assert (report["format"], report["dataset"], report["items_created"]) == ("mhaldetect", "mhal", 1)
    done = cli("export-mapping", "--db", db, "--dataset", "mhal", "--out", str(tmp_path / "x.json"))
    assert done.returncode == 1 and "was not imported with a field mapping" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = cli("import", "--db", db, str(empty))
    assert done.returncode == 2 and "holds no .parquet files" in done.stderr
