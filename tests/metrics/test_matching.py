"""The one matching engine: as many pairs as F1_IoU counts (checked by brute force and against the batched
path), the most IoU among those, each span's closest partner, and the tokens of a character span."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import f1_iou, f1_iou_per_item, span_iou, token_spans
from metrics.matching import iou_matrix, match_spans, tokens_of_char_span
from tests.metrics.metric_reference import brute_f1_iou

spans = st.lists(
    st.tuples(st.integers(0, 25), st.integers(1, 8)).map(lambda p: (p[0], p[0] + p[1])), max_size=7
)
thresholds = st.sampled_from([0.0, 0.1, 0.2, 0.25, 1 / 3, 0.4, 0.5, 2 / 3, 0.75, 0.9, 1.0])


def _is_matching(result, pred, gold) -> None:
    preds = [pair.pred for pair in result.pairs]
    golds = [pair.gold for pair in result.pairs]
    assert len(set(preds)) == len(preds) and len(set(golds)) == len(golds), "one-to-one"
    for pair in result.pairs:
        assert pair.iou == pytest.approx(span_iou(pred[pair.pred], gold[pair.gold]))
        assert pair.iou >= result.threshold


@settings(max_examples=400, deadline=None)
@given(spans, spans, thresholds)
def test_matches_as_many_pairs_as_f1_iou_counts(pred, gold, threshold) -> None:
    result = match_spans(pred, gold, threshold)
    _is_matching(result, pred, gold)
    # F1_IoU = 2M / (|pred| + |gold|), so M is recovered from the library's score.
    implied = f1_iou(pred, gold, threshold) * (len(pred) + len(gold)) / 2 if pred or gold else 0
    assert result.n_matched == round(implied)
    assert result.f1 == pytest.approx(f1_iou(pred, gold, threshold))
    # f1_iou derives from this engine, so hold it to an independent count and to the batched path too.
    assert result.f1 == pytest.approx(brute_f1_iou(pred, gold, threshold))
    assert result.f1 == pytest.approx(f1_iou_per_item([pred], [gold], threshold)[0])
    assert sorted(result.false_positives + tuple(p.pred for p in result.pairs)) == list(range(len(pred)))
    assert sorted(result.missed + tuple(p.gold for p in result.pairs)) == list(range(len(gold)))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 4)).map(lambda p: (p[0], p[0] + p[1])), max_size=4),
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 4)).map(lambda p: (p[0], p[0] + p[1])), max_size=4),
    thresholds,
)
def test_among_maximum_matchings_it_keeps_the_most_iou(pred, gold, threshold) -> None:
    result = match_spans(pred, gold, threshold)
    best = (0, 0.0)
    for size in range(min(len(pred), len(gold)), 0, -1):
        for chosen in itertools.permutations(range(len(gold)), size):
            for rows in itertools.combinations(range(len(pred)), size):
                ious = [span_iou(pred[r], gold[c]) for r, c in zip(rows, chosen, strict=True)]
                if all(v >= threshold for v in ious):
                    best = max(best, (size, sum(ious)))
        if best[0]:
            break
    assert result.n_matched == best[0]
    assert sum(p.iou for p in result.pairs) == pytest.approx(best[1])


@given(spans, spans)
def test_best_overlap_of_each_span(pred, gold) -> None:
    result = match_spans(pred, gold)
    for i, (partner, iou) in enumerate(result.best_for_pred):
        expected = max((span_iou(pred[i], g) for g in gold), default=0.0)
        assert iou == pytest.approx(expected)
        assert (partner is None) == (expected == 0)
    for j, (partner, iou) in enumerate(result.best_for_gold):
        expected = max((span_iou(p, gold[j]) for p in pred), default=0.0)
        assert iou == pytest.approx(expected)
        assert (partner is None) == (expected == 0)


def test_mhalo_appendix_e_toothbrush() -> None:
    # "A toothbrush is being washed in the sink." Gold: "A toothbrush" = tokens [0, 2).
    gold = [(0, 2)]
    assert match_spans([(0, 2)], gold).n_matched == 1  # HALODET-4B
    gemini = match_spans([(1, 2), (4, 5)], gold)  # "toothbrush", "washed"
    assert [(p.pred, p.gold, p.iou) for p in gemini.pairs] == [(0, 0, 0.5)]
    assert gemini.false_positives == (1,) and gemini.missed == ()
    assert gemini.f1 == pytest.approx(2 / 3)
    claude = match_spans([(0, 5)], gold)  # "A toothbrush is being washed": IoU 2/5
    assert claude.pairs == () and claude.false_positives == (0,) and claude.missed == (0,)
    assert claude.best_for_pred == ((0, 0.4),)


def test_a_contested_gold_span_goes_where_it_overlaps_most() -> None:
    # Both predictions qualify for the one gold span; the exact copy should win it.
    result = match_spans([(0, 3), (0, 2)], [(0, 2)])
    assert [(p.pred, p.gold) for p in result.pairs] == [(1, 0)]
    assert result.partner_of_pred(0) is None and result.partner_of_gold(0).pred == 1


def test_empty_inputs() -> None:
    assert match_spans([], []).f1 == 1.0
    assert match_spans([(0, 1)], []).false_positives == (0,)
    assert match_spans([], [(0, 1)]).missed == (0,)
    assert iou_matrix([], [(0, 1)]).shape == (0, 1)


@pytest.mark.parametrize("bad", [[(2, 2)], [(3, 1)], [(-1, 2)]])
def test_bad_spans_are_refused(bad) -> None:
    with pytest.raises(ValueError):
        match_spans(bad, [(0, 1)])


def test_threshold_must_be_a_fraction() -> None:
    with pytest.raises(ValueError):
        match_spans([(0, 1)], [(0, 1)], threshold=1.5)


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("A toothbrush is being washed", (2, 12)),
        ("A toothbrush is being washed", (3, 14)),  # partial tokens count whole
        ("A toothbrush is being washed", (12, 13)),  # whitespace only
        ("Café 🙂 über  日本", (5, 13)),
        ("x", (0, 1)),
    ],
)
def test_tokens_of_char_span_agrees_with_the_metrics_tokenizer(text: str, span: tuple[int, int]) -> None:
    expected = token_spans(text, [span])
    assert tokens_of_char_span(text, *span) == (expected[0] if expected else None)


def test_empty_character_span_has_no_tokens() -> None:
    assert tokens_of_char_span("a b", 1, 1) is None
