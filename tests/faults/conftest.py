"""Fixtures for the fault tests: small campaign projects (tests/workflow_project.py)
with a kernel built once per session, and the processes a running snakemake started."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mpi_support import MPI_LIBRARIES, build_kernel
from workflow_project import ROOT_ENV, new_project, snakemake_env

CAMPAIGN = "faults"
DEPLOYMENT = "1x2"
RUNS = 3


def campaign(experiments: list[dict[str, Any]]) -> dict[str, Any]:
    """One Open MPI entry on 2 ranks, RUNS runs of the given experiment blocks."""
    return {
        "campaign": CAMPAIGN,
        "seed": 5,
        "runs": RUNS,
        "nrep": 20,
        "mpi": {
            "openmpi": {
                "mpicc": "mpicc.openmpi",
                "launcher": "mpirun.openmpi",
                "env": ROOT_ENV,
                "modules": [],
            }
        },
        "deployments": [{"nodes": 1, "ppn": 2}],
        "experiments": experiments,
        "guidelines": [],
        "analysis": {"varied": "msg_size"},
    }


# Each run repeats allreduces of 128 and 256 KiB (about 100 µs) for 1.5 s of wall time each
# (max_time), however loaded the machine: long enough to act on a run while it measures.
SLOW_RUNS = [
    {"op": ["allreduce"], "msg_size": [131072, 262144], "nrep": [1000000], "max_time": [1.5]}
]


@pytest.fixture(scope="session")
def openmpi_kernel() -> Path:
    mpi = MPI_LIBRARIES["openmpi"]
    if not mpi.available():
        pytest.skip(f"{mpi.mpicc} or {mpi.launcher} not installed")
    return build_kernel(mpi)


def new_project_with_kernel(root: Path, config: dict[str, Any], kernel: Path) -> Path:
    """A fresh project for a campaign of Open MPI entries, `kernel` already in place for every
    entry (newer than its sources, so the workflow does not spend half a minute per entry
    rebuilding it)."""
    project = new_project(root, config)
    for mpi in config["mpi"]:
        built = project / "results" / config["campaign"] / "build" / mpi / "mpiguide-bench"
        built.parent.mkdir(parents=True)
        shutil.copy2(kernel, built)
        os.utime(built)
    return project


@pytest.fixture
def make_project(tmp_path: Path, openmpi_kernel: Path) -> Callable[[dict[str, Any]], Path]:
    """make_project(config): new_project_with_kernel in this test's tmp_path."""
    return lambda config: new_project_with_kernel(tmp_path / "project", config, openmpi_kernel)


def start_snakemake(project: Path, *args: str) -> subprocess.Popen[str]:
    """snakemake with the local profile, not waited for; in its own session (killpg-able)."""
    return subprocess.Popen(
        [str(Path(sys.executable).with_name("snakemake")), "--profile", "profiles/local",
         "--cores", "2", *args],
        cwd=project,
        env=snakemake_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )  # fmt: skip


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kernel_ranks(snakemake: subprocess.Popen[str]) -> dict[int, str]:
    """pid -> command line of the kernel ranks this snakemake started and that still run."""
    ranks = {}
    for pid in descendants(snakemake.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"mpiguide-bench"):
            ranks[pid] = b" ".join(argv).decode()
    return ranks


T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    what: str,
    timeout: float = 120,
    while_running: subprocess.Popen[str] | None = None,
) -> T:
    """Poll `condition` until it returns a true value, and return that; fail naming `what` once
    `timeout` seconds have passed, or at once when `while_running` has ended (with its output).
    A deadline, never a fixed sleep: on a loaded machine the event only comes later."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if while_running is not None:
            assert while_running.poll() is None, while_running.communicate()[0]
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.1)


def measuring_ranks(
    snakemake: subprocess.Popen[str], project: Path, kernel: str = ""
) -> dict[int, str]:
    """The 2 kernel ranks (pid -> command line) of a launch that is measuring, or {}: rank 0
    has opened its temporary output, OUTPUT.csv.tmp-<pid> (src/kernel/io/output.c), which it
    does after MPI_Init, reading the input and the ranks' first collectives, just before the
    first experiment. `kernel`: only ranks whose kernel path contains it."""
    ranks = {
        pid: line for pid, line in kernel_ranks(snakemake).items() if kernel in line.split()[0]
    }
    outputs = {project / line.split()[-1] for line in ranks.values()}  # OUTPUT.csv comes last
    if len(ranks) != 2 or len(outputs) != 1:
        return {}
    output = outputs.pop()
    return ranks if any(output.parent.glob(f"{output.name}.tmp-*")) else {}


@pytest.fixture
def running() -> Iterator[list[subprocess.Popen[str]]]:
    """snakemakes a test starts; any still running at the end are stopped with their jobs."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, 15)
            process.wait(timeout=60)
