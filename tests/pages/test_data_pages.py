"""Datasets, browser and item view, driven through Streamlit's AppTest on a real store."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from components.dataset_picker import WIDGET
from db.access import OPERATOR
from db.engine import make_engine
from db.repositories.datasets import get_dataset, list_dataset_infos, set_image_root
from tests.pages.conftest import XSS, add_small_dataset
from tests.peak_rss import PEAK_RSS_LIMIT_KB, run_measured

TIMEOUT = 30
APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at


def _html(at: AppTest) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def test_home_lists_datasets_with_counts(app_db: str) -> None:
    at = _app().run()
    assert not at.exception
    assert [s.value for s in at.subheader] == ["pages-test"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Items"] == "31"
    assert metrics["Detectors"] == "1"


def test_browse_filters_and_pages(app_db: str) -> None:
    at = _app(dataset="pages-test").run()
    at.switch_page("app_pages/browse.py").run()
    assert not at.exception
    assert "**31** matching items" in at.markdown[-1].value or any("**31**" in m.value for m in at.markdown)
    at.selectbox(key="browse_gold").set_value("hallucinated").run()
    assert any("**11** matching items" in m.value for m in at.markdown)
    at.multiselect(key="browse_subsets").set_value(["shapes"]).run()
    assert any("**5** matching items" in m.value for m in at.markdown)
    at.selectbox(key="browse_gold").set_value("any").run()
    at.text_input(key="browse_q").input("number 7.").run()
    frame = at.dataframe[0].value
    assert list(frame["id"]) == ["item-7"]


def test_a_broad_search_stops_counting_and_pages_on_past_the_count(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st

    from db.importer import import_bundle
    from db.repositories.items import COUNT_BOUND
    from formats.records import Bundle, DatasetRecord, ItemRecord

    n_items = COUNT_BOUND + 60
    items = [ItemRecord(f"cap-{k:04d}", f"Caption {k} of a street.") for k in range(n_items)]
    engine = make_engine(sqlite_url)
    import_bundle(engine, Bundle(DatasetRecord("broad", "canonical"), items, []), actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()

    at = _app(dataset="broad").run()
    at.switch_page("app_pages/browse.py").run()
    assert any(f"**{n_items:,}** matching items · page 1 of 22" in m.value for m in at.markdown)
    at.text_input(key="browse_q").input("STREET").run()
    assert not at.exception
    assert any(
        f"More than **{COUNT_BOUND:,}** matching items · page 1 of 21 or more" in m.value for m in at.markdown
    )
    at.number_input(key="browse_page").set_value(21).run()
    assert any("More than **1,050** matching items · page 21 of 22 or more" in m.value for m in at.markdown)
    assert at.dataframe[0].value["id"].iloc[0] == "cap-1000"
    at.number_input(key="browse_page").set_value(22).run()
    assert any(f"**{n_items:,}** matching items · page 22 of 22" in m.value for m in at.markdown)
    assert list(at.dataframe[0].value["id"]) == [f"cap-{k:04d}" for k in range(1050, n_items)]
    at.text_input(key="browse_q").input("caption 1").run()  # a new search starts at its first page
    assert at.number_input(key="browse_page").value == 1
    assert any("**171** matching items · page 1 of 4" in m.value for m in at.markdown)
    at.number_input(key="browse_page").set_value(3).run()  # items 101-150 of the matches
    at.selectbox(key="browse_size").set_value(25).run()  # the page that shows item 101 again
    assert at.number_input(key="browse_page").value == 5
    assert any("**171** matching items · page 5 of 7" in m.value for m in at.markdown)
    at.text_input(key="browse_q").input("STREET").run()
    at.number_input(key="browse_page").set_value(300).run()  # past the counted matches: any page may be asked
    assert at.number_input(key="browse_page").value == 43  # the last of 1,060 matches at 25 a page
    assert any(f"**{n_items:,}** matching items · page 43 of 43" in m.value for m in at.markdown)


def test_item_view_shows_escaped_spans_and_missing_image(app_db: str) -> None:
    at = _app(dataset="pages-test", item="xss").run()
    at.switch_page("app_pages/item.py").run()
    assert not at.exception
    body = _html(at)
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body
    assert "<script>" not in body and "<img src=x" not in body
    assert "&lt;b&gt;prompt&lt;/b&gt;" in body
    assert "**bold**" in body  # Markdown is not applied to model text
    assert "no image reference" in at.warning[0].value
    assert XSS[6:39].startswith("<script>")


def test_missing_image_names_file_and_root_setting(
    app_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", str(tmp_path))
    at = _app(dataset="pages-test", item="item-4").run()
    at.switch_page("app_pages/item.py").run()
    assert "`missing-4.png`" in at.warning[0].value
    assert "no image root" in at.warning[0].value
    at.text_input(key="item_image_root_1").input(str(tmp_path / "nowhere")).run()
    [b for b in at.button if b.label == "Save image root"][0].click().run()
    assert f"not found under the image root `{tmp_path.resolve() / 'nowhere'}`" in at.warning[0].value


def test_an_image_root_no_store_can_hold_is_refused_on_the_page(app_db: str) -> None:
    at = _app(dataset="pages-test", item="item-4").run()
    at.switch_page("app_pages/item.py").run()
    at.text_input(key="item_image_root_1").input("/images\x00").run()
    [b for b in at.button if b.label == "Save image root"][0].click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "The folder contains a NUL character at character 7, which cannot be stored; remove it and save again."
    ]
    assert "no image root" in at.warning[0].value  # nothing was saved


def test_item_view_navigates_and_switches_label_set(app_db: str) -> None:
    at = _app(dataset="pages-test", item="item-0").run()
    at.switch_page("app_pages/item.py").run()
    assert "Color Attribute" in _html(at)
    at.button[1].click().run()  # Next
    assert at.query_params["item"] == "item-1"
    at.query_params["item"] = "item-0"
    at.run()
    at.selectbox(key="item_label_set").set_value("Detector · eager").run()
    assert any("does NOT follow the format" in e.label for e in at.expander)


def test_unknown_item_says_so(app_db: str) -> None:
    at = _app(dataset="pages-test", item="nope").run()
    at.switch_page("app_pages/item.py").run()
    assert "no item with id 'nope'" in at.warning[0].value and not at.error
    assert "browse" in [link.proto.page for link in at.get("page_link")]  # and a way on


def test_root_deep_link_opens_the_item(app_db: str) -> None:
    at = _app(dataset="pages-test", item="item-3").run()
    assert not at.exception
    assert any("item-3" in c.value for c in at.caption)


def _bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A few hundred bytes of PNG that claim ten billion pixels."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = chunk(b"IDAT", zlib.compress(b"\x00" * 64))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + idat + chunk(b"IEND", b"")


def _set_root(app_db: str, root: Path) -> None:
    engine = make_engine(app_db)
    try:
        set_image_root(engine, list_dataset_infos(engine)[0].id, str(root), actor=OPERATOR, confine=False)
    finally:
        engine.dispose()


@pytest.mark.parametrize("page", ["app_pages/item.py", "app_pages/sentences.py", "app_pages/compare.py"])
def test_a_bomb_image_is_a_placeholder_naming_the_problem(app_db: str, tmp_path: Path, page: str) -> None:
    (tmp_path / "missing-4.png").write_bytes(_bomb_png())
    _set_root(app_db, tmp_path)
    at = _app(dataset="pages-test", item="item-4").run()
    at.switch_page(page).run()
    assert not at.exception
    (warning,) = [w.value for w in at.warning if "missing-4.png" in w.value]
    assert "decompression bomb" in warning and str(tmp_path) not in warning


SHOW_ITEM = """
import sys
from streamlit.testing.v1 import AppTest

