"""The derived operations under --verify: collective mock-ups, hierarchical and lane
decompositions, point-to-point pairs, halo, and the node-aware Cartesian constructor nodecart.
One kernel launch per configuration runs its whole batch."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import Row, operations, read_provenance, read_times, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

NEW_FAMILIES = {"mockup", "hier", "lane", "p2p", "halo"}
DTYPES = ["char", "int", "float", "double"]
# Multiples of 8 (every dtype) whose element counts are mostly not multiples of the rank
# count, so the padded split-buffer algorithms meet remainders (40 B of int = 10 elements).
SIZES = [0, 8, 40, 1000]

TOPOLOGIES: list[Row] = [
    {"topology": "none"},
    # periodic dims of size 2: a peer is both neighbours of a dimension (halo's tag matching)
    {"topology": "cart", "ndim": 1, "nfin": 0, "reorder": 0},
    {"topology": "cart", "ndim": 2, "nfin": 1, "reorder": 1},
    {
        "topology": "moore",
        "ndim": 2,
        "nfin": 0,
        "radius": 1,
        "ordering": "RAND",
        "constructor": "graph",
        "reorder": 1,
    },
    {"topology": "full", "ordering": "RAND", "constructor": "graph_adj", "reorder": 0},
]
NODECART: list[Row] = [
    {"topology": "cart", "ndim": 2, "nfin": 0, "constructor": "nodecart", "reorder": 1},
    {"topology": "cart", "ndim": 1, "nfin": 1, "constructor": "nodecart", "reorder": 0},
]


def new_ops(families: set[str] = NEW_FAMILIES) -> list[dict[str, str]]:
    return [op for op in operations() if op["family"] in families]


def batch(nprocs: int, ops: list[dict[str, str]], topologies: list[Row]) -> list[Row]:
    """Every op on every topology it accepts; dtype, size and root rotate across rows."""
    rows: list[Row] = []
    cycle = itertools.count()
    for op, topology in itertools.product(ops, topologies):
        if op["topology"] == "required" and topology["topology"] == "none":
            continue
        i = next(cycle)
        row: Row = {"exp_id": 5000 + i, "op": op["op"], "nrep": 2, **topology}
        row["dtype"] = DTYPES[i % len(DTYPES)]
        row["msg_size"] = SIZES[(i // len(DTYPES)) % len(SIZES)]
        if op["root"] == "1":
            row["root"] = (i * 3 + 1) % nprocs
        rows.append(row)
    return rows


def remainders(nprocs: int) -> list[Row]:
    """The split-buffer ops (mock-ups, hier, lane on a buffer) with element counts that no rank
    or node count divides (13 chars, 5 ints, 1 double: fewer elements than parts)."""
    ops = [op for op in new_ops({"mockup", "hier", "lane"}) if op["msg_size"] == "buffer"]
    return [
        {
            "exp_id": 0,
            "op": op["op"],
            "nrep": 1,
            "dtype": dtype,
            "msg_size": size,
            **({"root": nprocs - 1} if op["root"] == "1" else {}),
        }
        for op in ops
        for dtype, size in [("char", 13), ("int", 20), ("double", 8)]
    ]


def numbered(rows: list[Row], first: int) -> list[Row]:
    for i, row in enumerate(rows):
        row["exp_id"] = first + i
    return rows


def run_batch(kernel: Kernel, tmp_path: Path, nprocs: int, rows: list[Row], *options: str) -> dict:
    infile = write_input(tmp_path / "in.csv", rows)
    outfile = tmp_path / "out.csv"
    result = kernel.run(nprocs, "--verify", "--nprocs", str(nprocs), *options, infile, outfile)
    assert result.returncode == 0, result.stderr
    times = read_times(outfile)
    assert set(times) == {row["exp_id"] for row in rows}
    assert all(len(times[row["exp_id"]]) == row["nrep"] for row in rows)
    return read_provenance(outfile)


# (library, ranks, --node-size): one node; two nodes (hier/lane/nodecart do real work); MPICH
# with one rank per node.
LAUNCHES = [
    ("openmpi", 2, 0),
    ("openmpi", 4, 0),
    ("mpich", 2, 0),
    ("openmpi", 4, 2),
    ("mpich", 2, 1),
]


@pytest.mark.parametrize(
    ("mpi", "nprocs", "node_size"),
    LAUNCHES,
    ids=[f"{m}-{n}" + (f"-node{k}" if k else "") for m, n, k in LAUNCHES],
)
def test_every_new_op_verifies(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, nprocs: int, node_size: int
) -> None:
    rows = batch(nprocs, new_ops(), TOPOLOGIES) + remainders(nprocs)
    options = ("--node-size", str(node_size)) if node_size else ()
    if node_size:
        rows += batch(nprocs, new_ops({"hier", "lane", "halo"}), NODECART)
    numbered(rows, 5000)
    prov = run_batch(kernel_for(mpi), tmp_path, nprocs, rows, *options)
    if node_size:
        assert prov["nodes"] == nprocs // node_size


# Above every eager limit here (Open MPI sm 4 KiB, MPICH shm 64 KiB): sends complete only when
# matched, so a send-before-receive order in a pair, a node or a halo would deadlock.
RENDEZVOUS_SIZE = 256 * 1024


@pytest.mark.parametrize(("mpi", "nprocs", "node_size"), [("mpich", 2, 0), ("openmpi", 3, 2)])
def test_rendezvous_sizes_do_not_deadlock(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, nprocs: int, node_size: int
) -> None:
    """Blocking sends of the p2p pairs (an idle rank on 3), hier's root-leader hops (on nodes of
    2 and 1) and the halo's, with messages that cannot be buffered."""
    rows = batch(nprocs, new_ops({"p2p", "hier", "halo"}), TOPOLOGIES[:3])
    for row in rows:
        row["msg_size"] = RENDEZVOUS_SIZE
    numbered(rows, 7000)
    options = ("--node-size", str(node_size)) if node_size else ()
    run_batch(kernel_for(mpi), tmp_path, nprocs, rows, *options)


