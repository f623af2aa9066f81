"""`python cli.py gold-locks list | lift`: the records of gold shown to blind annotators, and lifting their
locks from the command line, which acts as the operator; the records stay, marked lifted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from db.access import OPERATOR, Actor, GoldShown
from db.engine import make_engine
from db.importer import import_bundle
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.assignments import assign
from db.repositories.datasets import get_dataset
from db.repositories.gold_sightings import record_gold_shown
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set
from formats.records import Bundle, DatasetRecord, ItemRecord

ROOT = Path(__file__).resolve().parents[1]
DATASET = "locks [set] **x**"
SHOWN = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"


def _cli(url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "cli.py", "gold-locks", *argv, "--db", url, "--dataset", DATASET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_list_then_lift_one_item_then_the_rest(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(sqlite_url)
    items = [ItemRecord(f"it\x1b{k}", f"A red cube number {k}.") for k in range(3)]
    import_bundle(engine, Bundle(DatasetRecord(DATASET, "test"), items=items), actor=OPERATOR)
    dataset = get_dataset(engine, DATASET)
    assert dataset is not None
    ann = get_or_create_annotator(engine, "ann a")
    assign(engine, dataset.id, "spans", [ann.id], 1, actor=OPERATOR)
    ids = [get_item(engine, dataset.id, item.external_id).id for item in items]  # type: ignore[union-attr]
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    actor = Actor(ann.id, ann.name, "annotator")
    record_gold_shown(engine, actor, dataset.id, ids[:2])
    own = human_label_set(engine, dataset.id, ann.id).id
    with pytest.raises(GoldShown):
        labeling.add_span(engine, own, ids[0], 2, 5, None, ann.id)

    listed = _cli(sqlite_url, "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"{DATASET!r}: 2 record(s) of gold shown, 2 still locking"
    shown = [
        re.fullmatch(
            rf"'ann a' saw gold of item '(it\\x1b\d)' on {SHOWN} \(Overridden labels page\); locked", line
        )
        for line in lines[1:]
    ]
    assert sorted(found.group(1) for found in shown if found) == ["it\\x1b0", "it\\x1b1"], lines

    one = _cli(sqlite_url, "lift", "--annotator", "ann a", "--item", "it\x1b0")
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines() == [
        f"Lifted the lock of 'ann a' on 1 item(s) of {DATASET!r}: 'it\\x1b0'; the records stay, marked lifted."
    ]
    labeling.add_span(engine, own, ids[0], 2, 5, None, ann.id)  # refused before the lift
    with pytest.raises(GoldShown):
        labeling.add_span(engine, own, ids[1], 2, 5, None, ann.id)

    rest = _cli(sqlite_url, "lift", "--annotator", "ann a", "--json")
    assert rest.returncode == 0, rest.stderr
    assert json.loads(rest.stdout) == {
        "ok": True,
        "dataset": DATASET,
        "annotator": "ann a",
        "lifted": ["it\x1b1"],
    }
    again = _cli(sqlite_url, "lift", "--annotator", "ann a")
    assert again.stdout.strip() == f"Nothing to lift: 'ann a' has no locked item in {DATASET!r}."

    final = json.loads(_cli(sqlite_url, "list", "--json").stdout)["sightings"]
    assert [(r["item"], r["locks"], r["lifted_by"]) for r in sorted(final, key=lambda r: r["item"])] == [
        ("it\x1b0", False, None),
        ("it\x1b1", False, None),
    ]
    assert all(r["lifted_at"] is not None for r in final)
    text = _cli(sqlite_url, "list").stdout
    assert text.count("by the command line") == 2 and "locked" not in text.split("\n", 1)[1]
    engine.dispose()


def test_refusals_and_usage(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    import_bundle(
        engine, Bundle(DatasetRecord(DATASET, "test"), items=[ItemRecord("a", "Text.")]), actor=OPERATOR
    )
    get_or_create_annotator(engine, "ann a")
    engine.dispose()
    missing = _cli(sqlite_url, "lift", "--annotator", "nobody")
    assert (missing.returncode, missing.stderr.strip()) == (1, "error: there is no user named 'nobody'")
    no_item = _cli(sqlite_url, "lift", "--annotator", "ann a", "--item", "zz")
    assert no_item.returncode == 1 and f"there is no item 'zz' in {DATASET!r}" in no_item.stderr
    usage = _cli(sqlite_url, "lift")
    assert usage.returncode == 2 and "needs --annotator NAME" in usage.stderr
