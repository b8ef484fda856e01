"""--verify must catch wrong data: a PMPI interposer damages one received byte on rank 1."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

CASES = [
    ({"op": "neighbor_alltoall", "msg_size": 16, "topology": "cart", "ndim": 1}, "data from rank"),
    ({"op": "allreduce", "msg_size": 16, "dtype": "int"}, "wrong bytes"),
]


@pytest.fixture(scope="module")
def damaging_env(
    kernel_for: Callable[[str], Kernel], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """LD_PRELOAD of the interposer; MPICH's launcher passes it on to the ranks."""
    interposer = tmp_path_factory.mktemp("interposer") / "libcorrupt.so"
    subprocess.run(
        [
            kernel_for("mpich").mpi.mpicc,
            "-shared",
            "-fPIC",
            "-o",
            interposer,
            Path(__file__).with_name("corrupt_receive.c"),
        ],
        check=True,
    )
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
    """The control: the interposer is active, but without --verify the run just measures."""
    kernel = kernel_for("mpich")
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 7, "nrep": 2, **CASES[0][0]}])
    result = kernel.run(2, infile, tmp_path / "out.csv", env=damaging_env)
    assert result.returncode == 0, result.stderr
