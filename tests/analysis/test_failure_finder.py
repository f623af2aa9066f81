"""The failure finder's table, presets, filters, query round-trip and exports on a hand-made dataset."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis import failure_finder as ff
from analysis.dataset_spans import DatasetSpans, dataset_spans
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import ItemIndex, SpanColumns
from metrics import f1_iou

# Ten one-letter tokens: token k covers characters [2k, 2k + 1).
TEXT = "a b c d e f g h i j"


def chars(start: int, end: int, type_: str | None = None) -> tuple[int, int, str | None]:
    """The character span of tokens [start, end)."""
    return 2 * start, 2 * end - 1, type_


# item -> gold spans (in tokens, typed) and what detectors A, B and C predicted.
GOLD = {
    "i0": [chars(0, 2, "Object")],
    "i1": [],  # clean
    "i2": [chars(1, 3, "OCR"), chars(5, 7, "Object")],
    "i3": [chars(0, 1, "Color")],
}
PREDS = {
    "A": {"i0": [chars(0, 2)], "i1": [], "i2": [chars(5, 7)], "i3": []},
    "B": {"i0": [chars(0, 5)], "i1": [chars(3, 4)], "i2": [chars(1, 3), chars(5, 7)], "i3": [chars(8, 9)]},
    "C": {"i0": [], "i1": [], "i2": [], "i3": [chars(0, 1)]},
}
BROKEN = {("C", "i2")}  # C's output on i2 broke the format (so it has no spans)
SUBSETS = {"i0": "s1", "i1": "s2", "i2": "s1", "i3": "s2"}
MODELS = {"i0": "m1", "i1": "m1", "i2": "m2", "i3": "m2"}


def make_evaluation(detectors: tuple[str, ...] = ("A", "B", "C"), with_gold: bool = True) -> DatasetSpans:
    ids = list(GOLD)
    items = ItemIndex(
        ids=list(range(1, len(ids) + 1)),
        external_ids=ids,
        subsets=[SUBSETS[i] for i in ids],
        source_models=[MODELS[i] for i in ids],
        task_types=["image-to-text"] * len(ids),
        responses=[TEXT] * len(ids),
    )
    gold = LabelSetView(1, 1, "gold", "gold", None, None, None)
    views = tuple(
        LabelSetView(k + 2, 1, "detector", name, None, "v1", "vanilla") for k, name in enumerate(detectors)
    )
    per_label_set = {gold.id: GOLD} if with_gold else {}
    flags: dict[int, dict[int, bool]] = {}
    for view in views:
        per_label_set[view.id] = PREDS[view.name]
        flags[view.id] = {
            item_id: (view.name, i) not in BROKEN for item_id, i in zip(items.ids, ids, strict=True)
        }
    rows = [
        (ls, item_id, start, end, type_)
        for ls, spans in per_label_set.items()
        for item_id, i in zip(items.ids, ids, strict=True)
        for start, end, type_ in spans[i]
    ]
    columns = SpanColumns(
        *(np.array([row[k] for row in rows], dtype=np.int64) for k in range(4)),
        np.array([row[4] for row in rows] + [None], dtype=object)[:-1],
    )
    return dataset_spans(items, (gold, *views) if with_gold else views, columns, flags)


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame, DatasetSpans]:
    evaluation = make_evaluation()
    rows = ff.detector_rows(evaluation)
    return rows, ff.item_table(evaluation, rows), evaluation


def found(tables, **params) -> list[str]:
    return list(ff.select_items(ff.FinderQuery.from_params(params), *tables).index)


# ------------------------------------------------------------------------------------- detector rows


def test_detector_rows_count_what_the_matching_says(tables) -> None:
    rows, _, evaluation = tables
    by = rows.set_index(["detector", "external_id"])
    assert by.loc[("B", "i0"), "n_false_positives"] == 1 and by.loc[("B", "i0"), "n_boundary"] == 1
    gold = evaluation.gold_packed

    def found(detectors: list[str]) -> list[tuple[str, int]]:
        spans = ff.found_gold_spans(evaluation, detectors).tolist()
        items = gold.item_of_span[spans].tolist()
        return [(f"i{i}", g - int(gold.offsets[i])) for g, i in zip(spans, items, strict=True)]

    assert [g for item, g in found(["B"]) if item == "i2"] == [0, 1]
    assert [g for item, g in found(["A"]) if item == "i2"] == [1]
    assert sorted(found(["A", "B"])) == sorted(set(found(["A"])) | set(found(["B"])))
    assert found([]) == [] and found(["no such detector"]) == []
    assert by.loc[("B", "i3"), "n_boundary"] == 0  # no overlap at all: a false positive, not a boundary error
    assert not by.loc[("C", "i2"), "follows_format"]
    assert list(rows.loc[rows["detector"] == "A", "clean"]) == [False, True, False, False]
    for row in rows.itertuples():
        n = row.n_pred + row.n_gold
        assert row.n_matched == round(row.f1_iou * n / 2) if n else row.n_matched == 0
        assert row.n_false_positives == row.n_pred - row.n_matched


def test_matching_counts_agree_with_f1_iou_at_other_thresholds() -> None:
    evaluation = make_evaluation()
    rows = ff.detector_rows(evaluation, threshold=0.4)
    b_i0 = rows[(rows["detector"] == "B") & (rows["external_id"] == "i0")].iloc[0]
    assert b_i0["n_matched"] == 1 and b_i0["f1_iou"] == pytest.approx(f1_iou([(0, 5)], [(0, 2)], 0.4))


# -------------------------------------------------------------------------------------- disagreement


def test_disagreement_is_the_mean_pairwise_one_minus_f1_iou(tables) -> None:
    _, table, _ = tables
    # i1: A and C flag nothing (agree), B flags one span (disagrees with both) -> (1 + 0 + 1) / 3
    assert table.loc["i1", "disagreement"] == pytest.approx(2 / 3)
    # i0: A exact, B too wide (IoU 0.4), C nothing: no pair shares a matching span.
    assert table.loc["i0", "disagreement"] == pytest.approx(1.0)
    # i2: A vs B share one of B's two spans: F1 = 2/3; C is empty.
    assert table.loc["i2", "disagreement"] == pytest.approx(((1 - 2 / 3) + 1 + 1) / 3)


def test_disagreement_needs_two_detectors() -> None:
    assert np.isnan(ff.disagreement(make_evaluation(("A",)))).all()
    same = make_evaluation(("A", "A"))
    assert (ff.disagreement(same) == 0).all()


# -------------------------------------------------------------------------------------------- presets


def test_item_table_lists_the_detectors_per_failure(tables) -> None:
    _, table, _ = tables
    assert table.loc["i1", "clean flagged by"] == ("B",)
    assert table.loc["i2", "format failures"] == ("C",)
    assert table.loc["i0", "boundary errors"] == ("B",)
    assert table.loc["i2", "gold types"] == ("OCR", "Object")
    assert table.loc["i3", "A · F1_IoU"] == 0.0 and table.loc["i3", "C · F1_IoU"] == 1.0
    assert list(table.index) == ["i0", "i1", "i2", "i3"]
    assert set(ff.table_columns(["A"])) <= set(table.columns)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ["i0", "i1", "i2", "i3"]),
        ({"preset": "clean-flagged"}, ["i1"]),
        ({"preset": "clean-flagged", "detector": "B"}, ["i1"]),
        ({"preset": "clean-flagged", "detector": "A"}, []),
        ({"preset": "format"}, ["i2"]),
        ({"preset": "format", "detector": "A"}, []),
        ({"preset": "boundary"}, ["i0"]),
        ({"preset": "boundary", "detector": "A"}, []),
        ({"preset": "misses", "detector": "A", "other": "B"}, ["i2"]),
        ({"preset": "misses", "detector": "A"}, ["i2", "i3"]),  # Y = any other detector
        ({"preset": "misses", "detector": "C", "other": "A"}, ["i0", "i2"]),
        ({"preset": "misses", "detector": "B", "other": "A"}, ["i0"]),
        ({"preset": "misses"}, []),  # X is required
        ({"preset": "misses", "detector": "A", "other": "A"}, []),
        ({"preset": "no-such-preset"}, ["i0", "i1", "i2", "i3"]),
    ],
)
def test_presets_find_exactly_their_items(tables, params, expected) -> None:
    assert found(tables, **params) == expected


def test_presets_without_gold_find_no_clean_items() -> None:
    evaluation = make_evaluation(with_gold=False)
    rows = ff.detector_rows(evaluation)
    table = ff.item_table(evaluation, rows)
    query = ff.FinderQuery(preset="clean-flagged")
    assert ff.select_items(query, rows, table, evaluation).empty


def test_without_gold_the_table_counts_spans_and_measures_nothing_against_gold() -> None:
    """Without gold every F1 was 0 and every span a false positive: numbers that said only that there
    was no gold. The table now counts each detector's spans and keeps what needs no gold."""
    evaluation = make_evaluation(with_gold=False)
    rows, table = ff.failure_tables(evaluation)
    scored = [c for c in table.columns if c.endswith(("F1_IoU", "F1_M", "FP"))]
    assert scored == [] and not set(ff.GOLD_COLUMNS) & set(table.columns)
    assert list(table["B · spans"]) == [1, 1, 2, 1] and list(table["C · spans"]) == [0, 0, 0, 1]
    assert table.loc["i2", "format failures"] == ("C",)
    assert not table["disagreement"].isna().any()
    columns = ff.table_columns(["A", "B"], graded=False)
    assert columns == [
        "item",
        "disagreement",
        "A · spans",
        "B · spans",
        "format failures",
        "subset",
        "source model",
    ]
    assert set(columns) <= set(table.columns)
    assert ff.presets(graded=False) == ["format"] and ff.presets() == list(ff.PRESETS)
    assert found((rows, table, evaluation), preset="format") == ["i2"]
    assert found((rows, table, evaluation), type="OCR") == ["i0", "i1", "i2", "i3"]  # no types to filter on
    assert "F1" not in ff.to_jsonl(table) and "F1" not in ff.to_csv(table[columns])


