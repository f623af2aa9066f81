"""Start from detector on the span and sentence pages, its refusal in blind team mode, and the
Agreement page's anchoring section (AppTest against a real SQLite store holding the demo)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from db.repositories.preannotation import preannotation_of
from db.repositories.queue import item_status
from tests.pages.demo_store import APP, DEMO, demo_store
from tests.pages.team_store import assign, set_dataset_settings, signed_in

ITEM = "demo-004"
OTHER = "demo-005"
EAGER = "Detector · eager simulated-1"


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    monkeypatch.delenv("SPANLIGHT_MODE", raising=False)
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "item": ITEM, "user": "tester"})
    at.run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _labels(url: str, who: str = "tester"):
    """The item, ``who``'s own labels on it and eager's."""
    engine = make_engine(url)
    item = get_item(engine, 1, ITEM)
    assert item is not None
    sets = {(v.kind, v.name): v.id for v in list_label_sets(engine, 1)}
    own, eager = sets.get(("human", who), 0), sets[("detector", "eager")]
    found = item_annotations(engine, item.id, [own, eager])
    return engine, item, own, found.get(own), found[eager]


def _start(at: AppTest, task: str, detector: str = EAGER) -> AppTest:
    at.selectbox(key=f"preannotate_source_{task}").set_value(detector).run()
    at.button(key=f"preannotate_item_{task}").click().run()
    assert not at.exception, at.exception
    return at


def test_span_page_starts_from_a_detector_and_asks_before_replacing(store: str) -> None:
    at = _open("spans")
    assert list(at.selectbox(key="preannotate_source_spans").options) == [
        f"Detector · {name} simulated-1" for name in ("cautious", "eager", "sloppy")
    ]
    _start(at, "spans")
    engine, item, own, mine, eager = _labels(store)
    assert eager.spans, "the demo's eager detector marks spans on this item"
    assert [(s.start, s.end, s.type) for s in mine.spans] == [(s.start, s.end, s.type) for s in eager.spans]
    record = preannotation_of(engine, own, item.id, "spans")
    assert record is not None and record.detector == "eager"
    assert any("Started from detector **eager**" in c.value for c in at.caption)
    assert any("started from eager simulated-1" in c.value for c in at.caption)  # the saved indicator
    # Now the annotator has labels there: the button waits for the confirmation to replace them.
    assert at.button(key="preannotate_item_spans").disabled
    at.checkbox(key=f"preannotate_replace_spans_{item.id}").check().run()
    assert not at.button(key="preannotate_item_spans").disabled
    _start(at, "spans", "Detector · cautious simulated-1")
    assert preannotation_of(engine, own, item.id, "spans").detector == "cautious"


def _replace_tick(at: AppTest):
    return next(c for c in at.checkbox if c.label == "Replace my labels on this item")


def test_a_tick_to_replace_labels_stays_with_its_item(store: str) -> None:
    """Ticked on one item and not used, "Replace my labels" does not stand ticked on the next item the
    annotator has labels on: there one click would replace them unasked."""
    at = _open("spans")
    at.query_params["item"] = OTHER
    at.run()
    _start(at, "spans")  # the annotator has labels on both items
    at.query_params["item"] = ITEM
    at.run()
    _start(at, "spans")
    _replace_tick(at).check().run()
    at.query_params["item"] = OTHER
    at.run()
    assert not _replace_tick(at).value
    assert at.button(key="preannotate_item_spans").disabled


def test_sentence_page_starts_from_a_detector(store: str) -> None:
    at = _open("sentences")
    _start(at, "sentences")
    _engine, item, _own, mine, eager = _labels(store)
    holding = {
        s.index for s in item.sentences if any(sp.start < s.end and sp.end > s.start for sp in eager.spans)
    }
    assert {i: v.label for i, v in mine.sentence_labels.items()} == {
        s.index: "incorrect" if s.index in holding else "correct" for s in item.sentences
    }
    assert any("Started from detector **eager**" in c.value for c in at.caption)
    # Every sentence holds a label now, but a draft is done only once the annotator says they checked it.
    engine, _item, own, _mine, _eager = _labels(store)
    assert item_status(engine, own, item.id, "sentences") is None
    assert not any("Every sentence is labeled" in s.value for s in at.success)
    at.button(key="preannotate_checked_sentences").click().run()
    assert item_status(engine, own, item.id, "sentences").status == "done"
    assert at.button(key="preannotate_checked_sentences").disabled


def test_a_detector_picked_just_before_the_click_is_the_one_copied(store: str) -> None:
    """Picked and clicked at once: the pick reaches the server in the click's own rerun."""
    at = _open("spans")
    at.selectbox(key="preannotate_source_spans").set_value(EAGER)
    at.button(key="preannotate_item_spans").click().run()
    engine, item, own, _mine, _eager = _labels(store)
    record = preannotation_of(engine, own, item.id, "spans")
    assert record is not None and record.detector == "eager"


def test_the_whole_dataset_at_once(store: str) -> None:
    at = _open("spans")
    at.selectbox(key="preannotate_source_spans").set_value(EAGER).run()
    at.button(key="preannotate_all_spans").click().run()
    assert not at.exception, at.exception
    saved = next(c.value for c in at.caption if "✓ Saved" in c.value)
    assert "item(s) started from Detector · eager" in saved
    started = int(saved.split("✓ Saved · ")[1].split(" item(s)")[0])
    assert started > 1


def test_blind_team_mode_offers_it_only_where_the_dataset_allows_it(team_db: str) -> None:
    assign(team_db, "alice", "spans", ITEM)
    assign(team_db, "alice", "sentences", ITEM)
    for page in ("spans", "sentences"):
        at = signed_in("alice", item=ITEM)
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, at.exception
        shown = "**Response**" if page == "spans" else "sentences labeled"
        assert any(shown in md.value for md in at.markdown), "the page shows the item"
        assert not [s for s in at.selectbox if s.key == f"preannotate_source_{page}"]
    set_dataset_settings(team_db, blind=True, allow_preannotation=True)
    at = signed_in("alice", item=ITEM)
    at.switch_page("app_pages/spans.py").run()
    assert list(at.selectbox(key="preannotate_source_spans").options)[1] == EAGER
    labeled = get_item(make_engine(team_db), 1, ITEM)
    assert labeled is not None
    at.checkbox(key=f"preannotate_replace_spans_{labeled.id}").check().run()  # alice labeled it in the demo
    _start(at, "spans")
    engine, item, own, mine, eager = _labels(team_db, "alice")
    assert [(s.start, s.end) for s in mine.spans] == [(s.start, s.end) for s in eager.spans]
    assert preannotation_of(engine, own, item.id, "spans") is not None


def test_agreement_page_shows_the_anchoring_section(store: str) -> None:
    _start(_open("spans"), "spans")
    at = _open("agreement")
    assert "Anchoring on detector drafts" in [s.value for s in at.subheader]
    frames = [d.value for d in at.dataframe if "kept" in d.value.columns and "F1_IoU" in d.value.columns]
    assert len(frames) == 1
    row = frames[0].iloc[0]
    assert (row["annotator"], row["detector"], row["items"]) == ("tester", "eager simulated-1", 1)
    assert row["kept"] == row["detector spans"] > 0 and row["F1_IoU"] == 100.0
