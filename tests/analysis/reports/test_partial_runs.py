"""A detector run given only some items is scored on those items alone.

Researchers run an expensive detector on a subset, and a live run can be stopped half way. Before the
store kept which items a run was given, every item it had nothing on read as "flagged nothing": a run
over half the dataset missed every hallucination of the other half in MHALO's Table 3, the failure
finder listed those as its misses, and the comparison showed an empty track as a verdict. An import
marks the items a detector's records give (the "done" coverage mark gold has), a live run's raw outputs
say the same, and only a run that records neither is taken as given every item, as before.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from analysis.dataset_spans import load_dataset_spans, per_item_scores
from analysis.failure_finder import FinderQuery, detector_rows, disagreement, item_table, select_items
from analysis.item_comparison import DetectorOutput, compare_item
from analysis.reports import mhalo
from analysis.reports.data import ReportFilter
from analysis.reports.spans import load_span_inputs
from db import models as m
from db.access import OPERATOR
from db.exporter import export_bundle
from db.import_undo import recent_imports, undo_import
from db.importer import import_bundle
from db.repositories.datasets import get_dataset, list_datasets
from db.repositories.report_inputs import run_coverage
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SentenceScoreRecord,
    SpanRecord,
    TokenProbabilityRecord,
)
from formats.registry import get_format

RESPONSE = "A man is sitting on a red bench."
RED = SpanRecord(23, 26)  # "red"
ITEMS = ("a", "b", "c", "d")  # gold: "red" on a and b; c and d are clean


def _dataset(engine, name: str = "bench") -> int:
    gold = LabelSetRecord(
        kind="gold", name="gold", annotations=[Annotations(ext, spans=[RED]) for ext in ("a", "b")]
    )
    record = DatasetRecord(name=name, source_format="canonical", label_kinds=["span", "sentence"])
    items = [ItemRecord(external_id=ext, response=RESPONSE) for ext in ITEMS]
    assert import_bundle(engine, Bundle(record, items=items, label_sets=[gold]), actor=OPERATOR).rows
    dataset = get_dataset(engine, name)
    assert dataset is not None
    return dataset.id


def _run(engine, name: str, found: dict[str, list[SpanRecord]], dataset: str = "bench") -> None:
    """Import detector ``name``'s records: item → its spans (an empty list: given, flagged nothing)."""
    record = LabelSetRecord(
        kind="detector",
        name=name,
        annotations=[Annotations(ext, spans=spans) for ext, spans in found.items()],
    )
    bundle = Bundle(DatasetRecord(name=dataset, source_format="canonical"), items=[], label_sets=[record])
    import_bundle(engine, bundle, actor=OPERATOR)


@pytest.fixture
def store(engine):
    """gold on a-d; "half" given a (found red) and c (flagged nothing); "full" given every item, found
    red on a and b."""
    dataset_id = _dataset(engine)
    _run(engine, "half", {"a": [RED], "c": []})
    _run(engine, "full", {"a": [RED], "b": [RED], "c": [], "d": []})
    return engine, dataset_id


def _externals(engine, dataset_id: int, item_ids) -> set[str]:
    with Session(engine) as session:
        found = session.execute(
            select(m.Item.id, m.Item.external_id).where(m.Item.dataset_id == dataset_id)
        ).all()
    names = dict(found)
    return {names[int(i)] for i in item_ids}


def _ids(engine, dataset_id: int) -> dict[str, int]:
    with Session(engine) as session:
        return dict(
            session.execute(
                select(m.LabelSet.name, m.LabelSet.id).where(m.LabelSet.dataset_id == dataset_id)
            ).all()
        )


def test_an_import_marks_the_items_a_run_was_given(store) -> None:
    engine, dataset_id = store
    ids = _ids(engine, dataset_id)
    coverage = run_coverage(engine, dataset_id)
    assert _externals(engine, dataset_id, coverage[ids["half"]]) == {"a", "c"}
    assert coverage[ids["full"]] is None  # marked on every item: counted, not read item by item
    spans = load_dataset_spans(engine, dataset_id)
    assert spans.ran_on(ids["half"]).tolist() == [True, False, True, False]
    assert spans.ran_on(ids["full"]).all() and ids["full"] not in spans.given