# -------------------------------------------------------------------------------------------- filters


def test_filters_combine_with_presets(tables) -> None:
    assert found(tables, subset=["s1"]) == ["i0", "i2"]
    assert found(tables, model="m2") == ["i2", "i3"]
    assert found(tables, type=["OCR", "Color"]) == ["i2", "i3"]
    assert found(tables, subset="s1", preset="misses", detector="A") == ["i2"]
    assert found(tables, min_dis="0.9") == ["i0", "i3"]


def test_sorting(tables) -> None:
    assert found(tables, sort="disagreement", order="desc")[:2] == ["i0", "i3"]
    # A scores i3 0, i2 2/3, and 1 on i0 and i1 (nothing to find, nothing claimed); ties keep item order.
    assert found(tables, sort="A · F1_IoU") == ["i3", "i2", "i0", "i1"]
    assert found(tables, order="desc") == ["i3", "i2", "i1", "i0"]
    assert found(tables, sort="no such column") == ["i0", "i1", "i2", "i3"]
    _, table, _ = tables
    assert ff.sort_options(table)[0] == "item" and "disagreement" in ff.sort_options(table)


# ------------------------------------------------------------------------------------------- queries


def test_query_round_trips_through_url_parameters() -> None:
    query = ff.FinderQuery(
        preset="misses",
        detector="A",
        other="B",
        subsets=("s1", "s 2"),
        models=("m1",),
        types=("OCR",),
        min_disagreement=0.25,
        sort="disagreement",
        descending=True,
        threshold=0.3,
    )
    params = query.to_params()
    assert params["subset"] == ["s1", "s 2"] and params["iou"] == "0.3"
    assert ff.FinderQuery.from_params(params) == query
    assert ff.FinderQuery().to_params() == {}


