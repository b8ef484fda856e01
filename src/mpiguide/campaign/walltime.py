"""Whether a campaign's runs can finish within the walltime of the jobs that run them: the least
time a run of its grid can take, against the `runtime` resource of its run jobs (a profile's
default-resources, or set-resources per rule).

The typical time of a run is only an estimate (campaign.summary's model, off by an order of
magnitude on some machines), so a campaign is refused only on a floor no machine beats: every
repetition is at least a synchronisation and a call, and every iteration of the simulated-work
loop (a chain of dependent decrements) at least one cycle. A job whose typical estimate exceeds
its runtime is warned about: it is likely, not certain, to be killed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mpiguide.core.errors import ConfigError

MIN_SECONDS_PER_REPETITION = 100e-9
MIN_SECONDS_PER_WORK_ITERATION = 0.2e-9  # one cycle at 5 GHz
BLOCK_RULE = "run_block"


def run_rule(mpi: str) -> str:
    """The rule that runs one launch of `mpi` without blocks (workflow/rules/run.smk)."""
    return f"run_{mpi}"


def grid_numbers(grid: pd.DataFrame, column: str) -> np.ndarray:
    """A numeric grid column as floats, 0 where it is empty (not applicable) or missing."""
    if column not in grid.columns:
        return np.zeros(len(grid))
    return pd.to_numeric(grid[column], errors="coerce").fillna(0).to_numpy(float)


def within_budgets(seconds: np.ndarray, grid: pd.DataFrame) -> np.ndarray:
    """Per experiment, `seconds` capped by its `max_time` budget (0: none). A budget stops an
    experiment after the repetition that spends it: about the budget, at least the budget."""
    max_time = grid_numbers(grid, "max_time")
    return np.where(max_time > 0, np.minimum(seconds, max_time), seconds)


def least_run_seconds(grid: pd.DataFrame) -> float:
    """The least time one launch over every experiment of `grid` can take."""
    work = grid_numbers(grid, "work")
    least = grid_numbers(grid, "nrep") * (
        MIN_SECONDS_PER_REPETITION + work * MIN_SECONDS_PER_WORK_ITERATION
    )
    return float(within_budgets(least, grid).sum())


def run_jobs(config: Mapping[str, Any], blocking: str) -> dict[str, int]:
    """The rules that run launches, each with the launches one of its jobs runs back to back."""
    if blocking == "run":
        return {BLOCK_RULE: len(config["mpi"])}
    return {run_rule(mpi): 1 for mpi in config["mpi"]}


@dataclass(frozen=True)
class _Overrun:
    """A run job whose time exceeds its `runtime`: `seconds` per estimate over it."""

    rule: str
    minutes: float
    launches: int
    seconds: dict[str, float]

    @property
    def block(self) -> str:
        """What a block adds to the job's time, for the messages."""
        return f", {self.launches} launches back to back in one block" if self.launches > 1 else ""


def _overruns(
    config: Mapping[str, Any],
    blocking: str,
    runtime_minutes: Mapping[str, float | None],
    run_seconds: Mapping[str, float],
) -> Iterator[_Overrun]:
    """The run jobs whose time by some estimate of `run_seconds` (seconds a launch) exceeds
    their `runtime` (minutes; None: no limit)."""
    for rule, launches in run_jobs(config, blocking).items():
        minutes = runtime_minutes.get(rule)
        if minutes is None:
            continue
        over = {
            name: seconds * launches
            for name, seconds in run_seconds.items()
            if seconds * launches > minutes * 60
        }
        if over:
            yield _Overrun(rule, minutes, launches, over)


def check_walltime(
    config: Mapping[str, Any],
    grid: pd.DataFrame,
    blocking: str,
    runtime_minutes: Mapping[str, float | None],
    source: str,
) -> None:
    """ConfigError when a run job cannot finish within its `runtime` (minutes; None: no limit),
    naming the resource to raise and the keys that make the runs long."""
    for overrun in _overruns(config, blocking, runtime_minutes, {"least": least_run_seconds(grid)}):
        rule = overrun.rule
        raise ConfigError(
            f"{source}: a `{rule}` job cannot finish within its runtime of {overrun.minutes:g} "
            f"min: its {len(grid)} experiments take at least {overrun.seconds['least']:,.0f} s"
            f"{overrun.block} (nrep x (at least {MIN_SECONDS_PER_REPETITION * 1e9:g} ns a "
            f"repetition + work x at least {MIN_SECONDS_PER_WORK_ITERATION * 1e9:g} ns), "
            f"max_time included); raise `runtime` (the profile's default-resources, or "
            f"set-resources: {rule}: runtime) or lower nrep or work"
        )


def typical_walltime_warnings(
    config: Mapping[str, Any],
    run_seconds: Mapping[str, float],
    blocking: str,
    runtime_minutes: Mapping[str, float | None],
    source: str,
) -> list[str]:
    """A warning per run job whose typical estimate (`run_seconds`: one launch per deployment,
    campaign.summary's model) exceeds its `runtime` (minutes; None: no limit), naming the rule,
    the estimate and the resource to raise."""
    found = []
    for overrun in _overruns(config, blocking, runtime_minutes, run_seconds):
        estimates = ", ".join(
            f"{seconds / 60:,.1f} min ({deployment})"
            for deployment, seconds in overrun.seconds.items()
        )
        found.append(
            f"{source}: a `{overrun.rule}` job is estimated at about {estimates}{overrun.block}, "
            f"above its runtime of {overrun.minutes:g} min: a job is killed at its runtime, and "
            "the estimate is typical, not a bound; time one run, then raise `runtime` (the "
            f"profile's default-resources, or set-resources: {overrun.rule}: runtime) or lower "
            "nrep"
        )
    return found
