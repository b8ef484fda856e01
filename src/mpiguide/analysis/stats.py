"""Statistics of the method (docs/analysis.md), vectorised over many groups or tests at once.

- `rank_sum_pvalues`: Wilcoxon rank-sum (Mann-Whitney U) p-values of many tests of one shape.
- `hodges_lehmann_ratios`: Hodges-Lehmann estimate of the ratio lhs/rhs with a
  distribution-free confidence interval, for many tests of one shape.
- `paired_hodges_lehmann_ratios`: the one-sample Hodges-Lehmann estimate of the per-run ratio
  with its distribution-free confidence interval, for many paired tests of one shape.
- `signed_rank_pvalues`: Wilcoxon signed-rank p-values of many paired tests of one shape.
- `adjust_pvalues`: Holm or Benjamini-Hochberg adjustment across a family of tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

# scipy.stats (a second to import) and statsmodels (half a second more; `bh` alone uses it) are
# imported where they are used, by the rank tests and the correction: the workflow's parse, the
# commands that only read tables and a campaign of t-tests need neither.

Correction = Literal["none", "holm", "bh"]
Alternative = Literal["greater", "two-sided"]

# scipy.stats.mannwhitneyu's 'auto': exact p-values when either sample has at most this many
# values and there are no ties.
EXACT_MAX_SIZE = 8


# Upper bound of the values (pairwise differences, Walsh averages) each chunk of rows of a test
# holds at once: 512 KiB. Chunks this small are served again and again from the
# allocator's free memory; chunks of 32 MB were fresh pages every time, which the kernel zeroes
# (what that cost check: docs/analysis.md §6).
_CHUNK_ELEMENTS = 65_536


def rank_sum_pvalues(lhs: np.ndarray, rhs: np.ndarray, alternative: Alternative) -> np.ndarray:
    """p-values of the Wilcoxon rank-sum test per row: lhs (T, m) against rhs (T, n).

    `greater`: lhs is shifted to the right of rhs (lhs slower). Each row gets the p-value that
    `scipy.stats.mannwhitneyu` gives that test alone: exact when a sample has at most
    EXACT_MAX_SIZE values and the row has no ties, else the normal approximation with tie
    correction. scipy's own 'auto' decides once per call, so one tied row would move every row
    of a small shape to the approximation; here the rows are split by ties, one call per part.
    """
    from scipy import stats

    tests = lhs.shape[0]
    if tests == 0:
        return np.empty(0)
    if lhs.shape[1] > EXACT_MAX_SIZE and rhs.shape[1] > EXACT_MAX_SIZE:
        tied = np.ones(tests, dtype=bool)  # the approximation for every row, as scipy would
    else:
        both = np.sort(np.concatenate((lhs, rhs), axis=1), axis=1)
        tied = (both[:, 1:] == both[:, :-1]).any(axis=1)
    pvalues = np.empty(tests)
    for method, rows in (("asymptotic", tied), ("exact", ~tied)):
        if rows.any():
            result = stats.mannwhitneyu(
                lhs[rows], rhs[rows], axis=1, alternative=alternative, method=method
            )
            pvalues[rows] = result.pvalue
    return pvalues


# scipy.stats.wilcoxon's 'auto' with zeros or ties: every sign pattern enumerated up to this
# many differences, the normal approximation above.
EXHAUSTIVE_MAX_SIZE = 13


def signed_rank_pvalues(log_ratios: np.ndarray, alternative: Alternative) -> np.ndarray:
    """p-values of the Wilcoxon signed-rank test per row of differences (T, n), centre 0.

    `greater`: the differences are shifted to the right of 0 (lhs slower). Each row gets the
    p-value `scipy.stats.wilcoxon` (method 'auto', zeros dropped) gives that test alone: exact
    without zeros and ties; with them (run medians are multiples of the timer's tick, so ties
    are common) the exhaustive permutation distribution of the signed ranks up to
    EXHAUSTIVE_MAX_SIZE differences, else the normal approximation. scipy resolves 'auto' once
    per call and enumerates row by row; here the tied rows enumerate all 2^n sign patterns at
    once (`_enumerated_pvalues`)."""
    from scipy import stats

    tests, n = log_ratios.shape
    if tests == 0:
        return np.empty(0)
    magnitudes = np.sort(np.abs(log_ratios), axis=1)
    tied = (magnitudes[:, 0] == 0) | (magnitudes[:, 1:] == magnitudes[:, :-1]).any(axis=1)
    pvalues = np.empty(tests)
    if (~tied).any():
        pvalues[~tied] = stats.wilcoxon(log_ratios[~tied], axis=1, alternative=alternative).pvalue
    if tied.any() and n <= EXHAUSTIVE_MAX_SIZE:
        pvalues[tied] = _enumerated_pvalues(log_ratios[tied], alternative)
    elif tied.any():
        pvalues[tied] = stats.wilcoxon(
            log_ratios[tied], axis=1, alternative=alternative, method="asymptotic"
        ).pvalue
    return pvalues


@lru_cache(maxsize=16)
def _sign_patterns(n: int) -> np.ndarray:
    """(n, 2^n): every assignment of positive (1) or negative (0) signs to n ranks."""
    return ((np.arange(2**n)[None, :] >> np.arange(n)[:, None]) & 1).astype(np.float64)


def _enumerated_pvalues(differences: np.ndarray, alternative: Alternative) -> np.ndarray:
    """The signed-rank p-values of rows with zeros or ties: the share of the 2^n equally likely
    sign patterns whose sum of positive mid-ranks is at least the observed one (two-sided: twice
    the smaller tail, at most 1). Zeros get rank 0, so that their signs change no sum: the same
    as dropping them."""
    from scipy import stats

    magnitudes = np.abs(differences)
    ranks = stats.rankdata(np.where(magnitudes == 0, np.nan, magnitudes), axis=1,
                           nan_policy="omit")  # fmt: skip
    ranks = np.nan_to_num(ranks, nan=0.0)
    observed = (ranks * (differences > 0)).sum(axis=1)
    patterns = _sign_patterns(differences.shape[1])
    # Mid-ranks are multiples of 1/2 and their sums exact; the margin only absorbs rounding.
    margin = 1e-9
    pvalues = np.empty(len(differences))
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // patterns.shape[1])
    for begin in range(0, len(differences), rows_per_chunk):
        chunk = slice(begin, begin + rows_per_chunk)
        sums = ranks[chunk] @ patterns
        upper = (sums >= observed[chunk, None] - margin).mean(axis=1)
        if alternative == "greater":
            pvalues[chunk] = upper
        else:
            lower = (sums <= observed[chunk, None] + margin).mean(axis=1)
            pvalues[chunk] = np.minimum(1.0, 2 * np.minimum(upper, lower))
    return pvalues


@lru_cache(maxsize=256)
def _rank_sum_null_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= u) for u = 0 .. m*n under the null hypothesis (no ties), U = Mann-Whitney U.

    Counts by the recurrence on the largest of the m+n values: if it belongs to the first
    sample it beats all j values of the second, so f(i, j) = q^j f(i-1, j) + f(i, j-1).
    Floats keep the large counts finite; only their ratios matter.
    """
    size = m * n + 1
    # previous[j] = counts of U for (i-1, j); built row by row over i.
    previous = [np.eye(1, size).ravel() for _ in range(n + 1)]
    for _ in range(1, m + 1):
        current = [np.eye(1, size).ravel()]
        for j in range(1, n + 1):
            counts = current[j - 1].copy()
            counts[j:] += previous[j][: size - j]
            current.append(counts)
        previous = current
    counts = previous[n]
    return np.cumsum(counts) / counts.sum()


