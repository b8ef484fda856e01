"""Statistics of the method (DESIGN.md §5), vectorised over many groups or tests at once.

- `tukey_medians`: Tukey-filtered median of every group of a flat array (one sort, no loop);
  `tukey_row_medians` the same for groups already laid out as the rows of a padded matrix.
- `rank_sum_pvalues`: Wilcoxon rank-sum (Mann-Whitney U) p-values of many tests of one shape.
- `hodges_lehmann_ratios`: Hodges-Lehmann estimate of the ratio lhs/rhs with a
  distribution-free confidence interval, for many tests of one shape.
- `adjust_pvalues`: Holm or Benjamini-Hochberg adjustment across a family of tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

Correction = Literal["none", "holm", "bh"]
Alternative = Literal["greater", "two-sided"]

# Tukey's fences: values outside [q1 - k*IQR, q3 + k*IQR] are outliers.
TUKEY_K = 1.5

# scipy.stats.mannwhitneyu's 'auto': exact p-values when either sample has at most this many
# values and there are no ties.
EXACT_MAX_SIZE = 8

# statsmodels' names of the corrections offered in `analysis: correction`.
_MULTITEST_METHOD = {"holm": "holm", "bh": "fdr_bh"}

# Upper bound of pairwise differences held in memory at once by `hodges_lehmann_ratios`.
_HL_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class GroupMedians:
    """Per group (in the order of the sorted group codes): filtered median and values kept."""

    codes: np.ndarray  # the group codes present, ascending
    median: np.ndarray  # float64
    n_kept: np.ndarray  # int64


def _row_quantile(rows: np.ndarray, count: np.ndarray, q: float) -> np.ndarray:
    """Quantile q of each row's first count[i] values (rows sorted ascending).

    Linear interpolation between order statistics, as numpy's default ('linear') method.
    """
    position = (count - 1) * q
    low = np.floor(position).astype(np.int64)
    high = np.ceil(position).astype(np.int64)
    index = np.arange(rows.shape[0])
    v_low = rows[index, low]
    return v_low + (rows[index, high] - v_low) * (position - low)


def tukey_medians(codes: np.ndarray, values: np.ndarray) -> GroupMedians:
    """Median of each group after dropping values outside Tukey's fences.

    `codes` labels each value with its group (any integer). The groups become the rows of a
    matrix padded with +inf and sorted along its rows (one vectorised sort; repetitions of an
    experiment are about equally many, so padding wastes little). The kept values of a sorted
    row are contiguous, so the filtered median is read off by index arithmetic.
    """
    codes = np.asarray(codes)
    values = np.asarray(values, dtype=np.float64)
    if codes.shape != values.shape or codes.ndim != 1:
        raise ValueError("codes and values must be 1-D arrays of the same length")
    if values.size == 0:
        empty = np.empty(0)
        return GroupMedians(codes[:0], empty, empty.astype(np.int64))
    group_codes, group_of_value, count = np.unique(codes, return_inverse=True, return_counts=True)
    order = np.argsort(group_of_value, kind="stable")
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    grouped = group_of_value[order]
    rows = np.full((group_codes.size, int(count.max())), np.inf)
    rows[grouped, np.arange(values.size) - start[grouped]] = values[order]
    median, n_kept = tukey_row_medians(rows, count)
    return GroupMedians(group_codes, median, n_kept)


def tukey_row_medians(rows: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tukey-filtered median and number of kept values of each row's first count[i] values.

    `rows` (groups, width) holds each group's values in any order, padded with +inf; it is
    sorted in place. Every count must be at least 1.
    """
    rows.sort(axis=1)
    q1 = _row_quantile(rows, count, 0.25)
    q3 = _row_quantile(rows, count, 0.75)
    iqr = q3 - q1
    n_below = (rows < (q1 - TUKEY_K * iqr)[:, None]).sum(axis=1)
    n_above = (rows > (q3 + TUKEY_K * iqr)[:, None]).sum(axis=1) - (rows.shape[1] - count)
    n_kept = count - n_below - n_above
    # The median always lies inside the fences, so every group keeps at least one value.
    index = np.arange(rows.shape[0])
    middle_low = rows[index, n_below + (n_kept - 1) // 2]
    middle_high = rows[index, n_below + n_kept // 2]
    return 0.5 * (middle_low + middle_high), n_kept.astype(np.int64)


def rank_sum_pvalues(lhs: np.ndarray, rhs: np.ndarray, alternative: Alternative) -> np.ndarray:
    """p-values of the Wilcoxon rank-sum test per row: lhs (T, m) against rhs (T, n).

    `greater`: lhs is shifted to the right of rhs (lhs slower). Each row gets the p-value that
    `scipy.stats.mannwhitneyu` gives that test alone: exact when a sample has at most
    EXACT_MAX_SIZE values and the row has no ties, else the normal approximation with tie
    correction. scipy's own 'auto' decides once per call, so one tied row would move every row
    of a small shape to the approximation; here the rows are split by ties, one call per part.
    """
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


def _rank_sum_ci_rank(m: int, n: int, confidence: float) -> int:
    """k such that the k-th smallest and k-th largest of the m*n pairwise differences bound a
    distribution-free confidence interval of level >= `confidence` for the shift.

    k is the largest integer with P(U <= k-1) <= (1 - confidence)/2; 0 means the samples are
    too small for an interval of that level.
    """
    cdf = _rank_sum_null_cdf(m, n)
    alpha_half = (1.0 - confidence) / 2.0
    # k = number of cdf entries <= alpha_half (cdf[k-1] <= alpha_half < cdf[k]); the factor
    # keeps an entry equal to alpha_half but for rounding from falling out
    return int(np.searchsorted(cdf, alpha_half * (1 + 1e-12), side="right"))


@dataclass(frozen=True)
class RatioEstimates:
    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray


def hodges_lehmann_ratios(lhs: np.ndarray, rhs: np.ndarray, confidence: float) -> RatioEstimates:
    """Hodges-Lehmann estimate of the ratio lhs/rhs per row, with a confidence interval.

    On logarithms the Hodges-Lehmann shift is the median of all m*n pairwise differences
    log lhs_i - log rhs_j; its exponential is the median of the pairwise ratios. The interval
    takes the k-th smallest and largest pairwise ratios with k from the exact null distribution
    of the rank-sum statistic (Hollander & Wolfe, Nonparametric Statistical Methods, §4.3).
    Without enough data for the level, the interval is (0, inf).
    """
    tests, m = lhs.shape
    n = rhs.shape[1]
    ratio = np.empty(tests)
    low = np.empty(tests)
    high = np.empty(tests)
    k = _rank_sum_ci_rank(m, n, confidence)
    pairs = m * n
    rows_per_chunk = max(1, _HL_CHUNK_ELEMENTS // max(pairs, 1))
    log_lhs = np.log(lhs)
    log_rhs = np.log(rhs)
    for begin in range(0, tests, rows_per_chunk):
        end = min(tests, begin + rows_per_chunk)
        diffs = (log_lhs[begin:end, :, None] - log_rhs[begin:end, None, :]).reshape(-1, pairs)
        diffs.sort(axis=1)
        # The median of sorted rows, read off (np.median would partition them again).
        ratio[begin:end] = np.exp((diffs[:, (pairs - 1) // 2] + diffs[:, pairs // 2]) / 2)
        if k >= 1:
            low[begin:end] = np.exp(diffs[:, k - 1])
            high[begin:end] = np.exp(diffs[:, pairs - k])
        else:
            low[begin:end] = 0.0
            high[begin:end] = np.inf
    return RatioEstimates(ratio, low, high)


def adjust_pvalues(pvalues: np.ndarray, correction: Correction) -> np.ndarray:
    """p-values adjusted for multiple testing across one family (`none` returns a copy)."""
    pvalues = np.asarray(pvalues, dtype=np.float64)
    if correction == "none" or pvalues.size == 0:
        return pvalues.copy()
    return multipletests(pvalues, method=_MULTITEST_METHOD[correction])[1]
