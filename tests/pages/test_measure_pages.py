"""The Measure pages (metrics, correlation, agreement, presenter) driven through AppTest on the demo."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.reports import triplets
from components.dataset_picker import WIDGET
from db.access import OPERATOR
from db.engine import make_engine
from db.exporter import export_bundle
from db.importer import import_bundle
from db.repositories.datasets import get_dataset
from formats.records import Bundle
from render.literal_text import literal
from tests.analysis.reports.demo_store import DEMO, load_demo_store
from tests.pages.conftest import watcher_reruns_the_next_run

TIMEOUT = 60
APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return load_demo_store(tmp_path_factory.mktemp("measure-pages"), monkeypatch)


@pytest.fixture
def store(demo_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", demo_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return demo_url


def _page(path: str, **query: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": DEMO})
    at.run()
    at.switch_page(path)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def _provenance(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Computed from"))


def _items(at: AppTest) -> int:
    return int(re.search(r"([\d,]+) items", _provenance(at)).group(1).replace(",", ""))


def _frame(at: AppTest, title: str):
    """The dataframe shown under the bold title ``title``."""
    titles = [m.value for m in at.markdown if m.value.startswith("**")]
    position = titles.index(f"**{title}**")
    return at.dataframe[position].value


def test_metrics_offers_the_papers_the_demo_has(store: str) -> None:
    at = _page("app_pages/paper_metrics.py")
    paper = at.button_group[0]
    assert paper.options == ["MHALO", "AlignBench", "MHaluBench", "Tri-HE", "HalLoc"]
    assert paper.value == "MHALO"
    table3 = _frame(at, "Table 3 · F1_M, F1_IoU and IF per subset (%)")
    assert list(table3["detector"].unique()) == ["cautious", "eager", "sloppy"]
    assert _items(at) == 60
    assert len(at.get("plotly_chart")) == 4
    assert [b.label for b in at.get("download_button")][:1] == ["CSV"]


def test_metrics_filters_subset_and_detector(store: str) -> None:
    at = _page("app_pages/paper_metrics.py")
    at.multiselect(key="subset").set_value(["shapes"]).run()
    assert _items(at) == 20
    assert "subset: shapes" in _provenance(at)
    at.multiselect(key="detector").set_value(["eager", "sloppy"]).run()
    table3 = _frame(at, "Table 3 · F1_M, F1_IoU and IF per subset (%)")
    assert list(table3["detector"]) == ["eager", "sloppy"] * 2
    assert list(table3["subset"]) == ["Average", "Average", "shapes", "shapes"]


def test_metrics_filter_from_the_address(store: str) -> None:
    at = _page("app_pages/paper_metrics.py", view="AlignBench", model=["captioner-a"], unknown="as correct")
    assert at.button_group[0].value == "AlignBench"
    table3 = _frame(at, "Table 3 · AUROC per detector and captioning model (%)")
    assert [c for c in table3.columns if c != "detector"] == ["captioner-a", "Avg"]
    assert "unknown counted as correct" in _provenance(at)
    both = _frame(at, "AUROC with 'unknown' sentences left out and counted as correct (%)")
    assert {"Avg · unknown left out", "Avg · unknown as correct"} <= set(both.columns)


def test_metrics_type_filter_on_alignbench(store: str) -> None:
    at = _page("app_pages/paper_metrics.py", view="AlignBench")
    before = _provenance(at)
    at.multiselect(key="type").set_value(["OCR"]).run()
    types = _frame(
        at, "Figure 9 · mean correctness score per error type (incorrect sentences; lower is better)"
    )
    assert set(types["type"]) == {"OCR"}
    assert _provenance(at) != before


def test_a_type_the_papers_labels_do_not_have_is_pointed_out(store: str) -> None:
    """The type filter offers every kind's types: "Object" (a span type) chosen on MHALO and kept on
    MHaluBench, whose claims are typed "object", left out every hallucinated claim, and its Table 2
    fell to 0 without a word."""
    at = _page("app_pages/paper_metrics.py")
    at.multiselect(key="type").set_value(["Object"]).run()
    assert not at.info or not any("hallucination type chosen" in i.value for i in at.info)
    at.button_group[0].set_value("MHaluBench").run()
    notes = [i.value for i in at.info if "hallucination type chosen" in i.value]
    assert len(notes) == 1 and notes[0].startswith(
        "No gold claim label has the hallucination type chosen (Object), so every hallucination is left out"
    ), notes
    assert "The claims' types: " in notes[0] and "object" in notes[0]


@pytest.mark.parametrize("view", ["MHaluBench", "Tri-HE", "HalLoc"])
def test_every_paper_renders(store: str, view: str) -> None:
    at = _page("app_pages/paper_metrics.py", view=view)
    assert at.button_group[0].value == view
    assert len(at.dataframe) >= 1 and len(at.get("plotly_chart")) >= 1


def test_correlation_page(store: str) -> None:
    at = _page("app_pages/correlation.py")
    metrics = {m.label: float(m.value) for m in at.metric}
    assert set(metrics) == {
        "Pearson r · F1_IoU",
        "Pearson r · F1_M",
        "Pearson r · ACC (token accuracy)",
        "Pearson r · IoU of covered tokens",
    }
    assert metrics["Pearson r · F1_IoU"] > 0.5
    assert _items(at) == 27
    at.button_group[0].set_value("top if right, bottom if not").run()
    assert _items(at) == 30
    at.multiselect(key="metrics").set_value(["f1_iou"]).run()
    assert [m.label for m in at.metric] == ["Pearson r · F1_IoU"]


def test_agreement_page(store: str) -> None:
    at = _page("app_pages/agreement.py", kind="Sentence labels")
    values = {m.label: float(m.value) for m in at.metric}
    assert 0.5 < values["Fleiss' kappa"] < 1
    assert values["Observed agreement P̄"] > values["Fleiss' kappa"]
    assert at.multiselect(key="raters-1-sentences").value == ["alice", "bob"]
    title = next(m.value for m in at.markdown if m.value.endswith("items with the most disagreement**"))
    worst = _frame(at, title.strip("*"))
    assert worst["open"].iloc[0].startswith("item?dataset=")
    # the title counts the rows shown (it said 15 over a shorter list)
    assert title == f"**The {min(len(worst), 15)} items with the most disagreement**"
    at.multiselect(key="raters-1-sentences").set_value(["gold", "alice", "bob"]).run()
    assert len(_frame(at, "Cohen's kappa per pair of raters")) == 3


def test_span_agreement_page_shows_span_matching(store: str) -> None:
    at = _page("app_pages/agreement.py", kind="Spans (per token)")
    matching = _frame(at, "Span matching per pair of raters (F1_IoU)")
    assert list(matching[["rater A", "rater B"]].iloc[0]) == ["alice", "bob"]
    assert 0 < matching["F1_IoU"].iloc[0] < 100


def test_presenter_shows_one_figure_and_pages(store: str) -> None:
    at = _page("app_pages/presenter.py")
    assert len(at.get("plotly_chart")) == 1
    first = at.markdown[0].value
    assert first.startswith("## MHALO")
    at.button(key="presenter-next").click().run()
    assert at.query_params["slide"] == ["2"] or at.query_params["slide"] == "2"
    assert at.markdown[0].value != first
    assert not [w for w in at.get("multiselect")]  # read-only: no controls but previous / next
    at.button(key="presenter-prev").click().run()
    at.button(key="presenter-prev").click().run()
    where = next(c.value for c in at.caption if c.value.startswith("Slide "))
    assert re.match(r"Slide (\d+) of \1 ", where)  # wrapped around to the last slide


def test_numbers_follow_a_label_without_restart(demo_url: str, tmp_path, monkeypatch) -> None:
    url = load_demo_store(tmp_path, monkeypatch)
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = _page("app_pages/paper_metrics.py", view="AlignBench")
    title = "Table 3 · AUROC per detector and captioning model (%)"
    before = _frame(at, title).set_index("detector").at["cautious", "Avg"]
    digest = _provenance(at)

    # Gold changes by an import (or adjudication), never by labeling: re-import one item's gold with one
    # "correct" sentence turned "incorrect".
    engine = make_engine(url)
    exported = export_bundle(engine, DEMO, ["gold:gold"], actor=OPERATOR)
    (gold,) = exported.label_sets
    item = next(a for a in gold.annotations if any(s.label == "correct" for s in a.sentence_labels))
    flip = next(s.index for s in item.sentence_labels if s.label == "correct")
    item.sentence_labels = [
        replace(s, label="incorrect", error_type="Object") if s.index == flip else s
        for s in item.sentence_labels
    ]
    changed = Bundle(dataset=exported.dataset, label_sets=[replace(gold, annotations=[item])])
    import_bundle(engine, changed, actor=OPERATOR, replace_existing=True)
    engine.dispose()

    at.run()  # the same session: no restart, no cache clearing
    assert _provenance(at) != digest
    assert _frame(at, title).set_index("detector").at["cautious", "Avg"] != before


def test_agreement_page_says_who_is_not_counted(tmp_path, monkeypatch) -> None:
    """A rater who only scored detector outputs is not a span annotator: the headline keeps the two
    annotators' kappa, and the page names the rater (literally) with the reason."""
    from render.literal_text import literal
    from tests.analysis.reports.test_agreement_raters import rate_like_the_page

    url = load_demo_store(tmp_path, monkeypatch)
    engine = make_engine(url)
    dataset = get_dataset(engine, DEMO)
    rater = "*dave* [x](y)"
    rate_like_the_page(engine, dataset.id, rater, 20)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = _page("app_pages/agreement.py", kind="Spans (per token)")
    assert at.multiselect(key="raters-1-spans").value == ["alice", "bob"]
    assert rater not in at.multiselect(key="raters-1-spans").options
    assert float(next(m.value for m in at.metric if m.label == "Fleiss' kappa")) == pytest.approx(
        0.860, abs=1e-3
    )
    note = next(c.value for c in at.caption if c.value.startswith("Not counted"))
    assert f"{literal(rater)}: no spans (only ratings)" in note
    assert "rater-1: no spans (only ratings)" in note


