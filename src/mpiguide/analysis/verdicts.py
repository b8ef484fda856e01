"""Three-way verdicts of the tests: violated, holds, undecided, and what each test could have
seen (docs/analysis.md, "Verdicts").

Every test's model gives its effect on the log scale with a standard error and degrees of
freedom (the paired t-test on per-run log-ratios, Welch's t-test on log run medians) or, for
the rank tests (Lübbe's rank-sum, the signed-rank test across launches) the Hodges-Lehmann
interval that inverts them. From the same model come the p-value, the one-sided bound at the
violation level (violated), the one at `confidence` (holds) and the power estimates, so that no
test can be both violated and holding; tests.csv shows beside each verdict the interval that
decided it (shown_intervals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpiguide.analysis.comparisons import (
    DF,
    HOLDS_BOUNDS,
    LOG_SE,
    PAIRED_TESTS,
    RANK_TESTS,
    SIGNED_RANK_TESTS,
    TEST_COLUMN,
    VIOLATION_BOUNDS,
)
from mpiguide.analysis.stats import one_sided_bounds, t_quantiles

VIOLATED, HOLDS, UNDECIDED = "violated", "holds", "undecided"
VERDICTS = (VIOLATED, HOLDS, UNDECIDED)
# The power at which `detectable_ratio` is stated.
POWER = 0.8
# runs_needed is searched up to this many runs per side; beyond it the column stays empty.
MAX_RUNS = 100_000
# A runs_needed a person is shown as a number only up to this many runs per side and this many
# times the runs the test has: further out, the observed effect sits too close to v_thres for
# more runs of this campaign to be the remedy, and the tables say so in words.
REACHABLE_RUNS = 1_000
REACHABLE_FACTOR = 10
BEYOND_REACH = "beyond reach"
_CANDIDATE_RUNS = np.unique(np.round(np.geomspace(2, MAX_RUNS, 600)).astype(np.int64))
# Undecided tests searched at once: bounds the candidates-by-tests temporaries to a few MB.
_ROWS_PER_CHUNK = 1024


@dataclass(frozen=True)
class Thresholds:
    p_thres: float
    v_thres: float
    confidence: float


@dataclass(frozen=True)
class Bounds:
    """One-sided bounds of the ratio per test, a lower and an upper one, each at its level."""

    low: np.ndarray
    high: np.ndarray


def violation_tails(
    approx: bool, p_value: np.ndarray, p_adjusted: np.ndarray, p_thres: float
) -> np.ndarray:
    """Per test, the one-sided tail at which its violation bound is read: the level alpha its
    raw p-value is held to after the multiple-testing correction (p_value <= alpha exactly when
    p_adjusted <= p_thres), halved for `approx` (two-sided).

    alpha = p_thres * p_value / p_adjusted, the correction's own multiplier undone: p_thres
    without a correction, p_thres / m for Bonferroni, the step's critical value for Holm and
    Benjamini-Hochberg. Where the multiplier cannot be read off, a p_adjusted capped at 1, alpha
    is p_thres / m, m the family's size: such a p-value is at least 1/m, so the test is decided
    the same way; a p-value of 0 (adjusted: 0, which passes every level) keeps p_thres. NaN
    where either p-value is."""
    p_value = np.asarray(p_value, dtype=np.float64)
    p_adjusted = np.asarray(p_adjusted, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = p_thres * p_value / p_adjusted
        capped = p_thres / max(p_value.size, 1)
        alpha = np.where(p_adjusted == p_value, p_thres,
                         np.where(p_adjusted >= 1, capped, scaled))  # fmt: skip
    alpha = np.where(np.isnan(p_value) | np.isnan(p_adjusted), np.nan, alpha)
    return uncorrected_tail(approx, 1.0) * alpha


def verdicts(
    approx: bool,
    ratio: np.ndarray,
    violation: Bounds,
    holds: Bounds,
    thresholds: Thresholds,
) -> np.ndarray:
    """violated / holds / undecided per test, from its effect ratio and two pairs of bounds:
    `violation` one-sided at 1 - violation_tails (the violation level), `holds` one-sided at
    `confidence`.

    violated (le, monotone): the lower violation bound above 1 (for the t-tests exactly
    p_adjusted <= p_thres) and the ratio >= v_thres; (approx) the same on either side: the lower
    bound above 1 and ratio >= v_thres, or the upper bound below 1 and ratio <= 1/v_thres.
    holds (le, monotone): the upper holds bound and the ratio below v_thres; (approx) both holds
    bounds and the ratio inside (1/v_thres, v_thres), the two one-sided tests of equivalence
    (TOST). A test without bounds (too few runs) is neither.
    """
    v = thresholds.v_thres
    with np.errstate(invalid="ignore"):
        violated = (violation.low > 1) & (ratio >= v)
        inside = (holds.high < v) & (ratio < v)
        if approx:
            violated |= (violation.high < 1) & (ratio <= 1 / v)
            inside &= (holds.low > 1 / v) & (ratio > 1 / v)
    holds_verdict = ~violated & inside
    return np.where(violated, VIOLATED, np.where(holds_verdict, HOLDS, UNDECIDED)).astype(object)


@dataclass(frozen=True)
class ShownInterval:
    """The interval tests.csv shows beside a verdict (ratio_low, ratio_high) and the one-sided
    level of each bound (low_level, high_level)."""

    low: np.ndarray
    high: np.ndarray
    low_level: np.ndarray
    high_level: np.ndarray


def shown_intervals(
    approx: bool,
    verdict: np.ndarray,
    ratio: np.ndarray,
    violation: Bounds,
    holds: Bounds,
    tails: np.ndarray,
    confidence: float,
) -> ShownInterval:
    """The interval that decided each verdict (docs/analysis.md, "Verdicts"), widened where
    needed to hold the effect ratio (only a rank-sum's ratio of medians can lie outside its
    Hodges-Lehmann bounds), so that it never contradicts the verdict beside it.

    le, monotone: the lower violation bound (level 1 - tail) and the upper holds bound
    (`confidence`), whatever the verdict: each bound is the one its verdict reads.
    approx: violated, both violation bounds; holds, both holds bounds (the TOST interval);
    undecided, the hull of both pairs, at the higher of the two levels per side."""
    violation_level = 1 - np.asarray(tails, dtype=np.float64)
    holds_level = np.full(ratio.shape, confidence)
    if not approx:
        return ShownInterval(
            np.minimum(violation.low, ratio),
            np.maximum(holds.high, ratio),
            violation_level,
            holds_level,
        )
    violated, held = verdict == VIOLATED, verdict == HOLDS
    low = np.where(violated, violation.low,
                   np.where(held, holds.low, np.minimum(violation.low, holds.low)))  # fmt: skip
    high = np.where(violated, violation.high,
                    np.where(held, holds.high, np.maximum(violation.high, holds.high)))  # fmt: skip
    hull_level = np.fmax(violation_level, holds_level)
    level = np.where(violated, violation_level, np.where(held, holds_level, hull_level))
    return ShownInterval(np.minimum(low, ratio), np.maximum(high, ratio), level, level)


def uncorrected_tail(approx: bool, p_thres: float) -> float:
    """The one-sided tail the violation bar puts on the test statistic without a correction:
    p_thres, halved for `approx` (two-sided)."""
    return p_thres / 2 if approx else p_thres


def detectable_ratios(
    approx: bool, se: np.ndarray, df: np.ndarray, thresholds: Thresholds
) -> np.ndarray:
    """The smallest true ratio flagged with probability POWER at this standard error: the
    critical log effect plus POWER's t quantile times se (the observed spread taken as the true
    one, the multiple-testing correction ignored)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(df > 0, df, np.nan)
        critical = np.maximum(
            t_quantiles(1 - uncorrected_tail(approx, thresholds.p_thres), df) * se,
            np.log(thresholds.v_thres),
        )
        return np.exp(critical + t_quantiles(POWER, df) * se)


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
                t_quantiles(1 - uncorrected_tail(approx, thresholds.p_thres), df),
                t_quantiles(thresholds.confidence, df),
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
    """Add `verdict`, `violated`, the interval that decided it (`ratio_low`, `ratio_high`,
    `low_level`, `high_level`), `detectable_ratio` and `runs_needed` to tests that hold
    compare's statistics and model columns and `p_adjusted` (the rank tests' violation bounds
    read at violation_tails of these p-values)."""
    ratio = tests["violation_ratio"].to_numpy()
    se, df = tests[LOG_SE].to_numpy(), tests[DF].to_numpy()
    tails = violation_tails(
        approx, tests["p_value"].to_numpy(), tests["p_adjusted"].to_numpy(), thresholds.p_thres
    )
    # A rank test's bounds need its data (compare read them at these tails); a test without a
    # p-value has no violation bound, as it had no violation.
    rank = tests[TEST_COLUMN].isin(RANK_TESTS).to_numpy() & ~np.isnan(tails)
    model_low, model_high = one_sided_bounds(np.log(ratio), se, df, 1 - tails)
    violation = Bounds(
        np.where(rank, tests[VIOLATION_BOUNDS[0]].to_numpy(), model_low),
        np.where(rank, tests[VIOLATION_BOUNDS[1]].to_numpy(), model_high),
    )
    holds = Bounds(tests[HOLDS_BOUNDS[0]].to_numpy(), tests[HOLDS_BOUNDS[1]].to_numpy())
    verdict = verdicts(approx, ratio, violation, holds, thresholds)
    shown = shown_intervals(approx, verdict, ratio, violation, holds, tails,
                            thresholds.confidence)  # fmt: skip
    tests["ratio_low"], tests["ratio_high"] = shown.low, shown.high
    tests["low_level"], tests["high_level"] = shown.low_level, shown.high_level
    tests["verdict"] = verdict
    tests["violated"] = verdict == VERDICTS[0]
    runs = np.minimum(tests["n_lhs"].to_numpy(), tests["n_rhs"].to_numpy())
    detectable = detectable_ratios(approx, se, df, thresholds)
    # A signed-rank test flags nothing below its fewest runs, whatever the spread.
    signed_rank = tests[TEST_COLUMN].isin(SIGNED_RANK_TESTS).to_numpy()
    least = least_signed_rank_runs(approx, thresholds.p_thres)
    detectable[signed_rank & (runs < least)] = np.inf
    tests["detectable_ratio"] = detectable
    undecided = verdict == VERDICTS[2]
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


def as_number(value: object) -> float:
    """A cell of tests.csv (a number, or text as written) as a float; NaN where empty."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def runs_needed_text(runs_needed: object, runs: object, verdict: object) -> str:
    """An undecided test's `runs_needed` as a person reads it: the number where it is within
    reach (at most REACHABLE_RUNS, and REACHABLE_FACTOR times the test's `runs` where known),
    else BEYOND_REACH (also where no number of runs up to MAX_RUNS would decide it); empty for
    a decided test."""
    if verdict != UNDECIDED:
        return ""
    needed, have = as_number(runs_needed), as_number(runs)
    if np.isnan(needed) or needed > REACHABLE_RUNS or needed > REACHABLE_FACTOR * have:
        return BEYOND_REACH
    return str(int(needed))
