"""--verify must catch wrong data: a PMPI interposer damages one received byte on rank 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kernel_files import write_input

from mpi_support import MPI_LIBRARIES, Kernel, MpiLibrary
from preload_support import build_test_library

pytestmark = pytest.mark.kernel

CASES = [
    ({"op": "neighbor_alltoall", "msg_size": 16, "topology": "cart", "ndim": 1}, "data from rank"),
    ({"op": "allreduce", "msg_size": 16, "dtype": "int"}, "wrong bytes"),
]
INTERPOSER = Path(__file__).with_name("corrupt_receive.c")
DAMAGE_LOG = "CORRUPT_RECEIVE_LOG"  # corrupt_receive.c appends a line per damaged buffer there


def build_interposer(mpi: MpiLibrary, directory: Path) -> Path:
    return build_test_library(mpi, INTERPOSER, directory / f"libcorrupt-{mpi.name}.so")


@pytest.mark.parametrize("name", sorted(MPI_LIBRARIES))
def test_the_interposer_builds_cleanly(name: str, tmp_path: Path) -> None:
    """-Wall -Wextra -Werror with every library's headers, though the runs below use MPICH."""
    mpi = MPI_LIBRARIES[name]
    if not mpi.available():
        pytest.skip(f"{mpi.mpicc} not installed")
    assert build_interposer(mpi, tmp_path).is_file()


@pytest.fixture(scope="module")
def damaging_env(
    kernel_for: Callable[[str], Kernel], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """LD_PRELOAD of the interposer; MPICH's launcher passes it on to the ranks."""
    interposer = build_interposer(kernel_for("mpich").mpi, tmp_path_factory.mktemp("interposer"))
    return {"LD_PRELOAD": str(interposer)}


@pytest.mark.parametrize(("row", "detail"), CASES, ids=[c[0]["op"] for c in CASES])
def test_verify_reports_a_damaged_byte(
    kernel_for: Callable[[str], Kernel],
    damaging_env: dict[str, str],
    tmp_path: Path,
    row: dict[str, object],
    detail: str,
) -> None:
    kernel = kernel_for("mpich")
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 7, "nrep": 2, **row}])
    outfile = tmp_path / "out.csv"

    result = kernel.run(2, "--verify", infile, outfile, env=damaging_env)

    assert result.returncode == 1
    assert f"--verify failed: exp_id 7 (line 2) op {row['op']}: rank 1: 1 wrong bytes" in (
        result.stderr
    )
    assert detail in result.stderr
    assert not outfile.exists() and not list(tmp_path.glob("out.*"))


def test_without_verify_the_damage_goes_unnoticed(
    kernel_for: Callable[[str], Kernel], damaging_env: dict[str, str], tmp_path: Path
) -> None:
    """The control: the interposer damaged every repetition's receive buffer on rank 1, and
    without --verify the run just measures (exit 0, its output written)."""
    kernel = kernel_for("mpich")
    nrep = 2
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 7, "nrep": nrep, **CASES[0][0]}])
    outfile = tmp_path / "out.csv"
    log = tmp_path / "damage.log"

    result = kernel.run(2, infile, outfile, env={**damaging_env, DAMAGE_LOG: str(log)})

    assert result.returncode == 0, result.stderr
    assert outfile.is_file()
    damaged = log.read_text().splitlines() if log.exists() else []
    assert damaged.count("MPI_Neighbor_alltoall: rank 1's receive buffer damaged") >= nrep, damaged
