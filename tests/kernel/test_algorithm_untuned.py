"""The reserved algorithm `untuned` (docs/kernel.md, "Algorithms per experiment"): accepted for
every op whose collective has algorithms, with either library, without MPI_T; the experiment
runs on a duplicate of its communicator made with the hint that exempts it from
libmpiguide-tune (without that library: the library's own call), and the provenance says so.
Python's name for it is the kernel's."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import KERNEL_SOURCES, operations, read_provenance, write_input

from mpiguide.core.values import UNTUNED

if TYPE_CHECKING:
    from mpi_support import Kernel

RANKS = {"openmpi": 2, "mpich": 2}
UNTUNED_DEFINE = re.compile(r'^#define ALGORITHM_UNTUNED "([^"]*)"$', re.M)


def test_python_names_untuned_as_the_kernel_does() -> None:
    header = (KERNEL_SOURCES / "algorithm" / "algorithm.h").read_text()
    assert UNTUNED_DEFINE.findall(header) == [UNTUNED]


def _collective_ops() -> list[dict[str, str]]:
    return [op for op in operations() if op["algorithm_of"] != "none"]


@pytest.mark.kernel
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_untuned_runs_every_collective_op(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    """Every op with an algorithm_of, untuned, beside the same op as the library chooses, under
    --verify; one on a Cartesian topology (its communicator duplicated per experiment)."""
    rows = []
    for op in _collective_ops():
        size = None if op["msg_size"] == "none" else 64
        for algorithm in (UNTUNED, ""):
            rows.append({"exp_id": len(rows), "op": op["op"], "nrep": 2, "msg_size": size,
                         "algorithm": algorithm})  # fmt: skip
    topology = {"topology": "cart", "ndim": 1, "reorder": 0}
    rows.append({"exp_id": len(rows), "op": "allreduce", "nrep": 2, "msg_size": 64,
                 "algorithm": UNTUNED, **topology})  # fmt: skip
    infile = write_input(tmp_path / "in.csv", rows)
    result = kernel_for(mpi).run(RANKS[mpi], "--verify", infile, tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    provenance = read_provenance(tmp_path / "out.csv")
    algorithms = provenance["algorithms"]
    assert algorithms["forced"] == []
    assert algorithms["untuned"]["algorithm"] == UNTUNED
    assert "mpiguide_tune=off" in algorithms["untuned"]["mechanism"]
    entries = provenance["experiments"]
    assert len(entries) == len(rows)
    for entry in entries:
        row = rows[entry["exp_id"]]
        if row["algorithm"]:
            assert entry["algorithm"] == UNTUNED
        else:
            assert "algorithm" not in entry
        assert "algorithm_value" not in entry
