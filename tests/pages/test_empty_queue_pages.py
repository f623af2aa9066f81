"""An annotation task with nothing to label says what is missing and where it comes from, never "done"."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from db.repositories import labeling
from db.repositories.annotators import get_or_create_annotator
from db.repositories.label_sets import human_label_set
from tests.pages.demo_store import APP


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": "pages-test", "user": "tester"})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    ("page", "missing"),
    [
        ("app_pages/triplets.py", "has extracted triplets to judge"),
        ("app_pages/claims.py", "has claims to judge"),
    ],
)
def test_a_dataset_without_units_names_what_is_missing(app_db: str, page: str, missing: str) -> None:
    at = _open(page)
    assert not [s.value for s in at.success if "done" in s.value]
    infos = [i.value for i in at.info]
    assert any(f"no item of 'pages-test' {missing}" in i for i in infos), infos
    links = {link.proto.page.split("/")[-1]: link.proto.query_string for link in at.get("page_link")}
    assert set(links) >= {"import_data", "run_detector"}, links
    assert all("dataset=pages-test" in query for query in links.values())


def test_a_finished_queue_still_says_done(app_db: str) -> None:
    """Sentences exist on every item: once they are all done the page does say so."""
    engine = make_engine(app_db)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    for item_id in range(1, 32):
        labeling.set_item_status(engine, own, item_id, "sentences", "done", who)
    engine.dispose()
    at = _open("app_pages/sentences.py")
    assert any("Every item of this dataset is done" in s.value for s in at.success)
    assert not any("Nothing to do here" in i.value for i in at.info)
