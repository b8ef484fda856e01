"""Running real MPI in tests: the MPI libraries of this machine, the kernel built once per library
(shared between concurrent pytest sessions by a lock), and a launcher that gives each library the
environment it needs here. Imported as `mpi_support` (tests/ is on sys.path through its
conftest.py), never as `conftest`: several conftest modules exist and the name is ambiguous."""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mpiguide.campaign.installs import INSTALLS, Install

REPO = Path(__file__).resolve().parents[1]
KERNEL_SOURCES = REPO / "src" / "kernel"
PYTEST_BUILDS = REPO / "build" / "pytest"
CORES = os.cpu_count() or 1

# mpirun refuses to start as root without these two (harmless otherwise).
OPENMPI_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# More ranks than cores: let idle ranks yield instead of spinning against the busy ones.
OPENMPI_OVERSUBSCRIBED_ENV = {"OMPI_MCA_mpi_yield_when_idle": "1"}
OVERSUBSCRIBE = "--oversubscribe"


@dataclass(frozen=True)
class MpiLibrary:
    """An MPI library: its compiler wrapper and launcher, which library it is (`openmpi`,
    `mpich`, `intelmpi`: an mpi entry's `library`), and what building and launching need
    here beyond this process's environment."""

    name: str
    mpicc: str
    launcher: str
    library: str
    launcher_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # of every launch
    build_env: Mapping[str, str] = field(default_factory=dict)  # of every build
    install: Install | None = None  # installed by `make setup-mpi`

    def available(self) -> bool:
        installed = self.install is None or self.install.installed()
        return installed and all(shutil.which(p) for p in (self.mpicc, self.launcher))

    def command(self, nprocs: int, argv: Sequence[str | os.PathLike[str]]) -> list[str]:
        launch = [self.launcher, *self.launcher_args]
        if self.library == "openmpi" and nprocs > CORES and OVERSUBSCRIBE not in launch:
            launch.append(OVERSUBSCRIBE)
        return [*launch, "-n", str(nprocs), *map(str, argv)]

    def environment(self, nprocs: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**os.environ, **self.env}
        if self.library == "openmpi" and nprocs > CORES:
            env.update(OPENMPI_OVERSUBSCRIBED_ENV)
        env.update(extra or {})
        return env

    def build_environment(self) -> dict[str, str]:
        return {**os.environ, **self.build_env}


def installed_library(install: Install) -> MpiLibrary:
    """A library `make setup-mpi` installs, built and launched as an mpi entry naming it is."""
    entry = install.entry()
    launcher, *arguments = shlex.split(entry["launcher"])
    return MpiLibrary(
        install.name,
        entry["mpicc"],
        launcher,
        install.library,
        launcher_args=tuple(arguments),
        env=entry["env"],
        build_env=install.build_env(),
        install=install,
    )


# Debian's two, and the three `make setup-mpi` installs below the checkout (skipped where not
# installed: run it first). A test that runs on "every library" runs on all five; one whose
# whole module runs per library (the PMPI libraries' fixtures) on Debian's two, and on the
# installs only where it parametrizes so itself: the suite's time is kept for what each
# library's quirks can break.
MPI_LIBRARIES = {
    "openmpi": MpiLibrary(
        "openmpi", "mpicc.openmpi", "mpirun.openmpi", "openmpi", env=OPENMPI_ROOT_ENV
    ),
    "mpich": MpiLibrary("mpich", "mpicc.mpich", "mpiexec.mpich", "mpich"),
} | {name: installed_library(install) for name, install in INSTALLS.items()}
DEBIAN_MPI = ("mpich", "openmpi")
INSTALLED_MPI = tuple(INSTALLS)
# How each library's MPI_Get_library_version text starts.
LIBRARY_VERSION_TEXT = {
    "openmpi": "Open MPI v",
    "mpich": "MPICH Version:",
    "intelmpi": "Intel(R) MPI Library ",
}


# Hydra's report of a rank it killed (Intel MPI's mpiexec writes it to stdout when one rank
# exits with an error while another is still running).
HYDRA_KILL_REPORT = re.compile(r"^\n?={20,}\n(?:=   .*\n)+={20,}\n", re.MULTILINE)


def program_stdout(result: subprocess.CompletedProcess[str]) -> str:
    """What the launched program wrote to stdout: the launcher's own report of a rank it killed
    taken out."""
    return HYDRA_KILL_REPORT.sub("", result.stdout)


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
            env=mpi.build_environment(),
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        pytest.fail(f"building the kernel with {mpi.mpicc} failed:\n{result.stdout}{result.stderr}")
    return build / "mpiguide-bench"
