"""Before any job: the commands a campaign's runs start are found on this machine, each entry's
mpicc and launch command, or the run stops naming the entry and key (a dry run warns)."""

from __future__ import annotations

from typing import Any

import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.preflight import missing_commands, program_of, require_commands
from mpiguide.core.errors import ConfigError

INSTALLED = {"mpicc.openmpi", "mpirun.openmpi", "srun", "mpicc.mpich", "mpiexec.mpich"}


def which(program: str, path: str | None = None) -> str | None:
    """shutil.which of a machine with INSTALLED in /usr/bin, and /opt/x/bin/mpirun."""
    if path is not None:
        return f"{path}/{program}" if f"{path}/{program}" == "/opt/x/bin/mpirun" else None
    if program.startswith("/"):
        return program if program == "/opt/x/bin/mpirun" else None
    return f"/usr/bin/{program}" if program in INSTALLED else None


def entry(**changes: Any) -> dict[str, Any]:
    return {
        "mpicc": "mpicc.openmpi",
        "launcher": "mpirun.openmpi --oversubscribe",
        "srun": "srun --mpi=pmix",
        "env": {},
        "modules": [],
    } | changes


def campaign(launch: str = "local", analysis_only: bool = False, **entries: Any) -> Campaign:
    config = {
        "mpi": entries or {"openmpi": entry()},
        "launch": launch,
        "analysis_only": analysis_only,
    }
    return Campaign(config, AnalysisOptions.with_defaults(), "c.yaml")


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("mpirun.openmpi --oversubscribe", "mpirun.openmpi"),
        ("'/opt/my mpi/bin/mpirun' -n 2", "/opt/my mpi/bin/mpirun"),
        ("env OMPI_X=1 'Y=a b' mpirun -n 2", "mpirun"),
        ("/usr/bin/env -i -u NAME --unset=OTHER A=1 srun --mpi=pmix", "srun"),
        ("env -C /tmp mpiexec", "mpiexec"),
        ("env A=1", "env"),
    ],
)
def test_the_program_a_command_runs(command: str, program: str) -> None:
    assert program_of(command, "c.yaml: mpi.x.launcher") == program


def test_every_command_found_is_no_problem() -> None:
    assert missing_commands(campaign(), which) == []
    both = campaign(openmpi=entry(), mpich=entry(mpicc="mpicc.mpich", launcher="mpiexec.mpich"))
    assert missing_commands(both, which) == []


def test_a_missing_mpicc_and_launcher_are_named_by_entry_and_key() -> None:
    missing = campaign(
        intel=entry(mpicc="mpicc.intelmpi", launcher="env I_MPI_X=1 mpirun.intel -n 2"),
        openmpi=entry(),
    )
    assert missing_commands(missing, which) == [
        "c.yaml: mpi.intel.mpicc: 'mpicc.intelmpi': not on PATH; install it, give its path, "
        "or load it with the entry's `modules:`",
        "c.yaml: mpi.intel.launcher: 'mpirun.intel': not on PATH; install it, give its path, "
        "or load it with the entry's `modules:`",
    ]


def test_a_path_is_looked_at_and_the_entry_s_path_searched() -> None:
    found = campaign(a=entry(launcher="/opt/x/bin/mpirun"), b=entry(launcher="/opt/y/mpirun"))
    (problem,) = missing_commands(found, which)
    assert problem.startswith("c.yaml: mpi.b.launcher: '/opt/y/mpirun': no such file; install")
    own_path = campaign(a=entry(launcher="mpirun", env={"PATH": "/opt/x/bin"}))
    assert missing_commands(own_path, which) == []
    (problem,) = missing_commands(campaign(a=entry(launcher="mpirun", env={"PATH": "/y"})), which)
    assert problem.startswith("c.yaml: mpi.a.launcher: 'mpirun': not on PATH '/y'; install")


def test_under_slurm_srun_is_looked_up_not_the_launcher() -> None:
    slurm = campaign("slurm", a=entry(launcher="mpirun.gone", srun="srun.gone --mpi=pmix"))
    (problem,) = missing_commands(slurm, which)
    assert problem.startswith("c.yaml: mpi.a.srun: 'srun.gone': not on PATH")


def test_nothing_is_looked_up_for_modules_nor_without_runs() -> None:
    gone = entry(mpicc="gone", launcher="gone")
    assert missing_commands(campaign(a=gone | {"modules": ["openmpi/4"]}), which) == []
    assert missing_commands(campaign(analysis_only=True, a=gone), which) == []


def test_a_tuned_entry_runs_its_base_s_build() -> None:
    """verify's `<entry>.tuned` has no mpicc of its own to run: its launcher is looked up."""
    tuned = Campaign(
        {
            "mpi": {"a": entry(), "a.tuned": entry(mpicc="gone", launcher="gone.too")},
            "launch": "local",
            "analysis_only": False,
        },
        AnalysisOptions.with_defaults(),
        "c.yaml",
        kernel_of={"a.tuned": "a"},
    )
    (problem,) = missing_commands(tuned, which)
    assert problem.startswith("c.yaml: mpi.a.tuned.launcher: 'gone.too': not on PATH")


def test_a_run_stops_before_any_job_a_dry_run_warns() -> None:
    missing = campaign(a=entry(mpicc="mpicc.intelmpi"))
    with pytest.raises(ConfigError) as stop:
        require_commands(missing, False, print, which=which)
    assert str(stop.value).splitlines() == [
        "c.yaml: mpi.a.mpicc: 'mpicc.intelmpi': not on PATH; install it, give its path, or "
        "load it with the entry's `modules:`",
        "mpiguide: nothing was run",
    ]
    warned: list[str] = []
    require_commands(missing, True, warned.append, which=which)
    assert warned == [
        "mpiguide: c.yaml: mpi.a.mpicc: 'mpicc.intelmpi': not on PATH; install it, give its "
        "path, or load it with the entry's `modules:` (a run without -n stops here)"
    ]


def test_under_conda_the_kernel_s_environment_brings_the_commands() -> None:
    def never(message: str) -> None:
        raise AssertionError(message)

    require_commands(campaign(a=entry(mpicc="gone")), False, never, conda=True, which=which)
