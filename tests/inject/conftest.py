"""Fixtures for the tests of libmpiguide-inject: the library and a probe program built with each
MPI library (tests/conftest.py describes the libraries and builds the kernel)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from mpi_support import CORES, DEBIAN_MPI
from preload_support import PreloadBuild, build_with_probe

from .refusal_support import busy_cores

PROBE_SOURCE = Path(__file__).with_name("probe.c")


class InjectBuild(PreloadBuild):
    """libmpiguide-inject and the probe, built with one MPI library."""

    def launch(
        self,
        nprocs: int,
        program: Sequence[str | os.PathLike[str]],
        spec: str | None,
        *,
        preload: bool = True,
        launcher: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `program` (PreloadBuild.run); with `preload`, under the library with
        MPIGUIDE_INJECT=`spec` (unset if None)."""
        settings = {"MPIGUIDE_INJECT": spec} if preload and spec is not None else {}
        return self.run(nprocs, program, settings, ("MPIGUIDE_INJECT",), launcher=launcher,
                        preload=preload)  # fmt: skip

    def probe_times(self, nprocs: int, args: list[str], spec: str | None) -> dict[str, float]:
        """The probe's "label fastest_us" lines (µs); fails the test if the probe fails."""
        result = self.launch(nprocs, [self.probe, *args], spec, preload=spec is not None)
        assert result.returncode == 0, result.stderr
        return {
            label: float(value)
            for label, value in (line.split() for line in result.stdout.splitlines())
        }


@pytest.fixture(scope="session", params=DEBIAN_MPI)
def inject_build(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> InjectBuild:
    return InjectBuild(*build_with_probe(request, tmp_path_factory, "inject", PROBE_SOURCE))


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """One busy-loop process more than there are cores, for the duration of the test: the
    machine is loaded by the test itself, whatever else runs on it."""
    with busy_cores(CORES + 1):
        yield
