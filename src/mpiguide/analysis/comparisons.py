"""Statistics of paired experiments: run medians stacked per shape, one vectorised call each.

`RunMedians` holds every experiment's run medians as one flat array (sorted by experiment,
then run) with offsets, so the lhs and rhs samples of thousands of tests with the same numbers
of runs become two 2-D arrays with one fancy-indexing step.

A test is decided by one of two tests (its `test` column):
- `ranksum`: Lübbe's unpaired Wilcoxon rank-sum over the two sides' run medians, with the
  ratio of their medians and the two-sample Hodges-Lehmann ratio;
- `paired_t` or `signed_rank`: a paired test over the runs' log-ratios lhs/rhs (run i of lhs
  against run i of rhs; stats.paired_pvalues: the t-test where the log-ratios pass a normality
  check, else the Wilcoxon signed-rank test), with the median per-run ratio and the one-sample
  Hodges-Lehmann ratio.
  Only a test whose two sides hold the same runs can be paired; the caller says which tests may
  be (those whose sides were measured in the same launches, or all).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpiguide.analysis.stats import (
    Alternative,
    RatioEstimates,
    hodges_lehmann_ratios,
    paired_hodges_lehmann_ratios,
    paired_pvalues,
    rank_sum_pvalues,
)

STAT_COLUMNS = (
    "n_lhs",
    "n_rhs",
    "median_lhs",
    "median_rhs",
    "violation_ratio",
    "p_value",
    "hl_ratio",
    "hl_low",
    "hl_high",
)
# Which test decided a row, and its values.
TEST_COLUMN = "test"
RANKSUM, PAIRED_T, SIGNED_RANK = "ranksum", "paired_t", "signed_rank"


@dataclass(frozen=True)
class RunMedians:
    """Run medians of experiment row r: values[start[r] : start[r] + count[r]], measured in
    runs[start[r] : start[r] + count[r]] (ascending); median[r] their median."""

    values: np.ndarray
    runs: np.ndarray
    start: np.ndarray
    count: np.ndarray
    median: np.ndarray

    @classmethod
    def from_frame(
        cls, rows: np.ndarray, runs: np.ndarray, medians: np.ndarray, n_rows: int
    ) -> RunMedians:
        order = np.lexsort((runs, rows))
        count = np.bincount(rows, minlength=n_rows)
        start = np.concatenate(([0], np.cumsum(count)[:-1]))
        values = np.asarray(medians, dtype=np.float64)[order]
        # Each experiment's median once, not once per test it is in: experiments with the same
        # number of runs are the rows of one matrix.
        median = np.full(n_rows, np.nan)
        for width in np.unique(count[count > 0]):
            which = np.flatnonzero(count == width)
            median[which] = np.median(values[start[which][:, None] + np.arange(width)], axis=1)
        return cls(values, np.asarray(runs)[order], start, count, median)

    def _index(self, rows: np.ndarray, width: int) -> np.ndarray:
        return self.start[rows][:, None] + np.arange(width)

    def stack(self, rows: np.ndarray, width: int) -> np.ndarray:
        """(len(rows), width) array of the run medians of `rows` (all with `width` runs)."""
        return self.values[self._index(rows, width)]

    def same_runs(self, lhs_rows: np.ndarray, rhs_rows: np.ndarray, width: int) -> np.ndarray:
        """Per pair of rows (each with `width` runs): whether both hold the same runs."""
        lhs_runs = self.runs[self._index(lhs_rows, width)]
        return (lhs_runs == self.runs[self._index(rhs_rows, width)]).all(axis=1)


def compare(
    run_medians: RunMedians,
    lhs_rows: np.ndarray,
    rhs_rows: np.ndarray,
    alternative: Alternative,
    confidence: float,
    may_pair: np.ndarray,
) -> pd.DataFrame:
    """STAT_COLUMNS and TEST_COLUMN for every test (lhs_rows[i] against rhs_rows[i]).

    Test i is paired when may_pair[i] and its two sides hold the same runs, else rank-sum.
    """
    n_tests = lhs_rows.size
    n_lhs = run_medians.count[lhs_rows]
    n_rhs = run_medians.count[rhs_rows]
    result = {name: np.full(n_tests, np.nan) for name in STAT_COLUMNS}
    result["n_lhs"], result["n_rhs"] = n_lhs, n_rhs
    paired = np.zeros(n_tests, dtype=bool)
    t_test = np.zeros(n_tests, dtype=bool)
    shapes = np.unique(np.stack((n_lhs, n_rhs), axis=1), axis=0) if n_tests else np.empty((0, 2))
    # Every experiment has at least one run median (its rows come from medians.parquet).
    for m, n in shapes:
        which = np.flatnonzero((n_lhs == m) & (n_rhs == n))
        if m == n:
            candidates = which[may_pair[which]]
            paired[candidates] = run_medians.same_runs(
                lhs_rows[candidates], rhs_rows[candidates], m
            )
        lhs = run_medians.stack(lhs_rows[which], m)
        rhs = run_medians.stack(rhs_rows[which], n)
        result["median_lhs"][which] = run_medians.median[lhs_rows[which]]
        result["median_rhs"][which] = run_medians.median[rhs_rows[which]]
        unpaired = ~paired[which]
        _rank_sum(result, which[unpaired], lhs[unpaired], rhs[unpaired], alternative, confidence)
        if not unpaired.all():
            log_ratios = np.log(lhs[~unpaired]) - np.log(rhs[~unpaired])
            t_test[which[~unpaired]] = _paired(
                result, which[~unpaired], log_ratios, alternative, confidence
            )
    frame = pd.DataFrame(result)
    frame[TEST_COLUMN] = np.where(paired, np.where(t_test, PAIRED_T, SIGNED_RANK), RANKSUM)
    return frame


def _rank_sum(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    lhs: np.ndarray,
    rhs: np.ndarray,
    alternative: Alternative,
    confidence: float,
) -> None:
    if which.size == 0:
        return
    result["violation_ratio"][which] = result["median_lhs"][which] / result["median_rhs"][which]
    result["p_value"][which] = rank_sum_pvalues(lhs, rhs, alternative)
    _store(result, which, hodges_lehmann_ratios(lhs, rhs, confidence))


def _paired(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    log_ratios: np.ndarray,
    alternative: Alternative,
    confidence: float,
) -> np.ndarray:
    """Fills the paired tests' statistics; returns which rows the t-test decided."""
    result["violation_ratio"][which] = np.exp(np.median(log_ratios, axis=1))
    pvalues = paired_pvalues(log_ratios, alternative)
    result["p_value"][which] = pvalues.pvalue
    _store(result, which, paired_hodges_lehmann_ratios(log_ratios, confidence))
    return pvalues.t_test


def _store(result: dict[str, np.ndarray], which: np.ndarray, estimates: RatioEstimates) -> None:
    result["hl_ratio"][which] = estimates.ratio
    result["hl_low"][which] = estimates.low
    result["hl_high"][which] = estimates.high
