"""A campaign whose run jobs cannot finish within their walltime is refused before it runs, on
a floor no machine beats, naming the resource to raise."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.preflight import preflight
from mpiguide.campaign.summary import MODEL as KERNEL_TIME_MODEL
from mpiguide.campaign.walltime import check_walltime, least_run_seconds, run_jobs
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


def test_preflight_announces_the_cost_before_refusing_a_run_job() -> None:
    """The cost is said first (also by a dry run), then a job that cannot finish is refused."""
    config = {
        "nrep": 10_000_000,
        "experiments": [{"op": "barrier"}],
        "mpi": {"openmpi": {}},
        "deployments": [{"nodes": 1, "ppn": 2}],
        "blocking": None,
    }
    campaign = Campaign(config, AnalysisOptions.with_defaults(), "c.yaml")
    said: list[str] = []
    preflight(campaign, {"run_openmpi": None}.get, said.append)
    assert said[0].startswith("mpiguide: a run: about ") and "(1x2)" in said[0]
    assert said[0].endswith(f"(an estimate: {KERNEL_TIME_MODEL})")
    said.clear()
    with pytest.raises(ConfigError, match=r"c\.yaml: a `run_openmpi` job cannot finish"):
        preflight(campaign, {"run_openmpi": 0.001}.get, said.append)
    assert len(said) == 1
