"""The MPI libraries mpiguide installs itself beside a site's own: Open MPI 5, MPICH 5 and Intel
MPI, each from the Python package registry's wheels into its own prefix below the checkout
(`make setup-mpi`, scripts/setup_mpi.sh, which installs what this module lists).

One table, one row per install, owns what each library needs here: its pinned wheels, where its
compiler wrapper and launcher are, the environment its build and its runs need, and which
`library:` it is. An mpi entry names a row by `install:` (`install: openmpi-5.0.11`), and
`with_installs` fills in its keys from the row, each key the entry sets itself winning (`env`
variable by variable). Light on imports (the standard library and the launch words only): the
schema step calls it before it fills in the schema's defaults, and the setup script runs it to
list what to install.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mpiguide.campaign.launch import env_prefix

# The checkout that holds the package's sources (installed editable: pyproject.toml), and the
# folder in it where `make setup-mpi` installs (.gitignore'd).
CHECKOUT = Path(__file__).resolve().parents[3]
INSTALLS_DIR = CHECKOUT / ".mpi"
# Written last into a prefix by the setup script, holding the wheels installed there: a prefix
# without it (an interrupted install) or with other wheels is installed anew.
STAMP = ".mpiguide-installed"
SETUP_COMMAND = "make setup-mpi"

# Open MPI refuses to start as root without these: mpirun reads the OMPI_ pair, PRRTE's prterun
# (Open MPI 5's runtime, also started directly) the PRTE_ pair. Harmless when not root.
OPENMPI5_ROOT_ENV = MappingProxyType(
    {
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "PRTE_ALLOW_RUN_AS_ROOT": "1",
        "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    }
)


@dataclass(frozen=True)
class Install:
    """One library installed into `.mpi/<name>/` with pip."""

    name: str
    library: str  # the entry's `library:` (the schema's enum)
    wheels: tuple[str, ...]  # pinned requirements, installed without dependencies
    launcher: tuple[str, ...]  # a program in bin/ and its arguments
    srun: str | None = None  # the entry's `srun:` where the schema's default does not fit
    info: str | None = None  # the program in bin/ that lists the library's algorithms
    env: Mapping[str, str] = field(default_factory=dict)  # of every run
    # Variables that name the prefix, for the build (the compiler wrapper reads them) and the run.
    prefix_vars: tuple[str, ...] = ()

    @property
    def prefix(self) -> Path:
        return INSTALLS_DIR / self.name

    @property
    def stamp(self) -> Path:
        return self.prefix / STAMP

    def program(self, name: str) -> str:
        return str(self.prefix / "bin" / name)

    def installed(self) -> bool:
        return self.stamp.is_file() and self.stamp.read_text().split() == list(self.wheels)

    def build_env(self) -> dict[str, str]:
        """What the compiler wrapper needs in its environment."""
        return {var: str(self.prefix) for var in self.prefix_vars}

    def entry(self) -> dict[str, Any]:
        """The keys of an mpi entry that names this install."""
        keys: dict[str, Any] = {
            "mpicc": self.program("mpicc"),
            "launcher": shlex.join([self.program(self.launcher[0]), *self.launcher[1:]]),
            "library": self.library,
            "env": {**self.env, **self.build_env()},
        }
        if self.srun is not None:
            keys["srun"] = self.srun
        if self.info is not None:
            keys["info"] = shlex.quote(self.program(self.info))
        return keys


INSTALLS: Mapping[str, Install] = MappingProxyType(
    {
        install.name: install
        for install in (
            # Refuses more ranks than slots (cores) without --oversubscribe; it then yields when
            # idle by itself (mpi_yield_when_idle defaults to 1 when oversubscribed).
            Install(
                "openmpi-5.0.11",
                "openmpi",
                ("openmpi==5.0.11",),
                launcher=("mpirun", "--oversubscribe"),
                info="ompi_info",
                env=OPENMPI5_ROOT_ENV,
            ),
            # Hydra's mpiexec; busy-polling ranks: keep them at most one per core. Its PMI
            # speaks PMI-2 under SLURM, as Debian's MPICH does.
            Install(
                "mpich-5.0.2",
                "mpich",
                ("mpich==5.0.2",),
                launcher=("mpiexec",),
                srun="srun --mpi=pmi2",
                info="mpivars",
            ),
            # impi-rt needs a `libfabric` package the registry does not have: installed without
            # it, the library uses shared memory within a node, all a one-node run needs (across
            # nodes it loads a libfabric.so.1 of the system). Its mpicc finds mpi.h and the
            # library only through I_MPI_ROOT.
            Install(
                "intelmpi-2021.19",
                "intelmpi",
                ("impi-rt==2021.19.0", "impi-devel==2021.19.0"),
                launcher=("mpiexec",),
                info="impi_info",
                prefix_vars=("I_MPI_ROOT",),
            ),
        )
    }
)


def with_installs(config: Any) -> None:
    """Fills in, in place, the keys of every mpi entry of `config` that names an install (the
    entry's own keys win; its `env` is the install's with the entry's variables over it). Runs
    before the schema's defaults are filled in, on a config not yet validated: whatever does not
    read as an entry naming an install is left for the schema to refuse. Idempotent."""
    entries = config.get("mpi") if isinstance(config, dict) else None
    if not isinstance(entries, dict):
        return
    for entry in entries.values():
        if not isinstance(entry, dict) or not isinstance(entry.get("install"), str):
            continue
        install = INSTALLS.get(entry["install"])
        if install is None:
            continue
        for key, value in install.entry().items():
            if key == "env" and isinstance(entry.get("env"), dict):
                entry["env"] = {**value, **entry["env"]}
            else:
                entry.setdefault(key, value)


def entry_install(entry: Mapping[str, Any]) -> Install | None:
    """The install an (already filled-in) mpi entry names, if any."""
    name = entry.get("install")
    return None if name is None else INSTALLS[name]


def build_env(entry: Mapping[str, Any]) -> dict[str, str]:
    """The environment the build of an entry's kernel (or PMPI library) needs beyond its mpicc:
    the variables its install's compiler wrapper reads, valued as in the entry's `env` (which
    may set them to another prefix); none for an entry without `install`."""
    install = entry_install(entry)
    if install is None:
        return {}
    return {var: entry["env"].get(var, path) for var, path in install.build_env().items()}


def build_env_prefix(entry: Mapping[str, Any]) -> str:
    """build_env as the `env 'K=V' …` words that start a build rule's shell command."""
    return env_prefix(build_env(entry))


def main() -> None:
    """For scripts/setup_mpi.sh: one line per install, tab-separated: name, prefix, stamp file,
    then the wheels (space-separated)."""
    for install in INSTALLS.values():
        print(install.name, install.prefix, install.stamp, " ".join(install.wheels), sep="\t")


if __name__ == "__main__":
    main()
