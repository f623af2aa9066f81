"""``import --replace``, ``imports`` and ``undo-import`` on the command line, against real databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli
from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import export_bundle
from tests.db.import_samples import HOSTILE, SENTENCES, canonical, gold_bundle, response


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _gold_spans(db_url: str) -> int:
    engine = make_engine(db_url)
    try:
        (gold,) = [
            ls for ls in export_bundle(engine, "shapes", actor=OPERATOR).label_sets if ls.name == "gold"
        ]
        return sum(len(a.spans) for a in gold.annotations)
    finally:
        engine.dispose()


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    gold, hostile = tmp_path / "gold.jsonl", tmp_path / "visitor.jsonl"
    gold.write_bytes(canonical(gold_bundle()))
    hostile.write_bytes(HOSTILE)
    return str(gold), str(hostile)


def test_hostile_import_exits_1_with_the_report_and_replace_then_undo_restores(capsys, db_url, files):
    gold, hostile = files
    assert run(capsys, "import", "--db", db_url, gold)[0] == 0

    code, out, _ = run(capsys, "import", "--db", db_url, hostile)
    assert code == 1
    assert "gold:gold — spans: 5 removed, 0 changed, 0 added; sentence_labels: 16 removed" in out
    assert "items affected (3): a, b, c" in out
    code, out, _ = run(capsys, "import", "--db", db_url, "--json", hostile)
    payload = json.loads(out)
    assert code == 1 and payload["ok"] is False
    assert payload["files"][0]["changes"]["counts"]["gold:gold"]["spans"] == {
        "removed": 5,
        "changed": 0,
        "added": 0,
    }
    assert payload["files"][0]["changes"]["first_items"] == ["a", "b", "c"]
    assert _gold_spans(db_url) == 5

    assert run(capsys, "import", "--db", db_url, "--replace", hostile)[0] == 0
    assert _gold_spans(db_url) == 0

    code, out, _ = run(capsys, "imports", "--db", db_url, "--json")
    latest, first = json.loads(out)["imports"]
    assert code == 0 and latest["source"] == hostile and first["source"] == gold and latest["undoable"]
    code, out, _ = run(capsys, "imports", "--db", db_url)
    assert code == 0 and f"{latest['log_id']:>6}" in out and "undoable" in out

    code, out, _ = run(capsys, "undo-import", "--db", db_url, "--json", str(latest["log_id"]))
    undone = json.loads(out)
    assert code == 0 and undone["ok"] and undone["undid"] == latest["log_id"]
    assert undone["rows"] == {"spans": 5, "sentence_labels": 16}
    assert _gold_spans(db_url) == 5

    code, _, err = run(capsys, "undo-import", "--db", db_url, str(latest["log_id"]))
    assert code == 1 and "undone already" in err
    code, out, _ = run(capsys, "undo-import", "--db", db_url, "--json", "9999")
    assert code == 1 and json.loads(out) == {"ok": False, "error": "there is no import with log id 9999"}
    with pytest.raises(SystemExit) as exited:
        cli.main(["undo-import", "--db", db_url, "not-a-number"])
    assert exited.value.code == 2


def test_identical_reimport_changes_nothing_and_needs_no_replace(capsys, db_url, files):
    gold, _ = files
    assert run(capsys, "import", "--db", db_url, gold)[0] == 0
    code, out, _ = run(capsys, "import", "--db", db_url, "--json", gold)
    assert code == 0 and json.loads(out)["files"][0]["rows"] == {}


def test_import_predictions_needs_replace_to_change_a_run(capsys, db_url, files, tmp_path):
    gold, _ = files
    assert run(capsys, "import", "--db", db_url, gold)[0] == 0
    text = response(SENTENCES["a"])
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    tagged = text.replace("number 0", "<hallucination>number 0</hallucination>", 1)
    first.write_text(json.dumps({"id": "a", "output": f"<Tagged_Text>{tagged}</Tagged_Text>"}) + "\n")
    second.write_text(json.dumps({"id": "a", "output": f"<Tagged_Text>{text}</Tagged_Text>"}) + "\n")
    common = ["--db", db_url, "--dataset", "shapes", "--detector", "det", "--format", "mhalo-outputs"]

    assert run(capsys, "import-predictions", *common, str(first))[0] == 0
    code, out, _ = run(capsys, "import-predictions", *common, str(second))
    assert code == 1 and "detector:det — spans: 1 removed" in out
    assert run(capsys, "import-predictions", *common, "--replace", str(second))[0] == 0
