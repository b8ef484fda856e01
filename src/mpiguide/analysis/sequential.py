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

A test also stops, undecided, when it is futile: when even `max` runs would most likely not
decide it at its observed spread and effect (`runs_needed` beyond `max`, or none). Stopping
without a claim never adds an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED, Thresholds

# Why a test stopped at its look (column `stop` of an adaptive campaign's tests.csv): decided
# (violated or holds), futile (undecided, and even `max` runs would most likely not decide it),
# max_runs (undecided at the last look), or open (undecided, runs remain: the campaign goes on).
DECIDED, FUTILE, MAX_RUNS, OPEN = "decided", "futile", "max_runs", "open"
STOPS = (DECIDED, FUTILE, MAX_RUNS, OPEN)
# tests.csv's columns of an adaptive campaign, after TEST_RESULT_COLUMNS: the runs per side of
# the look a test's row was decided at (0: its runs reach no look yet), and why it stopped.
LOOK_RUNS, STOP = "look_runs", "stop"
STOP_COLUMNS = (LOOK_RUNS, STOP)


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


def stops(verdict: np.ndarray, runs_needed: np.ndarray, look: int, looks: Looks) -> np.ndarray:
    """Per test decided at look index `look` (its verdict and runs_needed at the spent levels):
    why it stops there, or OPEN."""
    decided = verdict != UNDECIDED
    with np.errstate(invalid="ignore"):
        futile = ~(np.asarray(runs_needed, dtype=float) <= looks.last)
    undecided = MAX_RUNS if look == looks.count - 1 else np.where(futile, FUTILE, OPEN)
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
