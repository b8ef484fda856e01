"""The provenance records where every rank ran: its host and CPU affinity (the `ranks` list)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import read_provenance, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_provenance_lists_every_rank_with_host_and_cpus(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    kernel = kernel_for(mpi)
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 1, "op": "barrier", "nrep": 2}])
    outfile = tmp_path / "out.csv"

    result = kernel.run(2, "--nprocs", "2", infile, outfile)

    assert result.returncode == 0, result.stderr
    prov = read_provenance(outfile)
    assert [entry["rank"] for entry in prov["ranks"]] == [0, 1]
    # One node here: every rank runs on the host the provenance names for it.
    assert {entry["host"] for entry in prov["ranks"]} == set(prov["hosts"])
    allowed = os.sched_getaffinity(0)  # the launcher's children cannot run outside it
    for entry in prov["ranks"]:
        assert entry["cpus"], entry
        assert all(isinstance(cpu, int) for cpu in entry["cpus"]), entry
        assert set(entry["cpus"]) <= allowed, entry
