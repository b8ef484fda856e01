"""Running real MPI in tests: the MPI libraries of this machine, the kernel built once per library
(shared between concurrent pytest sessions by a lock), and a launcher that gives each library the
environment it needs here. Imported as `mpi_support` (tests/ is on sys.path through its
conftest.py), never as `conftest`: several conftest modules exist and the name is ambiguous."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
KERNEL_SOURCES = REPO / "src" / "kernel"
PYTEST_BUILDS = REPO / "build" / "pytest"
CORES = os.cpu_count() or 1

# mpirun refuses to start as root without these two (harmless otherwise).
OPENMPI_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# More ranks than cores: let idle ranks yield instead of spinning against the busy ones.
OPENMPI_OVERSUBSCRIBED_ENV = {"OMPI_MCA_mpi_yield_when_idle": "1"}


@dataclass(frozen=True)
class MpiLibrary:
    """An MPI library: its compiler wrapper and launcher, and what launching needs here."""

    name: str
    mpicc: str
    launcher: str

    def available(self) -> bool:
        return shutil.which(self.mpicc) is not None and shutil.which(self.launcher) is not None

    def command(self, nprocs: int, argv: Sequence[str | os.PathLike[str]]) -> list[str]:
        launch = [self.launcher]
        if self.name == "openmpi" and nprocs > CORES:
            launch.append("--oversubscribe")
        return [*launch, "-n", str(nprocs), *map(str, argv)]

    def environment(self, nprocs: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        if self.name == "openmpi":
            env.update(OPENMPI_ROOT_ENV)
            if nprocs > CORES:
                env.update(OPENMPI_OVERSUBSCRIBED_ENV)
        env.update(extra or {})
        return env


MPI_LIBRARIES = {
    "openmpi": MpiLibrary("openmpi", "mpicc.openmpi", "mpirun.openmpi"),
    "mpich": MpiLibrary("mpich", "mpicc.mpich", "mpiexec.mpich"),
}


@dataclass(frozen=True)
class Kernel:
    """mpiguide-bench built with one MPI library."""

    mpi: MpiLibrary
    binary: Path

    def command(self, nprocs: int, args: Sequence[str | os.PathLike[str]]) -> list[str]:
        return self.mpi.command(nprocs, [self.binary, *args])

    def run(
        self,
        nprocs: int,
        *args: str | os.PathLike[str],
        env: dict[str, str] | None = None,
        timeout: float = 120,
        launcher: MpiLibrary | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Launches the kernel on nprocs ranks and waits; never raises on a non-zero exit.
        `launcher`: start it with another library's launcher (default: its own)."""
        mpi = launcher or self.mpi
        return subprocess.run(
            mpi.command(nprocs, [self.binary, *args]),
            env=mpi.environment(nprocs, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(
        self, nprocs: int, *args: str | os.PathLike[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """Launches without waiting, in its own process group (kill with os.killpg)."""
        return subprocess.Popen(
            self.command(nprocs, args),
            env=self.mpi.environment(nprocs, env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Serialises builds of one directory between concurrent pytest sessions."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_kernel(mpi: MpiLibrary) -> Path:
    """Builds (or brings up to date) the kernel in build/pytest/<library>."""
    build = PYTEST_BUILDS / mpi.name
    with _exclusive(PYTEST_BUILDS / f"{mpi.name}.lock"):
        result = subprocess.run(
            ["make", "-C", str(KERNEL_SOURCES), f"MPICC={mpi.mpicc}", f"BUILD={build}"],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        pytest.fail(f"building the kernel with {mpi.mpicc} failed:\n{result.stdout}{result.stderr}")
    return build / "mpiguide-bench"
