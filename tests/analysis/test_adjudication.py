"""Disagreement and the promotion rules on hand-made labels (pure: no store)."""

from __future__ import annotations

import itertools

import pytest

from analysis.adjudication import (
    DISAGREEMENT,
    RULES,
    Rule,
    majority_units,
    rating_disagreement,
    span_clusters,
    span_disagreement,
    unit_disagreement,
)

# Tokens: The(0) red(1) cube(2) sits(3) on(4) a(5) blue(6) table(7) near(8) the(9) window.(10)
TEXT = "The red cube sits on a blue table near the window."
RED_CUBE = (4, 12)  # "red cube": tokens 1-3
THE_RED_CUBE = (0, 12)  # "The red cube": tokens 0-3, IoU 2/3 with "red cube"
RED = (4, 7)  # "red": token 1, IoU 1/2 with "red cube"
BLUE_TABLE = (23, 33)  # "blue table": tokens 6-8
NAMES = {0: "sentence 1", 1: "sentence 2", 2: "sentence 3"}


def test_the_fixture_offsets_quote_what_they_say() -> None:
    assert [TEXT[s:e] for s, e in (RED_CUBE, THE_RED_CUBE, RED, BLUE_TABLE)] == [
        "red cube",
        "The red cube",
        "red",
        "blue table",
    ]


# ----------------------------------------------------------------------------------- disagreement


def test_span_disagreement_is_one_minus_mean_pairwise_f1() -> None:
    same = {1: [(*RED_CUBE, "Color")], 2: [(*RED_CUBE, "Object")]}
    assert span_disagreement(TEXT, same) == 0.0  # types do not enter F1_IoU
    # a–b: F1 = 2·1/(1+2) = 2/3; a–c: 0 (disjoint); b–c: 2·1/(2+1) = 2/3 → mean 4/9
    votes = {1: [(*RED_CUBE, None)], 2: [(*RED_CUBE, None), (*BLUE_TABLE, None)], 3: [(*BLUE_TABLE, None)]}
    assert span_disagreement(TEXT, votes) == pytest.approx(1 - 4 / 9)
    # "red" against "red cube": token IoU 1/2 — a match at 0.5, none at 0.6
    loose = {1: [(*RED, None)], 2: [(*RED_CUBE, None)]}
    assert span_disagreement(TEXT, loose, 0.5) == 0.0
    assert span_disagreement(TEXT, loose, 0.6) == 1.0
    assert span_disagreement(TEXT, {1: [], 2: []}) == 0.0  # both found nothing: they agree
    assert span_disagreement(TEXT, {1: [(*RED, None)]}) == 0.0  # one annotator: nothing to compare


def test_unit_disagreement_counts_units_not_labelled_alike() -> None:
    votes = {
        1: {0: ("correct", None), 1: ("incorrect", "Object"), 2: ("correct", None)},
        2: {0: ("correct", None), 1: ("incorrect", "Color"), 2: ("correct", None)},
        3: {0: ("correct", None), 1: ("incorrect", "Object")},  # left sentence 3 unlabelled
    }
    # sentence 1 alike; sentence 2 differs in the error type; sentence 3 has a missing label → 2 of 3
    assert unit_disagreement(votes) == pytest.approx(2 / 3)
    assert DISAGREEMENT.units({1: {0: ("yes", None)}, 2: {0: ("yes", None)}}) == 0.0


def test_rating_disagreement_is_the_spread_on_the_scale() -> None:
    seg, whole, missing = (7, 0, 4), (7, -1, -1), (7, 5, 9)
    scales = {seg: (1.0, 4.0), whole: (1.0, 4.0), missing: (1.0, 4.0)}
    votes = {
        1: {seg: ((4.0, None), None), whole: ((None, True), None), missing: ((2.0, None), None)},
        2: {seg: ((2.0, None), None), whole: ((None, True), None)},
        3: {seg: ((3.0, None), None), whole: ((None, False), None), missing: ((2.0, None), None)},
    }
    # seg: (4 − 2) / (4 − 1) = 2/3; whole: judgments differ → 1; missing: rater 2 left it → 1
    assert rating_disagreement(votes, scales) == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert DISAGREEMENT.ratings({1: {seg: ((3.0, None), None)}, 2: {seg: ((3.0, None), None)}}, scales) == 0


