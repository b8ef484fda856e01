"""--dump-topology against an independent computation of the neighbour lists in Python."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import Row, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

LAUNCHES = [("openmpi", 6), ("mpich", 2)]
Lists = tuple[list[int | None], list[int | None]]  # sources, destinations; None = MPI_PROC_NULL


def topologies() -> list[Row]:
    rows: list[Row] = []
    for ndim in (1, 2, 3):
        for nfin in range(ndim + 1):
            rows.append({"topology": "cart", "ndim": ndim, "nfin": nfin, "reorder": nfin % 2})
            for topology, radius, ordering, constructor in itertools.product(
                ("vonneumann", "moore"), (1, 2), ("FMAJ", "LMAJ", "RAND"), ("graph", "graph_adj")
            ):
                rows.append(
                    {
                        "topology": topology,
                        "ndim": ndim,
                        "nfin": nfin,
                        "radius": radius,
                        "ordering": ordering,
                        "constructor": constructor,
                        "reorder": radius - 1,
                    }
                )
    for ordering, constructor in itertools.product(("LINEAR", "RAND"), ("graph", "graph_adj")):
        rows.append({"topology": "full", "ordering": ordering, "constructor": constructor})
    return [{"exp_id": i, "op": "topo_create", "nrep": 1, **row} for i, row in enumerate(rows)]


def balanced_dims(nprocs: int, ndim: int) -> tuple[int, ...]:
    """The lexicographically smallest non-increasing factorisation (MPI_Dims_create's spec)."""
    return min(
        combo
        for combo in itertools.product(range(nprocs, 0, -1), repeat=ndim)
        if math.prod(combo) == nprocs and list(combo) == sorted(combo, reverse=True)
    )


def coords_of(rank: int, dims: tuple[int, ...]) -> list[int]:
    """Row-major, as MPI_Cart_coords: the last dimension changes fastest."""
    coords = []
    for extent in reversed(dims):
        coords.append(rank % extent)
        rank //= extent
    return coords[::-1]


def rank_at(coords: list[int], dims: tuple[int, ...], nfin: int) -> int | None:
    """Rank at coords, wrapping periodic dimensions; None across a non-periodic border
    (dimensions 0 .. nfin-1 are the non-periodic ones)."""
    rank = 0
    for d, (c, extent) in enumerate(zip(coords, dims, strict=True)):
        if d < nfin and not 0 <= c < extent:
            return None
        rank = rank * extent + c % extent
    return rank


def expected_lists(row: Row, rank: int, nprocs: int) -> Lists:
    if row["topology"] == "full":
        return [(rank + i) % nprocs for i in range(nprocs)], [
            (rank - i) % nprocs for i in range(nprocs)
        ]
    dims = balanced_dims(nprocs, row["ndim"])
    here = coords_of(rank, dims)

    def shifted(offset: tuple[int, ...]) -> int | None:
        return rank_at([c + o for c, o in zip(here, offset, strict=True)], dims, row["nfin"])

    if row["topology"] == "cart":
        lists: list[int | None] = []
        for d in range(row["ndim"]):
            for step in (-1, 1):
                lists.append(shifted(tuple(step if k == d else 0 for k in range(row["ndim"]))))
        return lists, lists
    r = row["radius"]
    offsets = [
        o
        for o in itertools.product(range(-r, r + 1), repeat=row["ndim"])  # FMAJ order
        if any(o) and (row["topology"] == "moore" or sum(map(abs, o)) <= r)
    ]
    if row["ordering"] == "LMAJ":
        offsets.sort(key=lambda o: o[::-1])
    destinations = [shifted(o) for o in offsets]
    sources = [shifted(tuple(-x for x in o)) for o in offsets]
    return [s for s in sources if s is not None], [d for d in destinations if d is not None]


def parse_ranks(field: str) -> list[int | None]:
    return [None if x == "null" else int(x) for x in field.split(",")] if field else []


def dump(kernel: Kernel, nprocs: int, infile: Path) -> dict[int, dict[int, tuple[int, Lists]]]:
    """exp_id -> rank -> (world rank, (sources, destinations))."""
    result = kernel.run(nprocs, "--dump-topology", infile)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "exp_id\trank\tworld_rank\tsources\tdestinations"
    table: dict[int, dict[int, tuple[int, Lists]]] = defaultdict(dict)
    for line in lines[1:]:
        exp_id, rank, world_rank, sources, destinations = line.split("\t")
        table[int(exp_id)][int(rank)] = (
            int(world_rank),
            (parse_ranks(sources), parse_ranks(destinations)),
        )
    return table


def order_is_defined(row: Row) -> bool:
    """MPI keeps the order we pass to cart and graph_adj; RAND is compared as a multiset, and
    MPI_Dist_graph_create may order neighbours as it likes."""
    return row.get("constructor") != "graph" and row.get("ordering") != "RAND"


def as_multiset(lists: Lists) -> tuple[list[int], list[int]]:
    sources, destinations = ([-1 if x is None else x for x in part] for part in lists)
    return sorted(sources), sorted(destinations)


@pytest.mark.parametrize(("mpi", "nprocs"), LAUNCHES, ids=[f"{m}-{n}" for m, n in LAUNCHES])
def test_dump_topology_matches_independent_computation(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, nprocs: int
) -> None:
    kernel = kernel_for(mpi)
    rows = topologies()
    table = dump(kernel, nprocs, write_input(tmp_path / "in.csv", rows))

    compared = 0
    for row in rows:
        ranks = table[row["exp_id"]]
        assert sorted(ranks) == list(range(nprocs)), row
        if any(world != rank for rank, (world, _) in ranks.items()):
            continue  # reorder moved ranks: positions no longer follow from world ranks
        for rank, (_, lists) in ranks.items():
            expected = expected_lists(row, rank, nprocs)
            if order_is_defined(row):
                assert lists == expected, (row, rank)
            else:
                assert as_multiset(lists) == as_multiset(expected), (row, rank)
            compared += 1
    # Most experiments keep the world order (all with reorder 0).
    assert compared >= nprocs * len(rows) // 2, compared


def test_rand_orderings_are_reproducible_and_differ_between_ranks(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("openmpi")
    rows = [
        {"exp_id": 1, "op": "topo_create", "nrep": 1, "topology": "full", "ordering": "RAND"},
        {
            "exp_id": 2,
            "op": "topo_create",
            "nrep": 1,
            "topology": "moore",
            "ndim": 2,
            "radius": 2,
            "ordering": "RAND",
        },
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    first, second = dump(kernel, 6, infile), dump(kernel, 6, infile)
    assert first == second
    for exp_id in (1, 2):
        # The destination list relative to each rank: a rank-independent order would repeat.
        relative = {
            tuple((d - rank) % 6 for d in lists[1] if d is not None)
            for rank, (_, lists) in first[exp_id].items()
        }
        assert len(relative) > 1


def test_reordered_nodecart_lists_follow_the_new_ranks(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """Neither library reorders the experiments above, so their lists are only compared where
    world and topology ranks agree. nodecart does reorder (8 ranks, nodes of 2: {4, 2} grid in
    2x1 boxes): the Cartesian lists follow the new ranks, the dump names the world rank of each,
    and the two ranks of every node are grid neighbours."""
    nprocs = 8
    rows = [
        {
            "exp_id": i,
            "op": "topo_create",
            "nrep": 1,
            "topology": "cart",
            "ndim": ndim,
            "nfin": nfin,
            "constructor": "nodecart",
            "reorder": 1,
        }
        for i, (ndim, nfin) in enumerate([(2, 0), (2, 2), (3, 1)])
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    result = kernel_for("openmpi").run(nprocs, "--node-size", "2", "--dump-topology", infile)
    assert result.returncode == 0, result.stderr
    table: dict[int, dict[int, tuple[int, Lists]]] = defaultdict(dict)
    for line in result.stdout.splitlines()[1:]:
        exp_id, rank, world_rank, sources, destinations = line.split("\t")
        table[int(exp_id)][int(rank)] = (
            int(world_rank),
            (parse_ranks(sources), parse_ranks(destinations)),
        )
    for row in rows:
        ranks = table[row["exp_id"]]
        assert sorted(world for world, _ in ranks.values()) == list(range(nprocs))
        assert any(world != rank for rank, (world, _) in ranks.items()), row
        for rank, (_, lists) in ranks.items():
            assert lists == expected_lists(row, rank, nprocs), (row, rank)
        rank_of_world = {world: rank for rank, (world, _) in ranks.items()}
        for node in range(nprocs // 2):
            first, second = rank_of_world[2 * node], rank_of_world[2 * node + 1]
            assert second in ranks[first][1][1], (row, node)


def test_nodecart_and_nodecart_greedy_boxes_by_hand(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """8 ranks, nodes of 4 (world 0-3, 4-7), 3D grid {2, 2, 2}. nodecart (fewest faces; on the
    tie the first found, larger factors first): box 2x2x1, nodes on a 1x1x2 grid: node 0's
    ranks take coordinates (0,0,0), (0,1,0), (1,0,0), (1,1,0), grid ranks 0, 2, 4, 6; node 1
    the same with z = 1: 1, 3, 5, 7. nodecart_greedy (Gropp §2.1, a tie to the last dimension):
    2 -> z (2,2,1 left), 2 -> y (2,1,1 left): box 1x2x2, nodes on a 2x1x1 grid: world order."""
    nprocs = 8
    expected = {"nodecart": [0, 2, 4, 6, 1, 3, 5, 7], "nodecart_greedy": list(range(8))}
    rows = [
        {"exp_id": i, "op": "topo_create", "nrep": 1, "topology": "cart", "ndim": 3,
         "nfin": 3, "constructor": constructor, "reorder": 1}
        for i, constructor in enumerate(expected)
    ]  # fmt: skip
    infile = write_input(tmp_path / "in.csv", rows)
    result = kernel_for("openmpi").run(nprocs, "--node-size", "4", "--dump-topology", infile)
    assert result.returncode == 0, result.stderr
    rank_of_world: dict[int, dict[int, int]] = defaultdict(dict)
    for line in result.stdout.splitlines()[1:]:
        exp_id, rank, world_rank, _, _ = line.split("\t")
        rank_of_world[int(exp_id)][int(world_rank)] = int(rank)
    for row, ranks in zip(rows, expected.values(), strict=True):
        got = [rank_of_world[row["exp_id"]][world] for world in range(nprocs)]
        assert got == ranks, row["constructor"]
