"""The run rule's contract with the launchers (and the SLURM profile), read from `snakemake -n -p`:
resources, threads, the quoted env prefix and launcher, `--nprocs`."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from workflow_project import TINY_CAMPAIGN, new_project, snakemake

pytestmark = pytest.mark.workflow

HOSTILE_VALUE = "a b; $(touch pwned) `id` 'q'"


def run_job_block(project: Path, *args: str) -> str:
    """The dry-run description of the first run_openmpi job."""
    output = snakemake(project, "--profile", "profiles/local", "-n", "-p", *args).stdout
    start = output.index("rule run_openmpi:")
    return output[start : output.index("\n\n", start)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    config = {**TINY_CAMPAIGN, "mpi": {"openmpi": dict(TINY_CAMPAIGN["mpi"]["openmpi"])}}
    config["mpi"]["openmpi"]["env"] = {"MPIGUIDE_NOTE": HOSTILE_VALUE}
    config["deployments"] = [{"nodes": 1, "ppn": 4}]
    return new_project(tmp_path / "project", config)


def test_local_run_job(project: Path) -> None:
    block = run_job_block(project, "--cores", "2")
    # 4 ranks on 2 cores: the job takes every core and runs alone.
    assert "threads: 2" in block
    # every launch ends its srun step when a rank fails (mpiguide.campaign.launch.LAUNCH_ENV)
    launcher = "env SLURM_KILL_BAD_EXIT=1 mpirun.openmpi --oversubscribe"
    for resource in ("nodes=1", "tasks=4", f"mpi={launcher}", "cpus_per_task=1"):
        assert resource in block
    command = (
        f"env {shlex.quote('MPIGUIDE_NOTE=' + HOSTILE_VALUE)} {launcher} -n 4"
        " results/tiny/build/openmpi/mpiguide-bench --nprocs 4"
    )
    assert command in block
    assert " --heap default " in block  # the entry's default allocator setting
    assert not (project / "pwned").exists()


def test_the_entry_heap_setting_reaches_the_kernel(tmp_path: Path) -> None:
    config = {**TINY_CAMPAIGN, "mpi": {"openmpi": dict(TINY_CAMPAIGN["mpi"]["openmpi"])}}
    config["mpi"]["openmpi"]["heap"] = "fixed"
    block = run_job_block(new_project(tmp_path / "project", config), "--cores", "2")
    assert " --heap fixed " in block


def test_slurm_launch_uses_srun(project: Path) -> None:
    block = run_job_block(project, "--executor", "slurm", "--jobs", "1")
    launcher = "env SLURM_KILL_BAD_EXIT=1 srun --mpi=pmix"
    assert f"mpi={launcher}" in block
    assert f"{launcher} -n 4 results/tiny/build/openmpi/mpiguide-bench --nprocs 4" in block


def test_two_entries_run_in_blocks_by_default(tmp_path: Path) -> None:
    config = {key: value for key, value in TINY_CAMPAIGN.items() if key != "blocking"}
    config["mpi"] = {name: dict(entry) for name, entry in TINY_CAMPAIGN["mpi"].items()}
    config["mpi"]["mpich"]["env"] = {"MPIGUIDE_NOTE": HOSTILE_VALUE}
    project = new_project(tmp_path / "project", config)
    output = snakemake(project, "--profile", "profiles/local", "-n", "-p").stdout
    assert "rule run_openmpi:" not in output and "rule run_mpich:" not in output
    start = output.index("rule run_block:")
    block = output[start : output.index("\n\n", start)]
    assert "threads: 2" in block
    for resource in ("nodes=1", "tasks=2", "mpi=srun", "cpus_per_task=1"):
        assert resource in block
    command = block[block.index("python -m mpiguide run-block") :].splitlines()[0]
    words = shlex.split(command)
    assert words[:4] == ["python", "-m", "mpiguide", "run-block"]
    assert words[4] == "--spec-json" and words[6] == ">"
    spec = json.loads(words[5])
    entries = {entry["mpi"]: entry for entry in spec["entries"]}
    assert entries["mpich"]["env"] == {"MPIGUIDE_NOTE": HOSTILE_VALUE}
    assert entries["openmpi"]["launcher"] == "mpirun.openmpi --oversubscribe"
    assert (spec["nodes"], spec["ppn"], spec["seed"]) == (1, 2, TINY_CAMPAIGN["seed"])
    assert spec["record"].endswith("blocks/1x2/run00.json") or spec["record"].endswith(
        "blocks/1x2/run01.json"
    )
