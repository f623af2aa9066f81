"""A detector run exported in one predictions format and imported back, as a user does it on the command
line (import, import-predictions, export, import-predictions without --format, evaluate): the second run
holds the same spans and the same verdicts on the format, so `evaluate` gives it the same F1_IoU and IF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cli
from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import export_bundle

# Four MHALO items: ASCII, Japanese with an emoji, and markup the response itself holds.
TINY = [
    {
        "id": "t1",
        "prompt": "Describe.",
        "image_path": "a.jpg",
        "test_solution": "The cat sits on a red mat near two dogs.",
        "hallucinated_solution": "The cat sits on a <hallucination>red mat</hallucination> near "
        "<hallucination>two dogs.</hallucination>",
    },
    {
        "id": "t2",
        "prompt": "Count.",
        "image_path": "b.jpg",
        "test_solution": "There are three apples and one pear on the table.",
        "hallucinated_solution": "There are <hallucination>three apples</hallucination> and one pear on the table.",
    },
    {
        "id": "t3",
        "prompt": "Any text?",
        "image_path": "c.jpg",
        "test_solution": "No text is visible.",
        "hallucinated_solution": "No text is visible.",
    },
    {
        "id": "t4",
        "prompt": "日本語で説明して",
        "image_path": "d.jpg",
        "test_solution": "猫が 赤い マットの上に 座っている 🐱 and <script>alert(1)</script> **bold**",
        "hallucinated_solution": "猫が <hallucination>赤い</hallucination> マットの上に 座っている "
        "<hallucination>🐱</hallucination> and <script>alert(1)</script> **bold**",
    },
]
# A word-index run: every output follows its format.
WORD_INDEX = [
    {"id": "t1", "spans": [{"start": 7, "end": 10, "text": "near two dogs."}]},
    {"id": "t2", "spans": [{"start": 2, "end": 4, "text": "three apples"}]},
    {"id": "t3", "spans": []},
    {"id": "t4", "spans": [{"start": 1, "end": 2, "text": "赤い"}, {"start": 4, "end": 5, "text": "🐱"}]},
]
# An MHALO-outputs run whose last output breaks the format (its own tag, <Hallucination>, is no span
# tag: the tagged text is not the response).
TAGGED = [
    {
        "id": "t1",
        "output": "Analysis first.\n<Tagged_Text>\n The cat  sits on a red mat\n\nnear "
        "<hallucination>two dogs.</hallucination>\n</Tagged_Text>",
    },
    {
        "id": "t2",
        "output": "There are <hallucination>three apples</hallucination> and one pear on the table.",
    },
    {"id": "t3", "output": "<Tagged_Text>No text is visible.</Tagged_Text>"},
    {
        "id": "t4",
        "output": "<Tagged_Text>猫が <Hallucination>赤い</Hallucination> マットの上に 座っている 🐱 and "
        "<script>alert(1)</script> **bold**</Tagged_Text>",
    },
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _runs(db_url: str, dataset: str = "tiny") -> dict[str, dict[str, tuple[list[str], bool]]]:
    """Per detector run, per item: the texts its spans cover and whether its output followed the format."""
    engine = make_engine(db_url)
    try:
        bundle = export_bundle(engine, dataset, actor=OPERATOR)
    finally:
        engine.dispose()
    responses = {item.external_id: item.response for item in bundle.items}
    return {
        ls.name: {
            a.item: (
                [responses[a.item][s.start : s.end] for s in sorted(a.spans, key=lambda s: s.start)],
                a.raw_output is not None and a.raw_output.follows_format,
            )
            for a in ls.annotations
        }
        for ls in bundle.label_sets
        if ls.kind == "detector"
    }


def _scores(capsys: pytest.CaptureFixture[str], db_url: str) -> dict[str, dict[str, Any]]:
    """`evaluate`'s MHALO table 3 rows (F1_M, F1_IoU and IF), by detector."""
    code, out, err = run(
        capsys, "evaluate", "--db", db_url, "--dataset", "tiny", "--json", "--resamples", "0"
    )
    assert code == 0, err
    mhalo = next(r for r in json.loads(out)["reports"] if r["key"] == "mhalo")
    return {row.pop("detector"): row for row in mhalo["tables"]["table3"]["rows"]}


def _import_run(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path, rows: list[dict[str, Any]], *options: str
) -> None:
    """The benchmark imported as "tiny", then ``rows`` as its detector run "run1" (with ``options``)."""
    bench = tmp_path / "tiny.json"
    bench.write_text(json.dumps(TINY, ensure_ascii=False), encoding="utf-8")
    assert run(capsys, "import", "--db", db_url, "--dataset", "tiny", str(bench))[0] == 0
    first = tmp_path / "run.jsonl"
    first.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run(
        capsys, "import-predictions", "--db", db_url, "--dataset", "tiny", "--detector", "run1", *options,
        str(first),
    )  # fmt: skip
    assert code == 0, out + err


