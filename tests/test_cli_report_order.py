"""``cli.py import`` reports a file's refusal as a whole before its records' lines, as the Import page does.

A run over another dataset with two outputs naming no item was reported as the two records' errors,
then, last, the reason nothing of it was imported; a long report put that reason past where a reader
stops. The text report and the JSON's ``rejected`` list now begin with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import cli

REFUSAL = "none of the 3 outputs matches its item's response"


def _files(tmp_path: Path) -> tuple[Path, Path]:
    bench = tmp_path / "bench.json"
    rows = [{"id": k, "test_solution": text, "hallucinated_solution": text} for k, text in
            (("a", "Two cats."), ("b", "A red bus."), ("c", "One dog."))]  # fmt: skip
    bench.write_text(json.dumps(rows))
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(
        "".join(
            json.dumps(
                {
                    "id": k,
                    "output": f"<Tagged_Text>Angle {k} is <hallucination>60°</hallucination>.</Tagged_Text>",
                }
            )
            + "\n"
            for k in ("a", "zzz", "b", "c", "q")
        )
    )
    return bench, outputs


def test_the_refusal_of_the_whole_file_comes_first(capsys, db_url: str, tmp_path: Path) -> None:
    bench, outputs = _files(tmp_path)
    assert cli.main(["import", "--db", db_url, "--dataset", "bench", str(bench)]) == 0
    capsys.readouterr()
    common = ["import-predictions", "--db", db_url, "--dataset", "bench", "--detector", "w"]

    assert cli.main([*common, str(outputs)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("nothing imported (3 error(s))")
    assert REFUSAL in lines[1], lines
    assert "record #1 (id=zzz)" in lines[2] and "record #4 (id=q)" in lines[3], lines

    assert cli.main([*common, "--json", str(outputs)]) == 1
    (report,) = json.loads(capsys.readouterr().out)["files"]
    assert [p["record"] for p in report["rejected"]] == ["-", "#1 (id=zzz)", "#4 (id=q)"]
    assert REFUSAL in report["rejected"][0]["reason"]
