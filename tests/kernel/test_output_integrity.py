"""OUTPUT.json's output_sha256 is the digest of OUTPUT.csv as written, on both MPI libraries;
an allocation failure names the input line and exp_id, exits 1 and leaves no file behind."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_output_sha256_is_the_digest_of_the_csv(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    rows = [{"exp_id": i, "op": "allreduce", "msg_size": 8, "nrep": 7} for i in range(3)]
    infile = write_input(tmp_path / "in.csv", rows)
    result = kernel_for(mpi).run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    provenance = json.loads((tmp_path / "out.json").read_text())
    digest = hashlib.sha256((tmp_path / "out.csv").read_bytes()).hexdigest()
    assert provenance["output_sha256"] == digest


def test_an_allocation_failure_names_the_experiment_and_leaves_nothing(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """A bcast of 2 GiB under a 1.5 GB address-space limit on the ranks: the buffer allocation
    fails on whichever rank gets there first; that rank removes rank 0's temporary files."""
    rows = [{"exp_id": 0, "op": "empty", "nrep": 2},
            {"exp_id": 1, "op": "bcast", "msg_size": 2**31 - 2, "nrep": 2}]  # fmt: skip
    infile = write_input(tmp_path / "in.csv", rows, columns=["exp_id", "op", "msg_size", "nrep"])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    kernel = kernel_for("openmpi")
    limited = ["prlimit", "--as=1500000000", kernel.binary]
    result = subprocess.run(
        kernel.mpi.command(2, [*limited, infile, out_dir / "out.csv"]),
        env=kernel.mpi.environment(2), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert f"rank 0: {infile}:3 (exp_id 1): " in result.stderr or (
        f"rank 1: {infile}:3 (exp_id 1): " in result.stderr
    )
    assert sorted(p.name for p in out_dir.iterdir()) == []
