"""What a valid campaign amounts to, for `mpiguide validate`: its experiments, runs, launches,
guideline tests and an estimate of the kernel's time, and the warnings a campaign deserves
before hours are spent on it (more ranks than cores, more than a day on this machine, too few
runs to ever reach p_thres).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, AnalysisOptions, Guideline
from mpiguide.analysis.guidelines import selects_algorithm, with_library_choice, with_nprocs
from mpiguide.analysis.pairing import Experiments, pair_comparison, pair_monotone
from mpiguide.analysis.sequential import Looks
from mpiguide.campaign.walltime import grid_numbers, least_run_seconds, within_budgets
from mpiguide.core.columns import HEAP, HEAP_DEFAULT
from mpiguide.core.paths import deployment_name
from mpiguide.plan.grid import build_grid
from mpiguide.plan.inputs import ALGORITHM

# The kernel-time model: per repetition a fixed cost (synchronisation and the call) plus the
# bytes every rank sends at an assumed bandwidth; an experiment with a max_time budget stops at
# it; a launch costs its start-up. Machines differ from it by an order of magnitude either way:
# an estimate to tell minutes from days, not a prediction.
SECONDS_PER_REPETITION = 10e-6
SECONDS_PER_BYTE = 1e-9  # 1 GB/s per rank
SECONDS_PER_LAUNCH = 1.0
# Which ops of the grid an mpi entry runs (Campaign.ops_of), None: all of it.
EntryOps = Callable[[str], Sequence[str] | None]
MODEL = (
    f"per repetition {SECONDS_PER_REPETITION * 1e6:g} µs + msg_size x ranks at "
    f"{1 / SECONDS_PER_BYTE / 1e9:g} GB/s, capped at max_time per experiment, plus "
    f"{SECONDS_PER_LAUNCH:g} s per launch"
)


@dataclass
class Summary:
    experiments: int  # grid rows (of each entry: entry_grids) x mpi entries x deployments
    grid_rows: int
    mpi_entries: int
    deployments: int
    runs: int  # at most, in an adaptive campaign
    launches: int
    looks: tuple[int, ...]
    tests: dict[str, int]
    kernel_seconds: float
    run_seconds: dict[str, float] = field(default_factory=dict)  # deployment -> one launch
    least_run_seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        tests = sum(self.tests.values())
        per_guideline = ", ".join(f"{gid} {n}" for gid, n in self.tests.items())
        whole = self.experiments == self.grid_rows * self.mpi_entries * self.deployments
        return [
            f"experiments: {self.experiments} ({self.grid_rows} in the grid"
            f"{'' if whole else ', or the part an entry runs,'} x "
            f"{_count(self.mpi_entries, 'mpi entry', 'mpi entries')} x "
            f"{_count(self.deployments, 'deployment', 'deployments')})",
            f"runs: {self.runs} per mpi entry and deployment; launches: {self.launches}"
            if len(self.looks) == 1
            else f"runs: adaptive, decided at {', '.join(map(str, self.looks))} runs; at most "
            f"{self.runs} per mpi entry and deployment and {self.launches} launches",
            f"tests: {tests}" + (f" ({per_guideline})" if per_guideline else ""),
            f"kernel time: {'at most ' if len(self.looks) > 1 else ''}about "
            f"{_duration(self.kernel_seconds)} (an estimate: {MODEL})",
            describe_run(self.run_seconds, self.least_run_seconds),
        ]


def typical_run(run_seconds: Mapping[str, float]) -> str:
    """One launch's kernel time by the estimate, per deployment."""
    estimates = ", ".join(f"{_duration(t)} ({d})" for d, t in run_seconds.items())
    return f"a run: about {estimates}"


def describe_run(run_seconds: Mapping[str, float], least_seconds: float) -> str:
    """One launch's kernel time: the estimate per deployment and the floor of any machine."""
    return f"{typical_run(run_seconds)}; at least {_duration(least_seconds)} on any machine"


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _whole_grid(mpi: str) -> Sequence[str] | None:
    return None