@pytest.mark.parametrize(
    ("params", "field", "value"),
    [
        ({"preset": "bogus"}, "preset", None),
        ({"iou": "abc"}, "threshold", 0.5),
        ({"iou": "7"}, "threshold", 1.0),
        ({"iou": "nan"}, "threshold", 0.5),
        ({"min_dis": "-1"}, "min_disagreement", 0.0),
        ({"subset": ["a", "a", ""]}, "subsets", ("a",)),
        ({"detector": ""}, "detector", ff.ANY),
        ({"order": "asc"}, "descending", False),
    ],
)
def test_bad_url_parameters_fall_back_to_defaults(params, field, value) -> None:
    assert getattr(ff.FinderQuery.from_params(params), field) == value


def test_problems_name_what_is_wrong() -> None:
    names = ["A", "B"]
    assert ff.problems(ff.FinderQuery(detector="Z"), names) == [
        "There is no detector named 'Z' in this dataset."
    ]
    assert "Choose the detector X" in ff.problems(ff.FinderQuery(preset="misses"), names)[0]
    assert "different" in ff.problems(ff.FinderQuery(preset="misses", detector="A", other="A"), names)[0]
    assert ff.problems(ff.FinderQuery(preset="misses", detector="A"), names) == []


# ------------------------------------------------------------------------------------- links, export


