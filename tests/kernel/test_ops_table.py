"""--list-ops is the single source of truth for op names: operations.tsv must equal it. The grid
parameters are the kernel's input columns (--list-params) and the keys of a config's experiment
block; the kernel's defaults and applicability rules (--list-params) are mpiguide.plan.grid's."""

from __future__ import annotations

import csv
import io
import itertools
import subprocess
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from kernel_files import KERNEL_SOURCES, OPERATIONS_TSV

from mpiguide.core.package_data import CONFIG_SCHEMA
from mpiguide.plan.grid import (
    APPLIES_WHEN,
    CHUNK,
    DEFAULTS,
    INPUT_COLUMNS,
    PARAMETERS,
    TOPOLOGIES,
    applies,
)
from mpiguide.plan.operations import load_operations

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


def list_params(kernel: Kernel) -> list[dict[str, str]]:
    """The rows of --list-params (param, default, applies), in the kernel's order."""
    listed = subprocess.run(
        [kernel.binary, "--list-params"], capture_output=True, text=True, check=True
    ).stdout
    return list(csv.DictReader(io.StringIO(listed), delimiter="\t"))


def canonical(value: object) -> str:
    """A default as text, the way a grid cell holds it: 0.0 and 0 are both "0"."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_grid_parameters_are_the_kernels_columns_and_the_schemas_keys(
    kernel_for: Callable[[str], Kernel], mpi: str
) -> None:
    """One set of names, in one order: grid.csv's columns (mpiguide.plan.grid), the kernel's input
    columns (grid.csv's and the planner's `chunk`), and the keys of an experiment block (plus its
    `where` row filter)."""
    listed = [row["param"] for row in list_params(kernel_for(mpi))]
    assert tuple(listed) == INPUT_COLUMNS
    schema = yaml.safe_load(CONFIG_SCHEMA.read_text())
    assert set(schema["$defs"]["block"]["properties"]) == {*PARAMETERS, "where"}


def test_the_kernels_defaults_are_the_grids(kernel_for: Callable[[str], Kernel]) -> None:
    """An empty cell means the same to the kernel as a missing key to the grid: the same
    parameters have a default, and it is the same value. An empty `chunk` is chunk 0, that of
    an experiment that is not interleaved. A grid default that is empty (`algorithm`: the
    library's own choice) is a kernel column whose empty cell stands for nothing else."""
    rows = list_params(kernel_for("openmpi"))
    kernel_defaults = {row["param"]: row["default"] for row in rows if row["default"]}
    grid_defaults = {name: canonical(value) for name, value in DEFAULTS.items()}
    empty = {name for name, value in grid_defaults.items() if value == ""}
    assert kernel_defaults == {
        name: value for name, value in grid_defaults.items() if name not in empty
    } | {CHUNK: "0"}
    assert empty <= {row["param"] for row in rows if not row["default"]}


def test_the_kernels_applicability_is_the_grids(kernel_for: Callable[[str], Kernel]) -> None:
    """The kernel rejects a cell where the grid leaves it empty: the same parameters are
    conditional (APPLIES_WHEN), and parameters under one kernel rule get the same answer from
    grid.applies() for every op and topology (two rules may still agree on today's op table)."""
    rows = list_params(kernel_for("openmpi"))
    assert {row["param"] for row in rows if row["applies"] != "always"} == set(APPLIES_WHEN)
    cases = list(itertools.product(load_operations().values(), TOPOLOGIES))
    parameters_by_rule: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row["param"] in PARAMETERS:
            parameters_by_rule[row["applies"]].append(row["param"])
    disagreeing = {
        rule: parameters
        for rule, parameters in parameters_by_rule.items()
        if len({tuple(applies(p, op, t) for op, t in cases) for p in parameters}) > 1
    }
    assert disagreeing == {}