def entry_grids(
    config: Mapping[str, Any], grid: pd.DataFrame, ops_of: EntryOps = _whole_grid
) -> dict[str, pd.DataFrame]:
    """Per mpi entry the rows of the grid its runs measure: the experiments of the ops
    `ops_of(entry)` names (Campaign.ops_of: an Intel MPI preset entry's), else all."""
    grids = {}
    for mpi in config["mpi"]:
        ops = ops_of(mpi)
        grids[mpi] = grid if ops is None else grid[grid["op"].isin(list(ops))]
    return grids


def _experiments(
    config: Mapping[str, Any], grids: Mapping[str, pd.DataFrame], varied: str, selected: bool
) -> Experiments:
    """The experiments of every mpi entry (its part of the grid, entry_grids) and deployment,
    keyed as `check` keys the run medians (mpiguide.analysis.guidelines.evaluate): the entry's
    heap beside the deployment, the column `algorithm` only where some experiment names one (as
    aggregate keeps it) or a guideline selects on it (`selected`), with the library's own choice
    named, and nprocs where it is varied."""
    frames = [
        grids[mpi].assign(
            mpi=mpi, nodes=d["nodes"], ppn=d["ppn"], **{HEAP: entry.get(HEAP, HEAP_DEFAULT)}
        )
        for mpi, entry in config["mpi"].items()
        for d in config["deployments"]
    ]
    grid = next(iter(grids.values()))
    frame = pd.concat(frames, ignore_index=True)
    # grid.csv's empty cells are the medians' nulls
    algorithm = frame[ALGORITHM].mask(frame[ALGORITHM] == "")
    frame[ALGORITHM] = algorithm
    if algorithm.isna().all():
        frame = frame.drop(columns=[ALGORITHM])
    frame = with_library_choice(frame, selected)
    if varied == "nprocs":
        frame = with_nprocs(frame)
    keys = [*DEPLOYMENT_KEYS, HEAP, *(["nprocs"] if varied == "nprocs" else [])]
    keys += [c for c in grid.columns if c != "exp_id" and c in frame.columns]
    return Experiments.from_frame(frame, keys)


def count_tests(
    config: Mapping[str, Any],
    options: AnalysisOptions,
    grid: pd.DataFrame,
    guidelines: list[Guideline],
    ops_of: EntryOps = _whole_grid,
) -> dict[str, int]:
    """Guideline id -> the tests the campaign's grid yields (pairs, as `check` forms them; each
    entry's part of it: entry_grids)."""
    grids = entry_grids(config, grid, ops_of)
    experiments = _experiments(config, grids, options.varied, selects_algorithm(guidelines))
    counts = {}
    for guideline in guidelines:
        total = 0
        for comparison in guideline.comparisons:
            if guideline.relation == "monotone":
                lhs, _ = pair_monotone(experiments, comparison.lhs, options.varied)
            else:
                lhs, _ = pair_comparison(experiments, comparison.lhs, comparison.rhs)
            total += int(np.asarray(lhs).size)
        counts[guideline.id] = total
    return counts


def run_seconds(config: Mapping[str, Any], grid: pd.DataFrame) -> dict[str, float]:
    """Deployment name -> the kernel-time estimate of MODEL for one launch over the grid."""
    sizes = grid_numbers(grid, "msg_size")
    nrep = grid_numbers(grid, "nrep")
    seconds = {}
    for deployment in config["deployments"]:
        ranks = deployment["nodes"] * deployment["ppn"]
        per_experiment = nrep * (SECONDS_PER_REPETITION + sizes * ranks * SECONDS_PER_BYTE)
        name = deployment_name(deployment["nodes"], deployment["ppn"])
        seconds[name] = float(within_budgets(per_experiment, grid).sum()) + SECONDS_PER_LAUNCH
    return seconds


def kernel_seconds(
    config: Mapping[str, Any], grid: pd.DataFrame, ops_of: EntryOps = _whole_grid
) -> float:
    """The kernel-time estimate of MODEL over every run (of each entry's part of the grid:
    entry_grids)."""
    grids = entry_grids(config, grid, ops_of).values()
    per_run = sum(sum(run_seconds(config, part).values()) for part in grids)
    return per_run * Looks.of(config["runs"]).last


