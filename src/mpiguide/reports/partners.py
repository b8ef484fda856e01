"""On-node and off-node communication partners of Cartesian process grids, offline.

Gropp, "Using Node Information to Implement MPI Cartesian Topologies" (EuroMPI 2018), Table 3:
for each process of a Cartesian communicator, how many of its partners for a shift of 1 in
every coordinate direction (MPI_Cart_shift, 2 per dimension) are on its own node and how many
are on another, for `MPI_Cart_create` and for the node-aware `nodecart` mapping of §2.1.

The computation is the kernel's (src/kernel/topology/nodecart.c, node.c) for `--node-size K`,
without launching a rank: world rank r is on node r // K; `cart` keeps the world order (neither
library here remaps in MPI_Cart_create, as Gropp's Table 2 found of every library he tested);
`nodecart` gives every node a box of the grid and numbers boxes and the processes in them in
row-major order; with `reorder` false it keeps the world order too. `nodecart` finds the box
with the fewest faces (the kernel's default), `nodecart_greedy` with Gropp's §2.1 steps 1-5. A
partner is counted once per direction, so a periodic dimension of size 2 counts the same process
twice. A missing partner (MPI_PROC_NULL at a non-periodic border) is not counted by default, as
the kernel's provenance counts destinations; with `null_off` it is counted off-node, so on + off
= 2·ndim everywhere, which is how Gropp's Table 3 and §3.2 count them (docs/analysis.md).
tests/kernel/test_partners_kernel.py compares these counts with the kernel's provenance on every
grid it can run here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpiguide.core.errors import MpiguideError
from mpiguide.plan.limits import kernel_limits

CONSTRUCTORS = ("cart", "nodecart", "nodecart_greedy")
COLUMNS = ["constructor", "on_min", "on_max", "on_avg", "off_min", "off_max", "off_avg"]


@dataclass(frozen=True)
class Grid:
    """A Cartesian grid of dims (row-major ranks) on nodes of node_size consecutive ranks."""

    dims: tuple[int, ...]
    periods: tuple[bool, ...]
    node_size: int

    def __post_init__(self) -> None:
        max_dims = kernel_limits()["max_dims"]
        if not 1 <= len(self.dims) <= max_dims:
            raise MpiguideError(f"dims: 1 to {max_dims} dimensions, got {len(self.dims)}")
        if any(d < 1 for d in self.dims):
            raise MpiguideError(f"dims: every dimension must be at least 1, got {self.dims}")
        if len(self.periods) != len(self.dims):
            raise MpiguideError(f"periods: {len(self.periods)} values for {len(self.dims)} dims")
        if self.node_size < 1 or self.size % self.node_size:
            raise MpiguideError(
                f"node size {self.node_size} does not divide the {self.size} processes of "
                f"{'x'.join(map(str, self.dims))} (every node must hold as many)"
            )

    @property
    def size(self) -> int:
        return math.prod(self.dims)


def node_box(dims: Sequence[int], node_size: int) -> tuple[int, ...] | None:
    """The kernel's factorisation of the node size into a box of the grid (nodecart.c):
    box[d] divides dims[d], the product is node_size, and the box has the fewest faces
    (sum of node_size / box[d]); on ties the first found with larger factors in earlier
    dimensions. None when no such box exists."""
    best: tuple[int, ...] | None = None
    best_faces = -1

    def search(d: int, remaining: int, box: tuple[int, ...]) -> None:
        nonlocal best, best_faces
        if d == len(dims):
            faces = sum(node_size // b for b in box)
            if remaining == 1 and (best_faces < 0 or faces < best_faces):
                best, best_faces = box, faces
            return
        for f in range(remaining, 0, -1):
            if remaining % f == 0 and dims[d] % f == 0:
                search(d + 1, remaining // f, (*box, f))

    search(0, node_size, ())
    return best


def prime_factors(n: int) -> list[int]:
    """The prime factors of n with multiplicity, ascending."""
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


def greedy_box(dims: Sequence[int], node_size: int) -> tuple[int, ...] | None:
    """Gropp 2018, §2.1 steps 1-5 (the kernel's nodecart_greedy): each prime factor of the node
    size, largest first, multiplies intradims[j] of the dimension j whose remaining size it
    divides and is largest; that size is then divided by it. The paper leaves ties open ("larger
    than remaindims[k] for any k"): the last such dimension is taken, the only choice that gives
    Table 3's 3-D Nodecart row on the dims MPI_Dims_create returns (32,32,16: box 2,4,2, on-node
    avg 3.5; the first would give 4,4,1 and 3.0). None when a factor divides no remaining size
    (which cannot happen when node_size divides the product of dims: dividing by one prime
    leaves every other prime's powers in place)."""
    intra, remain = [1] * len(dims), list(dims)
    for factor in sorted(prime_factors(node_size), reverse=True):
        fits = [j for j in range(len(dims)) if remain[j] % factor == 0]
        if not fits:
            return None
        j = max(fits, key=lambda k: (remain[k], k))
        intra[j] *= factor
        remain[j] //= factor
    return tuple(intra)


def constructor_box(
    dims: Sequence[int], node_size: int, constructor: str
) -> tuple[int, ...] | None:
    """The box a node holds under a nodecart constructor."""
    if constructor == "nodecart_greedy":
        return greedy_box(dims, node_size)
    return node_box(dims, node_size)


def nodecart_note(grid: Grid, reorder: bool) -> str | None:
    """Why nodecart keeps the world order (the kernel's constructor_note), or None. The kernel's
    other fallbacks cannot happen on a Grid: its nodes are equal, and a node size dividing the
    grid always has a box (each prime power of it divides the product of dims, so it can be
    spread over them)."""
    if not reorder:
        return "nodecart with reorder 0 keeps the rank order (MPI_Cart_create, reorder 0)"
    return None


def node_of_position(grid: Grid, constructor: str, reorder: bool = True) -> np.ndarray:
    """Array of shape dims: the node of the process at each grid position."""
    if constructor not in CONSTRUCTORS:
        raise MpiguideError(f"constructor {constructor!r}: one of {', '.join(CONSTRUCTORS)}")
    if constructor == "cart" or nodecart_note(grid, reorder) is not None:
        return np.arange(grid.size).reshape(grid.dims) // grid.node_size
    box = constructor_box(grid.dims, grid.node_size, constructor)
    assert box is not None  # see nodecart_note and greedy_box
    extent = np.array(box)
    inter = np.indices(grid.dims) // extent.reshape((-1,) + (1,) * len(grid.dims))
    return np.ravel_multi_index(tuple(inter), tuple(np.array(grid.dims) // extent))


def partner_counts(
    node: np.ndarray, periods: Sequence[bool], null_off: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Per grid position, its on-node and off-node partners for a shift of ±1 per dimension; a
    missing partner at a non-periodic border counts off-node with null_off, else not at all."""
    on = np.zeros(node.shape, dtype=np.int64)
    off = np.zeros(node.shape, dtype=np.int64)
    for axis, periodic in enumerate(periods):
        for shift in (1, -1):
            partner = np.roll(node, shift, axis=axis)
            exists = np.ones(node.shape, dtype=bool)
            if not periodic:  # the roll wrapped this border around: MPI_PROC_NULL there
                border: list[slice | int] = [slice(None)] * node.ndim
                border[axis] = 0 if shift == 1 else -1
                exists[tuple(border)] = False
            same = partner == node
            on += same & exists
            off += ~same & exists
            if null_off:
                off += ~exists
    return on, off


def partners_table(grid: Grid, reorder: bool = True, null_off: bool = False) -> pd.DataFrame:
    """Gropp's Table 3 for one grid: a row per constructor, min/max/avg on- and off-node."""
    rows = []
    for constructor in CONSTRUCTORS:
        node = node_of_position(grid, constructor, reorder)
        on, off = partner_counts(node, grid.periods, null_off)
        rows.append([constructor, on.min(), on.max(), on.mean(), off.min(), off.max(), off.mean()])
    return pd.DataFrame(rows, columns=COLUMNS)


def parse_dims(text: str) -> tuple[int, ...]:
    """`"128,128"` -> (128, 128)."""
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise MpiguideError(f"--dims {text!r}: comma-separated integers, e.g. 128,128") from None
