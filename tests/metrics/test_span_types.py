"""Per-type detection rate (MHALO Figure 5) and per-type F1_IoU for typed detectors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import f1_iou, f1_iou_by_type
from tests.metrics.metric_reference import iou, span_strategy

GOLDS = [[(0, 2), (5, 6)], [(1, 3)], []]
GOLD_TYPES = [["object", "number"], ["object"], []]


def test_untyped_detector_gets_recall_per_type():
    preds = [[(1, 2)], [(7, 9)], [(0, 1)]]
    result = f1_iou_by_type(preds, GOLDS, GOLD_TYPES)
    assert list(result) == ["object", "number"]
    assert result["object"] == {"n_gold": 2, "recall": 0.5, "f1_iou": None, "n_items": None}
    assert result["number"]["recall"] == 0.0


def test_typed_detector_gets_f1_iou_per_type():
    preds = [[(0, 2), (5, 6)], [(1, 3)], [(0, 1)]]
    pred_types = [["object", "object"], ["number"], ["color"]]
    result = f1_iou_by_type(preds, GOLDS, GOLD_TYPES, pred_types)
    # object: item 0 -> pred {(0,2),(5,6)} vs gold {(0,2)} = 2/3; item 1 -> {} vs {(1,3)} = 0.
    assert result["object"]["f1_iou"] == pytest.approx((2 / 3 + 0) / 2)
    assert result["object"]["n_items"] == 2
    # number: item 0 -> {} vs {(5,6)} = 0; item 1 -> {(1,3)} vs {} = 0.
    assert result["number"]["f1_iou"] == 0.0
    # Recall ignores the predicted type: every gold span was hit by some prediction.
    assert result["object"]["recall"] == 1.0
    assert result["number"]["recall"] == 1.0
    # A type only predicted has no recall but an F1_IoU.
    assert math.isnan(result["color"]["recall"])
    assert result["color"]["f1_iou"] == 0.0


def test_format_failures_detect_nothing():
    preds = [[(0, 2), (5, 6)], [(1, 3)], []]
    result = f1_iou_by_type(preds, GOLDS, GOLD_TYPES, follows_format=[False, True, True])
    assert result["object"]["recall"] == 0.5
    assert result["number"]["recall"] == 0.0


def test_label_counts_must_match_spans():
    with pytest.raises(ValueError, match=r"gold_types\[0\] has 1 labels for 2 spans"):
        f1_iou_by_type([[], [], []], GOLDS, [["object"], ["object"], []])
    with pytest.raises(ValueError, match="pred_types"):
        f1_iou_by_type([[(0, 1)], [], []], GOLDS, GOLD_TYPES, [[], [], []])


typed_items = st.lists(
    st.tuples(
        st.lists(st.tuples(span_strategy, st.sampled_from("ab")), max_size=4),
        st.lists(st.tuples(span_strategy, st.sampled_from("ab")), max_size=4),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(typed_items, st.sampled_from([0.3, 0.5]))
def test_equals_literal_definition(rows, threshold):
    preds = [[s for s, _ in p] for p, _ in rows]
    pred_types = [[t for _, t in p] for p, _ in rows]
    golds = [[s for s, _ in g] for _, g in rows]
    gold_types = [[t for _, t in g] for _, g in rows]
    result = f1_iou_by_type(preds, golds, gold_types, pred_types, threshold)
    for label in "ab":
        gold_of = [[s for s, t in g if t == label] for _, g in rows]
        pred_of = [[s for s, t in p if t == label] for p, _ in rows]
        relevant = [i for i in range(len(rows)) if gold_of[i] or pred_of[i]]
        if not relevant:
            assert label not in result
            continue
        scores = [f1_iou(pred_of[i], gold_of[i], threshold) for i in relevant]
        assert result[label]["f1_iou"] == pytest.approx(sum(scores) / len(scores))
        hits = [any(iou(p, g) >= threshold for p in preds[i]) for i in range(len(rows)) for g in gold_of[i]]
        if hits:
            assert result[label]["recall"] == pytest.approx(sum(hits) / len(hits))


@pytest.mark.parametrize("dtype", [str, object])
def test_flat_gold_labels_with_packed_spans_give_the_same_table(dtype):
    import numpy as np

    from metrics import pack_spans

    preds = [[(0, 2), (5, 6)], [(1, 3)], [(0, 1)]]
    ok = [True, False, True]
    flat = np.array([t for types in GOLD_TYPES for t in types], dtype=dtype)
    listed = f1_iou_by_type(preds, GOLDS, GOLD_TYPES, follows_format=ok)
    packed = f1_iou_by_type(pack_spans(preds), pack_spans(GOLDS), flat, follows_format=ok)
    assert packed == listed and list(packed) == list(listed)
    assert all(type(label) is str for label in packed)
    with pytest.raises(ValueError, match="one label per span"):
        f1_iou_by_type(preds, GOLDS, flat[:-1])
