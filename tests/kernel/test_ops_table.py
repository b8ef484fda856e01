"""--list-ops is the single source of truth for op names: operations.tsv must equal it. The grid
parameters are the kernel's input columns (--list-params) and the keys of a config's experiment
block."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from kernel_files import KERNEL_SOURCES, OPERATIONS_TSV, REPO

from mpiguide.grid import COLUMNS, PARAMETERS

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_list_ops_equals_operations_tsv(kernel_for: Callable[[str], Kernel], mpi: str) -> None:
    kernel = kernel_for(mpi)
    # --list-ops needs no launcher.
    listed = subprocess.run([kernel.binary, "--list-ops"], capture_output=True, check=True).stdout
    assert listed == OPERATIONS_TSV.read_bytes(), (
        "src/mpiguide/data/operations.tsv differs from --list-ops: run make -C src/kernel ops-table"
    )


def test_ops_table_target_regenerates_the_tsv(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("openmpi")
    table = tmp_path / "operations.tsv"
    subprocess.run(
        [
            "make",
            "-s",
            "-C",
            KERNEL_SOURCES,
            "ops-table",
            f"MPICC={kernel.mpi.mpicc}",
            f"BUILD={kernel.binary.parent}",
            f"OPS_TABLE={table}",
        ],
        check=True,
        capture_output=True,
    )
    assert table.read_bytes() == OPERATIONS_TSV.read_bytes()


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_grid_parameters_are_the_kernels_columns_and_the_schemas_keys(
    kernel_for: Callable[[str], Kernel], mpi: str
) -> None:
    """One set of names, in one order: grid.csv's columns (mpiguide.grid), the kernel's input
    columns, and the keys of an experiment block (plus its `where` row filter)."""
    kernel = kernel_for(mpi)
    listed = subprocess.run(
        [kernel.binary, "--list-params"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert tuple(listed) == COLUMNS
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert set(schema["$defs"]["block"]["properties"]) == {*PARAMETERS, "where"}
