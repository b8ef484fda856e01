"""The PMPI libraries of this repository (src/inject, src/tune): one built with an MPI library
beside its test's probe program, and programs launched under it (tests/inject, tests/tune)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES, MpiLibrary

REPO = Path(__file__).resolve().parents[1]
PROBE_COMPILE = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class PreloadBuild:
    """A PMPI library and a probe program, built with one MPI library."""

    mpi: MpiLibrary
    library: Path
    probe: Path

    def run(
        self,
        nprocs: int,
        program: Sequence[str | os.PathLike[str]],
        settings: Mapping[str, str],
        cleared: Sequence[str],
        *,
        launcher: bool = True,
        preload: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `program` on `nprocs` ranks with the library's `settings` in its environment
        (its variables `cleared` from this process's first) and, with `preload`, under the
        library. The environment reaches the ranks by inheritance, as with the workflow's
        `env K=V launcher` prefix. Without `launcher` the program starts as a singleton (one
        rank, no mpirun)."""
        env = self.mpi.environment(nprocs, extra_env)
        for name in (*cleared, "LD_PRELOAD"):
            env.pop(name, None)
        if preload:
            env["LD_PRELOAD"] = str(self.library)
        env.update(settings)
        return subprocess.run(
            self.mpi.command(nprocs, program) if launcher else list(map(str, program)),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def build_test_library(mpi: MpiLibrary, source: Path, library: Path) -> Path:
    """A test's own PMPI library (one C file) built as a shared object with `mpi`'s compiler,
    warnings as errors; its path, `library`."""
    result = subprocess.run(
        [mpi.mpicc, *PROBE_COMPILE, "-shared", "-fPIC", "-o", str(library), str(source)],
        env=mpi.build_environment(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return library


def build_library(mpi: MpiLibrary, sources: str, build: Path, *make_args: str) -> Path:
    """`make -C src/<sources>` as a user runs it (-Werror makes any warning a failure); the
    path of libmpiguide-<sources>.so."""
    result = subprocess.run(
        ["make", "-C", str(REPO / "src" / sources), f"MPICC={mpi.mpicc}", f"BUILD={build}",
         *make_args],
        env=mpi.build_environment(),
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return build / f"libmpiguide-{sources}.so"


def build_with_probe(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    sources: str,
    probe_source: Path,
) -> tuple[MpiLibrary, Path, Path]:
    """For a fixture parametrised by MPI library name: the library, its build of src/<sources>
    and of `probe_source`; skips the test if the MPI library is not installed."""
    mpi = MPI_LIBRARIES[request.param]
    if not mpi.available():
        pytest.skip(f"{mpi.mpicc} or {mpi.launcher} not installed")
    build = tmp_path_factory.mktemp(f"{sources}-{mpi.name}")
    library = build_library(mpi, sources, build)
    probe = build / "probe"
    command = [mpi.mpicc, *PROBE_COMPILE, "-o", str(probe), str(probe_source)]
    subprocess.run(command, env=mpi.build_environment(), check=True)
    return mpi, library, probe
