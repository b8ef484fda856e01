"""The count patterns of the v-operations (column `counts`) and the Reduce_scatter mock-ups of
Manwade & Kulkarni's Table 1 rows 9 and 10, under --verify on both MPI libraries."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import Row, operations, read_times, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

PATTERNS = ["equal", "ramp"]
# Element counts below, at and above the rank count, so ramp gives some ranks 0 elements and
# the padded chunks of the Reduce_scatter mock-ups meet remainders.
SIZES = [("char", 0), ("char", 13), ("int", 40), ("double", 8), ("double", 1000)]
REDUCE_SCATTER_MOCKUPS = [
    "reduce_as_reduce_scatter_gather",
    "allreduce_as_reduce_scatter_allgather",
]


def counted_ops() -> list[dict[str, str]]:
    return [op for op in operations() if op["counts"] == "1"]


def test_the_v_operations_take_a_count_pattern() -> None:
    assert {op["op"] for op in counted_ops()} == {
        "scatterv", "gatherv", "allgatherv", "alltoallv", "reduce_scatter",
        "reduce_scatter_as_reduce_scatterv",
    }  # fmt: skip


def rows(nprocs: int) -> list[Row]:
    """Every counted op with every pattern and size, and the two Reduce_scatter mock-ups."""
    out: list[Row] = []
    for op, pattern, (dtype, size) in itertools.product(counted_ops(), PATTERNS, SIZES):
        row: Row = {"op": op["op"], "counts": pattern, "dtype": dtype, "msg_size": size}
        if op["root"] == "1":
            row["root"] = nprocs - 1
        out.append(row)
    for name, (dtype, size) in itertools.product(REDUCE_SCATTER_MOCKUPS, SIZES):
        root = {"root": nprocs - 1} if name.startswith("reduce_as") else {}
        out.append({"op": name, "dtype": dtype, "msg_size": size, **root})
    return [{"exp_id": i, "nrep": 2, **row} for i, row in enumerate(out)]


LAUNCHES = [("openmpi", 2), ("openmpi", 4), ("mpich", 2)]


@pytest.mark.parametrize(("mpi", "nprocs"), LAUNCHES, ids=[f"{m}-{n}" for m, n in LAUNCHES])
def test_count_patterns_and_reduce_scatter_mockups_verify(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, nprocs: int
) -> None:
    batch = rows(nprocs)
    infile = write_input(tmp_path / "in.csv", batch)
    outfile = tmp_path / "out.csv"
    result = kernel_for(mpi).run(nprocs, "--verify", "--nprocs", str(nprocs), infile, outfile)
    assert result.returncode == 0, result.stderr
    assert set(read_times(outfile)) == {row["exp_id"] for row in batch}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"op": "gather", "counts": "ramp"}, "column 'counts' does not apply to op gather"),
        (
            {"op": "alltoall_as_alltoallv", "counts": "equal"},
            "column 'counts' does not apply to op alltoall_as_alltoallv",
        ),
        (
            {"op": "gatherv", "counts": "zigzag"},
            "column 'counts': unknown value 'zigzag' (allowed: equal, ramp)",
        ),
    ],
    ids=["regular-op", "equal-count-mockup", "unknown-pattern"],
)
def test_bad_count_pattern_is_an_input_error(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, row: Row, message: str
) -> None:
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 1, "nrep": 1, "msg_size": 8, **row}])
    result = kernel_for("openmpi").run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 2
    assert f"{infile}:2: {message}" in result.stderr
    assert not (tmp_path / "out.csv").exists()


def test_ramp_bounds_the_largest_alltoallv_vector(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """A rank's alltoallv receive vector under ramp stays below twice the equal one: validation
    reserves that factor, so a size the equal pattern can hold may be refused under ramp."""
    half = 2**30
    infile = write_input(
        tmp_path / "in.csv",
        [
            {"exp_id": 1, "op": "alltoallv", "msg_size": half // 2, "nrep": 1, "counts": "ramp"},
        ],
    )
    result = kernel_for("openmpi").run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 2
    assert "exceeds" in result.stderr
