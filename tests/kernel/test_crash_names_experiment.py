"""A rank that the MPI library crashes says which experiment it was running: the run's log names
the input line and the experiment's values, so that a user can leave it out with `where:` or
reproduce it (docs/kernel.md, "When the library crashes or hangs")."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from kernel_files import write_input

from mpi_support import MPI_LIBRARIES, Kernel
from preload_support import build_test_library

pytestmark = pytest.mark.kernel

CRASHER = Path(__file__).with_name("crash_in_op.c")
ROWS = [
    {"exp_id": 0, "op": "allreduce", "msg_size": 8, "nrep": 3},
    {"exp_id": 1, "op": "allgather", "msg_size": 64, "nrep": 3},
    {"exp_id": 2, "op": "bcast", "msg_size": 8, "nrep": 3},
]


@pytest.mark.parametrize("name", sorted(MPI_LIBRARIES))
def test_a_crash_names_the_experiment_that_was_running(
    name: str, kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for(name)
    library = build_test_library(kernel.mpi, CRASHER, tmp_path / "libcrash.so")
    infile = write_input(tmp_path / "in.csv", ROWS)
    outfile = tmp_path / "out.csv"
    env = {"LD_PRELOAD": str(library), "CRASH_ALLGATHER_COUNT": "64"}
    command = kernel.command(2, [infile, outfile])
    if name.startswith("openmpi"):  # mpirun passes on only the variables it is told to
        command[1:1] = ["-x", "LD_PRELOAD", "-x", "CRASH_ALLGATHER_COUNT"]
    done = subprocess.run(
        command, env=kernel.mpi.environment(2, env), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    # Every rank crashes in the same call: the one whose report comes first may be either, as
    # the launcher stops the other when one dies.
    said = (
        f" got SIGSEGV while running {infile}:3 (exp_id 1: op allgather, msg_size 64, nrep 3,"
        " chunk 1 of 1; every value on that line): leave it out with `where:`"
    )
    assert any(f"mpiguide-bench: rank {rank}{said}" in done.stderr for rank in (0, 1)), done.stderr
    assert not outfile.exists()
