"""Fixtures for the tests of libmpiguide-inject: the library and a probe program built with each
MPI library, and a launcher that runs them with or without injection."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INJECT_SOURCES = REPO / "src" / "inject"
PROBE_SOURCE = Path(__file__).with_name("probe.c")

# mpirun refuses to start as root without the first two; more ranks than cores need the third.
OPENMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}


@dataclass(frozen=True)
class MpiLibrary:
    name: str
    mpicc: str
    launcher: tuple[str, ...]
    env: dict[str, str]


MPI_LIBRARIES = {
    "openmpi": MpiLibrary(
        "openmpi", "mpicc.openmpi", ("mpirun.openmpi", "--oversubscribe"), OPENMPI_ENV
    ),
    "mpich": MpiLibrary("mpich", "mpicc.mpich", ("mpiexec.mpich",), {}),
}


@dataclass(frozen=True)
class InjectBuild:
    """libmpiguide-inject and the probe, built with one MPI library."""

    mpi: MpiLibrary
    library: Path
    probe: Path

    def launch(
        self,
        nprocs: int,
        program: list[str],
        spec: str | None,
        *,
        preload: bool = True,
        launcher: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `program` on `nprocs` ranks; with `preload`, under the library with
        MPIGUIDE_INJECT=`spec` (unset if None). The environment reaches the ranks by
        inheritance, as with the `env K=V launcher` prefix of the workflow. Without `launcher`
        the program starts as a singleton (one rank, no mpirun)."""
        env = {**os.environ, **self.mpi.env}
        env.pop("MPIGUIDE_INJECT", None)
        env.pop("LD_PRELOAD", None)
        if preload:
            env["LD_PRELOAD"] = str(self.library)
            if spec is not None:
                env["MPIGUIDE_INJECT"] = spec
        return subprocess.run(
            [*self.mpi.launcher, "-n", str(nprocs), *program] if launcher else program,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def probe_times(self, nprocs: int, args: list[str], spec: str | None) -> dict[str, float]:
        """The probe's "label p10_us" lines (µs); fails the test if the probe fails."""
        result = self.launch(nprocs, [str(self.probe), *args], spec, preload=spec is not None)
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
) -> Iterator[InjectBuild]:
    mpi = MPI_LIBRARIES[request.param]
    if shutil.which(mpi.mpicc) is None or shutil.which(mpi.launcher[0]) is None:
        pytest.skip(f"{mpi.name} is not installed ({mpi.mpicc}, {mpi.launcher[0]})")
    build = tmp_path_factory.mktemp(f"inject-{mpi.name}")
    library = build_inject(mpi, build)
    probe = build / "probe"
    subprocess.run(
        [
            mpi.mpicc,
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(probe),
            str(PROBE_SOURCE),
        ],
        check=True,
    )
    yield InjectBuild(mpi, library, probe)
