"""Known answers for the statistics: Tukey filter, rank-sum p-values, Hodges-Lehmann, multitest."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from mpiguide.analysis.stats import (
    _rank_sum_null_cdf,
    _signed_rank_null_cdf,
    adjust_pvalues,
    hodges_lehmann_ratios,
    paired_hodges_lehmann_ratios,
    rank_sum_pvalues,
    signed_rank_pvalues,
)
from mpiguide.store.tukey import tukey_medians


def test_tukey_filter_hand_computed_case():
    # Group 7: q1 = 2, q3 = 4, IQR = 2, fences [-1, 7] -> 100 is dropped, median of 1..4 = 2.5.
    # Group 3: q1 = 10.95, q3 = 11.05, fences [10.8, 11.2] -> 9 and 13 dropped, median 11.
    codes = np.array([7, 3, 7, 7, 3, 3, 7, 3, 7, 3, 3, 3])
    values = np.array([4, 11, 100, 1, 10.9, 9, 3, 13, 2, 11.1, 11, 11.0])
    result = tukey_medians(codes, values)
    assert result.codes.tolist() == [3, 7]
    assert result.median.tolist() == [11.0, 2.5]
    assert result.n_kept.tolist() == [5, 4]


def test_tukey_filter_equals_a_per_group_reference():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 40, 3000)
    values = rng.lognormal(0, 0.5, codes.size)
    result = tukey_medians(codes, values)
    for code, median, kept in zip(result.codes, result.median, result.n_kept, strict=True):
        group = values[codes == code]
        q1, q3 = np.percentile(group, [25, 75])
        inside = group[(group >= q1 - 1.5 * (q3 - q1)) & (group <= q3 + 1.5 * (q3 - q1))]
        assert median == pytest.approx(np.median(inside), rel=1e-12)
        assert kept == inside.size


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_rank_sum_pvalues_equal_scipy_per_test(alternative):
    rng = np.random.default_rng(5)
    lhs = rng.lognormal(0.05, 0.1, (25, 10))
    rhs = rng.lognormal(0.0, 0.1, (25, 12))
    vectorised = rank_sum_pvalues(lhs, rhs, alternative)
    one_by_one = [
        scipy_stats.mannwhitneyu(a, b, alternative=alternative).pvalue
        for a, b in zip(lhs, rhs, strict=True)
    ]
    np.testing.assert_allclose(vectorised, one_by_one, rtol=1e-12)


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize(("m", "n"), [(6, 6), (8, 12), (12, 5), (9, 9)])
def test_rank_sum_pvalues_of_small_samples_with_some_ties_equal_scipy_per_test(alternative, m, n):
    # scipy chooses exact or approximate p-values once per call: a tied row among untied ones
    # must not move them to the approximation (6 against 6 separated: exact 0.00108, the
    # approximation 0.0025 — on the two sides of p_thres 0.001 with one more run)
    rng = np.random.default_rng(m * 100 + n)
    lhs = np.round(rng.lognormal(0.3, 0.2, (40, m)), 1)  # rounding makes some rows tie
    rhs = np.round(rng.lognormal(0.0, 0.2, (40, n)), 1)
    lhs[:20] += rng.uniform(0, 1e-6, (20, m))  # and leaves these rows free of ties
    rhs[:20] += rng.uniform(0, 1e-6, (20, n))
    both = np.sort(np.hstack((lhs, rhs)), axis=1)
    tied = (both[:, 1:] == both[:, :-1]).any(axis=1)
    assert not tied[:20].any() and tied[20:].any()
    vectorised = rank_sum_pvalues(lhs, rhs, alternative)
    one_by_one = [
        scipy_stats.mannwhitneyu(a, b, alternative=alternative).pvalue
        for a, b in zip(lhs, rhs, strict=True)
    ]
    np.testing.assert_allclose(vectorised, one_by_one, rtol=1e-12)


def test_rank_sum_null_distribution_equals_enumeration():
    m, n = 4, 5
    counts = np.zeros(m * n + 1)
    for lhs_positions in combinations(range(m + n), m):
        # U = number of (lhs, rhs) pairs with lhs above rhs
        u = sum(p - i for i, p in enumerate(lhs_positions))
        counts[u] += 1
    np.testing.assert_allclose(_rank_sum_null_cdf(m, n), np.cumsum(counts) / counts.sum())


def test_confidence_rank_matches_the_textbook_value():
    # Hollander & Wolfe: m = n = 10, 95 %: the 24th smallest and largest differences. The
    # log differences 10 i - (-j) are 0 .. 99, each once: the k-th smallest is k - 1.
    lhs = np.exp(10.0 * np.arange(10))[None, :]
    rhs = np.exp(-np.arange(10.0))[None, :]
    (estimate,) = hodges_lehmann_ratios(lhs, rhs, 0.95)
    assert np.log([estimate.low[0], estimate.high[0]]) == pytest.approx([23.0, 99.0 - 23.0])
    # too few values for any 95 % interval
    (estimate,) = hodges_lehmann_ratios(lhs[:, :2], rhs[:, :2], 0.95)
    assert (estimate.low[0], estimate.high[0]) == (0.0, np.inf)


def test_hodges_lehmann_ratio_hand_case():
    # pairwise ratios 2/1, 2/2, 4/1, 4/2 = 2, 1, 4, 2 -> median 2
    (estimate,) = hodges_lehmann_ratios(np.array([[2.0, 4.0]]), np.array([[1.0, 2.0]]), 0.95)
    assert estimate.ratio[0] == pytest.approx(2.0)
    assert estimate.low[0] == 0.0 and estimate.high[0] == np.inf


def test_hodges_lehmann_interval_uses_the_kth_pairwise_ratio():
    rng = np.random.default_rng(2)
    lhs = rng.lognormal(0.4, 0.2, (3, 10))
    rhs = rng.lognormal(0.0, 0.2, (3, 10))
    (estimate,) = hodges_lehmann_ratios(lhs, rhs, 0.95)
    for i in range(3):
        ratios = np.sort((lhs[i][:, None] / rhs[i][None, :]).ravel())
        assert estimate.ratio[i] == pytest.approx(np.exp(np.median(np.log(ratios))))
        assert estimate.low[i] == pytest.approx(ratios[23])
        assert estimate.high[i] == pytest.approx(ratios[100 - 24])
        assert estimate.low[i] < np.exp(0.4) < estimate.high[i]


@pytest.mark.parametrize(("correction", "method"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_corrections_equal_statsmodels(correction, method):
    pvalues = np.array([0.0001, 0.02, 0.003, 0.5, 0.04, 0.0009])
    np.testing.assert_allclose(
        adjust_pvalues(pvalues, correction), multipletests(pvalues, method=method)[1]
    )
    np.testing.assert_array_equal(adjust_pvalues(pvalues, "none"), pvalues)
    rng = np.random.default_rng(5)
    for size in (1, 2, 7, 300):
        # ties and values near 1, where the adjustment saturates
        pvalues = np.round(rng.uniform(0, 1, size) ** 3, 2)
        np.testing.assert_allclose(
            adjust_pvalues(pvalues, correction), multipletests(pvalues, method=method)[1]
        )


def test_hodges_lehmann_chunks_agree_with_one_pass(monkeypatch):
    rng = np.random.default_rng(8)
    lhs = rng.lognormal(0.1, 0.3, (7, 5))
    rhs = rng.lognormal(0.0, 0.3, (7, 6))
    levels = np.linspace(0.5, 0.9, 7)
    whole = hodges_lehmann_ratios(lhs, rhs, 0.8, levels)
    monkeypatch.setattr("mpiguide.analysis.stats._CHUNK_ELEMENTS", 60)  # two rows per chunk
    chunked = hodges_lehmann_ratios(lhs, rhs, 0.8, levels)
    for got, expected in zip(chunked, whole, strict=True):
        for name in ("ratio", "low", "high"):
            np.testing.assert_array_equal(getattr(got, name), getattr(expected, name))


def test_signed_rank_null_distribution_equals_enumeration():
    n = 6
    sums = [sum(r for r, bit in zip(range(1, n + 1), f"{mask:06b}", strict=True) if bit == "1")
            for mask in range(2**n)]  # fmt: skip
    counts = np.bincount(sums, minlength=n * (n + 1) // 2 + 1)
    np.testing.assert_allclose(_signed_rank_null_cdf(n), np.cumsum(counts) / 2**n)


def test_signed_rank_confidence_rank_matches_the_textbook_value():
    # Hollander & Wolfe Table A.4: n = 10, two-sided 95 %: the 9th smallest Walsh average
    # (P(T+ <= 8) = 0.0244 <= 0.025 < P(T+ <= 9) = 0.0322). The Walsh averages of the powers
    # of two 2^a are (2^a + 2^b) / 2, a <= b, each once.
    log_ratios = 2.0 ** np.arange(10)[None, :] / 1024
    walsh = np.sort([(2.0**a + 2.0**b) / 2 / 1024 for a in range(10) for b in range(a, 10)])
    (estimate,) = paired_hodges_lehmann_ratios(log_ratios, 0.95)
    assert np.log([estimate.low[0], estimate.high[0]]) == pytest.approx([walsh[8], walsh[-9]])
    # 2**-5 = 0.031 > 0.025: no interval
    (estimate,) = paired_hodges_lehmann_ratios(log_ratios[:, :5], 0.95)
    assert (estimate.low[0], estimate.high[0]) == (0.0, np.inf)


def test_paired_hodges_lehmann_uses_the_kth_walsh_average():
    rng = np.random.default_rng(6)
    log_ratios = rng.normal(0.1, 0.05, (3, 10))
    (estimate,) = paired_hodges_lehmann_ratios(log_ratios, 0.95)
    for i in range(3):
        d = log_ratios[i]
        walsh = np.sort([(d[a] + d[b]) / 2 for a in range(10) for b in range(a, 10)])
        assert estimate.ratio[i] == pytest.approx(np.exp(np.median(walsh)))
        assert estimate.low[i] == pytest.approx(np.exp(walsh[8]))
        assert estimate.high[i] == pytest.approx(np.exp(walsh[55 - 9]))


# 11: ties enumerated; 14: ties by the normal approximation (scipy's 'auto' switches after 13)
@pytest.mark.parametrize("n", [4, 11, 14, 20])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_signed_rank_pvalues_are_scipys_single_calls(n, alternative):
    rng = np.random.default_rng(n)
    differences = rng.normal(0.05, 0.1, (12, n))
    # run medians are multiples of a tick: ties and zeros in a quarter of the rows
    differences[::4] = np.round(differences[::4], 2)
    differences[1, 0] = 0.0
    expected = [scipy_stats.wilcoxon(row, alternative=alternative).pvalue for row in differences]
    assert signed_rank_pvalues(differences, alternative) == pytest.approx(expected, rel=1e-12)


def test_hodges_lehmann_levels_per_row_equal_one_call_per_level():
    """Intervals at a level per row (one sort for all levels) are those of a call at each
    row's level; a level too high for the data, or not a number, gives (0, inf)."""
    rng = np.random.default_rng(9)
    lhs = rng.lognormal(0.1, 0.3, (6, 9))
    rhs = rng.lognormal(0.0, 0.3, (6, 8))
    levels = np.array([0.5, 0.9, 0.99, 0.998, 0.9999999, np.nan])
    per_row, at_90 = hodges_lehmann_ratios(lhs, rhs, levels, 0.9)
    for i, level in enumerate(levels[:-1]):
        (alone,) = hodges_lehmann_ratios(lhs[i : i + 1], rhs[i : i + 1], level)
        assert (per_row.low[i], per_row.high[i]) == (alone.low[0], alone.high[0])
    assert (per_row.low[5], per_row.high[5]) == (0.0, np.inf)
    assert (per_row.low[4], per_row.high[4]) == (0.0, np.inf)
    np.testing.assert_array_equal(per_row.ratio, at_90.ratio)
    log_ratios = np.log(lhs[:, :8]) - np.log(rhs)
    paired, _ = paired_hodges_lehmann_ratios(log_ratios, levels, 0.9)
    for i, level in enumerate(levels[:-1]):
        (alone,) = paired_hodges_lehmann_ratios(log_ratios[i : i + 1], level)
        assert (paired.low[i], paired.high[i]) == (alone.low[0], alone.high[0])
    assert (paired.low[5], paired.high[5]) == (0.0, np.inf)


def test_a_test_without_a_p_value_stays_out_of_the_family():
    """A test of one run has no p-value: it is no member of the family its guideline's other
    p-values are corrected in (statsmodels' step-up alone would make every value NaN)."""
    pvalues = np.array([0.0001, np.nan, 0.02, 0.0009])
    for correction, method in (("bh", "fdr_bh"), ("holm", "holm")):
        adjusted = adjust_pvalues(pvalues, correction)
        assert np.isnan(adjusted[1])
        if correction == "bh":
            expected = multipletests(pvalues[[0, 2, 3]], method=method)[1]
            np.testing.assert_allclose(adjusted[[0, 2, 3]], expected)
        assert (adjusted[[0, 2, 3]] < 1).all()
