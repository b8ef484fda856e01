"""Statistics of paired experiments: run medians stacked per shape, one vectorised call each.

`RunMedians` holds every experiment's run medians as one flat array (sorted by experiment,
then run) with offsets, so the lhs and rhs samples of thousands of tests with the same numbers
of runs become two 2-D arrays with one fancy-indexing step.

A test is decided by one of four tests (its `test` column), fixed by `analysis.test` and by
whether its two sides hold the same runs, never by the data's shape:
- `paired_t`: the one-sample t-test on the runs' log-ratios lhs/rhs (run i of lhs against run
  i of rhs); the effect is their geometric mean, exp(mean log-ratio);
- `block_signed_rank`: where the two sides are different mpi entries measured in blocks (run i
  of both launched back to back in one job), the Wilcoxon signed-rank test on the log-ratios of
  the runs whose launches share their block's attempt (runs measured in different attempts are
  left out and counted, LOST_PAIRS); the effect is their one-sample Hodges-Lehmann estimate,
  its bounds the interval that inverts the same test. Each side of a block is a launch of its
  own, and launches now and then run twice as slow as the rest: a rank test, not a mean;
- `welch_t`: Welch's two-sample t-test on the two sides' log run medians; the effect is the
  ratio of their geometric means;
- `ranksum`: Lübbe's unpaired Wilcoxon rank-sum over the run medians (`analysis.test:
  ranksum`); the effect is the ratio of the medians, its bounds the two-sample Hodges-Lehmann
  interval.
Each test also gets its one-sided bounds at `confidence` (HOLDS_BOUNDS, the bounds behind
`holds`) from the same model, and the log-scale standard error and degrees of freedom that the
violation bounds and the verdicts' power estimates use (`LOG_SE`, `DF`); the rank tests, whose
bounds need their data, also their violation bounds (VIOLATION_BOUNDS) at the one-sided tail
`violation_tail` (verdicts.violation_tails; the t-tests' come from their model in
verdicts.decide). `hl_ratio`, `hl_low`, `hl_high` are the Hodges-Lehmann estimate and its
distribution-free interval at `confidence`, for reading beside the effect (one-sample for paired
tests, two-sample otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpiguide.analysis.stats import (
    Alternative,
    RatioEstimates,
    hodges_lehmann_ratios,
    one_sided_bounds,
    paired_hodges_lehmann_ratios,
    rank_sum_pvalues,
    signed_rank_pvalues,
    t_pvalues,
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
# The model's log-scale standard error and degrees of freedom, the one-sided bounds at
# `confidence` (holds) and the rank tests' at the violation tail: inputs of the verdicts and of
# the intervals tests.csv shows (verdicts.decide), not columns of tests.csv.
LOG_SE, DF = "_log_se", "_df"
HOLDS_BOUNDS = ("_holds_low", "_holds_high")
VIOLATION_BOUNDS = ("_violation_low", "_violation_high")
MODEL_COLUMNS = (LOG_SE, DF, *HOLDS_BOUNDS, *VIOLATION_BOUNDS)
# Launch pairs of block-paired tests left out because their launches ran in different attempts
# of their block (not a column of tests.csv: the check reports the total).
LOST_PAIRS = "_lost_pairs"
# Which test decided a row, and its values.
TEST_COLUMN = "test"
RANKSUM, PAIRED_T, WELCH_T = "ranksum", "paired_t", "welch_t"
BLOCK_SIGNED_RANK = "block_signed_rank"
PAIRED_TESTS = (PAIRED_T, BLOCK_SIGNED_RANK)
# The tests whose bounds are Hodges-Lehmann intervals of their data, not of a t model.
RANK_TESTS = (RANKSUM, BLOCK_SIGNED_RANK)
# The tests whose p-value cannot go below 2^-n (one-sided) or 2^(1-n) at n pairs.
SIGNED_RANK_TESTS = (BLOCK_SIGNED_RANK,)
# What `may_pair` allows a test (compare): nothing, pairing run by run (the two sides come from
# the same launches), or pairing block by block (the two sides' launches share blocks).
NO_PAIRING, PAIR_RUNS, PAIR_BLOCKS = 0, 1, 2
# A block-paired test needs this many pairs from one attempt; with fewer it is decided unpaired.
MIN_BLOCK_PAIRS = 2
# The rank tests' power is estimated as the t-tests' at their asymptotic relative efficiency
# under normality, 3/pi (the same for the rank-sum against Welch and the signed-rank against the
# one-sample t): their standard error is that much larger.
_RANK_SE_FACTOR = float(np.sqrt(np.pi / 3))


@dataclass(frozen=True)
class RunMedians:
    """Run medians of experiment row r: values[start[r] : start[r] + count[r]], measured in
    runs[start[r] : start[r] + count[r]] (ascending) in the block attempts of `attempts` at the
    same places (0: not in a block); median[r] their median."""

    values: np.ndarray
    runs: np.ndarray
    start: np.ndarray
    count: np.ndarray
    median: np.ndarray
    attempts: np.ndarray

    @classmethod
    def from_frame(
        cls,
        rows: np.ndarray,
        runs: np.ndarray,
        medians: np.ndarray,
        n_rows: int,
        attempts: np.ndarray | None = None,
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
        attempts = np.zeros(len(order), np.int64) if attempts is None else np.asarray(attempts)
        return cls(values, np.asarray(runs)[order], start, count, median, attempts[order])

    def _index(self, rows: np.ndarray, width: int) -> np.ndarray:
        return self.start[rows][:, None] + np.arange(width)

    def stack(self, rows: np.ndarray, width: int) -> np.ndarray:
        """(len(rows), width) array of the run medians of `rows` (all with `width` runs)."""
        return self.values[self._index(rows, width)]

    def same_runs(self, lhs_rows: np.ndarray, rhs_rows: np.ndarray, width: int) -> np.ndarray:
        """Per pair of rows (each with `width` runs): whether both hold the same runs."""
        lhs_runs = self.runs[self._index(lhs_rows, width)]
        return (lhs_runs == self.runs[self._index(rhs_rows, width)]).all(axis=1)

    def block_pairs(
        self, lhs_rows: np.ndarray, rhs_rows: np.ndarray, width: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per pair of rows with the same runs, per run, two (len(lhs_rows), width) masks:
        whether both launches ran in blocks, and whether in the same attempt of one."""
        lhs = self.attempts[self._index(lhs_rows, width)]
        rhs = self.attempts[self._index(rhs_rows, width)]
        blocked = (lhs > 0) & (rhs > 0)
        return blocked, blocked & (lhs == rhs)


