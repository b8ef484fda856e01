"""Fixtures for the tests of libmpiguide-inject: the library and a probe program built with each
MPI library (tests/conftest.py describes the libraries and builds the kernel)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES, MpiLibrary

REPO = Path(__file__).resolve().parents[2]
INJECT_SOURCES = REPO / "src" / "inject"
PROBE_SOURCE = Path(__file__).with_name("probe.c")


@dataclass(frozen=True)
class InjectBuild:
    """libmpiguide-inject and the probe, built with one MPI library."""

    mpi: MpiLibrary
    library: Path
    probe: Path

    def launch(
        self,
        nprocs: int,
        program: Sequence[str | os.PathLike[str]],
        spec: str | None,
        *,
        preload: bool = True,
        launcher: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `program` on `nprocs` ranks; with `preload`, under the library with
        MPIGUIDE_INJECT=`spec` (unset if None). The environment reaches the ranks by
        inheritance, as with the workflow's `env K=V launcher` prefix. Without `launcher` the
        program starts as a singleton (one rank, no mpirun)."""
        env = self.mpi.environment(nprocs)
        env.pop("MPIGUIDE_INJECT", None)
        env.pop("LD_PRELOAD", None)
        if preload:
            env["LD_PRELOAD"] = str(self.library)
            if spec is not None:
                env["MPIGUIDE_INJECT"] = spec
        return subprocess.run(
            self.mpi.command(nprocs, program) if launcher else list(map(str, program)),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def probe_times(self, nprocs: int, args: list[str], spec: str | None) -> dict[str, float]:
        """The probe's "label fastest_us" lines (µs); fails the test if the probe fails."""
        result = self.launch(nprocs, [self.probe, *args], spec, preload=spec is not None)
        assert result.returncode == 0, result.stderr
        return {
            label: float(value)
            for label, value in (line.split() for line in result.stdout.splitlines())
        }


def build_inject(mpi: MpiLibrary, build: Path) -> Path:
    """`make -C src/inject` as a user runs it; -Werror makes any warning a failure."""
    result = subprocess.run(
        ["make", "-C", str(INJECT_SOURCES), f"MPICC={mpi.mpicc}", f"BUILD={build}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return build / "libmpiguide-inject.so"


@pytest.fixture(scope="session", params=sorted(MPI_LIBRARIES))
def inject_build(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> InjectBuild:
    mpi = MPI_LIBRARIES[request.param]
    if not mpi.available():
        pytest.skip(f"{mpi.mpicc} or {mpi.launcher} not installed")
    build = tmp_path_factory.mktemp(f"inject-{mpi.name}")
    library = build_inject(mpi, build)
    probe = build / "probe"
    compile_probe = [mpi.mpicc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
    subprocess.run([*compile_probe, "-o", str(probe), str(PROBE_SOURCE)], check=True)
    return InjectBuild(mpi, library, probe)
