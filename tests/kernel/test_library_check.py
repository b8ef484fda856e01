"""The kernel refuses to start with an MPI library other than the one it was built with
(library_check.c): libraries that ship a shared object of the same name (MPICH 5 and Intel MPI:
libmpi.so.12; Open MPI 4.1 and 5: libmpi.so.40) load in each other's place when the other's
folder comes first on LD_LIBRARY_PATH, and would be measured without a word. It tells Intel MPI,
whose mpi.h defines MPICH_VERSION too, from MPICH (mpi_family.h)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import write_input

from mpi_support import MPI_LIBRARIES, MpiLibrary, program_stdout

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

RANKS = 2
# The kernel's build, and the install whose lib folder goes first on LD_LIBRARY_PATH.
CASES = [
    ("mpich-5.0.2", "intelmpi-2021.19"),
    ("intelmpi-2021.19", "mpich-5.0.2"),
    ("openmpi", "openmpi-5.0.11"),
]
# How the kernel names each library.
NAMES = {"openmpi": "Open MPI", "mpich": "MPICH", "intelmpi": "Intel MPI"}


def named(mpi: MpiLibrary) -> str:
    """The library and its version as the kernel's message names them: an install's version is
    its first wheel's pin; Debian's is whatever this machine has."""
    version = r"[0-9.]+" if mpi.install is None else re.escape(mpi.install.wheels[0].split("==")[1])
    return f"{re.escape(NAMES[mpi.library])} {version}"


@pytest.mark.parametrize(("built", "loaded"), CASES, ids=[f"{b}-with-{o}" for b, o in CASES])
def test_another_library_of_the_same_name_is_refused_on_every_rank(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, built: str, loaded: str
) -> None:
    other = MPI_LIBRARIES[loaded]
    if other.install is None or not other.available():
        pytest.skip(f"{loaded} not installed (make setup-mpi)")
    kernel = kernel_for(built)
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 0, "op": "barrier", "nrep": 2}])
    outfile = tmp_path / "out.csv"
    first = {"LD_LIBRARY_PATH": str(other.install.prefix / "lib")}

    result = kernel.run(RANKS, "--nprocs", str(RANKS), infile, outfile, env=first)

    assert result.returncode == 2, result.stderr
    refusal = re.compile(
        f"mpiguide-bench: built with {named(kernel.mpi)} \\(its mpi.h\\), but the MPI library "
        f"started is {named(other)} \\(MPI_Get_library_version\\): start the kernel with the "
        "library it was built with"
    )
    refusals = [line for line in result.stderr.splitlines() if refusal.match(line)]
    assert len(refusals) == RANKS, result.stderr
    assert program_stdout(result) == ""
    assert not outfile.exists()


def test_its_own_library_is_not_refused(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """The library's folder named on LD_LIBRARY_PATH changes nothing when it is the build's."""
    kernel = kernel_for("intelmpi-2021.19")
    assert kernel.mpi.install is not None
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 0, "op": "barrier", "nrep": 2}])
    own = {"LD_LIBRARY_PATH": str(kernel.mpi.install.prefix / "lib")}
    result = kernel.run(RANKS, infile, tmp_path / "out.csv", env=own)
    assert result.returncode == 0, result.stderr
    assert "built with" not in result.stderr


def test_intel_mpi_is_not_taken_for_mpich(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """An Intel MPI kernel names Intel MPI where it refuses an algorithm, before MPI_Init reads
    anything (taken for MPICH, it would look for MPICH's control variables)."""
    kernel = kernel_for("intelmpi-2021.19")
    row = {"exp_id": 0, "op": "allreduce", "msg_size": 8, "nrep": 2, "algorithm": "ring"}
    infile = write_input(tmp_path / "in.csv", [row])
    result = kernel.run(RANKS, infile, tmp_path / "out.csv")
    assert result.returncode == 2, result.stderr
    assert (
        f"mpiguide-bench: {infile}: column 'algorithm': the kernel was built with Intel MPI, "
        "whose algorithms it cannot choose"
    ) in result.stderr.splitlines()
