"""Statistics checked against values worked out by hand (see the comments)."""

from __future__ import annotations

import math

import pytest

from osce_tui.batch import stats


def test_holm_bonferroni_hand_values():
    # sorted: .01*4=.04, .03*3=.09, .04*2=.08 -> running max .09, .20*1=.20
    assert stats.holm_bonferroni([0.01, 0.04, 0.03, 0.20]) == pytest.approx([0.04, 0.09, 0.09, 0.20])


def test_holm_caps_at_one_and_rejects_bad_p():
    assert stats.holm_bonferroni([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    with pytest.raises(stats.StatsError):
        stats.holm_bonferroni([1.5])


def test_cohen_kappa_unweighted():
    a = [1, 1, 0, 0, 1, 0, 1, 1, 1, 0]
    b = [1, 0, 0, 0, 1, 1, 1, 1, 1, 0]
    # po = .8, pe = .6*.6 + .4*.4 = .52 -> (.8-.52)/.48
    assert stats.cohen_kappa(a, b) == pytest.approx(0.28 / 0.48)


def test_cohen_kappa_weighted():
    a, b = [0, 1, 2], [0, 2, 2]
    # linear: observed disagreement 1/6, expected 1/2 -> 2/3
    assert stats.cohen_kappa(a, b, weights="linear") == pytest.approx(2 / 3)
    # quadratic: observed 1/12, expected 5/12 -> 0.8
    assert stats.cohen_kappa(a, b, weights="quadratic") == pytest.approx(0.8)


def test_icc_2_1_hand_and_shrout_fleiss():
    # Rater 2 is rater 1 plus one point: MSR=2, MSC=1.5, MSE=0 -> 2/(2+2*1.5/3)
    assert stats.icc_2_1([[1, 2], [2, 3], [3, 4]]) == pytest.approx(2 / 3)
    # Shrout & Fleiss (1979) table 2: ICC(2,1) = .29
    sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    assert round(stats.icc_2_1(sf), 2) == 0.29


def test_kendall_w_without_ties():
    # rank sums 4,6,8,12; S = 35; W = 12*35 / (9*(64-4)) = 7/9
    ratings = [[1, 1, 2], [2, 3, 1], [3, 2, 3], [4, 4, 4]]
    res = stats.kendall_w(ratings)
    assert res.w == pytest.approx(7 / 9)
    assert res.chi2 == pytest.approx(7.0)
    assert res.df == 3
    assert res.p_value == pytest.approx(0.0719, abs=1e-4)  # chi2(3) tail at 7.0


def test_kendall_w_with_ties():
    # rater 1 ranks 1.5,1.5,3,4; S = 18.5; T = 2^3-2 = 6; W = 222 / (4*60 - 2*6)
    res = stats.kendall_w([[1, 1], [1, 2], [2, 3], [3, 4]])
    assert res.w == pytest.approx(222 / 228)


def test_kendall_w_rejects_missing_and_tiny():
    with pytest.raises(stats.StatsError):
        stats.kendall_w([[1, 2]])
    with pytest.raises(stats.StatsError):
        stats.kendall_w([[1, float("nan")], [2, 3]])


def test_correlations_hand_values():
    x, y = [1, 2, 3, 4, 5], [2, 4, 5, 4, 5]
    assert stats.correlation(x, y, "pearson").estimate == pytest.approx(6 / math.sqrt(60))
    assert stats.correlation(x, y, "spearman").estimate == pytest.approx(7 / math.sqrt(90))
    # 7 concordant, 1 discordant, 2 ties in y: tau-b = 6 / sqrt(10*8)
    tau = stats.correlation(x, y, "kendall", n_resamples=200)
    assert tau.estimate == pytest.approx(6 / math.sqrt(80))
    assert 0 < tau.p_value < 1
    assert tau.low <= tau.estimate <= tau.high


def test_correlation_constant_input_is_nan():
    res = stats.correlation([1, 1, 1], [1, 2, 3], "pearson")
    assert math.isnan(res.estimate)


def test_bootstrap_mean_ci_is_seeded_and_sensible():
    values = [0, 100, 100, 0, 100, 100, 100, 0, 100, 100]
    a = stats.bootstrap_mean_ci(values, seed=7)
    b = stats.bootstrap_mean_ci(values, seed=7)
    assert a == b
    assert a.mean == pytest.approx(70.0)
    assert 0 <= a.low < 70 < a.high <= 100
    # Collapses instead of NaN when there is no spread.
    c = stats.bootstrap_mean_ci([50, 50, 50])
    assert (c.low, c.mean, c.high) == (50, 50, 50)
    with pytest.raises(stats.StatsError):
        stats.bootstrap_mean_ci([])


def test_paired_permutation_exact_hand_value():
    # All five differences positive: only the identity and the all-flipped sign
    # patterns are as extreme, so the exact two-sided p is 2/2^5.
    res = stats.paired_difference([2, 4, 6, 8, 10], [1, 2, 3, 4, 5], method="permutation", n_resamples=10000)
    assert res.mean_diff == pytest.approx(3.0)
    assert res.p_value == pytest.approx(2 / 32)


def test_paired_bootstrap_detects_difference_and_null():
    a = [80, 82, 78, 90, 85, 88, 84, 79, 91, 86]
    b = [60, 65, 59, 70, 66, 71, 62, 61, 72, 64]
    res = stats.paired_difference(a, b, seed=1)
    assert res.mean_diff == pytest.approx(sum(a) / 10 - sum(b) / 10)
    assert res.p_value < 0.01
    assert res.low > 0
    same = stats.paired_difference(a, a)
    assert same.p_value == 1.0 and same.mean_diff == 0
    noise = stats.paired_difference([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], seed=3)
    assert noise.p_value > 0.5
    with pytest.raises(stats.StatsError):
        stats.paired_difference([1, 2], [1])