def compare(
    run_medians: RunMedians,
    lhs_rows: np.ndarray,
    rhs_rows: np.ndarray,
    alternative: Alternative,
    confidence: float,
    may_pair: np.ndarray,
    violation_tail: float | np.ndarray,
    unpaired_test: str = WELCH_T,
) -> pd.DataFrame:
    """STAT_COLUMNS, MODEL_COLUMNS, LOST_PAIRS and TEST_COLUMN for every test (lhs_rows[i]
    against rhs_rows[i]); the rank tests' VIOLATION_BOUNDS one-sided at 1 - violation_tail (one
    tail for every test, or one per test), the t-tests' left empty.

    may_pair[i] (NO_PAIRING, PAIR_RUNS, PAIR_BLOCKS; True counts as PAIR_RUNS): test i is paired
    run by run when PAIR_RUNS and its two sides hold the same runs; block by block when
    PAIR_BLOCKS, its two sides hold the same runs and at least MIN_BLOCK_PAIRS of them share
    their block's attempt (the others are lost pairs); else it is decided by `unpaired_test`
    (WELCH_T or RANKSUM).
    """
    n_tests = lhs_rows.size
    n_lhs = run_medians.count[lhs_rows]
    n_rhs = run_medians.count[rhs_rows]
    result = {name: np.full(n_tests, np.nan) for name in (*STAT_COLUMNS, *MODEL_COLUMNS)}
    tails = np.broadcast_to(np.asarray(violation_tail, dtype=np.float64), (n_tests,))
    result["n_lhs"], result["n_rhs"] = n_lhs, n_rhs
    mode = np.asarray(may_pair).astype(np.int8)
    paired = np.zeros(n_tests, dtype=bool)
    block_paired = np.zeros(n_tests, dtype=bool)
    lost = np.zeros(n_tests, dtype=np.int64)
    shapes = np.unique(np.stack((n_lhs, n_rhs), axis=1), axis=0) if n_tests else np.empty((0, 2))
    # Every experiment has at least one run median (its rows come from medians.parquet).
    for m, n in shapes:
        which = np.flatnonzero((n_lhs == m) & (n_rhs == n))
        kept = np.zeros((which.size, m), dtype=bool)
        if m == n:
            candidates = which[mode[which] == PAIR_RUNS]
            paired[candidates] = run_medians.same_runs(
                lhs_rows[candidates], rhs_rows[candidates], m
            )
            in_blocks = np.flatnonzero(mode[which] == PAIR_BLOCKS)
            candidates = which[in_blocks]
            same = run_medians.same_runs(lhs_rows[candidates], rhs_rows[candidates], m)
            blocked, shared = run_medians.block_pairs(lhs_rows[candidates], rhs_rows[candidates], m)
            blocked &= same[:, None]
            shared &= same[:, None]
            enough = shared.sum(axis=1) >= MIN_BLOCK_PAIRS
            block_paired[candidates] = enough
            kept[in_blocks] = shared & enough[:, None]
            # Pairs of blocks are lost where the two launches of a run are from different
            # attempts (all of them when too few remain to pair).
            lost[candidates] = np.where(enough, blocked.sum(axis=1) - shared.sum(axis=1),
                                        blocked.sum(axis=1))  # fmt: skip
        lhs = run_medians.stack(lhs_rows[which], m)
        rhs = run_medians.stack(rhs_rows[which], n)
        result["median_lhs"][which] = run_medians.median[lhs_rows[which]]
        result["median_rhs"][which] = run_medians.median[rhs_rows[which]]
        unpaired = ~(paired[which] | block_paired[which])
        if unpaired_test == RANKSUM:
            _rank_sum(result, which[unpaired], lhs[unpaired], rhs[unpaired], alternative,
                      _Levels(confidence, tails[which[unpaired]]))  # fmt: skip
        else:
            _welch(result, which[unpaired], lhs[unpaired], rhs[unpaired], alternative, confidence)
        by_run = paired[which]
        if by_run.any():
            log_ratios = np.log(lhs[by_run]) - np.log(rhs[by_run])
            _paired(result, which[by_run], log_ratios, alternative, confidence)
        by_block = np.flatnonzero(block_paired[which])
        for rows, log_ratios in _kept_log_ratios(lhs[by_block], rhs[by_block], kept[by_block]):
            _block_signed_rank(result, which[by_block[rows]], log_ratios, alternative,
                               _Levels(confidence, tails[which[by_block[rows]]]))  # fmt: skip
    frame = pd.DataFrame(result)
    frame[LOST_PAIRS] = lost
    frame[TEST_COLUMN] = np.where(
        paired, PAIRED_T, np.where(block_paired, BLOCK_SIGNED_RANK, unpaired_test)
    )
    return frame


