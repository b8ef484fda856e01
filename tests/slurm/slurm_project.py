"""Helpers of the SLURM tests: the test cluster script, SLURM clients, and workflow projects run
with `--profile profiles/slurm` plus the test overlay (tests/slurm/profile)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CLUSTER_SH = HERE / "cluster.sh"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
# What a project needs from the repository; the mpiguide package comes from the venv.
PROJECT_FILES = ("Snakefile", "workflow", "profiles", "config/guidelines.yaml", "src/kernel")
IGNORED = shutil.ignore_patterns("build", "__pycache__", "*.o")
SLURM_PROFILE_ARGS = ("--profile", "profiles/slurm", "--workflow-profile", str(HERE / "profile"))
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
    "campaign": CAMPAIGN,
    "seed": 11,
    "runs": len(RUNS),
    "nrep": NREP,
    "mpi": {
        "openmpi": {
            "mpicc": "mpicc.openmpi",
            "launcher": "mpirun.openmpi --oversubscribe",
            "srun": "srun --mpi=pmix",
            "env": {
                "OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_mpi_yield_when_idle": "1",
            },
        },
        "mpich": {"mpicc": "mpicc.mpich", "launcher": "mpiexec.mpich", "srun": "srun --mpi=pmi2"},
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [
        {
            "op": ["neighbor_allgather", "neighbor_alltoall"],
            "topology": ["cart"],
            "ndim": [1],
            "reorder": [0, 1],
            "msg_size": [8, 1024],
        }
    ],
    "guidelines": ["GL4"],
    "analysis": {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0},
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


def cluster_script(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLUSTER_SH), action],
        env=slurm_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def parse_start_output(stdout: str) -> Cluster:
    values = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    return Cluster(partition=values["partition"], account=values["account"])


def new_project(root: Path, config: dict) -> Path:
    """A fresh clone of the workflow with `config` as its campaign, no results."""
    root.mkdir(parents=True)
    for name in PROJECT_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=IGNORED)
        else:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    write_config(root, config)
    return root


def write_config(project: Path, config: dict) -> None:
    (project / "config").mkdir(exist_ok=True)
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


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