def test_presenter_slide_list_and_second_keys(store: str) -> None:
    at = _page("app_pages/presenter.py")
    jump = at.selectbox(key="presenter-jump")
    count = len(jump.options)
    assert count > 5 and jump.options[0].startswith("1 · MHALO")
    jump.set_value(5).run()
    assert at.query_params["slide"] in (["5"], "5")
    assert at.markdown[0].value == "## " + at.selectbox(key="presenter-jump").options[4].split(" · ", 1)[1]
    at.button(key="presenter-pagedown").click().run()
    assert at.query_params["slide"] in (["6"], "6")
    at.button(key="presenter-pageup").click().run()
    at.button(key="presenter-pageup").click().run()
    assert at.query_params["slide"] in (["4"], "4")
    assert at.selectbox(key="presenter-jump").value == 4


def _slide_shown(at: AppTest) -> int:
    where = next(c.value for c in at.caption if c.value.startswith("Slide "))
    found = re.match(r"Slide (\d+) of", where)
    assert found is not None, where
    return int(found[1])


def test_presenter_steps_from_the_slide_shown_when_the_address_fell_behind(store: str) -> None:
    """A run of the page's watcher can bring back the address from before the last step (it is asked
    for with the address the browser showed then): → then went to the slide already shown, so a press
    was lost. The deck steps from the slide it shows, and writes its number back into the address."""
    at = _page("app_pages/presenter.py", slide="3")
    assert _slide_shown(at) == 3
    at.query_params["slide"] = "2"  # what such a run leaves in the address
    at.button(key="presenter-next").click().run()
    assert _slide_shown(at) == 4
    assert at.query_params["slide"] in (["4"], "4")
    at.query_params["slide"] = "3"
    at.run()
    assert _slide_shown(at) == 4
    assert at.query_params["slide"] in (["4"], "4")