# ---------------------------------------------------------------------------------- span clusters


def test_clusters_match_by_token_iou_and_take_the_commonest_offsets() -> None:
    votes = {
        1: [(*RED_CUBE, "Color")],
        2: [(*RED_CUBE, "Color"), (*BLUE_TABLE, "Object")],
        3: [(*THE_RED_CUBE, "Object")],
    }
    clusters = span_clusters(TEXT, votes, {})
    assert [(c.label, c.annotators, c.support) for c in clusters] == [
        ((*RED_CUBE, "Color"), (1, 2, 3), 3.0),  # two of three gave exactly "red cube"; Color 2 : Object 1
        ((*BLUE_TABLE, "Object"), (2,), 1.0),
    ]


def test_clusters_do_not_depend_on_who_is_who() -> None:
    spans = [
        [(*RED_CUBE, "Color")],
        [(*THE_RED_CUBE, "Color"), (*BLUE_TABLE, None)],
        [(*RED, "Color"), (*BLUE_TABLE, "Object")],
    ]
    results = set()
    for order in itertools.permutations(range(3)):
        votes = {annotator: spans[k] for annotator, k in zip((5, 9, 2), order, strict=True)}
        results.add(tuple((c.label, c.support) for c in span_clusters(TEXT, votes, {})))
    assert len(results) == 1


def test_offset_ties_go_to_the_earliest_then_the_shortest() -> None:
    # "red cube" and "The red cube" once each: neither is commoner, so the earlier one
    clusters = span_clusters(TEXT, {1: [(*RED_CUBE, None)], 2: [(*THE_RED_CUBE, None)]}, {})
    assert [c.label[:2] for c in clusters] == [THE_RED_CUBE]
    # same start: the shorter one
    clusters = span_clusters(TEXT, {1: [(4, 12, None)], 2: [(4, 7, None)]}, {})
    assert [c.label[:2] for c in clusters] == [(4, 7)]


def test_each_annotator_counts_once_per_cluster() -> None:
    # annotator 1 marks "red" and "red cube": only one of them can join annotator 2's "red cube"
    clusters = span_clusters(TEXT, {1: [(*RED, None), (*RED_CUBE, None)], 2: [(*RED_CUBE, None)]}, {})
    assert sorted((c.label[:2], c.annotators) for c in clusters) == [(RED, (1,)), (RED_CUBE, (1, 2))]


def test_a_span_of_only_whitespace_stays_alone() -> None:
    clusters = span_clusters("a  b", {1: [(1, 3, None)], 2: [(1, 3, None)]}, {})
    assert [c.annotators for c in clusters] == [(1,), (2,)]


# ------------------------------------------------------------------------------------------ rules


def test_majority_of_units_needs_more_than_half_of_the_weight() -> None:
    votes = {
        1: {0: ("correct", None), 1: ("incorrect", "Object"), 2: ("correct", None)},
        2: {0: ("incorrect", None), 1: ("incorrect", "Color"), 2: ("correct", None)},
        3: {0: ("unknown", None), 1: ("incorrect", "Object")},
    }
    decided, undecided = majority_units(votes, {}, NAMES)
    # sentence 1: three verdicts, 1/3 each → none; sentence 2: incorrect 3/3, Object 2 : Color 1;
    # sentence 3: correct 2/3 (annotator 3 abstains but counts in the total)
    assert decided == {1: ("incorrect", "Object"), 2: ("correct", None)}
    assert undecided == {0: "no weighted majority on sentence 1"}
    # with annotator 1 weighing 3 of 5, "correct" wins sentence 1 and annotator 2's "Color" loses to "Object"
    weighted, _ = majority_units(votes, {1: (3.0, True)}, NAMES)
    assert weighted[0] == ("correct", None)


def test_an_exact_half_is_a_tie() -> None:
    votes = {1: {0: ("yes", None)}, 2: {0: ("no", "relation")}}
    assert RULES["majority"].units("triplets", votes, {}, {0: "triplet 1"}) == (
        None,
        "no weighted majority on triplet 1",
    )
    # weights 0.1 + 0.2 against 0.3: a tie despite the rounding of the sum
    three = {1: {0: ("yes", None)}, 2: {0: ("yes", None)}, 3: {0: ("no", None)}}
    weights = {1: (0.1, True), 2: (0.2, True), 3: (0.3, True)}
    assert RULES["majority"].units("triplets", three, weights, {})[0] is None