at = AppTest.from_file(sys.argv[1], default_timeout=120)
at.query_params.update(dataset="pages-test", item="item-4")
at.run()
for _ in range(2):
    at.switch_page("app_pages/item.py").run()
    assert not at.exception, at.exception
    assert any(type(e).__name__ == "Image" for e in at.main), [w.value for w in at.warning]
print("shown")
"""


def test_a_large_image_is_shown_from_a_small_copy(app_db: str, tmp_path: Path) -> None:
    Image.new("RGB", (8000, 7990), "teal").save(tmp_path / "missing-4.png")
    _set_root(app_db, tmp_path)
    script = tmp_path / "show_item.py"
    script.write_text(SHOW_ITEM)
    code, out, err, peak = run_measured(script, APP, env={"DATABASE_URL": app_db}, cwd=Path(APP).parent)
    assert code == 0 and "shown" in out, err
    assert peak <= PEAK_RSS_LIMIT_KB, f"peak RSS {peak / 1024:.0f} MB"


def _root_box(at: AppTest):
    return next(t for t in at.text_input if t.label == "Image root of this dataset")


def test_image_root_box_shows_the_picked_datasets_root(app_db: str) -> None:
    """After picking another dataset in the sidebar, the Item page's "Image root of this dataset" box
    still held the first dataset's folder, and "Save image root" wrote that folder onto the other one."""
    add_small_dataset(app_db, "second")
    engine = make_engine(app_db)
    second = get_dataset(engine, "second")
    assert second is not None
    set_image_root(engine, second.id, "/second/images", actor=OPERATOR, confine=False)
    at = _app(dataset="pages-test", item="item-4").run()
    at.switch_page("app_pages/item.py").run()
    assert _root_box(at).value == ""
    at.selectbox(key=WIDGET).set_value("second").run()
    assert not at.exception
    assert _root_box(at).value == "/second/images"
    next(b for b in at.button if b.label == "Save image root").click().run()
    first = get_dataset(engine, "pages-test")
    assert first is not None and first.image_root is None
    assert get_dataset(engine, "second").image_root == "/second/images"  # type: ignore[union-attr]
