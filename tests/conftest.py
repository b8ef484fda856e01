"""Shared fixtures: kernels built with real MPI (the helpers live in mpi_support.py) and copies
of measured campaigns (workflow_project.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mpi_support import MPI_LIBRARIES, Kernel, build_kernel
from workflow_project import copy_project
from xdist_schedule import SLURM_PACKAGE, scheduler


@pytest.fixture(scope="session")
def kernel_for() -> Callable[[str], Kernel]:
    """kernel_for("openmpi") / kernel_for("mpich"): the kernel built with that library, once per
    session; skips the test if the library is not installed."""
    built: dict[str, Kernel] = {}

    def get(name: str) -> Kernel:
        mpi = MPI_LIBRARIES[name]
        if not mpi.available():
            pytest.skip(f"{mpi.mpicc} or {mpi.launcher} not installed")
        if name not in built:
            built[name] = Kernel(mpi, build_kernel(mpi))
        return built[name]

    return get


@pytest.fixture
def project_copy(tmp_path: Path) -> Callable[[Path], Path]:
    """project_copy(measured): this test's own copy (tmp_path/project) of a campaign measured once
    for many tests (a session, module or package fixture runs it; workflow_project.copy_project)."""
    return lambda measured: copy_project(measured, tmp_path / "project")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A SLURM test outside tests/slurm/ would escape the xdist unit that keeps every SLURM test
    in one worker (tests/xdist_schedule.py): refuse it."""
    strays = [
        item.nodeid
        for item in items
        if item.get_closest_marker("slurm") and not item.nodeid.startswith(SLURM_PACKAGE)
    ]
    if strays:
        raise pytest.UsageError(
            f"slurm tests belong in {SLURM_PACKAGE} (one xdist unit): {', '.join(strays)}"
        )


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`: tests/xdist_schedule.py's (the SLURM package as one unit, longest units
    first); any other --dist mode: xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    return scheduler(config, log)
