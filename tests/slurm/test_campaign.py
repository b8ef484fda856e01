"""A small campaign through the SLURM profile: every run is a SLURM job of the deployment's size
in the test partition and account, its provenance names the job and host, and the analysis
outputs have the same shape as those of the same campaign run with the local profile."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pandas as pd
import pytest
from slurm_project import (
    DEPLOYMENT,
    MPIS,
    N_EXPERIMENTS,
    NREP,
    RUNS,
    Cluster,
    results,
    sacct_record,
    snakemake,
)

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS
from mpiguide.analysis.tables import SUMMARY_KEYS
from mpiguide.core.columns import RAW_COLUMNS
from mpiguide.plan.grid import PARAMETERS
from workflow_project import copy_project

pytestmark = pytest.mark.slurm

# tests.csv columns that describe a test rather than measure it.
TEST_IDENTITY = [
    "guideline", "relation", *DEPLOYMENT_KEYS, *PARAMETERS, "group", "lhs_exp_id", "rhs_exp_id",
    "n_lhs", "n_rhs",
]  # fmt: skip
SUMMARY_IDENTITY = [*SUMMARY_KEYS, "tests", "groups"]


def slurm_logs(project: Path, mpi: str, run: str) -> list[Path]:
    """The plugin's logs of the SLURM jobs of one run (kept: slurm-keep-successful-logs)."""
    nodes, ppn = DEPLOYMENT.split("x")
    return sorted(
        (project / ".snakemake" / "slurm_logs" / f"rule_run_{mpi}").glob(
            f"{nodes}_{ppn}_{run}/*.log"
        )
    )


def test_every_run_is_a_slurm_job(slurm_campaign: Path, cluster: Cluster) -> None:
    raw_root = results(slurm_campaign) / "raw"
    job_ids = set()
    for mpi in MPIS:
        for run in RUNS:
            raw = pd.read_csv(raw_root / mpi / DEPLOYMENT / f"run{run}.csv")
            assert list(raw.columns) == list(RAW_COLUMNS)
            assert len(raw) == N_EXPERIMENTS * NREP
            assert (raw["time_s"] > 0).all()
            provenance = json.loads((raw_root / mpi / DEPLOYMENT / f"run{run}.json").read_text())
            assert provenance["nprocs"] == 2
            assert provenance["nodes"] == 1
            assert provenance["hosts"] == [socket.gethostname()]
            assert provenance["slurm_job_nodelist"] == socket.gethostname()
            job_id = provenance["slurm_job_id"]
            # The job that measured this run is the one the plugin submitted for it.
            assert [log.stem for log in slurm_logs(slurm_campaign, mpi, run)] == [job_id]
            record = sacct_record(job_id, ("State", "Account", "Partition", "NNodes", "AllocCPUS"))
            assert record["State"] == "COMPLETED"
            assert record["Account"] == cluster.account
            assert record["Partition"] == cluster.partition
            assert record["NNodes"] == "1"
            assert record["AllocCPUS"] == "2"
            # Step 0 is the rule's srun: both ranks in one MPI job.
            step = sacct_record(f"{job_id}.0", ("JobName", "State", "NTasks"))
            assert step == {"JobName": "mpiguide-bench", "State": "COMPLETED", "NTasks": "2"}
            job_ids.add(job_id)
    assert len(job_ids) == len(MPIS) * len(RUNS)


def test_run_logs_show_srun(slurm_campaign: Path) -> None:
    for mpi, plugin in (("openmpi", "pmix"), ("mpich", "pmi2")):
        log = slurm_logs(slurm_campaign, mpi, RUNS[0])[0].read_text()
        assert f"srun --mpi={plugin} -n 2 " in log
        assert "mpirun" not in log


@pytest.fixture(scope="module")
def local_twin(slurm_campaign: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same campaign measured again with the local profile (mpirun), in a copy."""
    twin = copy_project(slurm_campaign, tmp_path_factory.mktemp("local") / "project")
    result = snakemake(
        twin,
        "--profile", "profiles/local", "--cores", "2",
        "--forcerun", *(f"run_{mpi}" for mpi in MPIS),
    )  # fmt: skip
    assert result.returncode == 0, f"local profile failed:\n{result.stdout}{result.stderr}"
    return twin


def test_analysis_has_the_local_shape(slurm_campaign: Path, local_twin: Path) -> None:
    slurm, local = results(slurm_campaign), results(local_twin)
    for table in ("timings.parquet", "medians.parquet"):
        on_slurm, here = pd.read_parquet(slurm / table), pd.read_parquet(local / table)
        assert on_slurm.dtypes.to_dict() == here.dtypes.to_dict(), table
        assert len(on_slurm) == len(here), table
    timings = pd.read_parquet(slurm / "timings.parquet")
    assert len(timings) == len(MPIS) * len(RUNS) * N_EXPERIMENTS * NREP

    for table, identity in (("tests.csv", TEST_IDENTITY), ("summary.csv", SUMMARY_IDENTITY)):
        on_slurm = pd.read_csv(slurm / "guidelines" / table)
        here = pd.read_csv(local / "guidelines" / table)
        assert list(on_slurm.columns) == list(here.columns), table
        # tests.csv has the parameter `algorithm` only where some experiment names one
        identity = [column for column in identity if column in here.columns]
        pd.testing.assert_frame_equal(on_slurm[identity], here[identity], obj=table)
    assert (slurm / "guidelines" / "summary.md").stat().st_size > 0
    assert (slurm / "plots" / "heatmap.png").stat().st_size > 0
    assert (local / "plots" / "heatmap.png").stat().st_size > 0