def test_tied_details_send_the_unit_to_review() -> None:
    votes = {1: {0: ("hallucination", "object")}, 2: {0: ("hallucination", "attribute")}}
    assert RULES["majority"].units("claims", votes, {}, {0: "claim 1"}) == (
        None,
        "the details given for claim 1 tie",
    )


def test_unanimity_wants_every_label_alike() -> None:
    agreed = {1: {0: ("correct", None)}, 2: {0: ("correct", None)}, 3: {0: ("correct", None)}}
    assert RULES["unanimity"].units("sentences", agreed, {}, NAMES) == ({0: ("correct", None)}, None)
    partial = {**agreed, 3: {}}
    assert RULES["unanimity"].units("sentences", partial, {}, NAMES)[1] == (
        "the annotators' labels of sentence 1 differ"
    )


def test_alignbench_reviews_what_a_trusted_annotator_or_two_annotators_flag() -> None:
    votes = {
        1: {0: ("correct", None)},
        2: {0: ("correct", None)},
        3: {0: ("incorrect", "Object")},
    }
    rule = RULES["alignbench"]
    assert rule.units("sentences", votes, {}, NAMES) == (
        None,
        "a trusted annotator labelled sentence 1 “incorrect”",
    )
    # an untrusted annotator alone is outvoted, as under majority
    untrusted = {3: (1.0, False)}
    assert rule.units("sentences", votes, untrusted, NAMES) == ({0: ("correct", None)}, None)
    # two untrusted annotators flagging it send it to review even though they are the majority
    two = {1: {0: ("incorrect", None)}, 2: {0: ("incorrect", None)}, 3: {0: ("correct", None)}}
    nobody = {a: (1.0, False) for a in two}
    assert rule.units("sentences", two, nobody, NAMES)[1] == "two annotators labelled sentence 1 “incorrect”"
    assert RULES["majority"].units("sentences", two, nobody, NAMES)[0] == {0: ("incorrect", None)}
    # ratings have nothing to flag: the rule is majority there
    seg = (1, 0, 4)
    ratings = {a: {seg: ((3.0, None), None)} for a in (1, 2, 3)}
    assert rule.units("ratings", ratings, {}, {}) == ({seg: ((3.0, None), None)}, None)


def test_span_rules() -> None:
    votes = {
        1: [(*RED_CUBE, "Color")],
        2: [(*RED_CUBE, "Color"), (*BLUE_TABLE, "Object")],
        3: [(*THE_RED_CUBE, "Object")],
    }
    assert RULES["majority"].spans(TEXT, votes, {}) == ([(*RED_CUBE, "Color")], None)
    assert (
        RULES["unanimity"].spans(TEXT, votes, {})[1] == "the annotators' spans do not all match one another"
    )
    assert RULES["alignbench"].spans(TEXT, votes, {})[1] == (
        "a trusted annotator marked span “blue table” (23–33), which the majority left out"
    )
    assert RULES["alignbench"].spans(TEXT, votes, {2: (1.0, False)}) == ([(*RED_CUBE, "Color")], None)
    agreed = {a: [(*RED_CUBE, "Color")] for a in (1, 2, 3)}
    for rule in RULES.values():
        assert rule.spans(TEXT, agreed, {}) == ([(*RED_CUBE, "Color")], None)
    nothing: dict[int, list[tuple[int, int, str | None]]] = {1: [], 2: [], 3: []}
    for rule in RULES.values():
        assert rule.spans(TEXT, nothing, {}) == ([], None)


def test_span_ties_send_the_item_to_review() -> None:
    types = {1: [(*RED_CUBE, "Color")], 2: [(*RED_CUBE, "Object")], 3: [(*RED_CUBE, None)]}
    assert RULES["majority"].spans(TEXT, types, {})[1] == "the types given for span “red cube” (4–12) tie"
    assert RULES["unanimity"].spans(TEXT, types, {})[1] == "the types of span “red cube” (4–12) differ"
    half = {1: [(*RED_CUBE, None)], 2: []}
    assert RULES["majority"].spans(TEXT, half, {})[1] == (
        "annotators carrying exactly half of the weight marked span “red cube” (4–12)"
    )


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown rule"):
        Rule("plurality")
