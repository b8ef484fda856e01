"""A failed run leaves every other run intact, and the next invocation runs only what is missing.

The failure is real: MPICH's kernel started by Open MPI's launcher runs as one-rank jobs, which
the kernel's --nprocs check turns into an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workflow_project import ANALYSIS_JOBS, DEPLOYMENT, scheduled_jobs, snakemake

pytestmark = pytest.mark.workflow

EditConfig = Callable[[Callable[[dict[str, Any]], None]], None]


def wrong_launcher(config: dict[str, Any]) -> None:
    config["runs"] = 3
    # A launcher change alone never re-runs existing runs, so only the new run02 uses it.
    config["mpi"]["mpich"]["launcher"] = "mpirun.openmpi --allow-run-as-root"


def test_failed_run_keeps_the_others_and_resumes(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    raw = campaign_copy / "results" / "tiny" / "raw"
    measured = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in raw.rglob("run*")}
    edit_config(wrong_launcher)

    result = snakemake(campaign_copy, "--profile", "profiles/local", "--cores", "2", check=False)

    assert result.returncode != 0
    log = campaign_copy / "results" / "tiny" / "logs" / "run" / "mpich" / DEPLOYMENT / "run02.log"
    assert "--nprocs 2, but MPI_COMM_WORLD has 1 rank" in log.read_text()
    assert not (raw / "mpich" / DEPLOYMENT / "run02.csv").exists()
    assert (raw / "openmpi" / DEPLOYMENT / "run02.csv").exists(), "keep-going ran the other run"
    for path, (mtime, content) in measured.items():
        assert (path.stat().st_mtime_ns, path.read_bytes()) == (mtime, content), path

    edit_config(lambda config: config["mpi"]["mpich"].update(launcher="mpiexec.mpich"))
    # The aggregate never ran: the record of `runs` waits for it, forcing it again.
    expected = {"run_mpich": 1, **ANALYSIS_JOBS, "options_record": 1}
    assert scheduled_jobs(campaign_copy) == expected
