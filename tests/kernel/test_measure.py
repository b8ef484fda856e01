"""Every operation on every topology, under --verify, on Open MPI (2 and 4 ranks), MPICH
(2 ranks) and the libraries `make setup-mpi` installs (2 ranks): one kernel launch per
configuration runs the whole batch."""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import Row, operations, read_provenance, read_times, write_input

from mpi_support import INSTALLED_MPI, LIBRARY_VERSION_TEXT

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

LAUNCHES = [("openmpi", 2), ("openmpi", 4), ("mpich", 2), *((name, 2) for name in INSTALLED_MPI)]

# Topologies with several orderings, nfin values, constructors and both reorder values.
TOPOLOGIES: list[Row] = [
    {"topology": "none"},
    {"topology": "cart", "ndim": 1, "nfin": 0, "reorder": 0},
    {"topology": "cart", "ndim": 2, "nfin": 1, "reorder": 1},
    {"topology": "cart", "ndim": 3, "nfin": 3, "reorder": 0},
    {
        "topology": "vonneumann",
        "ndim": 2,
        "nfin": 0,
        "radius": 1,
        "ordering": "FMAJ",
        "constructor": "graph_adj",
        "reorder": 0,
    },
    {
        "topology": "vonneumann",
        "ndim": 2,
        "nfin": 2,
        "radius": 2,
        "ordering": "LMAJ",
        "constructor": "graph",
        "reorder": 1,
    },
    {
        "topology": "vonneumann",
        "ndim": 3,
        "nfin": 1,
        "radius": 1,
        "ordering": "RAND",
        "constructor": "graph_adj",
        "reorder": 1,
    },
    {
        "topology": "moore",
        "ndim": 2,
        "nfin": 0,
        "radius": 1,
        "ordering": "RAND",
        "constructor": "graph",
        "reorder": 0,
    },
    {
        "topology": "moore",
        "ndim": 1,
        "nfin": 1,
        "radius": 2,
        "ordering": "LMAJ",
        "constructor": "graph_adj",
        "reorder": 1,
    },
    {
        "topology": "moore",
        "ndim": 3,
        "nfin": 2,
        "radius": 1,
        "ordering": "FMAJ",
        "constructor": "graph",
        "reorder": 0,
    },
    {"topology": "full", "ordering": "LINEAR", "constructor": "graph_adj", "reorder": 0},
    {"topology": "full", "ordering": "RAND", "constructor": "graph", "reorder": 1},
]
DTYPES = ["char", "int", "float", "double"]
NREP = 3


def experiments(nprocs: int) -> list[Row]:
    """Every op on every topology it accepts; dtype, sync and sizes rotate across rows."""
    rows: list[Row] = []
    cycle = itertools.count()
    for op, topology in itertools.product(operations(), TOPOLOGIES):
        if op["topology"] == "required" and topology["topology"] == "none":
            continue
        i = next(cycle)
        row: Row = {"exp_id": 1000 + i, "op": op["op"], "nrep": NREP, **topology}
        row["sync"] = ("dissemination", "barrier")[i % 2]
        if op["msg_size"] != "none":
            row["dtype"] = DTYPES[i % len(DTYPES)]
            row["msg_size"] = 8 * (1 + i % 5)  # a multiple of every dtype's size
        if op["root"] == "1":
            row["root"] = i % nprocs
        if op["work"] == "1":
            row["work"] = 100
        rows.append(row)
    return rows


@pytest.mark.parametrize(("mpi", "nprocs"), LAUNCHES, ids=[f"{m}-{n}" for m, n in LAUNCHES])
def test_every_op_on_every_topology_verifies_and_writes_nrep_rows(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, nprocs: int
) -> None:
    kernel = kernel_for(mpi)
    rows = experiments(nprocs)
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"

    result = kernel.run(nprocs, "--verify", "--nprocs", str(nprocs), infile, outfile)

    assert result.returncode == 0, result.stderr
    times = read_times(outfile)
    assert set(times) == {row["exp_id"] for row in rows}
    for exp_id, reps in times.items():
        assert [rep for rep, _ in reps] == list(range(NREP)), exp_id
        assert all(t >= 0 and math.isfinite(t) for _, t in reps), exp_id

    prov = read_provenance(outfile)
    assert prov["nprocs"] == nprocs
    assert prov["nodes"] == 1 and prov["processes_per_node"] == nprocs
    assert prov["input_sha256"] == hashlib.sha256(infile.read_bytes()).hexdigest()
    assert prov["mpi_library_version"].startswith(LIBRARY_VERSION_TEXT[kernel.mpi.library])
    assert prov["wtick"] > 0 and prov["verify"] is True and len(prov["hosts"]) == 1
    assert prov["start_time"] <= prov["end_time"]
    entries = {e["exp_id"]: e for e in prov["experiments"]}
    for row in rows:
        entry = entries[row["exp_id"]]
        assert entry["op"] == row["op"] and entry["reps_done"] == NREP
        if row.get("ndim"):
            assert len(entry["dims"]) == row["ndim"]
            assert math.prod(entry["dims"]) == nprocs
            assert entry["dims"] == sorted(entry["dims"], reverse=True)
        if row["topology"] == "none":
            assert entry["neighbours"] is None
        else:
            # One node: every neighbour is on-node.
            assert entry["neighbours"]["off_node"]["max"] == 0
    assert not list(tmp_path.glob("*.tmp-*"))


def test_char_reductions_verify_beyond_four_ranks(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """Every reduction in char on 5 ranks, 64 B (above Open MPI's AVX vector width). With every
    rank contributing up to 61 per element the sums passed 255, which Open MPI's op/avx
    saturates (ompi#8045, wontfix): --verify failed on any run of 5 or more ranks."""
    nprocs = 5
    reductions = [op for op in operations() if op["reduction"] == "1"]
    rows = [
        {
            "exp_id": i,
            "op": op["op"],
            "msg_size": size,
            "dtype": "char",
            "nrep": 1,
            **({"root": nprocs - 1} if op["root"] == "1" else {}),
        }
        for i, (op, size) in enumerate(itertools.product(reductions, (64, 1000)))
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    result = kernel_for("openmpi").run(nprocs, "--verify", infile, outfile)
    assert result.returncode == 0, result.stderr
    assert set(read_times(outfile)) == {row["exp_id"] for row in rows}
