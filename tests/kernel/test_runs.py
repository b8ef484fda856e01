"""Whole runs: a killed kernel leaves no OUTPUT.csv, max_time stops early, 100 000 experiments
stream through, --node-size drives the node provenance."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import read_provenance, read_times, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel


def wait_for(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_killed_run_leaves_no_output(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    rows = [{"exp_id": i, "op": "allreduce", "msg_size": 8, "nrep": 1_000_000} for i in range(100)]
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    process = kernel_for(mpi).start(2, infile, outfile)
    try:
        # Measuring has begun once the temporary output exists.
        wait_for(lambda: any(tmp_path.glob("out.csv.tmp-*")), timeout=60)
        time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
    assert not outfile.exists() and not (tmp_path / "out.json").exists()


def test_failed_write_leaves_no_file_and_stops_early(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """A disk that fails under the output (here: a 100 kB file size limit on the ranks, with
    SIGXFSZ ignored so that write() fails with EFBIG) ends the run at once with exit 1, and
    removes the temporary files: nothing is left under a temporary or a final name. The limit
    is set on the ranks only (mpirun's own session files must be writable), and TCP replaces
    shared memory, whose segment files the limit would refuse."""
    # The first experiment's 20 000 rows (500 kB) overflow the limit. The second one would spin
    # for days (1000 repetitions of 10^11 work iterations, at least a cycle each) if the failure
    # were noticed only at the end, so a run that ends at all stopped early: no wall-clock bound
    # for a loaded machine to break, only a generous timeout.
    rows = [{"exp_id": 1, "op": "empty", "nrep": 20_000},
            {"exp_id": 2, "op": "ineighbor_alltoall", "msg_size": 8, "nrep": 1000,
             "topology": "cart", "ndim": 1, "work": 100_000_000_000}]  # fmt: skip
    infile = write_input(tmp_path / "in.csv", rows)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    kernel = kernel_for("openmpi")
    limited = ["sh", "-c", 'trap "" XFSZ; exec prlimit --fsize=100000 "$@"', "sh", kernel.binary]
    process = subprocess.Popen(
        kernel.mpi.command(2, [*limited, infile, out_dir / "out.csv"]),
        env=kernel.mpi.environment(2, {"OMPI_MCA_btl": "self,tcp"}),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        _, stderr = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        pytest.fail("the run went on measuring after its output failed")
    assert process.returncode == 1, stderr
    assert "cannot write" in stderr and "File too large" in stderr
    assert sorted(p.name for p in out_dir.iterdir()) == []


def test_max_time_stops_repeating_and_is_recorded(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    rows = [
        {"exp_id": 1, "op": "empty", "nrep": 10_000_000, "max_time": 0.2},
        {"exp_id": 2, "op": "barrier", "nrep": 5, "max_time": 0},
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    result = kernel_for("mpich").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr
    # Stopped early: fewer repetitions done than asked (no wall-clock bound: load would break it).
    done = {e["exp_id"]: e["reps_done"] for e in read_provenance(outfile)["experiments"]}
    times = read_times(outfile)
    assert 0 < done[1] < 10_000_000 and len(times[1]) == done[1]
    assert done[2] == 5 and len(times[2]) == 5


def test_work_is_done_between_start_and_wait(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """100 million work iterations take at least a cycle each, 20 ms even at 5 GHz: the loop is
    not optimised away. Only a lower bound, which a loaded machine cannot break."""
    rows = [
        {
            "exp_id": 1,
            "op": "ineighbor_alltoall",
            "msg_size": 8,
            "nrep": 2,
            "topology": "cart",
            "ndim": 1,
            "work": 100_000_000,
        },
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    result = kernel_for("mpich").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr
    assert min(t for _, t in read_times(outfile)[1]) > 0.01


def test_hundred_thousand_experiments(kernel_for: Callable[[str], Kernel], tmp_path: Path) -> None:
    n = 100_000
    rows = [{"exp_id": n - i, "op": "empty", "nrep": 1} for i in range(n)]
    infile = write_input(tmp_path / "in.csv", rows, columns=["exp_id", "op", "nrep"])
    outfile = tmp_path / "out.csv"
    result = kernel_for("mpich").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr
    lines = outfile.read_text().splitlines()
    assert len(lines) == n + 1 and lines[1].startswith(f"{n},0,")
    assert len(read_provenance(outfile)["experiments"]) == n


# MPICH has 2048 communicator context ids: a communicator leaked per experiment fails the run
# (MPI_Comm_split ... failed) long before 2100 experiments of the kind that leaks it.
LEAK_KINDS = [
    # topology comm (cart) + the lane op's node, leader and lane communicators
    {"op": "allgather_as_lane", "msg_size": 8, "topology": "cart", "ndim": 1},
    # topology comm (graph) + the intermediate Cartesian comm of its plan + the mock-up's graph
    {"op": "allgather_as_neighbor_allgather", "msg_size": 8, "topology": "moore", "ndim": 2},
    # one constructor per repetition (nodecart: its ordered split too), freed after each
    {"op": "topo_create", "topology": "cart", "ndim": 2, "constructor": "nodecart"},
]
LEAK_REPEATS = 2100


def test_no_communicator_leaks_per_experiment(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    rows = [
        {"exp_id": i, "nrep": 1, **LEAK_KINDS[i % len(LEAK_KINDS)]}
        for i in range(LEAK_REPEATS * len(LEAK_KINDS))
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    result = kernel_for("mpich").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(read_times(outfile)) == len(rows)


def test_node_size_groups_ranks_into_nodes(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """4 ranks as 2 nodes of 2: on a periodic ring every rank has one neighbour on its node and
    one off it."""
    rows = [
        {
            "exp_id": 1,
            "op": "neighbor_allgather",
            "msg_size": 8,
            "nrep": 2,
            "topology": "cart",
            "ndim": 1,
        },
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    result = kernel_for("openmpi").run(4, "--node-size", "2", infile, outfile)
    assert result.returncode == 0, result.stderr
    prov = read_provenance(outfile)
    assert prov["nodes"] == 2 and prov["processes_per_node"] == 2
    assert prov["ranks_per_node"] == [2, 2] and prov["node_detection"] == "--node-size 2"
    assert len(prov["hosts"]) == 2
    neighbours = prov["experiments"][0]["neighbours"]
    assert neighbours == {
        "on_node": {"min": 1, "max": 1, "mean": 1},
        "off_node": {"min": 1, "max": 1, "mean": 1},
    }
