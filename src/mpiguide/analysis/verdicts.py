"""Three-way verdicts of the tests: violated, holds, undecided, and what each test could have
seen (docs/analysis.md, "Verdicts").

Every test's model gives its effect on the log scale with a standard error and degrees of
freedom (the paired t-test on per-run log-ratios, Welch's t-test on log run medians) or, for
the rank tests (Lübbe's rank-sum, the signed-rank test across launches) the Hodges-Lehmann
interval that inverts them. From the same model come the p-value (violated),
the one-sided confidence bounds (holds) and the power estimates, so that no test can be both
violated and holding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from mpiguide.analysis.comparisons import (
    DF,
    LOG_SE,
    PAIRED_TESTS,
    SIGNED_RANK_TESTS,
    TEST_COLUMN,
)

VIOLATED, HOLDS, UNDECIDED = "violated", "holds", "undecided"
VERDICTS = (VIOLATED, HOLDS, UNDECIDED)
# The power at which `detectable_ratio` is stated.
POWER = 0.8
# runs_needed is searched up to this many runs per side; beyond it the column stays empty.
MAX_RUNS = 100_000
_CANDIDATE_RUNS = np.unique(np.round(np.geomspace(2, MAX_RUNS, 600)).astype(np.int64))
# Undecided tests searched at once: bounds the candidates-by-tests temporaries to a few MB.
_ROWS_PER_CHUNK = 1024


@dataclass(frozen=True)
class Thresholds:
    p_thres: float
    v_thres: float
    confidence: float


def verdicts(
    approx: bool,
    ratio: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    p_adjusted: np.ndarray,
    thresholds: Thresholds,
) -> np.ndarray:
    """violated / holds / undecided per test.

    violated: p_adjusted <= p_thres and the effect ratio (for approx max(v, 1/v)) >= v_thres.
    holds (le, monotone): the upper bound and the effect are below v_thres; (approx) both bounds
    inside (1/v_thres, v_thres), the two one-sided tests of equivalence (TOST). A test without
    bounds (too few runs) is never `holds`.
    """
    v = thresholds.v_thres
    size = np.maximum(ratio, 1 / ratio) if approx else ratio
    violated = (p_adjusted <= thresholds.p_thres) & (size >= v)
    inside = high < v
    if approx:
        inside &= low > 1 / v
    holds = ~violated & inside & (size < v)
    return np.where(violated, VIOLATED, np.where(holds, HOLDS, UNDECIDED)).astype(object)


def _alpha(approx: bool, thresholds: Thresholds) -> float:
    """The one-sided tail the violation bar puts on the t statistic."""
    return thresholds.p_thres / 2 if approx else thresholds.p_thres


def detectable_ratios(
    approx: bool, se: np.ndarray, df: np.ndarray, thresholds: Thresholds
) -> np.ndarray:
    """The smallest true ratio flagged with probability POWER at this standard error: the
    critical log effect plus POWER's t quantile times se (the observed spread taken as the true
    one, the multiple-testing correction ignored)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(df > 0, df, np.nan)
        critical = np.maximum(
            stats.t.ppf(1 - _alpha(approx, thresholds), df) * se, np.log(thresholds.v_thres)
        )
        return np.exp(critical + stats.t.ppf(POWER, df) * se)


def least_signed_rank_runs(approx: bool, p_thres: float) -> int:
    """The fewest pairs at which a signed-rank test can be significant at p_thres: its exact
    p-value is at least 2^-n one-sided (all n differences positive), 2^(1-n) two-sided."""
    return int(np.ceil(np.log2(1 / p_thres))) + (1 if approx else 0)


