"""Claim and segment scores (MHaluBench section 5.1) against scikit-learn."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from metrics import claim_scores, segment_labels

H, N = "hallucination", "non-hallucination"
labels = st.lists(st.tuples(st.sampled_from([H, N]), st.sampled_from([H, N])), min_size=1, max_size=40)


def test_hand_example():
    gold = [H, H, N, N, N]
    pred = [H, N, N, N, H]
    result = claim_scores(gold, pred)
    assert result[H] == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert result[N]["precision"] == pytest.approx(2 / 3)
    assert result[N]["recall"] == pytest.approx(2 / 3)
    assert result["accuracy"] == pytest.approx(3 / 5)
    assert result["macro_f1"] == pytest.approx((0.5 + 2 / 3) / 2)


def test_macro_f1_is_the_mean_of_class_f1_as_in_mhalubench_table_2():
    # GPT-4V UniHD, segment level: F1 79.60 and 68.10 give Mac.F1 73.85.
    assert round((79.60 + 68.10) / 2, 2) == 73.85


def test_class_never_predicted_or_absent():
    result = claim_scores([H, H], [N, N])
    assert result[H] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert result[N] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert result["accuracy"] == 0.0


@settings(max_examples=100, deadline=None)
@given(labels)
def test_equals_scikit_learn(rows):
    gold = [g for g, _ in rows]
    pred = [p for _, p in rows]
    result = claim_scores(gold, pred)
    p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=[H, N], zero_division=0.0)
    for k, cls in enumerate([H, N]):
        assert result[cls]["precision"] == pytest.approx(p[k])
        assert result[cls]["recall"] == pytest.approx(r[k])
        assert result[cls]["f1"] == pytest.approx(f[k])
    macro = precision_recall_fscore_support(gold, pred, labels=[H, N], average="macro", zero_division=0.0)
    assert result["macro_precision"] == pytest.approx(macro[0])
    assert result["macro_recall"] == pytest.approx(macro[1])
    assert result["macro_f1"] == pytest.approx(macro[2])
    assert result["accuracy"] == pytest.approx(accuracy_score(gold, pred))


@pytest.mark.parametrize(
    ("gold", "pred", "message"),
    [
        ([], [], "no claims"),
        ([H], [H, N], "same length"),
        ([H], ["Hallucination"], r"pred\[0\]"),
        ([1], [H], r"gold\[0\]"),
        (H, H, "sequence"),
    ],
)
def test_invalid_input(gold, pred, message):
    with pytest.raises(ValueError, match=message):
        claim_scores(gold, pred)


def test_segment_labels():
    assert segment_labels([[N, H], [N, N], [], [H]]) == [H, N, N, H]
    assert segment_labels([]) == []
    with pytest.raises(ValueError, match=r"claim_labels_by_segment\[1\]\[0\]"):
        segment_labels([[N], ["yes"]])
