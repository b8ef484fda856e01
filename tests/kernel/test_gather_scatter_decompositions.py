"""gather/scatter as hier and lane, and reduce_scatter_block_as_allreduce (Hunold 2023's
competitors) under --verify at every size class, 0 bytes included (a zero-count call must still
complete on every rank), every root, on one node (MPICH) and on two nodes with a reordered
topology (Open MPI)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import Row, read_times, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

OPS = ["gather_as_hier", "gather_as_lane", "scatter_as_hier", "scatter_as_lane",
       "reduce_scatter_block_as_allreduce"]  # fmt: skip
# (library, ranks, --node-size, topology): MPICH at most 2 ranks; 8 ranks as 2 nodes of 4 on a
# 3-D nodecart, whose rank order is not node-major.
LAUNCHES = [
    ("mpich", 2, 0, {"topology": "none"}),
    ("openmpi", 8, 4, {"topology": "cart", "ndim": 3, "nfin": 0, "constructor": "nodecart",
                       "reorder": 1}),
]  # fmt: skip


def rows(nprocs: int, topology: Row) -> list[Row]:
    experiments = []
    for op in OPS:
        for size in (0, 8, 40, 1000):
            for root in range(nprocs) if op != "reduce_scatter_block_as_allreduce" else [None]:
                experiments.append({"op": op, "msg_size": size, "dtype": "char", "nrep": 2,
                                    "root": root, **topology})  # fmt: skip
    return [row | {"exp_id": i} for i, row in enumerate(experiments)]


@pytest.mark.parametrize(
    ("mpi", "nprocs", "node_size", "topology"), LAUNCHES, ids=[f"{m}-{n}" for m, n, *_ in LAUNCHES]
)
def test_verify(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, nprocs: int, node_size: int,
    topology: Row,
) -> None:  # fmt: skip
    experiments = rows(nprocs, topology)
    infile = write_input(tmp_path / "in.csv", experiments)
    options = ("--node-size", str(node_size)) if node_size else ()
    outfile = tmp_path / "out.csv"
    result = kernel_for(mpi).run(
        nprocs, "--verify", "--nprocs", str(nprocs), *options, infile, outfile
    )
    assert result.returncode == 0, result.stderr
    assert set(read_times(outfile)) == {row["exp_id"] for row in experiments}
