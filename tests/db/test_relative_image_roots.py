"""A relative image folder named inside an imported file ("images/") is looked for where its writer
meant it: beside the file, for a file read from disk (the command line, or the import folder from the
Import page); inside the import folder for an upload, which has no folder of its own. An import says,
once, when the folder it looks in does not exist or holds none of the file's images, naming the
folder as written and where it was looked for: an upload naming "images/" was imported with every
image missing and only per-item warnings that named neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import Engine

import cli
from db.access import OPERATOR
from db.repositories.datasets import get_dataset
from db.transfer import import_file, import_path
from formats.problems import Problem


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The data folder (with the default import folder in it) and a benchmark folder outside both."""
    data, bench = tmp_path / "data", tmp_path / "bench"
    (data / "imports").mkdir(parents=True)
    bench.mkdir()
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(data))
    monkeypatch.delenv("SPANLIGHT_IMPORT_DIR", raising=False)
    return data, bench


def _cats(folder: Path, *, with_images: bool = True) -> Path:
    """A canonical file in ``folder`` naming the image folder "images/", with its two images beside it."""
    lines = [
        {"record": "dataset", "format_version": 1, "name": "cats", "source_format": "canonical",
         "image_root": "images/"},
        {"record": "item", "external_id": "a", "response": "A cat.", "image_ref": "a.png"},
        {"record": "item", "external_id": "b", "response": "A dog.", "image_ref": "b.png"},
    ]  # fmt: skip
    path = folder / "cats.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    if with_images:
        (folder / "images").mkdir()
        for name in ("a.png", "b.png"):
            Image.new("RGB", (4, 4), "teal").save(folder / "images" / name)
    return path


def _root_problems(problems: list[Problem]) -> list[tuple[str, str, str]]:
    return [(p.file, p.severity, p.reason) for p in problems if p.field == "image_root"]


def _stored_root(engine: Engine) -> str | None:
    dataset = get_dataset(engine, "cats")
    assert dataset is not None
    return dataset.image_root


def test_an_upload_naming_a_relative_folder_missing_from_the_import_folder_is_told_so(
    engine: Engine, folders: tuple[Path, Path]
) -> None:
    data, bench = folders
    path = _cats(bench)
    outcome = import_file(
        engine, path.read_bytes(), actor=OPERATOR, source="cats.jsonl", confine_image_root=True
    )
    assert outcome.ok
    looked = (data / "imports" / "images").resolve()
    assert _root_problems(outcome.problems) == [
        ("cats.jsonl", "warning", f"the image folder 'images/' named in the file (looked for at {looked}) "
                                  "does not exist, so none of the file's 2 image(s) was found"),
    ]  # fmt: skip
    assert _stored_root(engine) == str(looked)


def test_an_upload_whose_folder_holds_none_of_its_images_is_told_so_once(
    engine: Engine, folders: tuple[Path, Path]
) -> None:
    data, bench = folders
    path = _cats(bench)
    (data / "imports" / "images").mkdir()
    outcome = import_file(
        engine, path.read_bytes(), actor=OPERATOR, source="cats.jsonl", confine_image_root=True
    )
    looked = (data / "imports" / "images").resolve()
    assert _root_problems(outcome.problems) == [
        ("cats.jsonl", "warning",
         f"the image folder 'images/' named in the file (looked for at {looked}) holds none of the file's "
         "2 image(s)"),
    ]  # fmt: skip
    assert [p.record for p in outcome.warnings if p.field == "image"] == ["id=a", "id=b"]


def test_an_upload_whose_folder_holds_its_images_says_nothing(
    engine: Engine, folders: tuple[Path, Path]
) -> None:
    data, bench = folders
    path = _cats(bench)
    (bench / "images").rename(data / "imports" / "images")
    outcome = import_file(
        engine, path.read_bytes(), actor=OPERATOR, source="cats.jsonl", confine_image_root=True
    )
    assert outcome.ok and outcome.warnings == []