def _where(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Slide "))


def _slides_said(asked: str, count: int, shown: int) -> list[str]:
    """What presenter mode says of ``?slide=asked`` naming none of its ``count`` slides."""
    listed = ", ".join(repr(str(k)) for k in range(1, 9)) + f" (or {count - 8} more)"
    return [
        literal(
            f"The link asked for slide {asked!r}, which is not one of {listed}; showing slide {shown} instead."
        )
    ]


def test_presenter_says_when_the_address_asks_past_the_last_slide(store: str) -> None:
    """``?slide=99`` of a shorter deck showed its last slide without a word: the presenter took it for
    the slide they linked to. It is said above the figure, in the words of every page, until they move."""
    at = _page("app_pages/presenter.py", slide="99")
    count = len(at.selectbox(key="presenter-jump").options)
    assert 8 < count < 99 and _slide_shown(at) == count
    said = _slides_said("99", count, count)
    assert _said(at) == said
    assert _where(at).startswith(f"Slide {count} of {count} · {DEMO}")
    assert at.query_params["slide"] in ([str(count)], str(count))
    at.run()  # a rerun as the store changes (the watcher's) keeps it
    assert _said(at) == said
    at.button(key="presenter-next").click().run()  # and the keys go on from the slide shown
    assert _slide_shown(at) == 1 and not _said(at)
    at.button(key="presenter-prev").click().run()
    assert _slide_shown(at) == count and not _said(at)


@pytest.mark.parametrize("asked", ["abc", "0", "-2", "", "2.5"])
def test_presenter_opens_at_the_first_slide_for_an_address_with_no_slide_number(
    store: str, asked: str
) -> None:
    """A link to the deck, cut or mistyped, opens at its start; a value that names no slide is said
    (it was not: the presenter took the first slide for the one linked to)."""
    at = _page("app_pages/presenter.py", slide=asked)
    assert _slide_shown(at) == 1
    count = len(at.selectbox(key="presenter-jump").options)
    assert _said(at) == (_slides_said(asked, count, 1) if asked else [])
    assert at.query_params["slide"] in (["1"], "1")
    at.button(key="presenter-next").click().run()
    assert _slide_shown(at) == 2 and not _said(at)


def test_presenter_opened_again_follows_its_address(store: str) -> None:
    at = _page("app_pages/presenter.py", slide="5")
    assert _slide_shown(at) == 5
    at.switch_page("app_pages/paper_metrics.py").run()
    at.switch_page("app_pages/presenter.py")
    at.query_params["slide"] = "2"
    at.run()
    assert not at.exception, at.exception
    assert _slide_shown(at) == 2


def _figure(at: AppTest) -> str:
    """The slide's figure, as the page hands it to the browser."""
    return at.get("plotly_chart")[0].proto.spec


def test_presenter_filters_survive_an_older_address(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Presenter mode read its filters from the address on every run: a watcher's run that brought an
    older address back (one without the link's filters) redrew the deck unfiltered, and left the address
    saying so. The filters are read when it opens; the deck and the address keep them."""
    filtered = {"subset": "shapes", "detector": ["eager", "sloppy"]}
    unfiltered = _figure(_page("app_pages/presenter.py"))
    at = _page("app_pages/presenter.py", **filtered)
    shown = _figure(at)
    assert shown != unfiltered
    for rerun in ("browser", "watcher"):
        at.query_params.pop("subset")  # an older address, without the filters
        at.query_params.pop("detector")
        drawn = watcher_reruns_the_next_run(monkeypatch) if rerun == "watcher" else None
        at.run()
        assert drawn is None or len(drawn) == 2, drawn  # the watcher did rerun the page
        assert not at.exception, at.exception
        assert _figure(at) == shown, rerun
        assert at.query_params["subset"] == "shapes", rerun
        assert at.query_params["detector"] == ["eager", "sloppy"], rerun


def test_presenter_opened_again_follows_the_filters_of_its_address(store: str) -> None:
    at = _page("app_pages/presenter.py", subset="shapes")
    shapes = _figure(at)
    at.switch_page("app_pages/paper_metrics.py").run()
    at.query_params.clear()
    at.query_params.update({"dataset": DEMO})  # a link to presenter mode without filters, followed
    at.switch_page("app_pages/presenter.py").run()
    assert not at.exception, at.exception
    assert _figure(at) != shapes
    assert "subset" not in at.query_params


def test_presenter_says_what_of_a_stale_link_it_cannot_show(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subset, source model, detector, type or count of 'unknown' sentences the link names and the
    dataset lacks was taken as it was, without a word: a subset no item has left nothing to present, and
    the page said the dataset had no gold. Each is now said once, literally, in the words of every page,
    and left out of the deck and of its address, while presenter mode stays open."""
    at = _page(
        "app_pages/presenter.py",
        subset="no such subset",
        model="*nobody*",
        detector=["eager", "ghost"],
        type="Nope",
        unknown="sometimes",
    )
    assert not at.info, [i.value for i in at.info]  # the deck is drawn, not "Nothing to present yet"
    models = _said(at)[1].split("which is not one of ", 1)[1].split(";", 1)[0]
    assert _said(at) == [
        *_stale_filters_said(models),
        _said(at)[3],
        literal(
            "The link asked for way to count 'unknown' sentences 'sometimes', which is not one of "
            "'left out', 'as correct'; showing 'left out' instead."
        ),
    ]
    assert _said(at)[3].startswith(
        literal("The link asked for hallucination type 'Nope', which is not one of")
    )
    assert {k: v for k, v in at.query_params.items() if k not in ("user", "slide")} == {
        "dataset": DEMO,
        "detector": "eager",
    }
    assert _figure(at) == _figure(_page("app_pages/presenter.py", detector="eager"))
    at = _page("app_pages/presenter.py", subset="no such subset", detector=["eager", "ghost"])
    watcher_reruns_the_next_run(monkeypatch)
    at.query_params.update({"subset": "no such subset", "detector": ["eager", "ghost"]})  # an older address
    at.run()
    assert len(_said(at)) == 2  # still said, and not twice
    at.button(key="presenter-next").click().run()
    assert len(_said(at)) == 2  # the filters are the same while presenter mode stays open


def test_presenter_leaves_for_the_page_it_was_opened_from(store: str) -> None:
    at = _page("app_pages/agreement.py", kind="Ratings")
    at.switch_page("app_pages/presenter.py").run()
    assert at.markdown[0].value.startswith("## MHALO")
    at.button(key="presenter-leave").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value.startswith("Agreement")
    assert at.query_params["kind"] in (["Ratings"], "Ratings")


def test_empty_cells_read_a_dash_not_none(store: str) -> None:
    """The per-subset correlations have no interval: their cells are "—", never "None"."""
    at = _page("app_pages/correlation.py")
    per_subset = _frame(at, "Pearson correlation per subset (MHALO Figure 4)")
    assert set(per_subset["low"]) == {"—"} and set(per_subset["high"]) == {"—"}
    for frame in (element.value for element in at.dataframe):
        assert not frame.isna().any().any(), frame


def test_mhalo_table3_is_shown_a_row_per_subset_average_first(store: str) -> None:
    """A column per subset × measure ran off a laptop screen; the CSV keeps the paper's wide layout."""
    at = _page("app_pages/paper_metrics.py", view="MHALO")
    table3 = _frame(at, "Table 3 · F1_M, F1_IoU and IF per subset (%)")
    assert list(table3.columns) == ["detector", "subset", "F1_M", "F1_IoU", "IF"]
    n_detectors = table3["detector"].nunique()
    assert list(table3["subset"][:n_detectors]) == ["Average"] * n_detectors


def _demo_of_benchmark_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo as a Tri-HE store: its judged items are the benchmark's questions (no source model), and
    each judging run names the model whose answers it judged, ``llava *demo*``."""
    from sqlalchemy import select

    from db import models as m
    from db.engine import write_session
    from formats.trihe import ANSWERING_MODEL

    url = load_demo_store(tmp_path, monkeypatch)
    engine = make_engine(url)
    dataset = get_dataset(engine, DEMO)
    with write_session(engine) as session:
        judges = session.scalars(
            select(m.LabelSet)
            .join(m.TripletJudgment, m.TripletJudgment.label_set_id == m.LabelSet.id)
            .where(m.LabelSet.dataset_id == dataset.id, m.LabelSet.kind == "detector")
            .distinct()
        ).all()
        assert judges
        for judge in judges:
            judge.meta = {**(judge.meta or {}), ANSWERING_MODEL: "llava *demo*"}
        judged = select(m.Triplet.item_id).join(
            m.TripletJudgment, m.TripletJudgment.triplet_id == m.Triplet.id
        )
        for item in session.scalars(select(m.Item).where(m.Item.id.in_(judged))):
            item.source_model = None  # as the benchmark's questions, which no model answered
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()


TRIHE_TABLE_2 = "Table 2 · hallucination rates per answering model and judge (%, lower is better)"


def test_trihe_source_model_filter_offers_the_model_a_run_judged(tmp_path, monkeypatch) -> None:
    """Tri-HE's items are the benchmark's questions; a run read from a judgments file names whose
    answers it judged. That model is offered as a source model on the Tri-HE view, and choosing it keeps
    that run's answers (it could not be chosen: Table 2 named a model the filter did not offer)."""
    _demo_of_benchmark_questions(tmp_path, monkeypatch)
    at = _page("app_pages/paper_metrics.py", view="Tri-HE")
    assert "llava *demo*" in at.multiselect(key="model").options
    at.multiselect(key="model").set_value(["llava *demo*"]).run()
    assert not at.exception, at.exception
    assert "llava *demo*" in set(_frame(at, TRIHE_TABLE_2)["model"])


def test_a_trihe_answering_model_chosen_stays_across_views_and_controls(tmp_path, monkeypatch) -> None:
    """The other papers' views do not offer a Tri-HE answering model: shown one, the widget dropped the
    choice, and back on Tri-HE every model's answers were counted again."""
    _demo_of_benchmark_questions(tmp_path, monkeypatch)
    at = _page("app_pages/paper_metrics.py", view="Tri-HE")
    at.multiselect(key="model").set_value(["llava *demo*", "captioner-a"]).run()
    at.segmented_control(key="view").set_value("MHALO").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="model").value == ["captioner-a"]  # what MHALO's items have
    subset = at.multiselect(key="subset")
    subset.set_value(subset.options[:1]).run()
    at.multiselect(key="model").set_value([]).run()  # on MHALO, captioner-a is let go
    at.segmented_control(key="view").set_value("Tri-HE").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="model").value == ["llava *demo*"]
    at.multiselect(key="subset").set_value([]).run()
    assert at.multiselect(key="model").value == ["llava *demo*"]
    assert set(_frame(at, TRIHE_TABLE_2)["model"]) <= {"llava *demo*", triplets.ALL_MODELS}
    at.multiselect(key="model").set_value([]).run()  # let go, it stays let go
    at.segmented_control(key="view").set_value("MHALO").run()
    at.segmented_control(key="view").set_value("Tri-HE").run()
    assert at.multiselect(key="model").value == []


def test_metrics_opens_on_a_paper_it_can_show(tmp_path, monkeypatch) -> None:
    """An AlignBench dataset: gold spans (its error words) and a scorer that kept its texts. MHALO was
    offered first, on the raw outputs, and the page opened on "this paper's data is gone"."""
    from formats.records import (
        Annotations,
        DatasetRecord,
        ItemRecord,
        LabelSetRecord,
        RawOutputRecord,
        SentenceLabelRecord,
        SentenceScoreRecord,
        SpanRecord,
    )

    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path))
    items = [ItemRecord(f"c{k}", "A red cat. A dog.", prompt="Describe.") for k in range(4)]
    gold = LabelSetRecord(
        "gold",
        "gold",
        annotations=[
            Annotations(
                f"c{k}",
                spans=[SpanRecord(2, 5)] if k % 2 else [],
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect" if k % 2 else "correct"),
                    SentenceLabelRecord(1, "correct"),
                ],
            )
            for k in range(4)
        ],
    )
    scorer = LabelSetRecord(
        "detector",
        "scorer",
        annotations=[
            Annotations(
                f"c{k}",
                sentence_scores=[SentenceScoreRecord(0, 10.0 + 50 * (k % 2)), SentenceScoreRecord(1, 5.0)],
                raw_output=RawOutputRecord(f"Score: {10 + 50 * (k % 2)}", True),
            )
            for k in range(4)
        ],
    )
    engine = make_engine(url)
    from db.migrate import upgrade

    upgrade(engine)
    bundle = Bundle(
        DatasetRecord("ab", "alignbench", label_kinds=["span", "sentence"]), items, [gold, scorer]
    )
    assert import_bundle(engine, bundle, actor=OPERATOR).rows
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": "ab"})
    at.run()
    at.switch_page("app_pages/paper_metrics.py").run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="view").options == ["AlignBench"]
    assert not any("data is gone" in i.value for i in at.info)
    assert _provenance(at)


