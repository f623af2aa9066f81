"""`python cli.py assign` and `progress`: the team's work split from the command line, which acts as the
operator (it holds the store itself). Refusals exit 1 with the reason, usage errors 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main
from db.access import OPERATOR
from db.engine import make_engine
from db.importer import import_bundle
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set
from db.repositories.labeling import set_item_status
from formats.records import Bundle, DatasetRecord, ItemRecord

ROOT = Path(__file__).resolve().parents[1]
DATASET = "team [set] **x**"


@pytest.fixture
def store(db_url: str) -> str:
    engine = make_engine(db_url)
    items = [ItemRecord(f"it-{k}", f"A red cube number {k}.") for k in range(9)]
    import_bundle(engine, Bundle(DatasetRecord(DATASET, "test"), items=items), actor=OPERATOR)
    for name in ("ann a", "ann b", "ann c"):
        get_or_create_annotator(engine, name)
    get_or_create_annotator(engine, "watcher", "viewer")
    engine.dispose()
    return db_url


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_assign_then_progress_as_json(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["assign", "--db", store, "--dataset", DATASET, "--task", "spans", "--json"]
    code, out, _ = run(capsys, *args, "--annotators", "ann a, ann b,ann c", "--k", "2")
    assert code == 0
    assert json.loads(out) == {
        "ok": True,
        "dataset": DATASET,
        "task": "spans",
        "k": 2,
        "items": 9,
        "added": 18,
        "kept": 0,
        "loads": {"ann a": 6, "ann b": 6, "ann c": 6},
    }
    code, out, _ = run(capsys, *args, "--annotators", "ann a,ann b,ann c", "--k", "2")
    assert code == 0 and (json.loads(out)["added"], json.loads(out)["kept"]) == (0, 18)

    _first_done(store, "spans")

    code, out, _ = run(capsys, "progress", "--db", store, "--dataset", DATASET, "--task", "spans", "--json")
    assert code == 0
    assert json.loads(out) == {
        "dataset": DATASET,
        "task": "spans",
        "items": 9,
        "annotators": [
            {"name": "ann a", "assigned": 6, "done": 1, "skipped": 0, "locked": 0, "remaining": 5},
            {"name": "ann b", "assigned": 6, "done": 0, "skipped": 0, "locked": 0, "remaining": 6},
            {"name": "ann c", "assigned": 6, "done": 0, "skipped": 0, "locked": 0, "remaining": 6},
        ],
    }


def _first_done(store: str, page: str) -> None:
    """ "ann a" marks item it-0 done on ``page``."""
    engine = make_engine(store)
    dataset = get_dataset(engine, DATASET)
    assert dataset is not None
    annotator = get_or_create_annotator(engine, "ann a")
    own = human_label_set(engine, dataset.id, annotator.id)
    first = get_item(engine, dataset.id, "it-0")
    assert first is not None
    set_item_status(engine, own.id, first.id, page, "done", annotator.id)
    engine.dispose()


def test_progress_of_the_ratings_task_counts_scored_responses(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A response its rater scored counted 0 done on the ratings task, whose work scoring is; on a
    dataset without a rating task the score alone finishes the item."""
    code, _, _ = run(
        capsys, "assign", "--db", store, "--dataset", DATASET, "--task", "ratings", "--annotators", "ann a",
        "--k", "1",
    )  # fmt: skip
    assert code == 0
    _first_done(store, "response_scores")
    code, out, _ = run(capsys, "progress", "--db", store, "--dataset", DATASET, "--task", "ratings", "--json")
    assert code == 0
    assert json.loads(out)["annotators"] == [
        {"name": "ann a", "assigned": 9, "done": 1, "skipped": 0, "locked": 0, "remaining": 8}
    ]


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (["--annotators", "ann a,ann b", "--k", "3"], "Each item needs 3 different annotators, but only 2"),
        (["--annotators", "ann a,nobody", "--k", "1"], "there is no user named 'nobody'"),
        (["--annotators", "ann a,watcher", "--k", "1"], "'watcher' has the viewer role, which cannot label"),
        (["--annotators", "ann a", "--k", "0"], "a whole number of 1 or more"),
    ],
)
def test_refusals_exit_1_with_the_reason(
    store: str, capsys: pytest.CaptureFixture[str], extra: list[str], reason: str
) -> None:
    base = ["assign", "--db", store, "--dataset", DATASET, "--task", "claims"]
    code, out, err = run(capsys, *base, *extra)
    assert code == 1 and out == "" and reason in err
    code, out, err = run(capsys, *base, *extra, "--json")
    assert code == 1 and err == ""
    payload = json.loads(out)
    assert payload["ok"] is False and reason in payload["error"]
    code, out, _ = run(capsys, "progress", "--db", store, "--dataset", DATASET, "--task", "claims", "--json")
    assert json.loads(out)["annotators"] == []


def test_unknown_dataset_is_refused(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["assign", "--annotators", "ann a", "--k", "1"], ["progress"]):
        code, _, err = run(capsys, *command, "--db", store, "--dataset", "nope", "--task", "spans")
        assert code == 1 and "there is no dataset named 'nope'" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["assign", "--dataset", DATASET, "--task", "words", "--annotators", "ann a", "--k", "1"],
        ["assign", "--dataset", DATASET, "--task", "spans", "--annotators", "ann a", "--k", "two"],
        ["assign", "--dataset", DATASET, "--task", "spans", "--k", "1"],
        ["progress", "--dataset", DATASET],
    ],
)
def test_usage_errors_exit_2(store: str, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--db", store])
    assert stopped.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_empty_annotator_list_is_a_usage_error(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "assign",
        "--db",
        store,
        "--dataset",
        DATASET,
        "--task",
        "spans",
        "--annotators",
        " , ",
        "--k",
        "1",
    ]
    code, _, err = run(capsys, *argv)
    assert code == 2 and "--annotators names at least one annotator" in err


def test_whole_process_prints_names_as_given(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    import_bundle(
        engine, Bundle(DatasetRecord(DATASET, "test"), items=[ItemRecord("only", "Text.")]), actor=OPERATOR
    )
    get_or_create_annotator(engine, "ann a")
    engine.dispose()
    assign = [
        sys.executable,
        "cli.py",
        "assign",
        "--db",
        sqlite_url,
        "--dataset",
        DATASET,
        "--task",
        "ratings",
    ]
    done = subprocess.run(
        [*assign, "--annotators", "ann a", "--k", "1"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"{DATASET!r}, ratings: 1 item(s), 1 annotator(s) each; 1 assignment(s) added, 0 kept.",
        "  'ann a': 1 item(s)",
    ]
    progress = [
        sys.executable,
        "cli.py",
        "progress",
        "--db",
        sqlite_url,
        "--dataset",
        DATASET,
        "--task",
        "ratings",
    ]
    done = subprocess.run(progress, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'ann a'" in done.stdout and done.stdout.splitlines()[-1].split()[-5:] == ["1", "0", "0", "0", "1"]
    done = subprocess.run(
        [*assign, "--annotators", "ann a", "--k", "2"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "only 1 was chosen" in done.stderr and done.stdout == ""