# A campaign run locally for longer than this holds the machine hostage: worth a warning.
LOCAL_SECONDS_LIMIT = 86400.0


def available_cores() -> int | None:
    """The cores this process may run on (its affinity: a batch job or container may get fewer
    than the machine has), None when unknown."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


@dataclass(frozen=True)
class Oversubscription:
    """A deployment that starts more ranks on this machine than it has `cores`."""

    nodes: int
    ppn: int
    cores: int

    @property
    def deployment(self) -> str:
        return deployment_name(self.nodes, self.ppn)

    def warning(self) -> str:
        ranks = self.nodes * self.ppn
        here = f" ({self.nodes} nodes' ranks on this one machine)" if self.nodes > 1 else ""
        return (
            f"deployment {self.deployment}: {ranks} ranks on {self.cores} cores{here} (launch: "
            "local): ranks share cores and wait for each other; its timings measure the "
            "oversubscription too"
        )


def oversubscriptions(config: Mapping[str, Any], cores: int | None) -> list[Oversubscription]:
    """Under `launch: local`, the deployments with more ranks than this machine's `cores` (a
    multi-node deployment too: the launcher starts all its nodes x ppn ranks here)."""
    if config.get("launch") != "local" or not cores:
        return []
    return [
        Oversubscription(deployment["nodes"], deployment["ppn"], cores)
        for deployment in config["deployments"]
        if deployment["nodes"] * deployment["ppn"] > cores
    ]


def warnings(
    config: Mapping[str, Any], options: AnalysisOptions, cores: int | None, seconds: float
) -> list[str]:
    """What a valid campaign still deserves before it runs: its oversubscriptions of this
    machine's `cores` and, under `launch: local`, a kernel time estimate (`seconds`) over a
    day; runs too few to ever reach p_thres."""
    found = [oversubscribed.warning() for oversubscribed in oversubscriptions(config, cores)]
    looks = Looks.of(config["runs"])
    if config["launch"] == "local" and seconds > LOCAL_SECONDS_LIMIT:
        found.append(
            f"kernel time: {'at most ' if looks.adaptive else ''}about {_duration(seconds)} "
            "estimated (launch: local): more than a day on this machine; measure fewer "
            "runs, experiments or repetitions (a `local:` block, `--scale local`) or run it "
            "on a cluster (--profile slurm)"
        )
    runs = looks.last
    if options.test == "ranksum":
        floor = 1 / math.comb(2 * runs, runs)
        if floor > options.p_thres:
            found.append(
                f"runs: {runs}: the rank-sum's smallest p-value, 1/C(2n,n) = {floor:.3g}, is "
                f"above p_thres {options.p_thres:g}: no rank-sum test can ever be violated"
            )
    elif runs < 2:
        found.append(
            f"runs: {runs}: the t-tests need at least 2 runs per side: every test stays undecided"
        )
    return found


def summarise(
    config: Mapping[str, Any],
    options: AnalysisOptions,
    guidelines: list[Guideline],
    ops_of: EntryOps = _whole_grid,
) -> Summary:
    """The Summary of a checked campaign (load_campaign's config, guidelines resolved; `ops_of`:
    Campaign.ops_of, what part of the grid an entry runs)."""
    grid = build_grid({"nrep": config["nrep"], "experiments": config["experiments"]}, "config")
    entries, deployments = len(config["mpi"]), len(config["deployments"])
    looks = Looks.of(config["runs"])
    seconds = kernel_seconds(config, grid, ops_of)
    rows = sum(len(part) for part in entry_grids(config, grid, ops_of).values())
    return Summary(
        experiments=rows * deployments,
        grid_rows=len(grid),
        mpi_entries=entries,
        deployments=deployments,
        runs=looks.last,
        launches=looks.last * entries * deployments,
        looks=looks.runs,
        tests=count_tests(config, options, grid, guidelines, ops_of),
        kernel_seconds=seconds,
        run_seconds=run_seconds(config, grid),
        least_run_seconds=least_run_seconds(grid),
        warnings=warnings(config, options, available_cores(), seconds),
    )
