"""A campaign whose run jobs cannot finish within their walltime is refused before it runs, on
a floor no machine beats, naming the resource to raise; one whose typical estimate exceeds it is
warned about."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.preflight import preflight
from mpiguide.campaign.walltime import (
    check_walltime,
    least_run_seconds,
    run_jobs,
    typical_walltime_warnings,
)
from mpiguide.core.errors import ConfigError

CONFIG: dict[str, Any] = {"mpi": {"openmpi": {}, "mpich": {}}}


def grid(nrep: list[int], work: list[int] | None = None, max_time: list[float] | None = None):
    return pd.DataFrame(
        {
            "nrep": nrep,
            "work": work or [pd.NA] * len(nrep),
            "max_time": max_time or [0.0] * len(nrep),
        }
    )


def test_least_run_seconds_counts_repetitions_work_and_budgets() -> None:
    assert least_run_seconds(grid([10_000_000])) == pytest.approx(1.0)
    # 10^11 work iterations a repetition: 20 s each at one cycle of 5 GHz
    assert least_run_seconds(grid([2], work=[100_000_000_000])) == pytest.approx(40.0, rel=1e-6)
    # a budget stops the experiment: at least the budget, not more
    assert least_run_seconds(grid([10_000_000], max_time=[0.25])) == pytest.approx(0.25)


def test_a_job_longer_than_its_runtime_is_refused_naming_the_rule() -> None:
    long = grid([10_000_000] * 90)  # at least 90 s a launch
    runtimes = {"run_openmpi": 1.0, "run_mpich": None}
    with pytest.raises(ConfigError, match=r"c.yaml: a `run_openmpi` job cannot finish within its "
                       r"runtime of 1 min: its 90 experiments take at least 90 s"):  # fmt: skip
        check_walltime(CONFIG, long, "none", runtimes, "c.yaml")
    check_walltime(CONFIG, long, "none", {"run_openmpi": 2.0, "run_mpich": None}, "c.yaml")


def test_a_block_runs_every_entry_within_one_runtime() -> None:
    assert run_jobs(CONFIG, "run") == {"run_block": 2}
    assert run_jobs(CONFIG, "none") == {"run_openmpi": 1, "run_mpich": 1}
    half_a_minute = grid([10_000_000] * 40)
    check_walltime(CONFIG, half_a_minute, "none", {"run_openmpi": 1.0}, "c.yaml")
    with pytest.raises(ConfigError, match="2 launches back to back in one block"):
        check_walltime(CONFIG, half_a_minute, "run", {"run_block": 1.0}, "c.yaml")


def test_without_a_runtime_nothing_is_refused() -> None:
    check_walltime(CONFIG, grid([10_000_000] * 1000), "run", {"run_block": None}, "c.yaml")


def test_a_job_over_its_runtime_by_the_typical_estimate_is_warned_about() -> None:
    typical = {"1x2": 90.0, "2x2": 150.0}  # seconds a launch
    warnings = typical_walltime_warnings(CONFIG, typical, "none", {"run_openmpi": 2.0}, "c.yaml")
    assert warnings == [
        "c.yaml: a `run_openmpi` job is estimated at about 2.5 min (2x2), above its runtime of "
        "2 min: a job is killed at its runtime, and the estimate is typical, not a bound; time "
        "one run, then raise `runtime` (the profile's default-resources, or set-resources: "
        "run_openmpi: runtime) or lower nrep"
    ]
    (block,) = typical_walltime_warnings(CONFIG, typical, "run", {"run_block": 2.0}, "c.yaml")
    assert "about 3.0 min (1x2), 5.0 min (2x2), 2 launches back to back in one block" in block
    assert typical_walltime_warnings(CONFIG, typical, "run", {"run_block": None}, "c.yaml") == []
    assert typical_walltime_warnings(CONFIG, typical, "none", {"run_mpich": 3.0}, "c.yaml") == []


BARRIER_CAMPAIGN = {
    "nrep": 10_000_000,
    "experiments": [{"op": "barrier"}],
    "mpi": {"openmpi": {}},
    "deployments": [{"nodes": 1, "ppn": 2}],
    "blocking": None,
}


def test_preflight_announces_the_cost_before_refusing_a_run_job() -> None:
    """The cost is said first (also by a dry run), then a job that cannot finish is refused."""
    campaign = Campaign(BARRIER_CAMPAIGN, AnalysisOptions.with_defaults(), "c.yaml")
    said: list[str] = []
    warned: list[str] = []
    preflight(campaign, {"run_openmpi": None}.get, said.append, warned.append)
    assert said == ["mpiguide: a run: about 101 s (1x2), an estimate"]  # no floor, no model
    said.clear()
    with pytest.raises(ConfigError, match=r"c\.yaml: a `run_openmpi` job cannot finish"):
        preflight(campaign, {"run_openmpi": 0.001}.get, said.append, warned.append)
    assert len(said) == 1 and warned == []


def test_preflight_warns_of_a_typical_run_over_its_runtime_the_floor_allows() -> None:
    """10^7 barriers: about 100 s by the estimate, at least 1 s: a 1-minute runtime is warned
    about, not refused; 2 minutes pass silently."""
    campaign = Campaign(BARRIER_CAMPAIGN, AnalysisOptions.with_defaults(), "c.yaml")
    warned: list[str] = []
    preflight(campaign, {"run_openmpi": 1.0}.get, lambda _: None, warned.append)
    (warning,) = warned
    assert warning.startswith("mpiguide: c.yaml: a `run_openmpi` job is estimated at about 1.7 min")
    assert (
        "above its runtime of 1 min" in warning and "set-resources: run_openmpi: runtime" in warning
    )
    warned.clear()
    preflight(campaign, {"run_openmpi": 2.0}.get, lambda _: None, warned.append)
    assert warned == []


def test_preflight_warns_once_of_each_deployment_that_oversubscribes_this_machine() -> None:
    """Under `launch: local`, more ranks than cores (those of every node: all start here) is
    said when the run starts, after its cost; SLURM's nodes are not this machine."""
    deployments = [{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}, {"nodes": 2, "ppn": 2}]
    config = {**BARRIER_CAMPAIGN, "nrep": 10, "launch": "local", "deployments": deployments}
    said: list[str] = []
    warned: list[str] = []
    preflight(Campaign(config, AnalysisOptions.with_defaults(), "c.yaml"), {}.get, said.append,
              warned.append, cores=2)  # fmt: skip
    why = "ranks share cores and wait for each other; its timings measure the oversubscription too"
    assert warned == [
        f"mpiguide: c.yaml: deployment 1x4: 4 ranks on 2 cores (launch: local): {why}",
        "mpiguide: c.yaml: deployment 2x2: 4 ranks on 2 cores (2 nodes' ranks on this one "
        f"machine) (launch: local): {why}",
    ]
    assert len(said) == 1
    warned.clear()
    slurm = Campaign({**config, "launch": "slurm"}, AnalysisOptions.with_defaults(), "c.yaml")
    preflight(slurm, {}.get, said.append, warned.append, cores=2)
    assert warned == []
