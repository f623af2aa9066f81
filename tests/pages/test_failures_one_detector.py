"""The failure finder on a dataset with one detector run: disagreement between detectors is undefined.

The table once showed a "disagreement" column of "None" on every row, and its "Disagreement ≥" slider
(or a link with ``min_dis``) emptied the list without a word; now the column is left out, the slider is
off and says why, and a link's disagreement filter is named and left out.
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DATASET = "pages-test"  # the small dataset of the page tests' fixture: gold and one detector, "eager"


def _finder(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["dataset"] = DATASET
    at.run()
    at.query_params.update(query)
    at.switch_page("app_pages/failures.py").run()
    assert not at.exception, at.exception
    return at


def test_one_detector_has_no_disagreement_column_and_says_why(app_db: str) -> None:
    at = _finder()
    table = at.dataframe[0].value
    assert "disagreement" not in table.columns
    assert len(table) == 31
    slider = next(s for s in at.slider if s.label == "Disagreement ≥")
    assert slider.proto.disabled
    assert "two detector runs" in slider.proto.help


def test_a_links_disagreement_filter_with_one_detector_is_named_not_an_empty_list(app_db: str) -> None:
    at = _finder(min_dis="0.5")
    assert len(at.dataframe[0].value) == 31
    assert any("two detector runs" in w.value for w in at.warning), [w.value for w in at.warning]
    assert "min_dis" not in at.query_params
