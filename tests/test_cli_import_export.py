"""The import, import-predictions and export commands, run in-process against real databases."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from PIL import Image

import cli
from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import export_bundle

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
MHALO_TEST = SHARED_DATA / "mhalo" / "processed_test.json"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def real_mhalo() -> Path:
    if not MHALO_TEST.is_file():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                f"the shared benchmark files are not at {SHARED_DATA.resolve()} (required when CI=true)"
            )
        pytest.skip(f"the shared benchmark files are not at {SHARED_DATA.resolve()}")
    return MHALO_TEST


def test_refused_import_reports_every_bad_record_and_writes_nothing(capsys, db_url, real_mhalo):
    code, out, _ = run(capsys, "import", "--db", db_url, "--json", "--dataset", "mc", str(real_mhalo))
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    rejected = report["files"][0]["rejected"]
    assert [r["record"] for r in rejected] == ["#7", "#41", "#52", "#82", "#84", "#91"]
    assert all(r["field"] == "hallucinated_solution" and r["reason"] for r in rejected)
    code, out, _ = run(capsys, "stats", "--db", db_url, "--json")
    assert json.loads(out)["datasets"] == []


def test_import_with_skipping_is_idempotent_and_exports(capsys, db_url, real_mhalo, tmp_path):
    args = ["import", "--db", db_url, "--json", "--dataset", "mc", "--allow-skip", str(real_mhalo)]
    code, out, _ = run(capsys, *args)
    first = json.loads(out)["files"][0]
    assert code == 0 and first["items_created"] == 149 and len(first["rejected"]) == 6
    code, out, _ = run(capsys, *args)
    again = json.loads(out)["files"][0]
    assert code == 0 and again["items_created"] == 0 and again["items_existing"] == 149
    out_file = tmp_path / "mc.jsonl"
    code, out, _ = run(
        capsys, "export", "--db", db_url, "--dataset", "mc", "--format", "canonical", "--out", str(out_file)
    )
    assert code == 0 and "Wrote 'mc'" in out
    assert out_file.read_bytes().count(b'"record": "item"') == 149


def test_predictions_then_export_in_their_format(capsys, db_url, tmp_path):
    bench = tmp_path / "bench.json"
    bench.write_text(
        json.dumps([{"id": "a", "test_solution": "A red cube.", "hallucinated_solution": "A red cube."}])
    )
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(
        json.dumps(
            {"id": "a", "output": "<Tagged_Text>A <hallucination>red</hallucination> cube.</Tagged_Text>"}
        )
        + "\n"
    )
    assert run(capsys, "import", "--db", db_url, "--dataset", "d", str(bench))[0] == 0
    code, out, _ = run(
        capsys,
        "import-predictions",
        "--db",
        db_url,
        "--json",
        "--dataset",
        "d",
        "--detector",
        "det",
        str(outputs),
    )
    assert code == 0 and json.loads(out)["files"][0]["label_sets"] == ["det"]
    target = tmp_path / "out.jsonl"
    code, _, _ = run(
        capsys,
        "export",
        "--db",
        db_url,
        "--dataset",
        "d",
        "--format",
        "mhalo-outputs",
        "--label-set",
        "detector:det",
        "--out",
        str(target),
    )
    assert code == 0 and json.loads(target.read_text())["output"].startswith(
        "<Tagged_Text>A <hallucination>red"
    )
    engine = make_engine(db_url)
    try:
        (detector,) = [
            ls for ls in export_bundle(engine, "d", actor=OPERATOR).label_sets if ls.kind == "detector"
        ]
    finally:
        engine.dispose()
    assert [(s.start, s.end) for s in detector.annotations[0].spans] == [(2, 5)]


def test_usage_errors_exit_2(capsys, db_url, tmp_path):
    assert run(capsys, "import", "--db", db_url, "--format", "nope", str(tmp_path))[0] == 2
    assert run(capsys, "import", "--db", db_url, str(tmp_path / "missing.json"))[0] == 2
    code, _, err = run(capsys, "import", "--db", db_url, "--format", "mhalo-outputs", str(tmp_path))
    assert code == 2 and "is a predictions format: use import-predictions" in err
    assert run(capsys, "export", "--db", db_url, "--dataset", "d", "--format", "nope", "--out", "x")[0] == 2
    with pytest.raises(SystemExit) as exited:
        cli.main(["import-predictions", "--db", db_url, "file.json"])
    assert exited.value.code == 2


def test_export_of_a_missing_dataset_fails_cleanly(capsys, db_url, tmp_path):
    code, _, err = run(
        capsys,
        "export",
        "--db",
        db_url,
        "--dataset",
        "nope",
        "--format",
        "canonical",
        "--out",
        str(tmp_path / "x"),
    )
    assert code == 1 and "no dataset named 'nope'" in err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("fmt", ["mhalo", "canonical"])
def test_export_naming_a_label_set_the_dataset_lacks_fails_and_writes_nothing(capsys, db_url, tmp_path, fmt):
    bench = tmp_path / "bench.json"
    bench.write_text(
        json.dumps(
            [
                {
                    "id": "a",
                    "test_solution": "A red cube.",
                    "hallucinated_solution": "A <hallucination>red</hallucination> cube.",
                }
            ]
        )
    )
    assert run(capsys, "import", "--db", db_url, "--dataset", "d", str(bench))[0] == 0
    target = tmp_path / "out.json"
    export = ["export", "--db", db_url, "--dataset", "d", "--format", fmt, "--out", str(target)]
    # A typo of "gold": the file would say no response has a hallucination.
    code, _, err = run(capsys, *export, "--label-set", "gldo")
    assert code == 1 and "no label set named 'gldo'" in err and "gold:gold" in err
    assert not target.exists()
    code, _, err = run(capsys, *export, "--label-set", "gold", "--label-set", "detector:gold")
    assert code == 1 and "no label set named 'detector:gold'" in err
    assert not target.exists()
    assert run(capsys, *export, "--label-set", "gold:gold")[0] == 0
    assert ("<hallucination>red" if fmt == "mhalo" else '"kind": "gold"') in target.read_text()


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    return buffer.getvalue()


def test_image_zip_with_path_traversal_refuses_the_import(capsys, db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    bench = tmp_path / "bench.json"
    bench.write_text(
        json.dumps([{"id": "a", "image": "a.png", "test_solution": "x", "hallucinated_solution": "x"}])
    )
    archive = tmp_path / "images.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.png", _png())
        zf.writestr("../evil.png", _png())
    code, out, _ = run(capsys, "import", "--db", db_url, "--json", "--images", str(archive), str(bench))
    assert code == 1
    (rejected,) = json.loads(out)["files"][0]["rejected"]
    assert rejected["record"] == "../evil.png" and "escape" in rejected["reason"]
    assert not (tmp_path / "evil.png").exists() and not (tmp_path / "data" / "images").exists()
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("a.png", _png())
    code, out, _ = run(capsys, "import", "--db", db_url, "--json", "--images", str(good), str(bench))
    report = json.loads(out)["files"][0]
    assert code == 0 and report["images_extracted"] == 1 and report["warnings"] == []


def test_control_characters_from_a_file_are_printed_visibly_not_sent_to_the_terminal(
    capsys, db_url, tmp_path
):
    """An id holding ESC [31m and BEL recoloured and rang the terminal in the record's name of a refusal;
    a carriage return could overwrite the line. The record's name quotes such an id with its escapes
    (as the reason column does), also C1 (\\x9b starts an escape sequence as well), in the text report
    and in --json alike."""
    hostile = "zz\x1b[31mRED\x07\r\x9b2J"
    source = tmp_path / "esc.json"
    source.write_text(json.dumps([{"id": hostile, "test_solution": "A cat.", "hallucinated_solution": "<h"}]))
    code, out, err = run(capsys, "import", "--db", db_url, "--dataset", "d", str(source))
    assert code == 1
    printed = out + err
    assert not any(c in printed for c in "\x1b\x07\r\x9b"), printed
    shown = "id='zz\\x1b[31mRED\\x07\\r\\x9b2J'"
    assert shown in printed
    code, out, _ = run(capsys, "import", "--db", db_url, "--json", "--dataset", "d", str(source))
    assert code == 1 and "\x9b" not in out
    assert shown in json.loads(out)["files"][0]["rejected"][0]["record"]
