"""Gropp 2018, Table 3 offline (mpiguide.reports.partners, `python -m mpiguide partners`), and the
kernel's nodecart factorisation against the greedy one of Gropp's §2.1."""

from __future__ import annotations

import io
import itertools
import math
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pandas as pd
import pytest

from mpiguide.cli import main
from mpiguide.core.errors import MpiguideError
from mpiguide.reports.partners import COLUMNS, Grid, node_box, partner_counts, partners_table

# Gropp 2018, Table 3 (16 processes per node): constructor, dims, on min/max/avg, off min/max/avg.
# The paper's 3D size "32 x 32 x 16" is dims 16,32,32 in MPI's row-major rank order (the last
# dimension varies fastest): only then are consecutive ranks 32 in a line, which its Cart row
# needs (on-node 1-2, avg 1.88). With dims 32,32,16 a node would be a whole periodic line of 16
# (on-node 2 everywhere). Both rows need every dimension periodic (off-node min 2 and 4).
TABLE_3 = [
    ("cart", (128, 128), 1, 2, 1.88, 2, 3, 2.12),
    ("nodecart", (128, 128), 2, 4, 3, 0, 2, 1),
    ("cart", (16, 32, 32), 1, 2, 1.88, 4, 5, 4.12),
    ("nodecart", (16, 32, 32), 3, 4, 3.5, 2, 3, 2.5),
]


@pytest.mark.parametrize("row", TABLE_3, ids=[f"{r[0]}-{len(r[1])}d" for r in TABLE_3])
def test_table_3(row: tuple) -> None:
    constructor, dims, *expected = row
    table = partners_table(Grid(dims, (True,) * len(dims), 16)).set_index("constructor")
    got = table.loc[constructor]
    assert [round(float(v), 2) for v in got] == expected


def test_cli_prints_table_3_as_csv() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["partners", "--dims", "128,128", "--node-size", "16", "--periodic"]) == 0
    table = pd.read_csv(io.StringIO(out.getvalue()))
    assert list(table.columns) == COLUMNS
    assert table.to_dict("records") == [
        {"constructor": "cart", "on_min": 1, "on_max": 2, "on_avg": 1.875, "off_min": 2,
         "off_max": 3, "off_avg": 2.125},
        {"constructor": "nodecart", "on_min": 2, "on_max": 4, "on_avg": 3.0, "off_min": 0,
         "off_max": 2, "off_avg": 1.0},
    ]  # fmt: skip


def test_reorder_0_leaves_the_ranks_alone() -> None:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        argv = ["partners", "--dims", "16,32,32", "--node-size", "16", "--periodic"]
        assert main([*argv, "--reorder", "0"]) == 0
    table = pd.read_csv(io.StringIO(out.getvalue())).set_index("constructor")
    assert table.loc["nodecart"].tolist() == table.loc["cart"].tolist()
    assert "reorder 0 keeps the rank order" in err.getvalue()


def test_non_periodic_borders_have_no_partner() -> None:
    on, off = partner_counts(np.array([0, 0, 1, 1]), [False])
    assert on.tolist() == [1, 1, 1, 1] and off.tolist() == [0, 1, 1, 0]
    on, off = partner_counts(np.array([0, 0, 1, 1]), [True])
    assert on.tolist() == [1, 1, 1, 1] and off.tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dims", "16,x", "--node-size", "4"], "--dims '16,x': comma-separated integers"),
        (["--dims", "15,3", "--node-size", "4"], "node size 4 does not divide the 45"),
        (["--dims", "0,4", "--node-size", "4"], "at least 1"),
    ],
)
def test_bad_input_is_a_clear_error(argv: list[str], message: str) -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["partners", *argv]) == 2
    assert message in err.getvalue()


def test_a_grid_without_nodes_of_equal_size_is_refused() -> None:
    with pytest.raises(MpiguideError, match="every node must hold as many"):
        Grid((3, 3), (True, True), 2)


def prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


def gropp_box(dims: tuple[int, ...], node_size: int) -> tuple[int, ...] | None:
    """Gropp 2018, §2.1 steps 1-5: each prime factor of the node size, largest first, goes to
    the dimension whose remaining size it divides and is largest (the paper does not say which
    on a tie: the first)."""
    intra, remain = [1] * len(dims), list(dims)
    for factor in sorted(prime_factors(node_size), reverse=True):
        fits = [j for j in range(len(dims)) if remain[j] % factor == 0]
        if not fits:
            return None
        j = max(fits, key=lambda k: (remain[k], -k))
        intra[j] *= factor
        remain[j] //= factor
    return tuple(intra)


def off_node(grid: Grid, box: tuple[int, ...]) -> np.ndarray:
    inter = np.indices(grid.dims) // np.array(box).reshape((-1,) + (1,) * len(grid.dims))
    node = np.ravel_multi_index(tuple(inter), tuple(np.array(grid.dims) // np.array(box)))
    return partner_counts(node, grid.periods)[1]


def test_gropp_greedy_gives_table_3_boxes_too() -> None:
    for dims in ((128, 128), (16, 32, 32)):
        grid = Grid(dims, (True,) * len(dims), 16)
        assert (
            off_node(grid, gropp_box(dims, 16)).mean() == off_node(grid, node_box(dims, 16)).mean()
        )


def test_kernel_box_is_never_worse_than_gropps() -> None:
    """Over every grid of 1-3 dimensions up to 8 each and every node size dividing it, with and
    without wrap: the kernel's box has no more off-node partners on average nor at most (the
    on-node average is the complement), and exists whenever Gropp's does."""
    compared = 0
    for ndim in (1, 2, 3):
        for dims in itertools.product(range(1, 9), repeat=ndim):
            size = math.prod(dims)
            for node_size in (k for k in range(2, size + 1) if size % k == 0):
                greedy = gropp_box(dims, node_size)
                if greedy is None:
                    continue
                ours = node_box(dims, node_size)
                assert ours is not None, (dims, node_size)
                for periodic in (True, False):
                    grid = Grid(dims, (periodic,) * ndim, node_size)
                    theirs, mine = off_node(grid, greedy), off_node(grid, ours)
                    assert mine.mean() <= theirs.mean() + 1e-12, (dims, node_size, periodic)
                    assert mine.max() <= theirs.max(), (dims, node_size, periodic)
                    compared += 1
    assert compared > 1000
