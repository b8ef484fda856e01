"""Statistics of paired experiments: run medians stacked per shape, one vectorised call each.

`RunMedians` holds every experiment's run medians as one flat array (sorted by experiment,
then run) with offsets, so the lhs and rhs samples of thousands of tests with the same numbers
of runs become two 2-D arrays with one fancy-indexing step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpiguide.stats import Alternative, hodges_lehmann_ratios, rank_sum_pvalues

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


@dataclass(frozen=True)
class RunMedians:
    """Run medians of experiment row r: values[start[r] : start[r] + count[r]]."""

    values: np.ndarray
    start: np.ndarray
    count: np.ndarray

    @classmethod
    def from_frame(cls, rows: np.ndarray, medians: np.ndarray, n_rows: int) -> RunMedians:
        order = np.argsort(rows, kind="stable")
        count = np.bincount(rows, minlength=n_rows)
        start = np.concatenate(([0], np.cumsum(count)[:-1]))
        return cls(np.asarray(medians, dtype=np.float64)[order], start, count)

    def stack(self, rows: np.ndarray, width: int) -> np.ndarray:
        """(len(rows), width) array of the run medians of `rows` (all with `width` runs)."""
        return self.values[self.start[rows][:, None] + np.arange(width)]


def compare(
    run_medians: RunMedians,
    lhs_rows: np.ndarray,
    rhs_rows: np.ndarray,
    alternative: Alternative,
    confidence: float,
) -> pd.DataFrame:
    """STAT_COLUMNS for every test (lhs_rows[i] against rhs_rows[i])."""
    n_tests = lhs_rows.size
    n_lhs = run_medians.count[lhs_rows]
    n_rhs = run_medians.count[rhs_rows]
    result = {name: np.full(n_tests, np.nan) for name in STAT_COLUMNS}
    result["n_lhs"], result["n_rhs"] = n_lhs, n_rhs
    shapes = np.unique(np.stack((n_lhs, n_rhs), axis=1), axis=0) if n_tests else np.empty((0, 2))
    # Every experiment has at least one run median (its rows come from medians.parquet).
    for m, n in shapes:
        which = np.flatnonzero((n_lhs == m) & (n_rhs == n))
        lhs = run_medians.stack(lhs_rows[which], m)
        rhs = run_medians.stack(rhs_rows[which], n)
        median_lhs = np.median(lhs, axis=1)
        median_rhs = np.median(rhs, axis=1)
        result["median_lhs"][which] = median_lhs
        result["median_rhs"][which] = median_rhs
        result["violation_ratio"][which] = median_lhs / median_rhs
        result["p_value"][which] = rank_sum_pvalues(lhs, rhs, alternative)
        estimates = hodges_lehmann_ratios(lhs, rhs, confidence)
        result["hl_ratio"][which] = estimates.ratio
        result["hl_low"][which] = estimates.low
        result["hl_high"][which] = estimates.high
    return pd.DataFrame(result)
