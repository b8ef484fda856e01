"""One kernel binary for two libraries through the standard MPI ABI (MPI 5.0's `mpi_abi.h`):
built with MPICH 5's `mpicc_abi` against `libmpi_abi.so.1`, which Intel MPI 2021.19 ships too,
and run under either (docs/kernel.md, "Building"). Its mpi.h names no implementation, so the
kernel checks no runtime library against it and chooses no algorithms."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from kernel_files import read_provenance, read_times, write_input

from mpi_support import LIBRARY_VERSION_TEXT, MPI_LIBRARIES, Kernel, build_kernel
from mpiguide.plan.grid import INPUT_COLUMNS

pytestmark = pytest.mark.kernel

BUILDER, OTHER = MPI_LIBRARIES["mpich-5.0.2"], MPI_LIBRARIES["intelmpi-2021.19"]
ROWS = [
    {"exp_id": 0, "op": "allreduce", "msg_size": 8, "nrep": 20},
    {"exp_id": 1, "op": "bcast", "msg_size": 1024, "nrep": 20},
    {"exp_id": 2, "op": "alltoall", "msg_size": 1024, "nrep": 20},
    {"exp_id": 3, "op": "neighbor_allgather", "msg_size": 256, "nrep": 20, "topology": "cart",
     "ndim": 1},
]  # fmt: skip


@pytest.fixture(scope="module")
def abi_kernel() -> Kernel:
    if not (BUILDER.available() and OTHER.available()):
        pytest.skip("MPICH 5 and Intel MPI are not both installed: run `make setup-mpi`")
    assert BUILDER.install is not None
    abi = dataclasses.replace(
        BUILDER, name="mpich-5.0.2-abi", mpicc=BUILDER.install.program("mpicc_abi")
    )
    return Kernel(abi, build_kernel(abi))


@pytest.mark.parametrize("runtime", [BUILDER.name, OTHER.name])
def test_one_abi_binary_measures_under_both_libraries(
    abi_kernel: Kernel, tmp_path: Path, runtime: str
) -> None:
    mpi = MPI_LIBRARIES[runtime]
    assert mpi.install is not None
    infile = write_input(tmp_path / "in.csv", ROWS, list(INPUT_COLUMNS))
    outfile = tmp_path / "out.csv"
    # The binary's RUNPATH names MPICH 5's folder: the library path chooses the other's.
    env = {"LD_LIBRARY_PATH": str(mpi.install.prefix / "lib")}
    result = abi_kernel.run(2, "--verify", infile, outfile, env=env, launcher=mpi, timeout=300)
    assert result.returncode == 0, result.stderr
    assert sorted(read_times(outfile)) == [0, 1, 2, 3]
    version = read_provenance(outfile)["mpi_library_version"]
    assert version.startswith(LIBRARY_VERSION_TEXT[mpi.library]), version


def test_an_abi_build_says_it_cannot_choose_algorithms(abi_kernel: Kernel, tmp_path: Path) -> None:
    row = {"exp_id": 0, "op": "allreduce", "msg_size": 8, "nrep": 2, "algorithm": "ring"}
    infile = write_input(tmp_path / "in.csv", [row], list(INPUT_COLUMNS))
    result = abi_kernel.run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 2, result.stderr
    assert "neither Open MPI nor MPICH, whose algorithms it cannot choose" in result.stderr