def _ci_ranks(cdf: np.ndarray, confidence: float | np.ndarray) -> np.ndarray:
    """Per level, k such that the k-th smallest and k-th largest of the ordered values bound a
    distribution-free interval of two-sided level >= `confidence`, given the null cdf of the
    rank statistic: the largest k with cdf[k-1] <= (1 - confidence)/2 (0: too few values for
    that level, or the level not a number)."""
    alpha_half = (1.0 - np.asarray(confidence, dtype=np.float64)) / 2.0
    # The factor keeps an entry equal to alpha_half but for rounding from falling out.
    k = np.searchsorted(cdf, np.nan_to_num(alpha_half, nan=-1.0) * (1 + 1e-12), side="right")
    return np.asarray(k, dtype=np.int64)


@dataclass(frozen=True)
class RatioEstimates:
    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray


def hodges_lehmann_ratios(
    lhs: np.ndarray, rhs: np.ndarray, *confidences: float | np.ndarray
) -> tuple[RatioEstimates, ...]:
    """Hodges-Lehmann estimate of the ratio lhs/rhs per row, with a confidence interval per
    level of `confidences` (each one level for every row, or one per row).

    On logarithms the Hodges-Lehmann shift is the median of all m*n pairwise differences
    log lhs_i - log rhs_j; its exponential is the median of the pairwise ratios. The interval
    takes the k-th smallest and largest pairwise ratios with k from the exact null distribution
    of the rank-sum statistic (Hollander & Wolfe, Nonparametric Statistical Methods, §4.3).
    Without enough data for the level, the interval is (0, inf). The differences are sorted
    once for every level.
    """
    tests, m = lhs.shape
    n = rhs.shape[1]
    cdf = _rank_sum_null_cdf(m, n)
    ranks = [np.broadcast_to(_ci_ranks(cdf, level), (tests,)) for level in confidences]
    estimates = tuple(_empty_estimates(tests) for _ in confidences)
    pairs = m * n
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // max(pairs, 1))
    log_lhs = np.log(lhs)
    log_rhs = np.log(rhs)
    for begin in range(0, tests, rows_per_chunk):
        end = min(tests, begin + rows_per_chunk)
        diffs = (log_lhs[begin:end, :, None] - log_rhs[begin:end, None, :]).reshape(-1, pairs)
        diffs.sort(axis=1)
        for estimate, k in zip(estimates, ranks, strict=True):
            _fill_estimates(estimate, slice(begin, end), diffs, k[begin:end])
    return estimates