def _round_trip(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path, rows: list[dict[str, Any]], fmt: str
) -> tuple[str, str]:
    """The run imported, exported as ``fmt`` and imported back without naming a format; the export's
    output (its notes) and the second import's."""
    _import_run(capsys, db_url, tmp_path, rows)
    exported = tmp_path / "exported.json"
    code, export_out, err = run(
        capsys, "export", "--db", db_url, "--dataset", "tiny", "--format", fmt,
        "--label-set", "run1", "--out", str(exported),
    )  # fmt: skip
    assert code == 0, export_out + err
    code, again, err = run(
        capsys, "import-predictions", "--db", db_url, "--dataset", "tiny", "--detector", "run2", str(exported)
    )
    assert code == 0, again + err
    return export_out, again


def test_a_word_index_run_exported_as_mhalo_outputs_reads_back_the_same(capsys, db_url, tmp_path):
    """The word-index lists were copied into MHALO's output field: the file was recognised as no format,
    and read as MHALO outputs it was refused as a run over another dataset. Each output is now the
    response with the run's spans tagged, and the export says the outputs were replaced."""
    export_out, again = _round_trip(capsys, db_url, tmp_path, WORD_INDEX, "mhalo-outputs")
    assert "4 raw outputs are replaced by the response tagged with their spans" in export_out
    assert "mhalo-outputs" in again and "warning" not in again
    runs = _runs(db_url)
    assert runs["run2"] == runs["run1"]
    assert runs["run1"]["t4"] == (["赤い", "🐱"], True)
    scores = _scores(capsys, db_url)
    assert scores["run2"] == scores["run1"]


def test_a_tagged_run_with_a_broken_output_exported_as_word_index_reads_back_the_same(
    capsys, db_url, tmp_path
):
    """The broken output, written back as its text (``<Tagged_Text>…``), made the whole file pass for
    MHALO outputs, and every record was refused for lacking an output. The file is now read as word-index:
    the broken output fails its format again, the others keep their spans."""
    export_out, again = _round_trip(capsys, db_url, tmp_path, TAGGED, "word-index")
    assert "1 outputs that failed their format are written as their text" in export_out
    assert "word-index" in again and "error" not in again
    runs = _runs(db_url)
    assert runs["run1"]["t4"] == ([], False) and runs["run2"]["t4"] == ([], False)
    assert {k: v[0] for k, v in runs["run2"].items()} == {k: v[0] for k, v in runs["run1"].items()}
    assert runs["run1"]["t1"] == (["two dogs."], True)
    scores = _scores(capsys, db_url)
    assert scores["run2"] == scores["run1"]


def test_an_mhalo_outputs_run_exported_as_such_is_written_as_it_came(capsys, db_url, tmp_path):
    """Outputs MHALO's reader reads (an analysis before the tags, a broken one) are repeated verbatim."""
    export_out, _ = _round_trip(capsys, db_url, tmp_path, TAGGED, "mhalo-outputs")
    assert "note:" not in export_out
    written = [
        json.loads(line)["output"] for line in (tmp_path / "exported.json").read_text("utf-8").splitlines()
    ]
    assert written == [r["output"] for r in TAGGED]
    runs = _runs(db_url)
    assert runs["run2"] == runs["run1"]
    scores = _scores(capsys, db_url)
    assert scores["run2"] == scores["run1"]


def test_a_run_mhalo_outputs_cannot_hold_is_refused_and_names_the_format_that_keeps_it(
    capsys, db_url, tmp_path
):
    """Overlapping spans cannot be tagged inline: the export is refused, naming the run and canonical,
    and writes no file."""
    bench = tmp_path / "tiny.json"
    bench.write_text(json.dumps(TINY, ensure_ascii=False), encoding="utf-8")
    assert run(capsys, "import", "--db", db_url, "--dataset", "tiny", str(bench))[0] == 0
    first = tmp_path / "run.jsonl"
    rows = [{"id": "t2", "spans": [{"start": 1, "end": 4}, {"start": 2, "end": 3}]}]
    first.write_text(json.dumps(rows), encoding="utf-8")
    code, out, err = run(
        capsys, "import-predictions", "--db", db_url, "--dataset", "tiny", "--detector", "nested", str(first)
    )
    assert code == 0, out + err
    exported = tmp_path / "exported.json"
    code, out, err = run(
        capsys, "export", "--db", db_url, "--dataset", "tiny", "--format", "mhalo-outputs",
        "--label-set", "nested", "--out", str(exported),
    )  # fmt: skip
    assert code != 0
    assert "detector:nested" in out + err and "canonical" in out + err and "overlap" in out + err
    assert not exported.exists()