def test_compare_link_carries_the_list_to_step_through() -> None:
    query = ff.FinderQuery(preset="format", detector="C")
    params = ff.compare_params(query, "demo", "i2", ["C", "A"])
    assert params == {
        "dataset": "demo",
        "item": "i2",
        "detectors": "C,A",
        "from": "failures",
        "preset": "format",
        "detector": "C",
    }
    assert ff.FinderQuery.from_params(params) == query
    assert ff.tracks_for(ff.FinderQuery(preset="misses", detector="B", other="C"), ["A", "B", "C"]) == [
        "B",
        "C",
        "A",
    ]


def test_step() -> None:
    assert ff.step(["a", "b", "c"], "a") == (None, "b", 0)
    assert ff.step(["a", "b", "c"], "b") == ("a", "c", 1)
    assert ff.step(["a", "b", "c"], "c") == ("b", None, 2)
    assert ff.step(["a", "b"], "z") == (None, "a", None)
    assert ff.step([], "z") == (None, None, None)


def test_csv_and_jsonl(tables) -> None:
    chosen = ff.select_items(ff.FinderQuery(preset="misses", detector="A"), *tables)
    csv = ff.to_csv(chosen[ff.table_columns(["A", "B"])])
    lines = csv.strip().splitlines()
    assert lines[0].startswith("item,gold spans,disagreement,A · F1_IoU")
    assert len(lines) == 3 and "OCR; Object" in lines[1]
    records = [json.loads(line) for line in ff.to_jsonl(chosen).splitlines()]
    assert [r["item"] for r in records] == ["i2", "i3"]
    assert records[0]["gold types"] == ["OCR", "Object"]
    assert records[0]["detectors"]["C"] == {"F1_IoU": 0.0, "F1_M": 0.0, "FP": 0}
    assert records[0]["format failures"] == ["C"]
    assert ff.to_jsonl(chosen.iloc[:0]) == ""


def test_jsonl_writes_missing_disagreement_as_null() -> None:
    evaluation = make_evaluation(("A",))
    rows = ff.detector_rows(evaluation)
    record = json.loads(ff.to_jsonl(ff.item_table(evaluation, rows)).splitlines()[0])
    assert record["disagreement"] is None and not math.isnan(record["detectors"]["A"]["F1_IoU"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "gone"]), st.sampled_from(["d1", "d2", "d3"]), st.booleans()
        ),
        max_size=30,
    )
)
def test_names_per_item_are_the_chosen_rows_detectors_in_row_order(rows: list[tuple[str, str, bool]]) -> None:
    """Each item's detectors where the mask holds, in the order of the rows; an item no row names gets
    none, and rows of an item not in the index ("gone") are left out."""
    frame = pd.DataFrame(
        {"external_id": [r[0] for r in rows], "detector": [r[1] for r in rows]}, dtype="string"
    )
    mask = pd.Series([r[2] for r in rows], dtype=bool)
    index = pd.Index(["c", "a", "b"], name="external_id")
    expected = {ext: tuple(d for e, d, chosen in rows if e == ext and chosen) for ext in index}
    at = index.get_indexer(frame["external_id"].to_numpy(dtype=object))
    got = ff._names(at, frame["detector"].to_numpy(dtype=object), mask.to_numpy(dtype=bool), len(index))
    assert got == [expected[ext] for ext in index]


