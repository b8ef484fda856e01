"""Shared fixtures for tests that run real MPI (the helpers live in mpi_support.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mpi_support import MPI_LIBRARIES, Kernel, build_kernel


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