def test_a_runs_marks_are_not_peoples_progress(store) -> None:
    """The Datasets page read the runs' marks as items people finished ("4 / 4 items done")."""
    engine, _ = store
    summary = next(d for d in list_datasets(engine) if d.name == "bench")
    assert (summary.n_done_items, summary.n_gold_items, summary.n_detectors) == (0, 2, 2)  # gold gave a and b


def test_table_3_scores_a_run_on_the_items_it_was_given(store) -> None:
    engine, dataset_id = store
    report = mhalo.build(load_span_inputs(engine, dataset_id), ReportFilter())
    table = report.tables["table3"].frame.set_index("detector")
    # half: a exact, c rightly clean; b and d were never given to it. (It read 75: b a miss.)
    assert table.at["half", "Average · F1_IoU"] == pytest.approx(100)
    assert table.at["full", "Average · F1_IoU"] == pytest.approx(100)
    assert table.at["half", "Average · items"] == 2 and table.at["full", "Average · items"] == 4
    assert (
        "scored on those alone (items): half 2; so no best value is marked."
        in report.tables["table3"].caption
    )
    assert not report.tables["table3"].mark_columns
    clean = report.tables["clean"].frame.set_index(["detector", "subset"])
    assert clean.at[("half", mhalo.ALL_CLEAN), "n_clean"] == 1  # c, not d
    assert clean.at[("full", mhalo.ALL_CLEAN), "n_clean"] == 2
    found = report.tables["by_type"].frame.set_index("detector")
    assert found.at["half", "n_gold_spans"] == 1 and found.at["half", "detected"] == pytest.approx(100)


def test_figures_5_and_6_draw_a_row_per_type_and_subset_whatever_each_run_was_given(store) -> None:
    """Each row was named by the run's own count, so a run given some items drew rows of its own
    ("None (1)" beside "None (2)"): duplicated types, thin bars, labels on top of each other."""
    from render import figures

    engine, dataset_id = store
    report = mhalo.build(load_span_inputs(engine, dataset_id), ReportFilter())
    for key, axis in (("mhalo-types", "y"), ("mhalo-clean", "x")):
        spec = next(s for s in figures.figures_for(report) if s.key == key)
        fig = spec.make(report)
        categories = [list(trace[axis]) for trace in fig.data]
        assert len(categories) == 2 and categories[0] == categories[1], (key, categories)
        assert len(set(categories[0])) == len(categories[0]), (key, categories)
        # each run's own count is in its hover
        assert sorted(int(trace.customdata[0]) for trace in fig.data) == [1, 2]


def test_a_run_given_every_item_keeps_its_table_and_digest(engine) -> None:
    """No "items" column and the same digest as before runs were marked, when every run covers all."""
    dataset_id = _dataset(engine)
    _run(engine, "full", {"a": [RED], "b": [], "c": [], "d": []})
    before = mhalo.build(load_span_inputs(engine, dataset_id), ReportFilter())
    with Session(engine) as session, session.begin():  # as a store written before runs were marked
        session.execute(
            delete(m.ItemStatus).where(m.ItemStatus.label_set_id == _ids(engine, dataset_id)["full"])
        )
    after = mhalo.build(load_span_inputs(engine, dataset_id), ReportFilter())
    assert not [c for c in before.tables["table3"].frame.columns if "items" in c]
    assert before.provenance.digest == after.provenance.digest
    assert after.tables["table3"].frame.at[0, "Average · F1_IoU"] == pytest.approx(75)


