"""Decisions at planned looks, for a campaign whose runs are a range (`runs: {min, max, step}`;
docs/analysis.md, "Adaptive campaigns").

A test is decided at its first `min` runs per side and again after every further `step`, up to
`max`: the looks n_1 < n_2 < ... < n_K = max are fixed before any data are seen. Deciding at
every look with the fixed-n levels would give a null test K chances to be called violated, and a
test at the threshold K chances to be called holding. Each look therefore decides at a K-th of
both error budgets (Bonferroni's inequality over the looks): p_thres / K for `violated`, and
confidence 1 - (1 - confidence) / K for the bounds behind `holds`. Whatever the looks' data
and whenever a test stops, P(some look calls a null test violated) <= sum over looks of
p_thres / K = p_thres, and the same for a false `holds`, so both stay valid under optional
stopping.

A test also stops, undecided, when it is futile: when the chance that the last look decides it,
predicted from its runs so far, is below FUTILE_BELOW (decision_chances). Stopping without a
claim never adds an error; a futile stop only loses the decisions that `max` runs would have
made, and the prediction is built so that it rarely does (docs/analysis.md, "Futility").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mpiguide.analysis.comparisons import PAIRED_TESTS, SIGNED_RANK_TESTS, TEST_COLUMN
from mpiguide.analysis.stats import t_cdf, t_quantiles
from mpiguide.analysis.verdicts import (
    HOLDS,
    UNDECIDED,
    VIOLATED,
    Thresholds,
    least_signed_rank_runs,
)

# Why a test stopped at its look (column `stop` of an adaptive campaign's tests.csv): decided
# (violated or holds), futile (undecided, and `max` runs would most likely not decide it),
# max_runs (undecided at the last look), or open (undecided, runs remain: the campaign goes on).
DECIDED, FUTILE, MAX_RUNS, OPEN = "decided", "futile", "max_runs", "open"
STOPS = (DECIDED, FUTILE, MAX_RUNS, OPEN)
# tests.csv's columns of an adaptive campaign, after TEST_RESULT_COLUMNS: the runs per side of
# the look a test's row was decided at (0: its runs reach no look yet), and why it stopped.
LOOK_RUNS, STOP = "look_runs", "stop"
STOP_COLUMNS = (LOOK_RUNS, STOP)
# A test is futile at a look when its predicted chance of being decided at the last look is
# below this (docs/analysis.md, "Futility": at 0.05, under 2 % of the tests that `max` runs
# decide are stopped as futile in tests/unit/analysis/test_sequential.py's simulations).
FUTILE_BELOW = 0.05


@dataclass(frozen=True)
class Looks:
    """The planned looks: runs per side at each, ascending, the last one the campaign's max."""

    runs: tuple[int, ...]

    @classmethod
    def planned(cls, minimum: int, maximum: int, step: int) -> Looks:
        """min, min + step, ... below max, then max."""
        return cls((*range(minimum, maximum, step), maximum))

    @classmethod
    def of(cls, runs: int | Mapping[str, int]) -> Looks:
        """The looks of a config's `runs`: an integer is one look (a fixed campaign), a range
        `{min, max, step}` its planned looks."""
        if isinstance(runs, Mapping):
            return cls.planned(runs["min"], runs["max"], runs["step"])
        return cls((runs,))

    @property
    def adaptive(self) -> bool:
        return self.count > 1

    @property
    def count(self) -> int:
        return len(self.runs)

    @property
    def last(self) -> int:
        return self.runs[-1]

    def spent(self, thresholds: Thresholds) -> Thresholds:
        """The levels every look decides at: a K-th of each error budget."""
        return Thresholds(
            thresholds.p_thres / self.count,
            thresholds.v_thres,
            1 - (1 - thresholds.confidence) / self.count,
        )

    def reached(self, runs: np.ndarray) -> np.ndarray:
        """Per number of runs, the index of the last look it reaches (-1: none yet)."""
        return np.searchsorted(np.asarray(self.runs), np.asarray(runs), side="right") - 1


