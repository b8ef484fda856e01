"""--list-limits is the single source of the kernel's limits: src/mpiguide/data/limits.tsv must
equal it, and each limit is the bound the kernel enforces on its command line or input."""

from __future__ import annotations

import csv
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kernel_files import KERNEL_SOURCES, REPO, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

LIMITS_TSV = REPO / "src" / "mpiguide" / "data" / "limits.tsv"


def limits() -> dict[str, int]:
    """limits.tsv as limit -> value."""
    with LIMITS_TSV.open(newline="") as f:
        return {row["limit"]: int(row["value"]) for row in csv.DictReader(f, delimiter="\t")}


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_list_limits_equals_limits_tsv(kernel_for: Callable[[str], Kernel], mpi: str) -> None:
    kernel = kernel_for(mpi)
    # --list-limits needs no launcher.
    listed = subprocess.run(
        [kernel.binary, "--list-limits"], capture_output=True, check=True
    ).stdout
    assert listed == LIMITS_TSV.read_bytes(), (
        "src/mpiguide/data/limits.tsv differs from --list-limits: run make -C src/kernel "
        "limits-table"
    )


def test_limits_table_target_regenerates_the_tsv(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("openmpi")
    table = tmp_path / "limits.tsv"
    subprocess.run(
        [
            "make",
            "-s",
            "-C",
            KERNEL_SOURCES,
            "limits-table",
            f"MPICC={kernel.mpi.mpicc}",
            f"BUILD={kernel.binary.parent}",
            f"LIMITS_TABLE={table}",
        ],
        check=True,
        capture_output=True,
    )
    assert table.read_bytes() == LIMITS_TSV.read_bytes()


def test_the_table_is_machine_readable() -> None:
    """A header and three columns; names unique; values plain non-negative integers."""
    rows = LIMITS_TSV.read_text().splitlines()
    assert rows[0].split("\t") == ["limit", "value", "meaning"]
    cells = [row.split("\t") for row in rows[1:]]
    assert all(len(c) == 3 and c[1].isdigit() and c[2] for c in cells)
    names = [c[0] for c in cells]
    assert len(set(names)) == len(names)


NEIGHBOR = {"op": "ineighbor_alltoall", "msg_size": 8, "topology": "cart", "ndim": 1}


def over(limit: str) -> tuple[dict[str, Any], str]:
    """A row just beyond a limit, and the message the kernel rejects it with."""
    value = limits()[limit]
    beyond = value + 1
    if limit == "max_buffer_bytes":
        row, column = {"op": "bcast", "msg_size": beyond}, "msg_size"
    elif limit == "max_nrep":
        row, column = {"op": "empty", "nrep": beyond}, "nrep"
    elif limit == "max_work":
        row, column = {**NEIGHBOR, "work": beyond}, "work"
    elif limit == "max_dims":
        row, column = {**NEIGHBOR, "ndim": beyond}, "ndim"
    elif limit == "max_buffer_offset":
        row, column = {"op": "bcast", "msg_size": 8, "buffer_offset": beyond}, "buffer_offset"
    elif limit == "max_interleave":
        row, column = {"op": "empty", "interleave": beyond}, "interleave"
    elif limit == "max_warmup":
        row, column = {"op": "empty", "warmup": beyond}, "warmup"
    else:  # max_stencil_offsets: in one dimension, 2 radius offsets
        radius = value // 2 + 1
        row = {**NEIGHBOR, "topology": "moore", "radius": radius}
        return (
            row,
            f"column 'radius': radius {radius} in 1 dimensions gives more than {value} offsets",
        )
    return row, f"column '{column}': {beyond} is too large (at most {value})"


INPUT_LIMITS = [
    "max_buffer_bytes",
    "max_nrep",
    "max_work",
    "max_dims",
    "max_stencil_offsets",
    "max_buffer_offset",
    "max_interleave",
    "max_warmup",
]


def test_every_limit_is_tested() -> None:
    assert set(limits()) == {"max_ranks", *INPUT_LIMITS}


@pytest.mark.parametrize("limit", INPUT_LIMITS)
def test_input_beyond_a_limit_is_rejected(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, limit: str
) -> None:
    row, message = over(limit)
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 1, "nrep": 2, **row}])
    result = kernel_for("mpich").run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 2, result.stderr
    assert f"{infile}:2: {message}\n" in result.stderr


@pytest.mark.parametrize(("option", "accepted_exit"), [("--nprocs", 1), ("--node-size", 0)])
def test_ranks_beyond_max_ranks_are_refused(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, option: str, accepted_exit: int
) -> None:
    """One more than max_ranks is a command-line mistake (exit 2); max_ranks itself is taken
    (--nprocs then fails against the run's 2 ranks, exit 1; --node-size makes one node)."""
    value = limits()["max_ranks"]
    infile = write_input(tmp_path / "in.csv", [{"exp_id": 1, "op": "empty", "nrep": 2}])
    kernel = kernel_for("mpich")
    refused = kernel.run(2, f"{option}={value + 1}", infile, tmp_path / "out.csv")
    assert refused.returncode == 2
    assert f"{option}: '{value + 1}' is not a positive integer" in refused.stderr
    accepted = kernel.run(2, f"{option}={value}", infile, tmp_path / "out.csv")
    assert accepted.returncode == accepted_exit, accepted.stderr