def test_table_3_counts_each_subsets_items_and_keeps_its_columns_in_order(engine) -> None:
    """A run given no item of the first subset: its row has empty cells there (the columns keep the
    items' order, the Average last), each cell's item count is its own, and a filter that leaves a run
    no item leaves it out with a note (it crashed the page)."""
    gold = LabelSetRecord(
        kind="gold", name="gold", annotations=[Annotations(ext, spans=[RED]) for ext in ("a", "c")]
    )
    items = [
        ItemRecord(external_id=ext, response=RESPONSE, subset=s) for ext, s in zip(ITEMS, "PPQQ", strict=True)
    ]
    record = DatasetRecord(name="bench", source_format="canonical", label_kinds=["span", "sentence"])
    import_bundle(engine, Bundle(record, items=items, label_sets=[gold]), actor=OPERATOR)
    _run(engine, "early", {"c": [RED], "d": []})
    _run(engine, "late", {"a": [RED], "b": [], "c": [], "d": []})
    dataset = get_dataset(engine, "bench")
    assert dataset is not None
    inputs = load_span_inputs(engine, dataset.id)
    table = mhalo.build(inputs, ReportFilter()).tables["table3"].frame.set_index("detector")
    assert [c for c in table.columns if c.endswith("F1_IoU")] == [
        "P · F1_IoU",
        "Q · F1_IoU",
        "Average · F1_IoU",
    ]
    assert table.index.tolist() == ["early", "late"]
    assert np.isnan(table.at["early", "P · F1_IoU"]) and table.at["early", "Q · F1_IoU"] == pytest.approx(100)
    assert table.at["early", "Q · items"] == 2 and table.at["late", "P · items"] == 2
    only_q = mhalo.build(inputs, ReportFilter(subsets=("Q",)))  # both runs given every kept item
    assert (
        only_q.tables["table3"].mark_columns and "Runs given only some" not in only_q.tables["table3"].caption
    )
    assert not [c for c in only_q.tables["table3"].frame.columns if c.endswith("items")]
    only_p = mhalo.build(inputs, ReportFilter(subsets=("P",)))
    assert only_p.tables["table3"].frame["detector"].tolist() == ["late"]
    assert "given none of the items the filters keep): early." in only_p.notes[-1]


def test_the_failure_finder_leaves_out_the_items_a_run_was_not_given(store) -> None:
    engine, dataset_id = store
    spans = load_dataset_spans(engine, dataset_id)
    rows = per_item_scores(spans)
    assert sorted(rows.loc[rows["detector"] == "half", "external_id"]) == ["a", "c"]
    table = item_table(spans, detector_rows(spans))
    assert np.isnan(table.at["b", "half · F1_IoU"]) and table.at["a", "half · F1_IoU"] == 1.0
    # "half misses what full finds": b was never given to half (it was listed as half's miss).
    query = FinderQuery(preset="misses", detector="half", other="full")
    assert list(select_items(query, detector_rows(spans), table, spans).index) == []
    # Disagreement only between runs both given the item.
    assert np.isnan(disagreement(spans)[1]) and disagreement(spans)[0] == 0.0


def test_the_comparison_shows_a_run_not_given_the_item_without_scores() -> None:
    compared = compare_item(
        dataset="bench",
        item="b",
        prompt="",
        response=RESPONSE,
        gold=[(23, 26, None)],
        detectors=[DetectorOutput("half", [], given=False)],
    )
    track = compared.track("half")
    assert track.summary() == "not run on this item: left out of its scores"
    assert track.f1_iou is None and not track.missed
    assert compared.gold.spans[0].fate is None
    assert compared.gold.spans[0].explanation.endswith("no detector shown was run on this item")


def test_undo_takes_a_runs_marks_away(store) -> None:
    engine, dataset_id = store
    half = _ids(engine, dataset_id)["half"]
    full_import, half_import, gold_import = recent_imports(engine)  # newest first
    assert (half_import.marks, full_import.marks) == (2, 4)
    result = undo_import(engine, half_import.log_id, actor=OPERATOR)
    assert result.marks == {"took away": 2}
    assert half not in run_coverage(engine, dataset_id)


def test_a_scorer_is_not_marked_as_a_span_run(engine) -> None:
    dataset_id = _dataset(engine)
    scorer = LabelSetRecord(
        kind="detector",
        name="scorer",
        annotations=[Annotations(ext, sentence_scores=[SentenceScoreRecord(0, 20.0)]) for ext in ITEMS],
    )
    import_bundle(
        engine,
        Bundle(DatasetRecord(name="bench", source_format="canonical"), label_sets=[scorer]),
        actor=OPERATOR,
    )
    assert run_coverage(engine, dataset_id) == {}


