"""`python -m mpiguide partners` (mpiguide.reports.partners) counts what the kernel's provenance
counts: on-/off-node partners of every cart and nodecart grid the kernel builds here with
--node-size, every ndim, nfin and reorder, on the dims the kernel chose. One launch per (ranks,
node size)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import Row, read_provenance, write_input

from mpiguide.reports.partners import Grid, node_of_position, nodecart_note, partner_counts

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

# (ranks, --node-size): boxes of 2, 4 and 6 in 1-3 dimensions, dims with odd factors (12).
LAUNCHES = [(8, 2), (8, 4), (12, 6), (16, 4)]


def rows() -> list[Row]:
    grids = [
        (ndim, nfin, constructor, reorder)
        for ndim in (1, 2, 3)
        for nfin in range(ndim + 1)
        for constructor in ("cart", "nodecart", "nodecart_greedy")
        for reorder in (0, 1)
    ]
    return [
        {"exp_id": i, "op": "halo", "msg_size": 8, "nrep": 1, "topology": "cart", "ndim": ndim,
         "nfin": nfin, "constructor": constructor, "reorder": reorder}
        for i, (ndim, nfin, constructor, reorder) in enumerate(grids)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("nprocs", "node_size"), LAUNCHES, ids=[f"{n}-node{k}" for n, k in LAUNCHES]
)
def test_offline_partner_counts_match_the_kernel(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, nprocs: int, node_size: int
) -> None:
    experiments = rows()
    infile = write_input(tmp_path / "in.csv", experiments)
    outfile = tmp_path / "out.csv"
    result = kernel_for("openmpi").run(
        nprocs, "--nprocs", str(nprocs), "--node-size", str(node_size), infile, outfile
    )
    assert result.returncode == 0, result.stderr
    provenance = {e["exp_id"]: e for e in read_provenance(outfile)["experiments"]}
    for row in experiments:
        entry = provenance[row["exp_id"]]
        dims = tuple(entry["dims"])
        grid = Grid(dims, tuple(d >= row["nfin"] for d in range(len(dims))), node_size)
        reorder = bool(row["reorder"])
        on, off = partner_counts(node_of_position(grid, row["constructor"], reorder), grid.periods)
        expected = {  # the provenance prints means with 6 significant digits
            side: {"min": c.min(), "max": c.max(), "mean": pytest.approx(c.mean(), rel=1e-5)}
            for side, c in (("on_node", on), ("off_node", off))
        }
        assert entry["neighbours"] == expected, (row, dims)
        if row["constructor"] != "cart":
            assert entry["constructor_note"] == nodecart_note(grid, reorder), (row, dims)
            assert entry["reorder_changed"] is (
                entry["constructor_note"] is None
                and any(
                    node_of_position(grid, row["constructor"]).ravel()
                    != node_of_position(grid, "cart").ravel()
                )
            ), (row, dims)