def test_a_failed_output_of_another_format_is_exported_as_it_came_and_fails_again(capsys, db_url, tmp_path):
    """A word-index output whose words could not be placed is kept as its JSON text, failed. Exported as
    MHALO outputs it is that text, verbatim; read back, it fails its format again (the reason is now
    MHALO's), is kept without spans and warned of, and the scores do not move."""
    rows = [*WORD_INDEX[:1], {"id": "t2", "spans": [{"start": 2, "end": 40}]}, *WORD_INDEX[2:]]
    export_out, again = _round_trip(capsys, db_url, tmp_path, rows, "mhalo-outputs")
    # The three that followed theirs are tagged responses; the failed one is written as it came.
    notes = [line for line in export_out.splitlines() if "note:" in line]
    assert notes == [
        "note: detector:run1: 3 raw outputs are replaced by the response tagged with their spans"
    ]
    written = {
        (row := json.loads(line))["id"]: row["output"]
        for line in (tmp_path / "exported.json").read_text("utf-8").splitlines()
    }
    assert written["t2"] == json.dumps(rows[1]["spans"], ensure_ascii=False)
    assert written["t1"].startswith("<Tagged_Text>")
    warnings = [line for line in again.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "(id=t2)" in warnings[0] and "kept without spans" in warnings[0]
    runs = _runs(db_url)
    assert runs["run2"] == runs["run1"]
    assert runs["run1"]["t2"] == ([], False)
    scores = _scores(capsys, db_url)
    assert scores["run2"] == scores["run1"]


def test_a_failed_output_that_would_read_back_as_following_its_format_is_refused(capsys, db_url, tmp_path):
    """Read with the wrong tag (``--tag A`` over ``<hallucination>`` outputs), an output fails its format;
    its text, written as it came, would read back as an MHALO output that follows it, with spans: the
    export is refused, naming the run, the item and canonical, and writes no file. Canonical, as told,
    keeps the failed outputs as they are."""
    _import_run(capsys, db_url, tmp_path, TAGGED, "--tag", "A")
    runs = _runs(db_url)
    assert {k: v[1] for k, v in runs["run1"].items()} == {"t1": False, "t2": False, "t3": True, "t4": False}
    exported = tmp_path / "exported.json"
    code, out, err = run(
        capsys, "export", "--db", db_url, "--dataset", "tiny", "--format", "mhalo-outputs",
        "--label-set", "run1", "--out", str(exported),
    )  # fmt: skip
    assert code != 0 and not exported.exists()
    assert (
        "detector:run1, item t1: cannot be written as MHALO-style detector outputs (<Tagged_Text>) so that "
        "it reads back the same (its output failed its format, and its text reads as an MHALO output that "
        "follows it). Export it as canonical (keeps everything)"
    ) in out + err
    kept = tmp_path / "kept.jsonl"
    code, out, err = run(
        capsys, "export", "--db", db_url, "--dataset", "tiny", "--format", "canonical", "--out", str(kept)
    )
    assert code == 0, out + err
    code, out, err = run(capsys, "import", "--db", db_url, "--dataset", "tiny again", str(kept))
    assert code == 0, out + err
    assert _runs(db_url, "tiny again")["run1"] == runs["run1"]


def test_a_word_index_run_whose_every_output_failed_reads_back_from_mhalo_outputs(capsys, db_url, tmp_path):
    """Every output failed (no word could be placed), each kept as its JSON text. Exported as MHALO
    outputs, the file was recognised as no format, and named as MHALO outputs it was refused as a run
    over another dataset: none of its outputs copies its item's response. Another format's output
    written as its text holds no response to compare; the file now reads back as the same failed run."""
    rows = [{"id": f"t{k}", "spans": [{"start": 0, "end": 99}]} for k in range(1, 5)]
    export_out, again = _round_trip(capsys, db_url, tmp_path, rows, "mhalo-outputs")
    assert "note:" not in export_out
    assert "mhalo-outputs" in again and "error" not in again
    assert sum("kept without spans" in line for line in again.splitlines()) == 4
    runs = _runs(db_url)
    assert runs["run2"] == runs["run1"] == {f"t{k}": ([], False) for k in range(1, 5)}
    scores = _scores(capsys, db_url)
    assert scores["run2"] == scores["run1"]
