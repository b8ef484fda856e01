"""An adaptive campaign through the SLURM profile: every round's runs are SLURM jobs, a later
round's jobs measure only the experiments its plan names, and the campaign completes with the
adaptive tables."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from slurm_project import SLURM_CAMPAIGN, SLURM_PROFILE_ARGS, Cluster, sacct_record, snakemake

from mpiguide.analysis.sequential import STOP_COLUMNS, STOPS
from mpiguide.analysis.tables import FUTILE_COLUMNS
from workflow_project import new_project

pytestmark = pytest.mark.slurm

CAMPAIGN = copy.deepcopy(SLURM_CAMPAIGN)
CAMPAIGN["campaign"] = "slurmadaptive"
CAMPAIGN["mpi"] = {"openmpi": CAMPAIGN["mpi"]["openmpi"]}
CAMPAIGN["runs"] = {"min": 2, "max": 4, "step": 2}
# Eight tests at p_thres 0.5 and v_thres 1.0: about a third are decided at 2 runs (3 of 8 in
# a local try), so round 1 has experiments to measure.
CAMPAIGN["experiments"][0]["msg_size"] = [8, 64, 1024, 8192]
RESULTS = Path("results") / CAMPAIGN["campaign"]
RAW = RESULTS / "raw" / "openmpi" / "1x2"


def test_rounds_run_as_slurm_jobs_until_the_campaign_completes(
    cluster: Cluster, slurm_campaign: Path, tmp_path: Path
) -> None:
    project = new_project(tmp_path / "project", CAMPAIGN)
    # The kernel the package's campaign built through SLURM (test_campaign.py tests that job),
    # copied with its times: this campaign's build is up to date and its jobs are the runs.
    shutil.copytree(
        slurm_campaign / "results" / SLURM_CAMPAIGN["campaign"] / "build" / "openmpi",
        project / RESULTS / "build" / "openmpi",
    )
    # The tables checked here, not the plots and models: the rounds are what is tested.
    targets = [str(RESULTS / "guidelines" / name) for name in ("tests.csv", "summary.csv")]
    result = snakemake(project, *SLURM_PROFILE_ARGS, *targets)
    assert result.returncode == 0, f"snakemake on SLURM failed:\n{result.stdout}{result.stderr}"
    assert "rule build_openmpi" not in result.stdout + result.stderr

    plan = json.loads((project / RESULTS / "rounds" / "round00.json").read_text())
    assert not plan["done"], "every test decided at 2 runs: no round 1 to test"
    assert plan["next_runs"] == [2, 4]
    (needed,) = plan["measure"]
    job_ids = set()
    for run in range(4):
        raw = pd.read_csv(project / RAW / f"run{run:02d}.csv")
        # Round 0 measures every experiment, round 1 only those its plan names.
        experiments = 16 if run < 2 else len(needed["exp_ids"])
        assert raw["exp_id"].nunique() == experiments
        if run >= 2:
            assert sorted(raw["exp_id"].unique()) == needed["exp_ids"]
        job_id = json.loads((project / RAW / f"run{run:02d}.json").read_text())["slurm_job_id"]
        assert sacct_record(job_id, ("State", "Partition")) == {
            "State": "COMPLETED",
            "Partition": cluster.partition,
        }
        job_ids.add(job_id)
    assert len(job_ids) == 4

    tests = pd.read_csv(project / RESULTS / "guidelines" / "tests.csv")
    assert list(tests.columns[-2:]) == list(STOP_COLUMNS)
    assert set(tests["stop"]) <= set(STOPS) - {"open"}  # the campaign completed
    assert set(tests["look_runs"]) <= {2, 4}
    summary = pd.read_csv(project / RESULTS / "guidelines" / "summary.csv")
    assert set(FUTILE_COLUMNS) <= set(summary.columns)
