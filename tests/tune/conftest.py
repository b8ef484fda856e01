"""Fixtures for the tests of libmpiguide-tune: the library and its probe program built with each
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
TUNE_SOURCES = REPO / "src" / "tune"
PROBE_SOURCE = Path(__file__).with_name("probe.c")


@dataclass(frozen=True)
class TuneBuild:
    """libmpiguide-tune and the probe, built with one MPI library."""

    mpi: MpiLibrary
    library: Path
    probe: Path

    def launch(
        self,
        nprocs: int,
        program: Sequence[str | os.PathLike[str]],
        rules: Path | None,
        *,
        launcher: bool = True,
        preload: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `program` on `nprocs` ranks under the library with MPIGUIDE_TUNE=`rules` (unset
        if None) and MPIGUIDE_TUNE_REPORT=1. The environment reaches the ranks by inheritance, as
        with the workflow's `env K=V launcher` prefix. Without `launcher` the program starts as a
        singleton (one rank, no mpirun); without `preload` the program must be linked with the
        library."""
        env = self.mpi.environment(nprocs, extra_env)
        env.pop("MPIGUIDE_TUNE", None)
        env.pop("LD_PRELOAD", None)
        if preload:
            env["LD_PRELOAD"] = str(self.library)
        env["MPIGUIDE_TUNE_REPORT"] = "1"
        if rules is not None:
            env["MPIGUIDE_TUNE"] = str(rules)
        return subprocess.run(
            self.mpi.command(nprocs, program) if launcher else list(map(str, program)),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def build_tune(mpi: MpiLibrary, build: Path, *make_args: str) -> Path:
    """`make -C src/tune` as a user runs it; -Werror makes any warning a failure."""
    result = subprocess.run(
        ["make", "-C", str(TUNE_SOURCES), f"MPICC={mpi.mpicc}", f"BUILD={build}", *make_args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return build / "libmpiguide-tune.so"


@pytest.fixture(scope="session", params=sorted(MPI_LIBRARIES))
def tune_build(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> TuneBuild:
    mpi = MPI_LIBRARIES[request.param]
    if not mpi.available():
        pytest.skip(f"{mpi.mpicc} or {mpi.launcher} not installed")
    build = tmp_path_factory.mktemp(f"tune-{mpi.name}")
    library = build_tune(mpi, build)
    probe = build / "probe"
    compile_probe = [mpi.mpicc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
    subprocess.run([*compile_probe, "-o", str(probe), str(PROBE_SOURCE)], check=True)
    return TuneBuild(mpi, library, probe)