def _empty_estimates(tests: int) -> RatioEstimates:
    return RatioEstimates(np.empty(tests), np.empty(tests), np.empty(tests))


def _fill_estimates(
    estimates: RatioEstimates, rows: slice, sorted_logs: np.ndarray, k: np.ndarray
) -> None:
    """Per row of ascending log-ratios: the ratio (exp of their median) and the interval (exp of
    the k-th smallest and k-th largest, k per row); (0, inf) where k is 0."""
    count = sorted_logs.shape[1]
    # The median of sorted rows, read off (np.median would partition them again).
    middle = (sorted_logs[:, (count - 1) // 2] + sorted_logs[:, count // 2]) / 2
    estimates.ratio[rows] = np.exp(middle)
    usable = k >= 1
    lower = np.take_along_axis(sorted_logs, np.maximum(k - 1, 0)[:, None], axis=1)[:, 0]
    last = np.minimum(count - k, count - 1)
    upper = np.take_along_axis(sorted_logs, last[:, None], axis=1)[:, 0]
    estimates.low[rows] = np.where(usable, np.exp(lower), 0.0)
    estimates.high[rows] = np.where(usable, np.exp(upper), np.inf)


@lru_cache(maxsize=64)
def _signed_rank_null_cdf(n: int) -> np.ndarray:
    """P(T+ <= t) for t = 0 .. n(n+1)/2 under the null hypothesis (no zeros, no ties).

    T+ is the sum of the ranks of the positive differences; each rank is in it or not with
    probability 1/2, so the counts are those of the subset sums of {1, .., n}.
    """
    size = n * (n + 1) // 2 + 1
    counts = np.eye(1, size).ravel()
    for rank in range(1, n + 1):
        counts[rank:] = counts[rank:] + counts[: size - rank].copy()
    return np.cumsum(counts) / counts.sum()


def paired_hodges_lehmann_ratios(
    log_ratios: np.ndarray, *confidences: float | np.ndarray
) -> tuple[RatioEstimates, ...]:
    """One-sample Hodges-Lehmann estimate of the per-run ratio per row, with an interval per
    level of `confidences` (each one level for every row, or one per row).

    The estimate is the exponential of the median of the n(n+1)/2 Walsh averages
    (d_i + d_j)/2, i <= j, of the per-run log-ratios d; the interval takes the k-th smallest and
    largest Walsh averages with k from the exact null distribution of the signed-rank statistic
    (Hollander & Wolfe, Nonparametric Statistical Methods, §3.2). Without enough runs for the
    level, the interval is (0, inf). The Walsh averages are sorted once for every level.
    """
    tests, n = log_ratios.shape
    first, second = np.triu_indices(n)
    walsh_count = first.size
    cdf = _signed_rank_null_cdf(n)
    ranks = [np.broadcast_to(_ci_ranks(cdf, level), (tests,)) for level in confidences]
    estimates = tuple(_empty_estimates(tests) for _ in confidences)
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // max(walsh_count, 1))
    for begin in range(0, tests, rows_per_chunk):
        end = min(tests, begin + rows_per_chunk)
        chunk = log_ratios[begin:end]
        walsh = np.take(chunk, first, axis=1)
        walsh += np.take(chunk, second, axis=1)
        walsh *= 0.5
        walsh.sort(axis=1)
        for estimate, k in zip(estimates, ranks, strict=True):
            _fill_estimates(estimate, slice(begin, end), walsh, k[begin:end])
    return estimates


def adjust_pvalues(pvalues: np.ndarray, correction: Correction) -> np.ndarray:
    """p-values adjusted for multiple testing across one family (`none` returns a copy).

    Benjamini-Hochberg is statsmodels' `fdr_bh`. Holm is written out here, the same step-down
    as statsmodels' `holm` (a test compares them): statsmodels runs a full `gc.collect()` on
    every Holm call, which in a process holding a campaign's tables costs about 0.1 s a call,
    and the self-test makes one per guideline and draw (docs/analysis.md §6)."""
    pvalues = np.asarray(pvalues, dtype=np.float64)
    if correction == "none" or pvalues.size == 0:
        return pvalues.copy()
    if correction == "bh":
        from statsmodels.stats.multitest import multipletests

        # statsmodels' step-up carries one NaN (a test of one run) into every adjusted value:
        # the tests without a p-value stay out of the family.
        adjusted = np.full(pvalues.size, np.nan)
        present = ~np.isnan(pvalues)
        if present.any():
            adjusted[present] = multipletests(pvalues[present], method="fdr_bh")[1]
        return adjusted
    order = np.argsort(pvalues, kind="stable")
    stepped = pvalues[order] * np.arange(pvalues.size, 0, -1)
    adjusted = np.empty_like(pvalues)
    adjusted[order] = np.minimum(np.maximum.accumulate(stepped), 1.0)
    return adjusted


def one_sided_bounds(
    log_effect: np.ndarray, se: np.ndarray, df: np.ndarray, confidence: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper one-sided confidence bounds (each at `confidence`, one level or one per
    test) of the ratio, from a t model of its logarithm; NaN where the model has no degrees of
    freedom."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        quantile = t_quantiles(confidence, df)
        return np.exp(log_effect - quantile * se), np.exp(log_effect + quantile * se)


# Student's t distribution as scipy.stats.t computes it, from scipy.special's functions, the same
# values: the t-tests and every bound need no more, and scipy.special loads in a fraction of the
# second scipy.stats takes.


def t_quantiles(q: float | np.ndarray, df: float | np.ndarray) -> np.ndarray:
    """scipy.stats.t.ppf(q, df): NaN where df <= 0 or q lies outside [0, 1]."""
    from scipy import special

    q, df = np.broadcast_arrays(np.asarray(q, dtype=np.float64), np.asarray(df, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        quantiles = np.where(q == 0, -np.inf, special.stdtrit(df, q))
        return np.where((df > 0) & (q >= 0) & (q <= 1), quantiles, np.nan)


def t_cdf(x: np.ndarray, df: float | np.ndarray) -> np.ndarray:
    """scipy.stats.t.cdf(x, df): NaN where df <= 0."""
    from scipy import special

    x, df = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        return np.where(df > 0, special.stdtr(df, x), np.nan)


def t_pvalues(t: np.ndarray, df: float | np.ndarray, alternative: Alternative) -> np.ndarray:
    """The p-values of t statistics at `df` degrees of freedom, as scipy.stats' t-tests give
    them: the upper tail (`greater`) or both."""
    if alternative == "greater":
        return t_cdf(-t, df)
    return 2 * t_cdf(-np.abs(t), df)