def decision_chances(tests: pd.DataFrame, looks: Looks, spent: Thresholds) -> np.ndarray:
    """Per test decided at a look (its row of evaluate at the spent levels: `relation`, `test`,
    `n_lhs`, `n_rhs`, `violation_ratio`, `ratio_high`, `high_level`), the predicted chance that
    the last look, at `looks.last` runs per side, decides it; NaN where its runs give no spread.

    The log effect at the last look, given the runs so far (n per side, effect d, standard
    error s), is predicted as d + s * sqrt(1 - n / max) * T with T Student's t at the look's
    degrees of freedom: the flat-prior predictive distribution of the mean of all max runs,
    widened by the uncertainty of the spread. The last look decides where that effect passes
    its bars at the standard error s * sqrt(n / max): the violation bar, or the bound behind
    `holds`. The standard error is read back from the upper bound (its distance from the effect
    on the log scale over the one-sided t quantile at its level), with n - 1 degrees of freedom
    for paired tests and 2 (n - 1) otherwise, as runs_needed takes them. Welch's degrees of
    freedom are at most 2 (n - 1), so its spread comes out at most a little small, which makes
    the chance larger and a futile stop rarer; the rank tests' Hodges-Lehmann bounds are read
    the same way, an approximation. A signed-rank test whose last look has fewer runs than its
    p-value needs to reach the violation bar (verdicts.least_signed_rank_runs) has no chance of
    a violation."""
    approx = tests["relation"].to_numpy() == "approx"
    paired = tests[TEST_COLUMN].isin(PAIRED_TESTS).to_numpy()

    def values(column: str) -> np.ndarray:
        return tests[column].to_numpy(dtype=float, na_value=np.nan)

    runs = np.minimum(values("n_lhs"), values("n_rhs"))
    last = float(looks.last)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_effect = np.log(values("violation_ratio"))
        upper = np.log(values("ratio_high")) - log_effect
        df_now = np.where(paired, 1.0, 2.0) * (runs - 1)
        df_now = np.where(df_now > 0, df_now, np.nan)
        df_last = np.where(paired, 1.0, 2.0) * (last - 1)
        se_now = upper / t_quantiles(values("high_level"), df_now)
        se_last = se_now * np.sqrt(runs / last)
        spread = se_now * np.sqrt(np.clip(1 - runs / last, 0, None))
        log_v = np.log(spent.v_thres)
        alpha = np.where(approx, spent.p_thres / 2, spent.p_thres)
        violation_bar = np.maximum(t_quantiles(1 - alpha, df_last) * se_last, log_v)
        least = np.where(approx, least_signed_rank_runs(True, spent.p_thres),
                         least_signed_rank_runs(False, spent.p_thres))  # fmt: skip
        floored = tests[TEST_COLUMN].isin(SIGNED_RANK_TESTS).to_numpy() & (last < least)
        violation_bar = np.where(floored, np.inf, violation_bar)
        holds_bar = log_v - t_quantiles(spent.confidence, df_last) * se_last

        def below(value: np.ndarray) -> np.ndarray:
            """P(predicted log effect < value)."""
            return t_cdf((value - log_effect) / spread, df_now)

        one_sided = (1 - below(violation_bar)) + below(holds_bar)
        two_sided = (
            (1 - below(violation_bar))
            + below(-violation_bar)
            + np.clip(below(holds_bar) - below(-holds_bar), 0, None)
        )
    return np.where(approx, two_sided, one_sided)


def stops(tests: pd.DataFrame, look: int, looks: Looks, spent: Thresholds) -> np.ndarray:
    """Per test decided at look index `look` (its row of evaluate at the spent levels): why it
    stops there, or OPEN. An undecided test whose chance of a decision at the last look cannot
    be predicted (no spread yet) stays OPEN."""
    verdict = tests["verdict"].to_numpy()
    decided = verdict != UNDECIDED
    if look == looks.count - 1:
        undecided: Any = MAX_RUNS
    else:
        with np.errstate(invalid="ignore"):
            futile = decision_chances(tests, looks, spent) < FUTILE_BELOW
        undecided = np.where(futile, FUTILE, OPEN)
    return np.where(decided, DECIDED, undecided).astype(object)


def first_stops(stops_by_look: np.ndarray) -> np.ndarray:
    """For a (looks, tests) array of `stops` at every look, per test the index of the look it
    stopped at: its first look that is not OPEN, else the last look."""
    stopped = stops_by_look != OPEN
    return np.where(stopped.any(axis=0), stopped.argmax(axis=0), stops_by_look.shape[0] - 1)


# looks.csv's columns: per guideline and look, the tests that stopped there, by verdict and stop.
LOOK_TABLE_COLUMNS = ("guideline", LOOK_RUNS, "tests", VIOLATED, HOLDS, FUTILE, MAX_RUNS, OPEN)


def look_table(tests: pd.DataFrame) -> pd.DataFrame:
    """Per guideline and look (its runs per side), how many of an adaptive campaign's tests
    stopped there: decided violated, decided holds, futile, at max_runs, still open."""
    kind = np.where(tests[STOP].to_numpy() == DECIDED, tests["verdict"].to_numpy(),
                    tests[STOP].to_numpy())  # fmt: skip
    counts = (
        tests.assign(_kind=kind)
        .groupby(["guideline", LOOK_RUNS, "_kind"], sort=True)
        .size()
        .unstack("_kind", fill_value=0)
        .reindex(columns=list(LOOK_TABLE_COLUMNS[3:]), fill_value=0)
    )
    counts.insert(0, "tests", counts.sum(axis=1))
    return counts.reset_index()[list(LOOK_TABLE_COLUMNS)]