def rank_violation_bounds(
    run_medians: RunMedians,
    lhs_rows: np.ndarray,
    rhs_rows: np.ndarray,
    test: np.ndarray,
    violation_tail: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The VIOLATION_BOUNDS of the rank tests among tests decided by `compare` (`test`: their
    TEST_COLUMN) read again at one-sided tail violation_tail[i] (1 - violation_tail[i] each):
    the bounds `compare` gives them at that tail, without the rest of the comparison; NaN for
    the t-tests."""
    n_tests = lhs_rows.size
    low, high = np.full(n_tests, np.nan), np.full(n_tests, np.nan)
    n_lhs = run_medians.count[lhs_rows]
    n_rhs = run_medians.count[rhs_rows]
    tests = np.asarray(test)
    rank = np.isin(tests, RANK_TESTS)
    if not rank.any():
        return low, high
    for m, n in np.unique(np.stack((n_lhs[rank], n_rhs[rank]), axis=1), axis=0):
        which = np.flatnonzero(rank & (n_lhs == m) & (n_rhs == n))
        level = _violation_level(violation_tail[which])
        lhs = run_medians.stack(lhs_rows[which], m)
        rhs = run_medians.stack(rhs_rows[which], n)
        by_sum = np.flatnonzero(tests[which] == RANKSUM)
        if by_sum.size:
            (bounds,) = hodges_lehmann_ratios(lhs[by_sum], rhs[by_sum], level[by_sum])
            low[which[by_sum]], high[which[by_sum]] = bounds.low, bounds.high
        by_block = np.flatnonzero(tests[which] == BLOCK_SIGNED_RANK)
        # A block-paired test keeps the runs whose launches share their block's attempt.
        _, kept = run_medians.block_pairs(lhs_rows[which[by_block]], rhs_rows[which[by_block]], m)
        for rows, log_ratios in _kept_log_ratios(lhs[by_block], rhs[by_block], kept):
            (bounds,) = paired_hodges_lehmann_ratios(log_ratios, level[by_block[rows]])
            low[which[by_block[rows]]], high[which[by_block[rows]]] = bounds.low, bounds.high
    return low, high


def _kept_log_ratios(
    lhs: np.ndarray, rhs: np.ndarray, kept: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per number k of kept runs: the rows that keep k runs, and the log-ratios lhs/rhs of
    their kept runs in run order, (rows, k)."""
    counts = kept.sum(axis=1)
    for k in np.unique(counts):
        rows = np.flatnonzero(counts == k)
        # The kept runs of each row first, in run order: a stable sort of "not kept".
        columns = np.argsort(~kept[rows], axis=1, kind="stable")[:, :k]
        log_ratios = np.log(np.take_along_axis(lhs[rows], columns, axis=1)) - np.log(
            np.take_along_axis(rhs[rows], columns, axis=1)
        )
        yield rows, log_ratios


def _welch_model(log_lhs: np.ndarray, log_rhs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Welch's log effect, standard error and Welch-Satterthwaite degrees of freedom per row."""
    m, n = log_lhs.shape[1], log_rhs.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        var_lhs = log_lhs.var(axis=1, ddof=1) / m if m > 1 else np.full(len(log_lhs), np.nan)
        var_rhs = log_rhs.var(axis=1, ddof=1) / n if n > 1 else np.full(len(log_rhs), np.nan)
        se = np.sqrt(var_lhs + var_rhs)
        df = (var_lhs + var_rhs) ** 2 / (var_lhs**2 / (m - 1) + var_rhs**2 / (n - 1))
    return log_lhs.mean(axis=1) - log_rhs.mean(axis=1), se, df


def _welch(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    lhs: np.ndarray,
    rhs: np.ndarray,
    alternative: Alternative,
    confidence: float,
) -> None:
    if which.size == 0:
        return
    log_lhs, log_rhs = np.log(lhs), np.log(rhs)
    effect, se, df = _welch_model(log_lhs, log_rhs)
    result["violation_ratio"][which] = np.exp(effect)
    with np.errstate(invalid="ignore", divide="ignore"):
        # scipy's ttest_ind(equal_var=False): where both variances are zero (df 0/0) it takes
        # df as 1, the statistic being infinite or NaN whatever df is
        df_of_p = np.where(np.isnan(df), 1.0, df)
        result["p_value"][which] = t_pvalues(effect / se, df_of_p, alternative)
    _store_model(result, which, effect, se, df, confidence)
    _store(result, which, *hodges_lehmann_ratios(lhs, rhs, confidence))


@dataclass(frozen=True)
class _Levels:
    """The levels a rank test's Hodges-Lehmann intervals are read at: `confidence` (the
    interval beside the effect) and, one-sided, the bound behind `holds` at `confidence` and
    the violation bound at 1 - tail (per test)."""

    confidence: float
    tail: np.ndarray

    @property
    def two_sided(self) -> tuple[float, float, np.ndarray]:
        """The two-sided levels whose ends are those bounds: a one-sided bound at c is an end
        of the two-sided interval at 2c - 1."""
        return self.confidence, 2 * self.confidence - 1, _violation_level(self.tail)


def _violation_level(tail: np.ndarray) -> np.ndarray:
    """The two-sided level of the interval whose ends are the one-sided bounds at 1 - tail."""
    return 1 - 2 * tail


def _rank_sum(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    lhs: np.ndarray,
    rhs: np.ndarray,
    alternative: Alternative,
    levels: _Levels,
) -> None:
    if which.size == 0:
        return
    result["violation_ratio"][which] = result["median_lhs"][which] / result["median_rhs"][which]
    result["p_value"][which] = rank_sum_pvalues(lhs, rhs, alternative)
    _store_rank_bounds(result, which, hodges_lehmann_ratios(lhs, rhs, *levels.two_sided))
    _, se, df = _welch_model(np.log(lhs), np.log(rhs))
    result[LOG_SE][which] = se * _RANK_SE_FACTOR
    result[DF][which] = df


def _paired(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    log_ratios: np.ndarray,
    alternative: Alternative,
    confidence: float,
) -> None:
    n = log_ratios.shape[1]
    effect = log_ratios.mean(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = log_ratios.std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.full(len(effect), np.nan)
        # scipy's ttest_1samp against 0
        result["p_value"][which] = t_pvalues(effect / se, n - 1.0, alternative)
    result["violation_ratio"][which] = np.exp(effect)
    _store_model(result, which, effect, se, np.full(len(effect), n - 1.0), confidence)
    _store(result, which, *paired_hodges_lehmann_ratios(log_ratios, confidence))


def _block_signed_rank(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    log_ratios: np.ndarray,
    alternative: Alternative,
    levels: _Levels,
) -> None:
    n = log_ratios.shape[1]
    result["p_value"][which] = signed_rank_pvalues(log_ratios, alternative)
    estimates = paired_hodges_lehmann_ratios(log_ratios, *levels.two_sided)
    # The estimate is the same at every level.
    result["violation_ratio"][which] = estimates[0].ratio
    _store_rank_bounds(result, which, estimates)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = log_ratios.std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.full(len(which), np.nan)
    result[LOG_SE][which] = se * _RANK_SE_FACTOR
    result[DF][which] = n - 1.0


def _store_rank_bounds(
    result: dict[str, np.ndarray], which: np.ndarray, estimates: tuple[RatioEstimates, ...]
) -> None:
    """A rank test's Hodges-Lehmann estimate and interval at `confidence`, and the ends of its
    intervals at the holds and violation levels (_Levels.two_sided's order)."""
    beside, holds, violation = estimates
    _store(result, which, beside)
    for columns, bounds in ((HOLDS_BOUNDS, holds), (VIOLATION_BOUNDS, violation)):
        result[columns[0]][which] = bounds.low
        result[columns[1]][which] = bounds.high


def _store_model(
    result: dict[str, np.ndarray],
    which: np.ndarray,
    effect: np.ndarray,
    se: np.ndarray,
    df: np.ndarray,
    confidence: float,
) -> None:
    result[HOLDS_BOUNDS[0]][which], result[HOLDS_BOUNDS[1]][which] = one_sided_bounds(
        effect, se, df, confidence
    )
    result[LOG_SE][which] = se
    result[DF][which] = df


def _store(result: dict[str, np.ndarray], which: np.ndarray, estimates: RatioEstimates) -> None:
    result["hl_ratio"][which] = estimates.ratio
    result["hl_low"][which] = estimates.low
    result["hl_high"][which] = estimates.high