def test_misses_equal_what_every_detectors_own_matching_finds() -> None:
    # Many items of crowded random spans: the misses preset (which matches each Y only where a gold span
    # is still open) selects exactly the items of gold spans some Y finds and X does not.
    rng = np.random.default_rng(5)
    names = ("A", "B", "C", "D", "E")
    n = 80
    items = ItemIndex(
        ids=list(range(1, n + 1)),
        external_ids=[f"r{k}" for k in range(n)],
        subsets=["s"] * n,
        source_models=["m"] * n,
        task_types=["image-to-text"] * n,
        responses=[TEXT] * n,
    )
    views = (
        LabelSetView(1, 1, "gold", "gold", None, None, None),
        *(LabelSetView(k + 2, 1, "detector", name, None, "v1", "vanilla") for k, name in enumerate(names)),
    )
    rows = [
        (view.id, item_id, *chars(int(a), int(min(a + rng.integers(1, 4), 10))), None)
        for view in views
        for item_id in items.ids
        for a in rng.integers(0, 9, size=int(rng.integers(0, 5)))
    ]
    columns = SpanColumns(
        *(np.array([row[k] for row in rows], dtype=np.int64) for k in range(4)),
        np.array([row[4] for row in rows] + [None], dtype=object)[:-1],
    )
    evaluation = dataset_spans(items, views, columns, {})
    rows_, table = ff.failure_tables(evaluation)
    for x in names:
        for y in (ff.ANY, *names):
            if y == x:
                continue
            others = [d for d in names if d != x and y in (ff.ANY, d)]
            missed = np.setdiff1d(
                ff.found_gold_spans(evaluation, others),
                ff.found_gold_spans(evaluation, [x]),
                assume_unique=True,
            )
            expected = {f"r{i}" for i in evaluation.gold_packed.item_of_span[missed].tolist()}
            query = ff.FinderQuery(preset="misses", detector=x, other=y)
            got = ff.preset_mask(query, rows_, table, evaluation)
            assert set(got.index[got.to_numpy()]) == expected
            assert 0 < len(expected) < n  # neither nothing nor everything: the test can tell


def test_item_table_places_each_detectors_scores_as_aligning_on_the_items_did() -> None:
    """The per-detector columns are put in place by item position; they equal what aligning each
    detector's rows on the external ids gave (the earlier way), dtypes too: a run given only some items
    (here C, given i0 and i3) has NaN on the others, a run given every item keeps whole counts."""
    from dataclasses import replace

    evaluation = make_evaluation()
    c = next(d for d in evaluation.detectors if d.name == "C")
    partial = replace(evaluation, given={c.id: np.array([True, False, False, True])})
    rows = ff.detector_rows(partial)
    table = ff.item_table(partial, rows)
    for detector, part in rows.groupby("detector", sort=False):
        part = part.set_index("external_id")
        for measure, column in (("F1_IoU", "f1_iou"), ("F1_M", "f1_m"), ("FP", "n_false_positives")):
            expected = pd.DataFrame(index=table.index)
            expected["x"] = part[column]
            pd.testing.assert_series_equal(
                table[ff.detector_column(str(detector), measure)], expected["x"], check_names=False
            )
    assert table["C · FP"].isna().tolist() == [False, True, True, False]
    assert table["A · FP"].dtype == np.int64
    assert table["gold types"].tolist() == [("Object",), (), ("OCR", "Object"), ("Color",)]
