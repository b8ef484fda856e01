"""Helpers of the SLURM tests: the test cluster script, SLURM clients, and workflow projects run
with `--profile profiles/slurm` plus the test overlay (tests/slurm/profile)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from workflow_project import TINY_CAMPAIGN

HERE = Path(__file__).resolve().parent
CLUSTER_SH = HERE / "cluster.sh"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
SLURM_PROFILE_ARGS = ("--profile", "profiles/slurm", "--profile", str(HERE / "profile"))
DAEMONS = ("munged", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "sacct", "squeue", "scancel", "sacctmgr")
MPICCS = ("mpicc.openmpi", "mpicc.mpich")

# Both libraries at 1x2; each entry says how srun starts it (Open MPI: pmix, MPICH: pmi2).
# `launcher` and the Open MPI root variables serve the local-profile twin of this campaign.
CAMPAIGN = "slurmtest"
DEPLOYMENT = "1x2"
RUNS = ("00", "01", "02")
NREP = 5
N_EXPERIMENTS = 8
SLURM_CAMPAIGN: dict = {
    **TINY_CAMPAIGN,
    "campaign": CAMPAIGN,
    "seed": 11,
    "runs": len(RUNS),
    "nrep": NREP,
    "mpi": {
        "openmpi": {**TINY_CAMPAIGN["mpi"]["openmpi"], "srun": "srun --mpi=pmix"},
        "mpich": {**TINY_CAMPAIGN["mpi"]["mpich"], "srun": "srun --mpi=pmi2"},
    },
}
MPIS = tuple(SLURM_CAMPAIGN["mpi"])


@dataclass(frozen=True)
class Cluster:
    partition: str
    account: str


def slurm_env() -> dict[str, str]:
    """The environment of SLURM clients and Snakemake: the configuration is found at
    /etc/slurm/slurm.conf (cluster.sh links it there) as the plugin's job steps need."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")}
    env["PATH"] = f"{SNAKEMAKE.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(*command: str | os.PathLike[str], timeout: float = 60, **kwargs) -> str:
    """Run a command to completion; fail the test with its output if it fails."""
    result = subprocess.run(
        [str(word) for word in command],
        env=slurm_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def cluster_script(action: str, nodes: int = 1) -> subprocess.CompletedProcess[str]:
    """cluster.sh `action` for a cluster of `nodes` nodes (1 or 2)."""
    return subprocess.run(
        [str(CLUSTER_SH), action],
        env={**slurm_env(), "MPIGUIDE_SLURM_NODES": str(nodes)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def parse_start_output(stdout: str) -> Cluster:
    values = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    return Cluster(partition=values["partition"], account=values["account"])


def snakemake(project: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Snakemake in `project`, to completion; the caller checks the exit code."""
    return subprocess.run(
        [str(SNAKEMAKE), *args],
        cwd=project,
        env=slurm_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def results(project: Path) -> Path:
    return project / "results" / CAMPAIGN


def sacct_record(job_id: str, fields: tuple[str, ...], timeout: float = 20) -> dict[str, str]:
    """The accounting record of a job's allocation ("123") or of one of its steps ("123.0").
    slurmctld sends records to slurmdbd asynchronously: wait until every field has arrived."""
    allocation_only = () if "." in job_id else ("-X",)
    deadline = time.monotonic() + timeout
    while True:
        line = run(
            "sacct", "-j", job_id, *allocation_only, "-n", "-P", f"--format={','.join(fields)}"
        )
        values = line.strip().split("|")
        if len(values) == len(fields) and all(values):
            return dict(zip(fields, values, strict=True))
        assert time.monotonic() < deadline, f"sacct -j {job_id}: incomplete record {line!r}"
        time.sleep(0.5)