def test_irregular_nodes_odd_ranks_and_nodecart_fallback(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """3 ranks in nodes {0, 1} and {2}: hier handles nodes of different sizes, point-to-point
    leaves rank 2 idle, nodecart falls back to MPI_Cart_create and says so."""
    rows = batch(3, new_ops({"mockup", "hier", "p2p"}), TOPOLOGIES[:1])
    rows += batch(3, new_ops({"halo"}), [NODECART[1]])
    numbered(rows, 6000)
    prov = run_batch(kernel_for("openmpi"), tmp_path, 3, rows, "--node-size", "2")
    notes = {e["exp_id"]: e["constructor_note"] for e in prov["experiments"]}
    for row in rows:
        note = notes[row["exp_id"]]
        if row.get("constructor") == "nodecart":
            assert note is not None and "nodes differ in size" in note
        else:
            assert note is None


def test_lane_needs_nodes_of_equal_size(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """Bad input for this run, found before anything is measured (it once failed at the lane
    op's setup with exit 1, after measuring the experiments before it, losing the run)."""
    infile = write_input(
        tmp_path / "in.csv",
        [
            {"exp_id": 1, "op": "allreduce", "msg_size": 8, "nrep": 1},
            {"exp_id": 2, "op": "allreduce_as_lane", "msg_size": 8, "nrep": 1},
        ],
    )
    result = kernel_for("openmpi").run(3, "--node-size", "2", infile, tmp_path / "out.csv")
    assert result.returncode == 2
    assert f"{infile}:3: op allreduce_as_lane: lane decompositions need nodes of equal size" in (
        result.stderr
    )
    assert "MPI_Abort" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def locality(on: tuple[int, int, float], off: tuple[int, int, float]) -> dict:
    return {
        "on_node": dict(zip(("min", "max", "mean"), on, strict=True)),
        "off_node": dict(zip(("min", "max", "mean"), off, strict=True)),
    }


# 16 ranks, --node-size 4 (nodes = world ranks 0-3, 4-7, ...), 2D grid dims {4, 4}.
# cart: row-major, so a node is a grid row. nfin 2 (no wrap): the row neighbours are on-node
# (1 at the row's ends, else 2), the column neighbours off-node (1 in the first and last row,
# else 2): on 1..2, mean 1.5; off 1..2, mean 1.5. nfin 0 (torus): 2 on, 2 off everywhere.
# nodecart: a node is a 2x2 box (the 4x1 box has more faces), boxes on a 2x2 grid of nodes. In
# each dimension one neighbour is the box partner (on-node: always 2); the other is off-node
# unless it is across the border: nfin 2: coordinates 0 and 3 have none, so off 0..2, mean 1;
# nfin 0: off 2 everywhere. 1D nfin 1 (16 in a row, nodes of 4 consecutive): the same in both:
# on 1..2 (box ends have one), mean (2*1 + 2*2) / 4 = 1.5; off: rank 0 and 15 have none, the
# other box ends one: 0..1, mean 6/16.
LOCALITY_16 = [
    ({"ndim": 2, "nfin": 2, "constructor": "cart"}, locality((1, 2, 1.5), (1, 2, 1.5))),
    ({"ndim": 2, "nfin": 2, "constructor": "nodecart"}, locality((2, 2, 2), (0, 2, 1))),
    ({"ndim": 2, "nfin": 0, "constructor": "cart"}, locality((2, 2, 2), (2, 2, 2))),
    ({"ndim": 2, "nfin": 0, "constructor": "nodecart"}, locality((2, 2, 2), (2, 2, 2))),
    ({"ndim": 1, "nfin": 1, "constructor": "nodecart"}, locality((1, 2, 1.5), (0, 1, 0.375))),
]


def test_nodecart_neighbour_counts_on_16_ranks(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    rows = [
        {
            "exp_id": i,
            "op": "halo",
            "msg_size": 8,
            "nrep": 1,
            "topology": "cart",
            "reorder": 1,
            **params,
        }
        for i, (params, _) in enumerate(LOCALITY_16)
    ]
    # On 3D nodecart ({4, 2, 2}, 2x2x1 boxes) node-major order is not rank order, and not an
    # involution either: the hier/lane ops' permutations must go the right way.
    box3d = {"topology": "cart", "ndim": 3, "nfin": 0, "constructor": "nodecart"}
    rows += batch(16, new_ops({"hier", "lane"}), [box3d])
    prov = run_batch(kernel_for("openmpi"), tmp_path, 16, rows, "--node-size", "4")
    entries = {e["exp_id"]: e for e in prov["experiments"]}
    for i, (params, expected) in enumerate(LOCALITY_16):
        assert entries[i]["neighbours"] == expected, params
        assert entries[i]["constructor_note"] is None
        if params["constructor"] == "nodecart" and params["ndim"] == 2:
            assert entries[i]["reorder_changed"] is True
