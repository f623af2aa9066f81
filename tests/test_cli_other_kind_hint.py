"""A file of the other kind sent to an import says so: detector outputs given to ``import`` (a
benchmark import) got only "the format … was not recognised; name it with --format", which sent people
looking for a benchmark format that does not exist; a benchmark given to ``import-predictions`` the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli
from formats.registry import not_recognised

OUTPUTS = [{"id": "a", "output": "<Tagged_Text>A <hallucination>red</hallucination> cube.</Tagged_Text>"}]
BENCHMARK = [
    {
        "id": "a",
        "test_solution": "A red cube.",
        "hallucinated_solution": "A <hallucination>red</hallucination> cube.",
    }
]
OUTPUTS_HINT = (
    "this looks like detector outputs (format {!r}): import them as a detector run with import-predictions / "
    "the 'Detector outputs' import"
)


def _errors(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert cli.main(list(argv)) == 1
    out = capsys.readouterr().out
    return [line.strip() for line in out.splitlines() if line.strip().startswith("error:")]


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("outputs.json", json.dumps(OUTPUTS), "mhalo-outputs"),
        ("scores.csv", "model,image_name,sentence_index,score\nm,a.jpg,0,85\n", "alignbench-scores"),
    ],
    ids=["mhalo-outputs", "alignbench-scores"],
)
def test_detector_outputs_given_to_import_say_to_import_them_as_a_run(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path, name: str, content: str, fmt: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    (error,) = _errors(capsys, "import", "--db", db_url, str(path))
    assert error.endswith(f"the format of {path} was not recognised; {OUTPUTS_HINT.format(fmt)}")


def test_detector_outputs_read_as_a_named_benchmark_format_say_so_too(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(OUTPUTS))
    (error,) = _errors(capsys, "import", "--db", db_url, "--format", "canonical", str(path))
    assert "canonical files are JSON Lines" in error
    assert error.endswith(OUTPUTS_HINT.format("mhalo-outputs"))


def test_a_benchmark_given_to_import_predictions_says_to_import_it_as_a_dataset(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(BENCHMARK))
    assert cli.main(["import", "--db", db_url, "--dataset", "d", str(path)]) == 0
    capsys.readouterr()
    argv = ["import-predictions", "--db", db_url, "--dataset", "d", "--detector", "det", str(path)]
    (error,) = _errors(capsys, *argv)
    assert error.endswith(
        "this looks like a benchmark (format 'mhalo'): import it as a dataset with import / the "
        "'Benchmark file' import"
    )


def test_a_file_of_neither_kind_is_still_asked_to_be_named(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "notes.bin"
    path.write_bytes(b"\xff\xfe not text")
    assert cli.main(["import", "--db", db_url, str(path)]) == 1
    out = capsys.readouterr().out
    said = not_recognised(path.read_bytes(), str(path), "benchmark", choose="name it with --format")
    assert said in out  # what the Import page says too
    assert "was not recognised; name it with --format. What each benchmark format looks for:" in out
    assert "\n  - MHALO (tagged JSON): JSON array; hallucinated_solution" in out
