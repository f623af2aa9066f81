"""AUROC (AlignBench Table 3): Mann-Whitney definition, scikit-learn, groups and bootstrap tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from metrics import AurocTable, auroc, auroc_by_group, auroc_table, ranking
from metrics.ranking import _auroc_from_histograms, _bootstrap_auroc, _dense_rank
from tests.metrics.metric_reference import brute_auroc

labelled_scores = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 6).map(float)), min_size=2, max_size=40
).filter(lambda rows: len({y for y, _ in rows}) == 2)


class TestAuroc:
    def test_ties_count_one_half(self):
        assert auroc([0, 0, 1, 1], [0.1, 0.5, 0.5, 0.9]) == 0.875
        assert auroc([0, 1], [3.0, 3.0]) == 0.5

    def test_perfect_and_inverted(self):
        assert auroc([0, 0, 1], [1, 2, 3]) == 1.0
        assert auroc([1, 1, 0], [1, 2, 3]) == 0.0

    def test_labels_may_be_bools_or_floats(self):
        assert auroc([False, True], [0.0, 1.0]) == 1.0
        assert auroc(np.array([0.0, 1.0]), [0.0, 1.0]) == 1.0

    @pytest.mark.parametrize(
        ("labels", "scores", "message"),
        [
            ([1, 1], [0.1, 0.2], "both classes"),
            ([0, 0], [0.1, 0.2], "both classes"),
            ([], [], "both classes"),
            ([0, 2], [0.1, 0.2], "only 0 and 1"),
            ([0, 1], [0.1], "same length"),
            ([0, 1], [0.1, float("nan")], "NaN"),
            (["0", "1"], [0.1, 0.2], "0 and 1"),
        ],
    )
    def test_invalid_input(self, labels, scores, message):
        with pytest.raises(ValueError, match=message):
            auroc(labels, scores)

    @settings(max_examples=100, deadline=None)
    @given(labelled_scores)
    def test_equals_pair_counting_and_scikit_learn(self, rows):
        labels = [y for y, _ in rows]
        scores = [s for _, s in rows]
        value = auroc(labels, scores)
        assert value == pytest.approx(brute_auroc(labels, scores), abs=1e-12)
        assert value == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)

    @settings(max_examples=100, deadline=None)
    @given(labelled_scores, st.randoms(use_true_random=False))
    def test_symmetries(self, rows, rnd):
        labels = np.array([y for y, _ in rows])
        scores = np.array([s for _, s in rows])
        value = auroc(labels, scores)
        assert auroc(1 - labels, scores) == pytest.approx(1 - value, abs=1e-12)
        assert auroc(labels, -scores) == pytest.approx(1 - value, abs=1e-12)
        assert auroc(labels, np.exp(scores / 3)) == value  # only the order of the scores matters
        perm = list(range(len(rows)))
        rnd.shuffle(perm)
        assert auroc(labels[perm], scores[perm]) == value

    def test_large_input_is_exact(self):
        rng = np.random.default_rng(1)
        labels = rng.integers(0, 2, 200_000)
        scores = rng.integers(0, 101, 200_000).astype(float) + labels * 3
        assert auroc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


class TestGroups:
    def test_matches_per_group_auroc_and_keeps_first_appearance_order(self):
        rng = np.random.default_rng(0)
        labels = rng.integers(0, 2, 300)
        scores = rng.normal(size=300) + labels
        groups = rng.choice(["llava", "gpt4o", "cogvlm"], 300)
        result = auroc_by_group(labels, scores, groups)
        assert list(result) == list(dict.fromkeys(groups.tolist()))
        for name, value in result.items():
            mask = groups == name
            assert value == pytest.approx(roc_auc_score(labels[mask], scores[mask]), abs=1e-12)

    def test_group_with_one_class_is_nan(self):
        result = auroc_by_group([0, 1, 1, 1], [0.1, 0.9, 0.3, 0.4], ["a", "a", "b", "b"])
        assert result["a"] == 1.0
        assert math.isnan(result["b"])

    def test_groups_must_align(self):
        with pytest.raises(ValueError, match="groups"):
            auroc_by_group([0, 1], [0.1, 0.2], ["a"])


def _table_data(seed: int = 0, n: int = 600):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    groups = rng.choice(["sharegpt", "llava", "gpt4o"], n)
    scores = {
        "qwen": np.round(rng.normal(size=n) + labels, 1),
        "gpt4o": rng.integers(0, 101, n).astype(float) + 40 * labels * (groups != "gpt4o"),
    }
    return labels, scores, groups


class TestAurocTable:
    def test_point_estimates_equal_grouped_auroc(self):
        labels, scores, groups = _table_data()
        table = auroc_table(labels, scores, groups, n_resamples=0)
        assert isinstance(table, AurocTable)
        assert table.detectors == ["qwen", "gpt4o"]
        for i, name in enumerate(table.detectors):
            expected = auroc_by_group(labels, scores[name], groups)
            assert table.auroc[i].tolist() == [expected[g] for g in table.groups]
        assert np.isnan(table.low).all()
        assert (table.n_pos + table.n_neg).sum() == labels.size

    def test_intervals_are_reproducible_and_bracket_the_estimate(self):
        labels, scores, groups = _table_data()
        first = auroc_table(labels, scores, groups, n_resamples=300, seed=7)
        again = auroc_table(labels, scores, groups, n_resamples=300, seed=7)
        other = auroc_table(labels, scores, groups, n_resamples=300, seed=8)
        np.testing.assert_array_equal(first.low, again.low)
        assert not np.array_equal(first.low, other.low)
        assert (first.low <= first.auroc).all() and (first.auroc <= first.high).all()
        assert (first.high - first.low < 0.3).all()

    def test_a_cells_interval_does_not_depend_on_the_other_cells(self):
        labels, scores, groups = _table_data()
        both = auroc_table(labels, scores, groups, n_resamples=200, seed=3)
        keep = groups != "llava"
        alone = auroc_table(
            labels[keep], {"gpt4o": scores["gpt4o"][keep]}, groups[keep], n_resamples=200, seed=3
        )
        for j, group in enumerate(alone.groups):
            k = both.groups.index(group)
            assert (alone.low[0, j], alone.high[0, j]) == (both.low[1, k], both.high[1, k])
        np.testing.assert_array_equal(
            both.low, auroc_table(labels, scores, groups, n_resamples=200, seed=3).low
        )

    def test_self_preference_normalisation(self):
        labels, scores, groups = _table_data()
        table = auroc_table(labels, scores, groups, n_resamples=0)
        normalized = table.normalized()
        np.testing.assert_allclose(normalized.mean(axis=1), 1.0)
        # The "gpt4o" detector cannot tell its own captions apart: its diagonal cell sits below 1.
        assert normalized[1, table.groups.index("gpt4o")] < 0.8

    def test_records(self):
        labels, scores, groups = _table_data()
        records = auroc_table(labels, scores, groups, n_resamples=0).to_records()
        assert len(records) == 6
        assert set(records[0]) == {"detector", "group", "auroc", "low", "high", "n_pos", "n_neg"}

    def test_group_without_both_classes_stays_nan(self):
        table = auroc_table([0, 1, 1, 1], {"d": [0.1, 0.9, 0.3, 0.4]}, ["a", "a", "b", "b"], n_resamples=50)
        assert np.isnan(table.auroc[0, 1]) and np.isnan(table.low[0, 1])
        assert table.auroc[0, 0] == 1.0

    def test_validation(self):
        with pytest.raises(ValueError, match="empty"):
            auroc_table([0, 1], {}, ["a", "a"])
        with pytest.raises(ValueError, match="entries"):
            auroc_table([0, 1], {"d": [0.1]}, ["a", "a"])
        with pytest.raises(ValueError, match="n_resamples"):
            auroc_table([0, 1], {"d": [0.1, 0.2]}, ["a", "a"], n_resamples=-1)
        with pytest.raises(ValueError, match="confidence"):
            auroc_table([0, 1], {"d": [0.1, 0.2]}, ["a", "a"], confidence=95)


@settings(max_examples=30, deadline=None)
@given(labelled_scores, st.integers(0, 2**32 - 1))
def test_resampling_items_gives_the_auroc_of_each_resample(rows, seed):
    labels = np.array([y for y, _ in rows], dtype=np.int8)
    scores = np.array([s for _, s in rows])
    original = ranking._MULTINOMIAL_ITEMS_PER_CELL
    ranking._MULTINOMIAL_ITEMS_PER_CELL = 10**9  # force the item-resampling path
    try:
        boot = _bootstrap_auroc(labels, *_dense_rank(scores), 20, np.random.default_rng(seed))
    finally:
        ranking._MULTINOMIAL_ITEMS_PER_CELL = original
    indices = np.random.default_rng(seed).integers(0, labels.size, size=(20, labels.size))
    for value, idx in zip(boot, indices, strict=True):
        y = labels[idx]
        if y.min() == y.max():
            assert math.isnan(value)
        else:
            assert value == pytest.approx(brute_auroc(y.tolist(), scores[idx].tolist()), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=8))
def test_auroc_from_a_histogram(counts):
    hist = np.array([[[neg, pos] for neg, pos in counts]])
    labels = [y for neg, pos in counts for y in [0] * neg + [1] * pos]
    scores = [k for k, (neg, pos) in enumerate(counts) for _ in range(neg + pos)]
    value = _auroc_from_histograms(hist)[0]
    if len(set(labels)) < 2:
        assert math.isnan(value)
    else:
        assert value == pytest.approx(brute_auroc(labels, scores))


def test_multinomial_histograms_have_the_bootstrap_distribution(monkeypatch):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 2000).astype(np.int8)
    scores = np.clip(np.round(rng.normal(5 + labels, 2)), 0, 10)
    key, n_keys = _dense_rank(scores)
    assert 2 * n_keys * ranking._MULTINOMIAL_ITEMS_PER_CELL <= labels.size  # the multinomial path
    fast = _bootstrap_auroc(labels, key, n_keys, 4000, np.random.default_rng(0))
    monkeypatch.setattr(ranking, "_MULTINOMIAL_ITEMS_PER_CELL", 10**9)  # force the item-resampling path
    slow = _bootstrap_auroc(labels, key, n_keys, 4000, np.random.default_rng(1))
    assert fast.mean() == pytest.approx(slow.mean(), abs=0.002)
    assert fast.std() == pytest.approx(slow.std(), rel=0.1)
    assert fast.mean() == pytest.approx(auroc(labels, scores), abs=0.002)


def test_bootstrap_draws_skip_empty_cells_without_changing_a_number():
    # Scores 0-100 with the positives on few of them: most (score, class) cells are empty, the last is not.
    rng = np.random.default_rng(3)
    labels = (rng.random(5000) < 0.1).astype(np.int8)
    scores = np.where(labels == 1, rng.integers(0, 30, 5000), rng.integers(0, 101, 5000)).astype(float)
    key, n_keys = _dense_rank(scores)
    got = _bootstrap_auroc(labels, key, n_keys, 400, np.random.default_rng(11))
    # The reference draws every cell, empty or not, from an identically seeded generator.
    shares = np.bincount(key * 2 + labels, minlength=2 * n_keys) / labels.size
    assert (shares == 0).sum() > 10
    hist = np.random.default_rng(11).multinomial(labels.size, shares, size=400)
    assert got.tolist() == _auroc_from_histograms(hist.reshape(400, n_keys, 2)).tolist()


whole_or_not = st.one_of(
    st.integers(-70_000, 70_000).map(float),
    st.sampled_from([0.0, -0.0, 0.5, -2.5, 1.5, 1.5 + 2**-52, 1e300, 2.0**60, math.inf, -math.inf, math.nan]),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), whole_or_not), min_size=2, max_size=40).filter(
        lambda rows: len({y for y, _ in rows}) == 2 and not any(math.isnan(s) for _, s in rows)
    )
)
def test_counting_whole_number_scores_gives_the_ranks_auroc(rows):
    y = np.array([r[0] for r in rows], dtype=np.int8)
    s = np.array([r[1] for r in rows], dtype=np.float64)
    n_pos = int(y.sum())
    assert ranking._mann_whitney(y, s, n_pos, y.size - n_pos) == ranking._auroc_sorted(
        y, s, n_pos, y.size - n_pos
    )


@settings(max_examples=400, deadline=None)
@given(st.lists(whole_or_not, min_size=1, max_size=40), st.integers(-3, 3))
def test_dense_ranks_are_uniques_inverse_counted_or_sorted(values, shift):
    s = np.array(values, dtype=np.float64) + shift
    uniques, inverse = np.unique(s, return_inverse=True)
    key, n_keys = _dense_rank(s)
    assert key.tolist() == inverse.tolist() and n_keys == uniques.size


def test_scores_0_to_100_are_counted_not_sorted(monkeypatch):
    def no_sort(*args, **kwargs):
        raise AssertionError("sorted")

    monkeypatch.setattr(ranking, "_auroc_sorted", no_sort)
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 500)
    s = rng.integers(0, 101, 500).astype(float)
    assert auroc(y, s) == brute_auroc(y.tolist(), s.tolist())
    assert ranking._whole_number_keys(np.array([0.0, 0.5])) is None  # a fraction apart: sorted
    # 1.5 + 2**-52 minus -2.5 rounds to 4.0, as 1.5 does: two scores must not share a key
    assert ranking._whole_number_keys(np.array([-2.5, 1.5, 1.5 + 2**-52])) is None
    assert ranking._whole_number_keys(np.array([-2.5, 1.5]))[1] == 5
    assert ranking._whole_number_keys(np.array([0.0, float(1 << 20)])) is None  # a range too wide to count
    assert ranking._whole_number_keys(np.array([0.0, 5000.0])) is None  # wider than two entries need


@pytest.mark.parametrize(("n", "n_values"), [(40, 13), (300, 13), (3000, 4), (3000, 40)])
@pytest.mark.parametrize("seed", [0, 7])
def test_tables_counted_per_group_equal_cells_picked_out_one_by_one(n, n_values, seed):
    """Whole-number scores are counted per group in one pass; scores a fraction apart (the same order,
    so the same ranks) are picked out cell by cell: the same points and intervals, to the last bit,
    whether the resamples are drawn as histograms (many entries per score) or entry by entry."""
    rng = np.random.default_rng(seed)
    y, s, g = rng.integers(0, 2, n), rng.integers(0, n_values, n), rng.integers(0, 4, n)
    counted = auroc_table(y, {"d": s.astype(float)}, g, n_resamples=50, seed=seed)
    picked = auroc_table(y, {"d": s * 1.5 + 0.25}, g, n_resamples=50, seed=seed)
    for field in ("auroc", "low", "high", "n_pos", "n_neg"):
        np.testing.assert_array_equal(getattr(counted, field), getattr(picked, field))
