"""An mpicc or launcher this machine does not have stops the workflow before any job starts,
naming the entry and key, and leaves no results behind; a dry run warns and plans."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from workflow_project import TINY_CAMPAIGN, after_profile_notice, new_project, snakemake

pytestmark = pytest.mark.workflow


def test_a_missing_mpicc_and_launcher_stop_the_run_before_any_job(tmp_path: Path) -> None:
    config = copy.deepcopy(TINY_CAMPAIGN)
    config["mpi"]["mpich"].update(mpicc="mpicc.intelmpi", launcher="env I_MPI_X=1 mpirun.intel")
    project = new_project(tmp_path / "project", config)

    run = snakemake(project, "--profile", "profiles/local", "--cores", "2", check=False)
    shown = f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.returncode == 1, shown
    assert after_profile_notice(run.stderr) == (
        "config/config.yaml: mpi.mpich.mpicc: 'mpicc.intelmpi': not on PATH; install it, give "
        "its path, or load it with the entry's `modules:`\n"
        "config/config.yaml: mpi.mpich.launcher: 'mpirun.intel': not on PATH; install it, give "
        "its path, or load it with the entry's `modules:`\n"
        "mpiguide: nothing was run\n"
    ), shown
    assert not (project / "results").exists(), shown

    planned = snakemake(project, "--profile", "profiles/local", "-n")
    said = planned.stdout + planned.stderr
    assert "mpi.mpich.mpicc: 'mpicc.intelmpi': not on PATH" in said
    assert "(a run without -n stops here)" in said
    assert "build_mpich" in said  # the plan is still shown