def test_the_command_line_looks_beside_the_file_and_stores_the_folder_whole(
    engine: Engine, folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from another folder: the file's "images/" was looked for in the working folder, said not to
    exist, and kept as "images/", which the pages then looked for in the server's working folder."""
    _, bench = folders
    path = _cats(bench)
    monkeypatch.chdir(bench.parent)
    outcome = import_path(engine, path, actor=OPERATOR, source="bench/cats.jsonl")
    assert outcome.ok and outcome.warnings == []
    assert _stored_root(engine) == str((bench / "images").resolve())


def test_a_file_in_the_import_folder_looks_beside_itself_from_the_page(
    engine: Engine, folders: tuple[Path, Path]
) -> None:
    data, _ = folders
    sub = data / "imports" / "cats"
    sub.mkdir()
    path = _cats(sub)
    outcome = import_path(engine, path, actor=OPERATOR, source="cats.jsonl", confine_image_root=True)
    assert outcome.ok and outcome.warnings == []
    assert _stored_root(engine) == str((sub / "images").resolve())


def test_beside_a_file_is_still_held_to_the_pages_rule(engine: Engine, folders: tuple[Path, Path]) -> None:
    """A file in the import folder naming a relative folder that climbs out of it: the page's import
    does not use it, and says where it was looked for."""
    data, bench = folders
    _cats(bench)
    path = data / "imports" / "cats.jsonl"
    path.write_text((bench / "cats.jsonl").read_text().replace('"images/"', '"../../bench/images"'))
    outcome = import_path(engine, path, actor=OPERATOR, source="cats.jsonl", confine_image_root=True)
    assert outcome.ok and _stored_root(engine) is None
    ((_, severity, reason),) = _root_problems(outcome.problems)
    assert severity == "warning"
    looked = (bench / "images").resolve()
    assert reason.startswith(
        f"the file's image folder '../../bench/images' (looked for at {looked}) is outside"
    )
    assert reason.endswith("not used (choose an image folder on the Import page)")


def test_with_server_paths_off_an_uploads_relative_folder_is_not_used_and_said_why(
    engine: Engine, folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bench = folders
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", "off")
    path = _cats(bench)
    outcome = import_file(
        engine, path.read_bytes(), actor=OPERATOR, source="cats.jsonl", confine_image_root=True
    )
    assert outcome.ok and _stored_root(engine) is None
    ((_, _, reason),) = _root_problems(outcome.problems)
    assert "'images/' is relative" in reason and "SPANLIGHT_IMPORT_DIR=off" in reason


def test_the_import_command_reports_a_missing_folder_as_written(
    capsys: pytest.CaptureFixture[str], db_url: str, folders: tuple[Path, Path]
) -> None:
    _, bench = folders
    path = _cats(bench, with_images=False)
    assert cli.main(["import", "--db", db_url, str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        f"  warning: {path}: field 'image_root': the image folder 'images/' named in the file (looked for at "
        f"{(bench / 'images').resolve()}) does not exist, so none of the file's 2 image(s) was found"
    ) in out.splitlines()
    empty = bench / "empty"
    empty.mkdir()
    assert cli.main(["import", "--db", db_url, "--images", str(empty), str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        f"the image folder {str(empty)!r} chosen for the import (looked for at {empty.resolve()}) holds none "
        "of the file's 2 image(s)"
    ) in out


def test_an_uploads_relative_folder_climbing_out_is_refused_naming_where_it_was_looked_for(
    engine: Engine, folders: tuple[Path, Path]
) -> None:
    data, bench = folders
    _cats(bench)
    climbing = (bench / "cats.jsonl").read_bytes().replace(b'"images/"', b'"../../bench/images"')
    outcome = import_file(engine, climbing, actor=OPERATOR, source="cats.jsonl", confine_image_root=True)
    assert outcome.ok and _stored_root(engine) is None
    ((_, _, reason),) = _root_problems(outcome.problems)
    looked = (bench / "images").resolve()
    assert reason.startswith(
        f"the file's image folder '../../bench/images' (looked for at {looked}) is outside"
    )