def test_span_agreement_page_says_where_types_were_not_compared(tmp_path, monkeypatch) -> None:
    """A rater whose spans carry no type is compared on where the spans are; the page says on how many
    items, beside the kappa that reads it."""
    from tests.analysis.reports.test_agreement_untyped import _copy_untyped

    url = load_demo_store(tmp_path, monkeypatch)
    engine = make_engine(url)
    dataset = get_dataset(engine, DEMO)
    _copy_untyped(engine, dataset.id, "alice", "carol", 5)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = _page("app_pages/agreement.py", kind="Spans (per token)")
    at.multiselect(key="raters-1-spans").set_value(["alice", "carol"]).run()
    notes = [i.value for i in at.info]
    assert any(n.startswith("On 5 item(s) a rater's spans carry no type") for n in notes), notes


def test_agreement_raters_are_the_picked_datasets_own(tmp_path, monkeypatch) -> None:
    """After picking another dataset in the sidebar, the Raters box kept the first dataset's choice:
    it showed gold and the detectors where the dataset's own page opens on its annotators, or nobody
    (names the dataset does not have) while the figures counted every rater."""
    url = load_demo_store(tmp_path, monkeypatch)
    engine = make_engine(url)
    exported = export_bundle(engine, DEMO, actor=OPERATOR)
    renamed = {"alice": "kim", "bob": "lee"}
    label_sets = [
        replace(ls, name=renamed[ls.name], annotator=renamed[ls.name]) if ls.name in renamed else ls
        for ls in exported.label_sets
    ]
    copy = Bundle(
        dataset=replace(exported.dataset, name="demo copy"), items=exported.items, label_sets=label_sets
    )
    import_bundle(engine, copy, actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()

    at = _page("app_pages/agreement.py", kind="Sentence labels")
    raters = next(m for m in at.multiselect if m.label == "Raters")
    assert raters.value == ["alice", "bob"]
    at.selectbox(key=WIDGET).set_value("demo copy").run()
    assert not at.exception
    raters = next(m for m in at.multiselect if m.label == "Raters")
    assert raters.value == ["kim", "lee"]
    assert len(_frame(at, "Cohen's kappa per pair of raters")) == 1

    raters.set_value(["gold", "kim", "lee"]).run()
    at.selectbox(key=WIDGET).set_value(DEMO).run()
    raters = next(m for m in at.multiselect if m.label == "Raters")
    assert raters.value == ["alice", "bob"]
    assert len(_frame(at, "Cohen's kappa per pair of raters")) == 1


# ------------------------------------------------------- choices kept in the address, and older ones
# The report pages follow the store: a run of a page's watcher can bring back the address from before the
# last choice (it is asked for with the address the browser showed when it asked). Their choices are
# widgets whose value is the truth once the page is open (see components.page_address): the tests put
# such an address in before a run and before a watcher's rerun, and check both the page and the address
# the run leaves (what a reload, a shared link or presenter mode's Esc opens).


def test_metrics_choices_survive_an_older_address(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _page("app_pages/paper_metrics.py")
    at.segmented_control(key="view").set_value("MHaluBench").run()
    at.segmented_control(key="view").set_value("AlignBench").run()
    at.multiselect(key="subset").set_value(["shapes"]).run()
    at.multiselect(key="model").set_value(["captioner-a"]).run()
    at.segmented_control(key="unknown").set_value("as correct").run()
    for rerun in ("browser", "watcher"):
        at.query_params["view"] = "MHaluBench"  # the address from before the last choices
        at.query_params.pop("subset", None)
        at.query_params.pop("model", None)
        at.query_params.pop("unknown", None)
        drawn = watcher_reruns_the_next_run(monkeypatch) if rerun == "watcher" else None
        at.run()
        assert drawn is None or len(drawn) == 2, drawn  # the watcher did rerun the page
        assert not at.exception, at.exception
        assert at.segmented_control(key="view").value == "AlignBench", rerun
        assert at.multiselect(key="subset").value == ["shapes"], rerun
        assert at.multiselect(key="model").value == ["captioner-a"], rerun
        assert at.segmented_control(key="unknown").value == "as correct", rerun
        assert "subset: shapes" in _provenance(at), rerun
        assert at.title[0].value == f"Metrics · {DEMO}"
        address = {k: v for k, v in at.query_params.items() if k != "user"}
        assert address == {
            "dataset": DEMO,
            "view": "AlignBench",
            "subset": "shapes",
            "model": "captioner-a",
            "unknown": "as correct",
        }, rerun


def test_metrics_address_follows_the_filters_shown(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two subsets are two ``?subset=``; a filter the paper shown does not draw leaves the address, and
    the paper shown at its default (the first offered) is left out of it."""
    at = _page("app_pages/paper_metrics.py")
    first, other = at.multiselect(key="subset").options[:2]
    at.multiselect(key="subset").set_value([first, other]).run()
    at.multiselect(key="type").set_value(at.multiselect(key="type").options[:1]).run()
    assert at.query_params["subset"] == [first, other]
    assert "type" in at.query_params
    at.segmented_control(key="view").set_value("Tri-HE").run()  # no type filter there
    assert not [w for w in at.multiselect if w.key == "type"]
    assert "type" not in at.query_params
    assert at.query_params["view"] == "Tri-HE"
    at.multiselect(key="subset").set_value([]).run()
    at.segmented_control(key="view").set_value("MHALO").run()
    assert not {"view", "subset"} & set(at.query_params)
    watcher_reruns_the_next_run(monkeypatch)
    at.query_params.update({"view": "Tri-HE", "subset": [first, other]})  # an older address, again
    at.run()
    assert at.segmented_control(key="view").value == "MHALO"
    assert not {"view", "subset"} & set(at.query_params)


def test_metrics_link_with_filters_opens_them(store: str) -> None:
    """A shared link's filters are shown, with the values no option names passed over (and dropped from
    the address) as the page did when Streamlit read the address itself."""
    probe = _page("app_pages/paper_metrics.py")
    first, other = probe.multiselect(key="subset").options[:2]
    at = _page("app_pages/paper_metrics.py", view="AlignBench", subset=[first, "no such subset", other])
    assert at.segmented_control(key="view").value == "AlignBench"
    assert at.multiselect(key="subset").value == [first, other]
    assert at.query_params["subset"] == [first, other]
    at = _page("app_pages/paper_metrics.py", view="No such paper", unknown="sometimes")
    assert at.segmented_control(key="view").value == "MHALO"
    assert not {"view", "unknown"} & set(at.query_params)


def _stale_filters_said(models: str) -> list[str]:
    """What a page says of the link's subset, source model and detector that the demo lacks, in order
    (``models``: the source models it offers, quoted as the notice lists them)."""
    return [
        literal(
            "The link asked for subset 'no such subset', which is not one of 'counting', 'shapes', 'signs'; "
            "it is left out."
        ),
        literal(f"The link asked for source model '*nobody*', which is not one of {models}; it is left out."),
        literal(
            "The link asked for detector 'ghost', which is not one of 'cautious', 'eager', 'sloppy'; "
            "it is left out."
        ),
    ]


def _said(at: AppTest) -> list[str]:
    """What the page says of its address's values that name no option (every page in the same words)."""
    return [w.value for w in at.warning if w.value.startswith("The link asked for")]


def test_metrics_says_what_of_a_stale_link_it_cannot_show(store: str, monkeypatch) -> None:
    """A paper, a detector, a source model or a subset the link names and the dataset lacks was dropped
    without a word; each is now said once, literally, and stays said while the page shows the same."""
    at = _page(
        "app_pages/paper_metrics.py",
        view="nonsense",
        detector=["eager", "ghost"],
        model="*nobody*",
        subset="no such subset",
    )
    papers = ", ".join(map(repr, at.segmented_control(key="view").options))
    models = ", ".join(map(repr, at.multiselect(key="model").options))
    assert _said(at) == [
        literal(
            f"The link asked for paper 'nonsense', which is not one of {papers}; showing 'MHALO' instead."
        ),
        *_stale_filters_said(models),
    ]
    assert at.multiselect(key="detector").value == ["eager"]
    assert {k: v for k, v in at.query_params.items() if k != "user"} == {"dataset": DEMO, "detector": "eager"}
    watcher_reruns_the_next_run(monkeypatch)
    at.query_params.update({"view": "nonsense", "detector": ["eager", "ghost"]})  # an older address
    at.run()
    assert len(_said(at)) == 4  # still said, and not twice
    at.multiselect(key="detector").set_value(["eager", "sloppy"]).run()
    assert not any("detector 'ghost'" in said for said in _said(at))
    assert len(_said(at)) == 3


def test_agreement_says_a_link_labels_it_does_not_offer(store: str) -> None:
    at = _page("app_pages/agreement.py", kind="zzz")
    kinds = at.segmented_control(key="kind").options
    assert _said(at) == [
        literal(
            f"The link asked for labels 'zzz', which is not one of {', '.join(map(repr, kinds))}; "
            f"showing {kinds[0]!r} instead."
        )
    ]
    assert at.segmented_control(key="kind").value == kinds[0]


def test_metrics_opened_again_follows_its_address(store: str) -> None:
    at = _page("app_pages/paper_metrics.py", view="AlignBench")
    at.segmented_control(key="view").set_value("MHaluBench").run()
    first, other = at.multiselect(key="subset").options[:2]
    at.multiselect(key="subset").set_value([first]).run()
    at.switch_page("app_pages/browse.py").run()
    at.query_params.clear()
    at.query_params.update({"dataset": DEMO, "view": "Tri-HE", "subset": other})  # a link, followed
    at.switch_page("app_pages/paper_metrics.py").run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="view").value == "Tri-HE"
    assert at.multiselect(key="subset").value == [other]


def test_agreement_labels_chosen_survive_an_older_address(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _page("app_pages/agreement.py", kind="Sentence labels")
    at.segmented_control(key="kind").set_value("Ratings").run()
    for rerun in ("browser", "watcher"):
        at.query_params["kind"] = "Sentence labels"  # the address from before the last choice
        drawn = watcher_reruns_the_next_run(monkeypatch) if rerun == "watcher" else None
        at.run()
        assert drawn is None or len(drawn) == 2, drawn  # the watcher did rerun the page
        assert not at.exception, at.exception
        assert at.segmented_control(key="kind").value == "Ratings", rerun
        assert not [w for w in at.multiselect if w.key == "raters-1-sentences"], rerun
        assert at.query_params["kind"] == "Ratings", rerun


def test_agreement_opened_again_follows_its_address(store: str) -> None:
    at = _page("app_pages/agreement.py", kind="Sentence labels")
    at.segmented_control(key="kind").set_value("Ratings").run()
    at.switch_page("app_pages/paper_metrics.py").run()
    at.query_params.clear()
    at.query_params.update({"dataset": DEMO, "kind": "Claim labels"})
    at.switch_page("app_pages/agreement.py").run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="kind").value == "Claim labels"


SECOND_TASK = "cautious's segments"


def _two_rating_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo with a second rating task, of cautious's segments, that one rater scored on a few items."""
    from db.repositories.annotations import item_annotations
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.items import get_item, item_at
    from db.repositories.label_sets import human_label_set, list_label_sets
    from db.repositories.rating_tasks import TaskSpec, create_rating_task, rate, segments_of

    url = load_demo_store(tmp_path, monkeypatch)
    engine = make_engine(url)
    dataset = get_dataset(engine, DEMO)
    assert dataset is not None
    cautious = next(v for v in list_label_sets(engine, dataset.id, "detector") if v.name == "cautious")
    task = create_rating_task(engine, dataset.id, TaskSpec(SECOND_TASK, cautious.id), None, actor=OPERATOR)
    rater = get_or_create_annotator(engine, "carol").id
    own = human_label_set(engine, dataset.id, rater).id
    for position in range(12):
        item = get_item(engine, dataset.id, item_at(engine, dataset.id, position) or "")
        assert item is not None
        segments = segments_of(item_annotations(engine, item.id, [cautious.id])[cautious.id].spans)
        if not segments:
            rate(engine, task, item.id, rater, own, score=None, nothing_flagged_correct=True)
        for k, segment in enumerate(segments):
            rate(engine, task, item.id, rater, own, score=1 + (position + k) % 4, segment=segment)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()


def test_correlation_choices_survive_an_older_address(tmp_path, monkeypatch) -> None:
    _two_rating_tasks(tmp_path, monkeypatch)
    at = _page("app_pages/correlation.py")
    first, second = at.selectbox(key="task").options
    assert second == SECOND_TASK
    at.selectbox(key="task").set_value(second).run()
    at.segmented_control(key="flagged").set_value("top if right, bottom if not").run()
    shown = _provenance(at)
    for rerun in ("browser", "watcher"):
        at.query_params["task"] = first  # the address from before the last choices
        at.query_params.pop("flagged", None)
        drawn = watcher_reruns_the_next_run(monkeypatch) if rerun == "watcher" else None
        at.run()
        assert drawn is None or len(drawn) == 2, drawn  # the watcher did rerun the page
        assert not at.exception, at.exception
        assert at.selectbox(key="task").value == second, rerun
        assert at.segmented_control(key="flagged").value == "top if right, bottom if not", rerun
        assert _provenance(at) == shown, rerun
        assert at.query_params["task"] == second, rerun
        assert at.query_params["flagged"] == "top if right, bottom if not", rerun


def test_correlation_opened_again_follows_its_address(tmp_path, monkeypatch) -> None:
    _two_rating_tasks(tmp_path, monkeypatch)
    scored = "top if right, bottom if not"
    at = _page("app_pages/correlation.py", task=SECOND_TASK, flagged=scored)
    assert at.selectbox(key="task").value == SECOND_TASK
    at.selectbox(key="task").set_value(at.selectbox(key="task").options[0]).run()
    at.segmented_control(key="flagged").set_value("left out (MHALO)").run()
    at.switch_page("app_pages/agreement.py").run()
    at.query_params.clear()
    at.query_params.update({"dataset": DEMO, "task": SECOND_TASK, "flagged": scored})  # a link, followed
    at.switch_page("app_pages/correlation.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="task").value == SECOND_TASK
    assert at.segmented_control(key="flagged").value == scored


def test_presenter_mode_leaves_for_metrics_as_shown(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a watcher run asked for with the address from before the last choices, presenter mode's Esc
    went back to Metrics on the paper and filters from before; it goes back to them as they were shown."""
    at = _page("app_pages/paper_metrics.py")
    first, other = at.multiselect(key="subset").options[:2]
    at.segmented_control(key="view").set_value("MHaluBench").run()
    at.multiselect(key="subset").set_value([first, other]).run()
    shown = dict(at.query_params)
    watcher_reruns_the_next_run(monkeypatch)
    at.query_params["view"] = "AlignBench"  # the address from before the last choices
    at.query_params.pop("subset")
    at.run()
    assert dict(at.query_params) == shown
    at.switch_page("app_pages/presenter.py").run()
    at.button(key="presenter-leave").click().run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="view").value == "MHaluBench"
    assert at.multiselect(key="subset").value == [first, other]
    assert dict(at.query_params) == shown