def test_a_run_of_another_kind_with_a_failed_output_is_no_span_run(engine) -> None:
    """A run of token probabilities whose output for one item failed to parse (a raw output, nothing
    else) got a mark there, and stood in Table 3 scored on that item."""
    dataset_id = _dataset(engine)
    probs = LabelSetRecord(
        kind="detector",
        name="probs",
        annotations=[
            Annotations("a", token_probabilities=[TokenProbabilityRecord(0, 0, 1, 0.9)]),
            Annotations("b", raw_output=RawOutputRecord("not a list", False, parse_error="not a list")),
        ],
    )
    import_bundle(engine, Bundle(DatasetRecord("bench", "canonical"), label_sets=[probs]), actor=OPERATOR)
    assert run_coverage(engine, dataset_id) == {}
    spans = load_dataset_spans(engine, dataset_id)
    assert [d.name for d in spans.detectors] == ["probs"] and spans.span_detectors == ()


def test_a_run_of_spans_and_sentence_scores_covers_every_item_it_gives(engine) -> None:
    """A run answering in both kinds (the demo's detectors, a canonical export of them): an item where it
    found no span but gave scores was given to it, and flagged nothing."""
    dataset_id = _dataset(engine)
    both = LabelSetRecord(
        kind="detector",
        name="both",
        annotations=[
            Annotations("a", spans=[RED], sentence_scores=[SentenceScoreRecord(0, 10.0)]),
            Annotations("c", sentence_scores=[SentenceScoreRecord(0, 90.0)]),
        ],
    )
    import_bundle(engine, Bundle(DatasetRecord("bench", "canonical"), label_sets=[both]), actor=OPERATOR)
    ids = _ids(engine, dataset_id)
    assert _externals(engine, dataset_id, run_coverage(engine, dataset_id)[ids["both"]]) == {"a", "c"}


def test_raw_outputs_say_which_items_a_run_was_given(engine) -> None:
    """A run that kept raw outputs (a live run, or one stored before runs were marked) was given the
    items it has an output on."""
    dataset_id = _dataset(engine)
    tagged = "<Tagged_Text>A man is sitting on a <hallucination>red</hallucination> bench.</Tagged_Text>"
    run = import_predictions(
        engine,
        json.dumps(
            [{"id": "a", "output": tagged}, {"id": "c", "output": f"<Tagged_Text>{RESPONSE}</Tagged_Text>"}]
        ).encode(),
        actor=OPERATOR,
        source="tagger.json",
        dataset="bench",
        detector="tagger",
        format_name="mhalo-outputs",
    )
    assert run.ok, run.problems
    tagger = _ids(engine, dataset_id)["tagger"]
    with Session(engine) as session, session.begin():
        session.execute(delete(m.ItemStatus).where(m.ItemStatus.label_set_id == tagger))
    spans = load_dataset_spans(engine, dataset_id)
    assert spans.ran_on(tagger).tolist() == [True, False, True, False]


def test_label_studio_keeps_the_items_a_run_was_given(store) -> None:
    engine, dataset_id = store
    data = get_format("label-studio").write(export_bundle(engine, "bench", actor=OPERATOR))
    tasks = {t["data"]["external_id"]: t for t in json.loads(data)}
    assert [p["model_version"] for p in tasks["c"]["predictions"]] == ["half", "full"]
    assert [p["model_version"] for p in tasks["d"]["predictions"]] == ["full"]
    copied = import_file(
        engine, data, source="ls.json", format_name="label-studio", actor=OPERATOR,
        options=ReadOptions(dataset="copy"),
    )  # fmt: skip
    assert copied.ok, copied.problems
    copy = get_dataset(engine, "copy")
    assert copy is not None
    half = _ids(engine, copy.id)["half"]
    assert _externals(engine, copy.id, run_coverage(engine, copy.id)[half]) == {"a", "c"}
