"""The failure finder and the comparison page on the synthetic demo (AppTest, a real SQLite store).

The demo's simulated detectors have guaranteed behaviours (see ``demo/detectors.py``): cautious copies
gold spans exactly and never flags a clean item; eager flags every clean item except the first two and
its spans either miss all gold or overlap one gold span with IoU >= 0.5; sloppy's spans all overlap one
gold span with 0.2 <= IoU < 0.5 and exactly two of its outputs break the format. The presets must find
exactly the items those rules imply; the expected sets are computed here from the store, not from the
code under test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from components.dataset_picker import WIDGET
from db.access import OPERATOR
from db.engine import make_engine
from db.importer import import_bundle
from db.migrate import upgrade
from db.repositories.datasets import get_dataset
from db.repositories.label_sets import list_label_sets
from db.repositories.report_inputs import format_flags, item_index, spans_by_label_set
from demo.build import DEMO_DATASET_NAME, XSS_ID
from demo.load import load_demo
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SentenceScoreRecord,
    SpanRecord,
)
from render.comparison_tracks import GOLD_COLOUR, GOLD_LABEL
from render.literal_text import literal
from tests.pages.conftest import small_bundle, watcher_reruns_the_next_run

TIMEOUT = 60
APP = str(Path(__file__).resolve().parents[2] / "app.py")
DEMO = DEMO_DATASET_NAME


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The demo loaded once into a SQLite file for this module."""
    data_dir = tmp_path_factory.mktemp("compare-demo")
    url = f"sqlite:///{data_dir / 'store.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPANLIGHT_DATA_DIR", str(data_dir))
        engine = make_engine(url)
        upgrade(engine)
        load_demo(engine, actor=OPERATOR)
        engine.dispose()
    return url, data_dir


@pytest.fixture
def demo(demo_store: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> str:
    url, data_dir = demo_store
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(data_dir))
    st.cache_resource.clear()
    return url


class Truth:
    """What the store says, read with the repositories (independent of the finder's code)."""

    def __init__(self, url: str) -> None:
        engine = make_engine(url)
        dataset = get_dataset(engine, DEMO)
        assert dataset is not None
        index = item_index(engine, dataset.id)
        self.ids = index.external_ids
        external = dict(zip(index.ids, index.external_ids, strict=True))
        sets = {ls.name: ls.id for ls in list_label_sets(engine, dataset.id)}
        spans = spans_by_label_set(engine, dataset.id)
        flags = format_flags(engine, dataset.id)
        engine.dispose()
        self.spans = {
            name: {external[i]: s for i, s in spans.get(ls_id, {}).items()} for name, ls_id in sets.items()
        }
        self.broken = {
            name: [external[i] for i, ok in flags.get(ls_id, {}).items() if not ok]
            for name, ls_id in sets.items()
        }

    def flagged(self, detector: str) -> list[str]:
        return [i for i in self.ids if self.spans[detector].get(i)]

    @property
    def clean(self) -> list[str]:
        return [i for i in self.ids if not self.spans["gold"].get(i)]


@pytest.fixture(scope="module")
def truth(demo_store: tuple[str, Path]) -> Truth:
    return Truth(demo_store[0])


