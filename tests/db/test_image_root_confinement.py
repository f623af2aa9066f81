"""Every image root a page sets is held, in the store's own functions, to the rule of the Import page:
inside the import folder, or the data folder that keeps the demo's and uploaded ZIPs' images. Setting
a dataset's image root accepted any folder on the server, so the pages showed images from anywhere;
only the command line, whose operator holds the server anyway, still names any folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from db import models as m
from db.access import OPERATOR
from db.config import data_dir
from db.engine import read_session
from db.import_folder import ImportPathRefused
from db.importer import import_bundle
from db.repositories.datasets import get_dataset, set_image_root
from db.transfer import import_file
from formats.base import ReadOptions
from formats.records import Bundle, DatasetRecord, ItemRecord


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """The import folder, the data folder and a folder outside both."""
    imports, data, outside = tmp_path / "imports", tmp_path / "data", tmp_path / "elsewhere"
    for folder in (imports, data, outside):
        folder.mkdir()
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", str(imports))
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(data))
    return imports, data, outside


@pytest.fixture
def dataset(engine: Engine) -> int:
    import_bundle(
        engine, Bundle(DatasetRecord("cats", "canonical"), [ItemRecord("a", "A cat.")]), actor=OPERATOR
    )
    with read_session(engine) as session:
        return session.query(m.Dataset.id).one()[0]


def _root(engine: Engine, dataset: str = "cats") -> str | None:
    summary = get_dataset(engine, dataset)
    assert summary is not None
    return summary.image_root


def test_a_folder_outside_the_import_folder_is_refused(
    engine: Engine, dataset: int, folders: tuple[Path, Path, Path]
) -> None:
    imports, _, outside = folders
    with pytest.raises(ImportPathRefused) as refused:
        set_image_root(engine, dataset, str(outside), actor=OPERATOR)
    assert str(refused.value) == (
        f"An image folder must lie inside the import folder {imports.resolve()} or the data folder "
        f"{data_dir().resolve()}; {str(outside)!r} is outside both."
    )
    assert _root(engine) is None


def test_a_link_out_of_the_import_folder_is_refused(
    engine: Engine, dataset: int, folders: tuple[Path, Path, Path]
) -> None:
    imports, _, outside = folders
    (imports / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ImportPathRefused):
        set_image_root(engine, dataset, str(imports / "link"), actor=OPERATOR)
    assert _root(engine) is None


def test_folders_in_the_import_or_data_folder_are_kept_resolved(
    engine: Engine, dataset: int, folders: tuple[Path, Path, Path]
) -> None:
    imports, data, _ = folders
    set_image_root(engine, dataset, "pictures", actor=OPERATOR)
    assert _root(engine) == str(imports.resolve() / "pictures")
    set_image_root(engine, dataset, str(data / "images" / "cats"), actor=OPERATOR)
    assert _root(engine) == str((data / "images" / "cats").resolve())
    set_image_root(engine, dataset, None, actor=OPERATOR)
    assert _root(engine) is None


def test_with_server_paths_off_only_the_data_folder_is_left(
    engine: Engine, dataset: int, folders: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like the Import page, which then reads no folder typed on it; images uploaded in a ZIP are still
    kept in the data folder."""
    _, data, outside = folders
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", "off")
    with pytest.raises(ImportPathRefused, match="switched off"):
        set_image_root(engine, dataset, str(outside), actor=OPERATOR)
    set_image_root(engine, dataset, str(data / "images"), actor=OPERATOR)
    assert _root(engine) == str((data / "images").resolve())


def test_the_command_line_names_any_folder(
    engine: Engine, dataset: int, folders: tuple[Path, Path, Path]
) -> None:
    _, _, outside = folders
    set_image_root(engine, dataset, str(outside), actor=OPERATOR, confine=False)
    assert _root(engine) == str(outside)


ROWS = "\n".join(
    json.dumps(r)
    for r in (
        {"record": "dataset", "format_version": 1, "name": "cats", "source_format": "canonical"},
        {"record": "item", "external_id": "b", "response": "A dog."},
    )
).encode()


@pytest.mark.parametrize("existing", [False, True])
def test_an_import_from_a_page_refuses_a_chosen_folder_outside(
    engine: Engine, folders: tuple[Path, Path, Path], existing: bool
) -> None:
    """An import from a page writes the image folder chosen for it, into a new dataset or onto an
    existing one: the same rule, whatever the page checked before."""
    _, _, outside = folders
    if existing:
        import_file(engine, ROWS, actor=OPERATOR, source="f.jsonl", format_name="canonical")
    outcome = import_file(
        engine,
        ROWS,
        actor=OPERATOR,
        source="f.jsonl",
        format_name="canonical",
        options=ReadOptions(),
        image_root=str(outside),
        confine_image_root=True,
    )
    assert not outcome.ok
    assert [(p.field, p.reason) for p in outcome.errors] == [
        ("image folder", f"An image folder must lie inside the import folder {folders[0].resolve()} or the "
                         f"data folder {data_dir().resolve()}; {str(outside)!r} is outside both.")
    ]  # fmt: skip
    assert get_dataset(engine, "cats") is None or _root(engine) is None
    kept = import_file(engine, ROWS, actor=OPERATOR, source="f.jsonl", format_name="canonical",
                       image_root=str(outside), replace_existing=True)  # fmt: skip
    assert kept.ok and _root(engine) == str(outside)  # the command line's import