def runs_needed(
    approx: bool,
    log_effect: np.ndarray,
    se: np.ndarray,
    runs: np.ndarray,
    paired: np.ndarray,
    thresholds: Thresholds,
) -> np.ndarray:
    """Runs per side at which the observed effect, at the observed spread, would be decided
    (violated or holds at the point estimate: about even odds); NaN past MAX_RUNS.

    The standard error shrinks as 1/sqrt(runs); degrees of freedom are runs - 1 (paired) or
    2 (runs - 1) (two samples)."""
    result = np.full(log_effect.size, np.nan)
    usable = np.flatnonzero(np.isfinite(log_effect) & np.isfinite(se) & (runs >= 1))
    log_v = np.log(thresholds.v_thres)
    # The t quantiles depend on the candidate number of runs alone: once per candidate.
    candidates = _CANDIDATE_RUNS.astype(float)
    quantiles = {}
    for kind, df in ((True, candidates - 1), (False, 2 * (candidates - 1))):
        with np.errstate(invalid="ignore"):
            df = np.where(df > 0, df, np.nan)
            quantiles[kind] = (
                stats.t.ppf(1 - _alpha(approx, thresholds), df),
                stats.t.ppf(thresholds.confidence, df),
            )
    for begin in range(0, usable.size, _ROWS_PER_CHUNK):
        which = usable[begin : begin + _ROWS_PER_CHUNK]
        effect = np.abs(log_effect[which]) if approx else log_effect[which]
        se_then = se[which][:, None] * np.sqrt(runs[which][:, None] / candidates)
        violation_bar = np.where(paired[which][:, None], quantiles[True][0], quantiles[False][0])
        bound_quantile = np.where(paired[which][:, None], quantiles[True][1], quantiles[False][1])
        with np.errstate(invalid="ignore"):
            violated = effect[:, None] >= np.maximum(violation_bar * se_then, log_v)
            holds = effect[:, None] + bound_quantile * se_then < log_v
        decided = (violated | holds) & (candidates > runs[which][:, None])
        found = decided.any(axis=1)
        result[which[found]] = _CANDIDATE_RUNS[decided[found].argmax(axis=1)]
    return result


def group_verdicts(verdict: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per test, its group's verdict: violated if any test is, holds if all hold, else
    undecided."""
    codes, inverse = np.unique(groups, return_inverse=True)
    any_violated = np.zeros(codes.size, dtype=bool)
    all_hold = np.ones(codes.size, dtype=bool)
    np.logical_or.at(any_violated, inverse, verdict == VIOLATED)
    np.logical_and.at(all_hold, inverse, verdict == HOLDS)
    per_group = np.where(any_violated, VIOLATED, np.where(all_hold, HOLDS, UNDECIDED))
    return per_group[inverse].astype(object)


def decide(approx: bool, tests: pd.DataFrame, thresholds: Thresholds) -> None:
    """Add `verdict`, `violated`, `detectable_ratio` and `runs_needed` to tests that hold
    compare's statistics and model columns and `p_adjusted`."""
    verdict = verdicts(
        approx,
        tests["violation_ratio"].to_numpy(),
        tests["ratio_low"].to_numpy(),
        tests["ratio_high"].to_numpy(),
        tests["p_adjusted"].to_numpy(),
        thresholds,
    )
    tests["verdict"] = verdict
    tests["violated"] = verdict == VERDICTS[0]
    se, df = tests[LOG_SE].to_numpy(), tests[DF].to_numpy()
    runs = np.minimum(tests["n_lhs"].to_numpy(), tests["n_rhs"].to_numpy())
    detectable = detectable_ratios(approx, se, df, thresholds)
    # A signed-rank test flags nothing below its fewest runs, whatever the spread.
    signed_rank = tests[TEST_COLUMN].isin(SIGNED_RANK_TESTS).to_numpy()
    least = least_signed_rank_runs(approx, thresholds.p_thres)
    detectable[signed_rank & (runs < least)] = np.inf
    tests["detectable_ratio"] = detectable
    undecided = verdict == VERDICTS[2]
    ratio = tests["violation_ratio"].to_numpy()
    needed = np.full(len(tests), np.nan)
    needed[undecided] = runs_needed(
        approx,
        np.log(ratio[undecided]),
        se[undecided],
        runs[undecided],
        tests[TEST_COLUMN].isin(PAIRED_TESTS).to_numpy()[undecided],
        thresholds,
    )
    size = np.maximum(ratio, 1 / ratio) if approx else ratio
    toward_violated = undecided & signed_rank & (size >= thresholds.v_thres)
    needed[toward_violated] = np.maximum(needed[toward_violated], least)
    tests["runs_needed"] = pd.array(needed, dtype="Int64")
