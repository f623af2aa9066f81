"""The Item page's "Image root" is held to the Import page's rule: a folder the pages may serve images
from lies inside the import folder (or the data folder); it accepted any folder on the server."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from db.config import data_dir
from db.engine import make_engine
from db.repositories.datasets import get_dataset
from render.literal_text import literal
from tests.pages.demo_store import APP

TIMEOUT = 30


@pytest.fixture
def folders(app_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The import folder the server is started with, and a folder outside it holding the item's image."""
    imports = tmp_path / "imports"
    imports.mkdir()
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", str(imports))
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    Image.new("RGB", (8, 8), "teal").save(outside / "missing-4.png")
    return imports, outside


def _save_root(root: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(dataset="pages-test", item="item-4")
    at.run()
    at.switch_page("app_pages/item.py").run()
    next(t for t in at.text_input if t.label == "Image root of this dataset").input(root).run()
    next(b for b in at.button if b.label == "Save image root").click().run()
    assert not at.exception
    return at


def _stored_root(app_db: str) -> str | None:
    engine = make_engine(app_db)
    try:
        dataset = get_dataset(engine, "pages-test")
        assert dataset is not None
        return dataset.image_root
    finally:
        engine.dispose()


def test_a_folder_outside_the_import_folder_is_refused(app_db: str, folders: tuple[Path, Path]) -> None:
    imports, outside = folders
    at = _save_root(str(outside))
    assert [e.value for e in at.error] == [
        literal(
            f"An image folder must lie inside the import folder {imports.resolve()} or the data folder "
            f"{data_dir().resolve()}; {str(outside)!r} is outside both."
        )
    ]
    assert _stored_root(app_db) is None
    assert not [e for e in at.main if type(e).__name__ == "Image"]


def test_a_folder_inside_the_import_folder_is_saved(app_db: str, folders: tuple[Path, Path]) -> None:
    imports, _ = folders
    inside = imports / "pictures"
    inside.mkdir()
    Image.new("RGB", (8, 8), "teal").save(inside / "missing-4.png")
    at = _save_root("pictures")  # a relative name is taken inside the import folder, as on the Import page
    assert not at.error
    assert _stored_root(app_db) == str(inside.resolve())
    assert [e for e in at.main if type(e).__name__ == "Image"]


def test_with_server_paths_off_no_typed_folder_is_saved(
    app_db: str, folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, outside = folders
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", "off")
    at = _save_root(str(outside))
    assert [e.value for e in at.error] == [
        literal("Reading files on the server is switched off (SPANLIGHT_IMPORT_DIR=off): upload.")
    ]
    assert _stored_root(app_db) is None


def test_a_folder_with_markdown_in_its_name_is_shown_literally(
    app_db: str, folders: tuple[Path, Path]
) -> None:
    imports, _ = folders
    typed = "/no/**such**/<b>folder</b>"
    at = _save_root(typed)
    assert [e.value for e in at.error] == [
        literal(
            f"An image folder must lie inside the import folder {imports.resolve()} or the data folder "
            f"{data_dir().resolve()}; {typed!r} is outside both."
        )
    ]
    assert _stored_root(app_db) is None