def _app(page: str, **query: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = DEMO
    at.run()  # the home page may tidy the address; the deep link is what the page itself gets
    at.query_params.update(query)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def finder(**query: str | list[str]) -> AppTest:
    return _app("app_pages/failures.py", **query)


def listed(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["item"])


def widget(elements, label: str):
    return next(e for e in elements if e.label == label)


def param(at: AppTest, key: str) -> list[str]:
    """The values of a query parameter of the page (AppTest gives a string or a list)."""
    value = at.query_params.get(key, [])
    return list(value) if isinstance(value, list | tuple) else [value]


def _html(at: AppTest) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


# ------------------------------------------------------------------------------------ the presets


def test_clean_responses_flagged(demo: str, truth: Truth) -> None:
    assert len(truth.clean) >= 3
    expected = truth.clean[2:]  # eager stays silent on the first two clean items only
    assert listed(finder(preset="clean-flagged", detector="eager")) == expected
    assert listed(finder(preset="clean-flagged")) == expected  # any detector: only eager does it
    assert listed(finder(preset="clean-flagged", detector="cautious")) == []
    assert listed(finder(preset="clean-flagged", detector="sloppy")) == []


def test_format_failures(demo: str, truth: Truth) -> None:
    assert len(truth.broken["sloppy"]) == 2
    assert listed(finder(preset="format", detector="sloppy")) == truth.broken["sloppy"]
    assert listed(finder(preset="format")) == truth.broken["sloppy"]
    assert listed(finder(preset="format", detector="cautious")) == []
    assert listed(finder(preset="format", detector="eager")) == []


def test_boundary_errors(demo: str, truth: Truth) -> None:
    # Every sloppy span is a boundary error, and only sloppy makes them.
    assert listed(finder(preset="boundary", detector="sloppy")) == truth.flagged("sloppy")
    assert listed(finder(preset="boundary")) == truth.flagged("sloppy")
    assert listed(finder(preset="boundary", detector="eager")) == []
    assert listed(finder(preset="boundary", detector="cautious")) == []


def test_x_misses_what_y_finds(demo: str, truth: Truth) -> None:
    # cautious finds exactly the gold spans it copies; sloppy never finds one at IoU 0.5.
    assert listed(finder(preset="misses", detector="sloppy", other="cautious")) == truth.flagged("cautious")
    assert listed(finder(preset="misses", detector="cautious", other="sloppy")) == []
    assert listed(finder(preset="misses", detector="eager", other="sloppy")) == []
    found_by_eager = finder(preset="misses", detector="cautious", other="eager")
    assert listed(found_by_eager) and set(listed(found_by_eager)) <= set(truth.flagged("eager"))


def test_presets_chosen_with_the_widgets_update_the_deep_link(demo: str, truth: Truth) -> None:
    at = finder()
    assert len(listed(at)) == len(truth.ids)
    widget(at.selectbox, "Preset").set_value("misses").run()
    widget(at.selectbox, "Detector X").set_value("sloppy").run()
    widget(at.selectbox, "…misses what Y finds").set_value("cautious").run()
    assert listed(at) == truth.flagged("cautious")
    assert param(at, "preset") == ["misses"]
    assert param(at, "detector") == ["sloppy"] and param(at, "other") == ["cautious"]
    widget(at.selectbox, "Preset").set_value("format").run()
    assert "other" not in at.query_params
    assert any(f"**{len(truth.broken['sloppy'])}** of {len(truth.ids)} items" in m.value for m in at.markdown)


# ------------------------------------------------------------------------------------- the filters


def test_filters_sort_and_their_parameters(demo: str, truth: Truth) -> None:
    at = finder()
    widget(at.multiselect, "Subset").set_value(["signs"]).run()
    signs = listed(at)
    assert signs and all(s == "signs" for s in at.dataframe[0].value["subset"])
    assert param(at, "subset") == ["signs"]
    widget(at.multiselect, "Hallucination type present").set_value(["OCR"]).run()
    assert set(listed(at)) < set(signs) and all("OCR" in t for t in at.dataframe[0].value["gold types"])
    widget(at.multiselect, "Subset").set_value([]).run()
    widget(at.multiselect, "Hallucination type present").set_value([]).run()
    widget(at.selectbox, "Sort by").set_value("disagreement").run()
    widget(at.toggle, "Descending").set_value(True).run()
    values = list(at.dataframe[0].value["disagreement"])
    assert values == sorted(values, reverse=True)
    assert param(at, "sort") == ["disagreement"] and param(at, "order") == ["desc"]
    widget(at.slider, "Disagreement ≥").set_value(0.6).run()
    assert min(at.dataframe[0].value["disagreement"]) >= 0.6


def test_deep_link_restores_the_filters(demo: str) -> None:
    at = finder(preset="boundary", detector="sloppy", subset=["shapes", "counting"], model="captioner-a")
    assert widget(at.selectbox, "Preset").value == "boundary"
    assert widget(at.multiselect, "Subset").value == ["shapes", "counting"]
    assert widget(at.multiselect, "Source model").value == ["captioner-a"]
    frame = at.dataframe[0].value
    assert set(frame["subset"]) <= {"shapes", "counting"} and set(frame["source model"]) == {"captioner-a"}


def test_unknown_detector_in_the_link_is_named(demo: str) -> None:
    at = finder(preset="format", detector="nobody")
    assert [w.value for w in at.warning] == [
        literal(
            "The link asked for detector 'nobody', which is not one of 'cautious', 'eager', 'sloppy'; "
            "showing any detector instead."
        )
    ]
    assert widget(at.selectbox, "Detector").value == "any"
    assert "detector" not in at.query_params


def test_filters_of_another_dataset_in_the_link_are_named_not_a_traceback(demo: str) -> None:
    """A subset or source model this dataset lacks (a link from another dataset, or the sidebar's
    dataset switched under a subset filter) made the page a traceback; it is now named and left out."""
    at = finder(subset=["shapes", "M-HalDetect"], model="ghost-model", type="Nope")
    said = " ".join(w.value for w in at.warning)
    assert "The link asked for subset 'M-HalDetect', which is not one of" in said
    assert "The link asked for source model 'ghost-model', which is not one of" in said
    assert "The link asked for hallucination type 'Nope', which is not one of" in said
    assert widget(at.multiselect, "Subset").value == ["shapes"]
    assert widget(at.multiselect, "Source model").value == []


def test_finder_filters_survive_an_older_address(demo: str) -> None:
    """The finder read its address on every run: a run asked for with the address from before the last
    choices (a watcher's, a link followed back) said the link's unknown subset again, as if the link had
    just been followed, and a box drawn anew (Detector X, once the preset asks for it) opened on the
    older address's detector. The filters shown are the truth once the page is open."""
    at = finder(subset=["shapes", "ghost"])
    assert len(at.warning) == 1 and "'ghost'" in at.warning[0].value
    widget(at.multiselect, "Subset").set_value(["signs"]).run()
    assert not at.warning  # the subset chosen since is not the one the notice was about
    widget(at.selectbox, "Detector").set_value("eager").run()
    shown = listed(at)
    at.query_params["subset"] = ["shapes", "ghost"]  # the address from before the last choices
    at.query_params.pop("detector")
    at.run()
    assert not at.exception, at.exception
    assert not at.warning
    assert widget(at.multiselect, "Subset").value == ["signs"]
    assert widget(at.selectbox, "Detector").value == "eager"
    assert listed(at) == shown
    assert param(at, "subset") == ["signs"] and param(at, "detector") == ["eager"]
    at.query_params["detector"] = "sloppy"  # older still
    widget(at.selectbox, "Preset").set_value("misses").run()
    assert not at.exception, at.exception
    assert widget(at.selectbox, "Detector X").value == "eager"
    assert param(at, "detector") == ["eager"] and param(at, "preset") == ["misses"]


def test_finder_opened_again_follows_its_address(demo: str) -> None:
    at = finder(preset="format", subset="shapes")
    at.switch_page("app_pages/compare.py").run()
    at.query_params.clear()
    at.query_params.update({"dataset": DEMO, "preset": "boundary"})  # a link to the finder, followed
    at.switch_page("app_pages/failures.py").run()
    assert not at.exception, at.exception
    assert widget(at.selectbox, "Preset").value == "boundary"
    assert param(at, "preset") == ["boundary"]


def test_finder_says_a_preset_or_sort_of_the_link_it_does_not_have(demo: str) -> None:
    at = finder(preset="bogus", sort="*nothing*")
    said = [w.value for w in at.warning]
    assert said[0].startswith(literal("The link asked for preset 'bogus', which is not one of 'misses', "))
    assert said[0].endswith(literal("; showing all items instead."))
    assert said[1].startswith(
        literal("The link asked for column to sort by '*nothing*', which is not one of")
    )
    assert said[1].endswith(literal("; sorting by 'item' instead."))
    preset = widget(at.selectbox, "Preset")
    assert preset.index == 0 and preset.options[0] == "All items"  # the box shows it, not "Choose an option"
    assert not {"preset", "sort"} & set(at.query_params)


def test_exports_are_offered(demo: str) -> None:
    at = finder(preset="format")
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["CSV", "JSONL"]
    assert "failures?dataset=" in at.code[0].value and "preset=format" in at.code[0].value


# ---------------------------------------------------------------------------------- the comparison


def compare(**query: str | list[str]) -> AppTest:
    return _app("app_pages/compare.py", **query)


def test_compare_deep_link_shows_tracks_in_the_asked_order(demo: str, truth: Truth) -> None:
    at = compare(item="demo-011", detectors="sloppy,cautious")
    body = _html(at)
    order = [body.index(f'data-track="{name}"') for name in ("Gold", "sloppy", "cautious")]
    assert order == sorted(order) and 'data-track="eager"' not in body
    heads = [m.value for m in at.markdown if m.value.startswith("**")]
    assert any(h.startswith("**Gold** · ") for h in heads)
    assert any(h.startswith("**sloppy** · F1_IoU 0.00") for h in heads)
    assert param(at, "detectors") == ["sloppy,cautious"]


# What every page says of a value of its address that names no option (components.page_address).
GHOST_LEFT_OUT = literal(
    "The link asked for detector 'ghost', which is not one of 'cautious', 'eager', 'sloppy'; it is left out."
)


def test_compare_names_a_detector_of_the_link_it_does_not_have(demo: str) -> None:
    """A stale or mistyped link (``detectors=ghost``) was rewritten to the detectors it has, or to none,
    without a word."""
    at = compare(item="demo-004", detectors="eager,ghost")
    assert [w.value for w in at.warning] == [GHOST_LEFT_OUT]
    assert param(at, "detectors") == ["eager"]
    at = compare(item="demo-004", detectors="ghost")
    assert [w.value for w in at.warning] == [
        literal(
            "The link asked for detector 'ghost', which is not one of 'cautious', 'eager', 'sloppy'; "
            "showing 'cautious', 'eager', 'sloppy' instead."
        )
    ]
    assert 'data-track="eager"' in _html(at)


def test_compare_colours_spans_by_their_fate(demo: str) -> None:
    at = compare(item="demo-011", detectors="cautious,eager,sloppy")
    body = _html(at)
    assert "hs-fate-matched hs-pred" in body and "hs-fate-false-positive hs-pred" in body
    assert "hs-missed-gold" in body
    assert "IoU 1.00 ≥ 0.50" in body  # cautious copies gold spans
    widget(at.toggle, "Show missed gold spans in detector tracks").set_value(False).run()
    assert "hs-missed-gold" not in _html(at)


def test_compare_raw_output_with_analysis_on_demand(demo: str) -> None:
    at = compare(item="demo-011", detectors="eager")
    raw = [e for e in at.expander if e.label.startswith("Raw output")]
    assert raw and raw[0].label == "Raw output (follows the format)"
    texts = [m.value for m in at.markdown]
    assert "**Analysis (Analyze-then-Judge)**" in texts


def test_compare_format_failure_is_flagged(demo: str, truth: Truth) -> None:
    broken = truth.broken["sloppy"][0]
    at = compare(item=broken, detectors="sloppy")
    assert any("format ✗" in m.value for m in at.markdown)
    assert any(e.label == "Raw output (does NOT follow the format)" for e in at.expander)


def test_compare_sentence_grid_and_claims(demo: str) -> None:
    at = compare(item="demo-011", detectors="cautious,eager,sloppy")
    subheaders = [s.value for s in at.subheader]
    assert "Sentence scores" in subheaders and "Claims" in subheaders
    frames = [d.value for d in at.dataframe]
    sentences = next(f for f in frames if "sentence" in f.columns)
    assert list(sentences.columns) == ["#", "sentence", "gold", "cautious", "eager", "sloppy"]
    claims = next(f for f in frames if "claim" in f.columns)
    assert list(claims.columns)[:3] == ["#", "claim", "gold"] and "eager" in claims.columns
    assert "sloppy" not in claims.columns  # sloppy labels no claims


def test_compare_steps_through_the_failures_of_the_link(demo: str, truth: Truth) -> None:
    expected = truth.clean[2:]
    at = compare(
        item=expected[0],
        detectors="eager",
        **{"from": "failures", "preset": "clean-flagged", "detector": "eager"},
    )
    assert any(f"Failure **1** of **{len(expected)}**" in m.value for m in at.markdown)
    previous, following = at.button(key="compare_prev"), at.button(key="compare_next")
    assert previous.disabled and previous.label == "◀ Previous failure"
    following.click().run()
    assert param(at, "item") == [expected[1]]
    at.button(key="compare_next").click().run()
    assert param(at, "item") == [expected[2]]
    at.button(key="compare_prev").click().run()
    assert param(at, "item") == [expected[1]]
    assert any(f"Failure **2** of **{len(expected)}**" in m.value for m in at.markdown)


def test_compare_without_the_finder_steps_through_the_dataset(demo: str, truth: Truth) -> None:
    at = compare(item=truth.ids[0])
    assert at.button(key="compare_prev").disabled
    assert at.button(key="compare_prev").label == "◀ Previous item"
    at.button(key="compare_next").click().run()
    assert param(at, "item") == [truth.ids[1]]


def test_compare_steps_from_the_item_shown_when_the_address_fell_behind(demo: str, truth: Truth) -> None:
    """While a detector run goes, Compare follows the store: a watcher run can bring the address from
    before the last step back, and the next step went on from the item before (a press was lost)."""
    at = compare(item=truth.ids[3])
    at.button(key="compare_next").click().run()
    assert param(at, "item") == [truth.ids[4]]
    at.query_params["item"] = truth.ids[3]  # what such a watcher run leaves in the address
    at.button(key="compare_next").click().run()
    assert param(at, "item") == [truth.ids[5]]
    at.query_params["item"] = truth.ids[4]
    at.run()
    assert param(at, "item") == [truth.ids[5]]
    assert any("Item 6 of" in m.value for m in at.markdown)


def test_tracks_collapse_and_reorder(demo: str) -> None:
    at = compare(item="demo-011", detectors="cautious,eager,sloppy")
    at.button(key="compare_down_cautious").click().run()
    assert param(at, "detectors") == ["eager,cautious,sloppy"]
    at.button(key="compare_up_sloppy").click().run()
    assert param(at, "detectors") == ["eager,sloppy,cautious"]
    at.button(key="compare_fold_detector:eager").click().run()
    body = _html(at)
    assert 'data-track="eager"' not in body and 'data-track="sloppy"' in body
    widget(at.button, "Collapse all").click().run()
    assert "data-track=" not in _html(at)
    widget(at.button, "Expand all").click().run()
    assert _html(at).count("data-track=") == 4
    widget(at.button, "Worst F1_IoU first").click().run()
    assert param(at, "detectors")[0].startswith("sloppy")


def test_a_new_link_to_compare_sets_the_tracks_again(demo: str) -> None:
    """The order arranged on one visit does not outlive it: the next link's ``?detectors=`` decides."""
    at = compare(item="demo-011", detectors="cautious,eager,sloppy")
    at.button(key="compare_up_sloppy").click().run()
    assert param(at, "detectors") == ["cautious,sloppy,eager"]
    at.switch_page("app_pages/failures.py").run()
    at.query_params["detectors"] = "eager"
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert param(at, "detectors") == ["eager"]
    assert 'data-track="cautious"' not in _html(at)


def test_tracks_arranged_survive_an_older_address(demo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a detector run goes, Compare follows the store: a watcher run can bring back the address the
    page opened with, from before the page wrote the tracks it shows into it. The link's detector that
    the dataset lacks was then named again, as if the link had just been followed. It is named when the
    page opens; the tracks arranged since stay, and so does their order in the address."""
    link = "cautious,ghost,eager"
    at = compare(item="demo-011", detectors=link)
    assert [w.value for w in at.warning] == [GHOST_LEFT_OUT]
    at.button(key="compare_up_eager").click().run()
    assert param(at, "detectors") == ["eager,cautious"] and not at.warning
    at.query_params["detectors"] = link  # what such a watcher run leaves in the address
    at.run()
    assert not at.warning
    assert widget(at.multiselect, "Detector tracks (top to bottom)").value == ["eager", "cautious"]
    assert param(at, "detectors") == ["eager,cautious"]
    at.query_params["detectors"] = link
    drawn = watcher_reruns_the_next_run(monkeypatch)
    at.run()
    assert len(drawn) == 2, drawn  # the watcher did rerun the page
    assert not at.exception, at.exception
    assert not at.warning
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["Gold", "eager", "cautious"]
    assert param(at, "detectors") == ["eager,cautious"]


def test_compare_opened_again_follows_the_tracks_of_its_address(demo: str) -> None:
    at = compare(item="demo-011", detectors="cautious,eager")
    at.switch_page("app_pages/failures.py").run()
    at.query_params["detectors"] = "sloppy,ghost"  # a link to Compare, followed
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == [GHOST_LEFT_OUT]
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["Gold", "sloppy"]
    assert param(at, "detectors") == ["sloppy"]


def test_compare_escapes_model_text(demo: str) -> None:
    at = compare(item=XSS_ID)
    body = _html(at)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>" not in body and "<img src=x" not in body


def test_compare_unknown_item(demo: str) -> None:
    at = compare(item="nope")
    assert "no item with id 'nope'" in at.warning[0].value
    assert param(at, "item") == ["demo-001"]


def test_compare_offers_both_exports(demo: str) -> None:
    at = compare(item="demo-003")
    assert [b.proto.label for b in at.get("download_button")] == ["HTML snippet", "PNG for slides"]


@pytest.fixture
def fresh_store(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    yield sqlite_url


def test_pages_on_an_empty_store_say_what_to_do(fresh_store: str) -> None:
    for page in ("app_pages/compare.py", "app_pages/failures.py"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        at.switch_page(page).run()
        assert not at.exception
        assert any("No dataset yet" in i.value for i in at.info)


def twelve_detectors() -> Bundle:
    """Five items, a gold span each (none on the last), and twelve detectors that shift it by k words."""
    text = "one two three four five six seven eight nine ten"
    items = [
        ItemRecord(external_id=f"t-{k}", response=text, prompt="Describe.", subset="s") for k in range(5)
    ]
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[Annotations(item=f"t-{k}", spans=[SpanRecord(4, 13, "Object")]) for k in range(4)],
    )
    starts = [m.start() for m in re.finditer(r"\S+", text)]
    detectors = [
        LabelSetRecord(
            kind="detector",
            name=f"detector {d:02d}",
            annotations=[
                Annotations(item=f"t-{k}", spans=[SpanRecord(starts[d % 8], starts[d % 8] + 3)])
                for k in range(5)
            ],
        )
        for d in range(12)
    ]
    return Bundle(
        dataset=DatasetRecord("twelve", "canonical", taxonomy=["Object"], label_kinds=["span"]),
        items=items,
        label_sets=[gold, *detectors],
    )


@pytest.fixture
def twelve(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    engine = make_engine(sqlite_url)
    import_bundle(engine, twelve_detectors(), source="test", actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    return sqlite_url


def test_twelve_detectors_stay_manageable(twelve: str) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = "twelve"
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception
    assert len(widget(at.multiselect, "Detector tracks (top to bottom)").value) == 6  # a readable start
    names = [f"detector {d:02d}" for d in range(12)]
    widget(at.multiselect, "Detector tracks (top to bottom)").set_value(list(reversed(names))).run()
    tracks = re.findall(r'data-track="([^"]+)"', _html(at))
    assert tracks == ["Gold", *reversed(names)]
    widget(at.button, "Best F1_IoU first").click().run()
    # Detectors 1, 2, 9 and 10 each hit one word of the gold span (IoU 0.5): F1_IoU 1 on this item.
    # Sorting is stable, so among them the reversed order stays.
    assert param(at, "detectors")[0].split(",")[:4] == [
        "detector 10",
        "detector 09",
        "detector 02",
        "detector 01",
    ]
    widget(at.button, "Collapse all").click().run()
    assert "data-track=" not in _html(at)
    heads = [m.value for m in at.markdown if m.value.startswith("**detector")]
    assert len(heads) == 12  # each collapsed track still says who it is and how it scored
    finder_page = AppTest.from_file(APP, default_timeout=TIMEOUT)
    finder_page.query_params["dataset"] = "twelve"
    finder_page.run()
    finder_page.query_params.update({"preset": "clean-flagged"})
    finder_page.switch_page("app_pages/failures.py").run()
    assert not finder_page.exception
    assert listed(finder_page) == ["t-4"]
    assert len(widget(finder_page.multiselect, "Score columns for").value) == 4


def test_a_run_given_some_items_shows_not_run_on_the_others(sqlite_url: str, monkeypatch) -> None:
    """Detector 00 given only t-0 and t-1: on t-3 its track says it was not run there, has no score and
    finds no gold span, and the finder scores it only where it ran."""
    bundle = twelve_detectors()
    partial = bundle.label_sets[1]
    partial.annotations = [a for a in partial.annotations if a.item in ("t-0", "t-1")]
    bundle.label_sets = bundle.label_sets[:3]  # gold, detector 00 (partial), detector 01
    at = _compare_bundle(sqlite_url, monkeypatch, bundle, item="t-3", detectors="detector 00,detector 01")
    heads = [m.value for m in at.markdown if m.value.startswith("**detector")]
    assert heads[0] == "**detector 00** · not run on this item: left out of its scores"
    assert heads[1].startswith("**detector 01** · F1_IoU")
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["Gold", "detector 01"]
    widget(at.button, "Worst F1_IoU first").click().run()  # the run not given t-3 goes last, not first
    assert param(at, "detectors") == ["detector 01,detector 00"]
    found = AppTest.from_file(APP, default_timeout=TIMEOUT)
    found.query_params["dataset"] = "twelve"
    found.run()
    found.switch_page("app_pages/failures.py").run()
    assert not found.exception, found.exception
    table = found.dataframe[0].value.set_index("item")
    assert table["detector 00 · F1_IoU"].isna().tolist() == [False, False, True, True, True]


def sentences_only() -> Bundle:
    items = [
        ItemRecord(external_id=f"s-{k}", response="The cat is red. The dog is blue.", prompt="Describe.")
        for k in range(3)
    ]
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                item=f"s-{k}",
                sentence_labels=[SentenceLabelRecord(0, "incorrect"), SentenceLabelRecord(1, "correct")],
            )
            for k in range(3)
        ],
    )
    judge = LabelSetRecord(
        kind="detector",
        name="judge",
        annotations=[
            Annotations(
                item=f"s-{k}", sentence_scores=[SentenceScoreRecord(0, 12.0), SentenceScoreRecord(1, 40.0)]
            )
            for k in range(3)
        ],
    )
    return Bundle(
        dataset=DatasetRecord("sentences", "canonical", label_kinds=["sentence"]),
        items=items,
        label_sets=[gold, judge],
    )


def test_after_picking_another_dataset_its_detectors_are_shown(twelve: str) -> None:
    """After picking another dataset in the sidebar, the page said it showed "the detectors it has" but
    drew none: the tracks chosen for the dataset before, none of them the new one's, were kept."""
    bundle = twelve_detectors()
    other = Bundle(
        dataset=replace(bundle.dataset, name="twelve again"),
        items=bundle.items,
        label_sets=[
            replace(ls, name=ls.name.replace("detector", "run")) if ls.kind == "detector" else ls
            for ls in bundle.label_sets
        ],
    )
    engine = make_engine(twelve)
    import_bundle(engine, other, source="test", actor=OPERATOR)
    engine.dispose()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = "twelve"
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert re.findall(r'data-track="([^"]+)"', _html(at))[1:] == [f"detector {d:02d}" for d in range(6)]
    at.selectbox(key=WIDGET).set_value("twelve again").run()
    assert not at.exception
    assert "showing the detectors it has" in at.warning[0].value
    shown = [f"run {d:02d}" for d in range(6)]
    assert widget(at.multiselect, "Detector tracks (top to bottom)").value == shown
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["Gold", *shown]


def test_a_sentence_dataset_compares_scores_not_spans(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(sqlite_url)
    import_bundle(engine, sentences_only(), source="test", actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = "sentences"
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception
    assert "data-track=" not in _html(at)
    assert any("no span labels" in i.value for i in at.info)
    grid = next(d.value for d in at.dataframe if "sentence" in d.value.columns)
    assert list(grid["judge"]) == [12.0, 40.0] and list(grid["gold"]) == ["✗ incorrect", "✓ correct"]
    at.switch_page("app_pages/failures.py").run()
    assert not at.exception and any("no span labels" in i.value for i in at.info)


def test_a_run_of_sentence_scores_gets_its_table_not_a_span_track(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a dataset with gold spans, a run of sentence scores stood as a track of no spans: "F1_IoU 0.00
    · 1 gold missed", beside the Metrics page leaving it out of the span measures."""
    bundle = sentences_only()
    bundle.dataset.label_kinds = ["span", "sentence"]
    bundle.label_sets[0].annotations = [
        Annotations(item=a.item, spans=[SpanRecord(8, 11)], sentence_labels=a.sentence_labels)
        for a in bundle.label_sets[0].annotations
    ]
    spotter = LabelSetRecord(
        kind="detector",
        name="spotter",
        annotations=[Annotations(item=f"s-{k}", spans=[SpanRecord(8, 11)]) for k in range(3)],
    )
    bundle.label_sets.append(spotter)
    at = _compare_bundle(sqlite_url, monkeypatch, bundle, item="s-0", detectors="judge,spotter")
    assert re.findall(r'data-track="([^"]+)"', _html(at)) == ["Gold", "spotter"]
    assert not any(m.value.startswith("**judge**") for m in at.markdown)
    assert any("No span track for judge" in c.value for c in at.caption)
    grid = next(d.value for d in at.dataframe if "sentence" in d.value.columns)
    assert list(grid["judge"]) == [12.0, 40.0]
    # Sorting by F1_IoU puts the run with no track last.
    widget(at.button, "Worst F1_IoU first").click().run()
    assert not at.exception
    assert param(at, "detectors") == ["spotter,judge"]


def _compare_bundle(url: str, monkeypatch: pytest.MonkeyPatch, bundle: Bundle, **query: str) -> AppTest:
    """The Compare page of ``bundle`` imported into the store at ``url``, opened with ``query``."""
    engine = make_engine(url)
    import_bundle(engine, bundle, source="test", actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = bundle.dataset.name
    at.run()
    at.query_params.update(query)
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    return at


def _sentence_bundle(*, scored: bool) -> Bundle:
    """A dataset of sentence labels only (no spans), with a detector that scores sentences or not."""
    items = [ItemRecord(external_id="s-0", response="A red cube. The ball is blue.", prompt="Describe.")]
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                item="s-0",
                sentence_labels=[SentenceLabelRecord(0, "incorrect"), SentenceLabelRecord(1, "correct")],
            )
        ],
    )
    label_sets = [gold]
    if scored:
        scores = [SentenceScoreRecord(0, 10.0), SentenceScoreRecord(1, 90.0)]
        label_sets.append(
            LabelSetRecord(
                kind="detector",
                name="scorer",
                annotations=[Annotations(item="s-0", sentence_scores=scores)],
            )
        )
    return Bundle(
        dataset=DatasetRecord(name="sentences only", source_format="test", label_kinds=["sentence"]),
        items=items,
        label_sets=label_sets,
    )


def test_compare_without_span_labels_points_below_only_at_tables_it_draws(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset without span labels or detectors (Tri-HE as imported) said both "showing the gold spans
    only" and "compare its detectors in the tables below", above no spans and no table; now it says
    there is nothing to compare on the item and where runs are measured."""
    at = _compare_bundle(sqlite_url, monkeypatch, _sentence_bundle(scored=False))
    said = [i.value for i in at.info]
    assert not any("gold spans" in s or "tables below" in s for s in said), said
    assert any(
        "no span labels, and it has no detector runs: there is nothing to compare here" in s for s in said
    ), said
    assert not any("chosen" in s for s in said), said  # nothing to choose from
    assert not at.dataframe


def test_compare_without_span_labels_points_at_the_sentence_table(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a table is drawn, pointing at it is right: the note stays for it."""
    at = _compare_bundle(sqlite_url, monkeypatch, _sentence_bundle(scored=True), detectors="scorer")
    said = [i.value for i in at.info]
    assert any("compare its detectors in the tables below" in s for s in said), said
    assert len(at.dataframe) == 1


def test_compare_without_detectors_draws_gold_in_gold_and_says_nothing_is_matched(demo: str) -> None:
    """A dataset with gold and no detector: its gold span was drawn in its type's pink, under the legend
    of matched / false positive / missed and a caption about matching and IoU, none of which applied."""
    bundle = small_bundle()
    engine = make_engine(demo)
    gold_only = [label_set for label_set in bundle.label_sets if label_set.kind == "gold"]
    import_bundle(
        engine,
        replace(bundle, dataset=replace(bundle.dataset, name="gold only"), label_sets=gold_only),
        source="test",
        actor=OPERATOR,
    )
    engine.dispose()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = "gold only"
    at.run()
    at.query_params.update({"dataset": "gold only", "item": "item-0"})
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    body = _html(at)
    assert GOLD_LABEL in body and f"border-bottom:2px solid {GOLD_COLOUR}" in body
    assert "False positive" not in body and "Gold span missed" not in body
    captions = " ".join(c.value for c in at.caption)
    assert "no detector run on this item" in captions and "IoU ≥" not in captions
