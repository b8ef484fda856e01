"""The libraries read what `mpiguide tune` writes and what the algorithm sweep sets.

Open MPI: a rules file written by mpiguide.tune.ompi_rules is read by Open MPI 4.1 itself and
applies exactly at the communicator size and message-size range it names — shown with an
algorithm number the library does not have, which makes MPI_Allreduce fail there and only
there — and a real algorithm chosen by it runs under --verify. MPICH: every allreduce and bcast
algorithm the mpivars listing yields is one MPICH accepts (an unknown name stops MPI_Init), and
runs correctly under --verify; MPICH reads the JSON selection file `tune` writes, applies it
exactly at the communicator size and message-size range it names, and its default tree and
algorithm names are those of the installed library."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import read_times, write_input

from mpiguide.tune.choose import Choice
from mpiguide.tune.library_algorithms import (
    Algorithm,
    AlgorithmSetting,
    installed_choices,
    settings_of,
)
from mpiguide.tune.mpich_selection import JSON_FILE_CVAR, container_name, default_tree
from mpiguide.tune.mpich_settings import mpich_selection_file
from mpiguide.tune.ompi_rules import ompi_rules

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel


def _rules_file(path: Path, number: int, ranks: int, sizes: list[int]) -> Path:
    setting = AlgorithmSetting(
        "openmpi", "openmpi", "allreduce", Algorithm("probe", number), False, 4, 0
    )
    picks = [Choice("openmpi", "allreduce", ranks, size, setting, 2.0, 1.5, 2.5) for size in sizes]
    text, applied, untunable = ompi_rules("openmpi", picks)
    assert len(applied) == len(sizes) and not untunable
    path.write_text(text)
    return path


def _allreduce(
    kernel: Kernel, tmp_path: Path, nprocs: int, size: int, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    infile = write_input(
        tmp_path / f"in-{nprocs}-{size}.csv",
        [{"exp_id": 0, "op": "allreduce", "msg_size": size, "nrep": 3}],
    )
    return kernel.run(nprocs, "--verify", infile, tmp_path / f"out-{nprocs}-{size}.csv", env=env)


def _rules_env(rules: Path) -> dict[str, str]:
    return {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(rules),
    }


def test_open_mpi_applies_the_rules_exactly_where_they_say(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("openmpi")
    # Algorithm 99 does not exist: a call the rule selects it for returns MPI_ERR_ARG.
    rules = _rules_file(tmp_path / "rules.conf", 99, ranks=2, sizes=[1024])
    env = _rules_env(rules)
    failed = _allreduce(kernel, tmp_path, 2, 1024, env)
    assert failed.returncode != 0, "Open MPI did not use the rule for 2 ranks and 1024 B"
    assert "MPI_Allreduce" in failed.stderr and "MPI_ERR_ARG" in failed.stderr, failed.stderr
    for nprocs, size in [(2, 1016), (2, 1032), (3, 1024)]:
        done = _allreduce(kernel, tmp_path, nprocs, size, env)
        assert done.returncode == 0, f"{nprocs} ranks, {size} B:\n{done.stderr}"
    # without the rules file the same call succeeds
    plain = _allreduce(kernel, tmp_path, 2, 1024, {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"})
    assert plain.returncode == 0, plain.stderr


def test_a_chosen_open_mpi_algorithm_runs_correctly(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("openmpi")
    rules = _rules_file(tmp_path / "rules.conf", 4, ranks=2, sizes=[8, 1024])  # ring
    for size in (8, 1024, 4096):
        done = _allreduce(kernel, tmp_path, 2, size, _rules_env(rules))
        assert done.returncode == 0, done.stderr
        assert len(read_times(tmp_path / f"out-2-{size}.csv")[0]) == 3


def test_every_listed_mpich_algorithm_is_one_mpich_accepts(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("mpich")
    choices = installed_choices("mpich", "mpivars", "mpich.info")
    settings = settings_of("mpich", {"allreduce": "all", "bcast": "all"}, choices, "mpich")
    assert len(settings) >= 7  # smp, which `all` leaves out, is not among them
    for setting in settings:
        rows = [
            {"exp_id": index, "op": setting.op, "msg_size": size, "nrep": 2}
            for index, size in enumerate((8, 4096))
        ]
        infile = write_input(tmp_path / f"{setting.name}.csv", rows)
        done = kernel.run(
            2, "--verify", infile, tmp_path / f"{setting.name}.out.csv", env=setting.env()
        )
        assert done.returncode == 0, f"{setting.name}: {setting.env()}\n{done.stderr}"
    unknown = {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "no_such_algorithm"}
    infile = write_input(
        tmp_path / "unknown.csv", [{"exp_id": 0, "op": "allreduce", "msg_size": 8}]
    )
    refused = kernel.run(2, infile, tmp_path / "unknown.out.csv", env=unknown)
    assert refused.returncode != 0, "MPICH accepted an unknown algorithm name"
    assert "Invalid MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value" in refused.stderr, refused.stderr


def _selection_file(path: Path, algorithm: str, ranks: int) -> Path:
    setting = AlgorithmSetting("mpich", "mpich", "allreduce", Algorithm(algorithm, None), True)
    text, applied, _ = mpich_selection_file(
        "mpich", [Choice("mpich", "allreduce", ranks, 1024, setting, 2.0, 1.5, 2.5)]
    )
    assert text is not None and len(applied) == 1
    path.write_text(text)
    return path


def _libmpich(binary: Path) -> Path:
    linked = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True)
    found = re.search(r"libmpich\.so\S* => (\S+)", linked.stdout)
    assert found, linked.stdout
    return Path(found.group(1))


def test_mpich_reads_the_selection_file_exactly_where_it_says(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("mpich")
    # The default tree and the algorithm names are the installed library's own.
    library = _libmpich(kernel.binary).read_bytes()
    built_in = re.search(
        rb'\{"collective=bcast":\{"comm_type=intra":\{"comm_size<8"[^\0]*', library
    )
    assert built_in, "no MPIR-level selection tree in the installed libmpich"
    assert json.loads(built_in.group(0)) == default_tree()
    listed = settings_of(
        "mpich",
        {"allreduce": "all", "bcast": "all"},
        installed_choices("mpich", "mpivars", "m"),
        "m",
    )
    for setting in listed:
        name = container_name(setting.op, setting.algorithm.name)
        assert f"algorithm={name}\0".encode() in library, name
    # A name MPICH does not know stops MPI_Init: MPICH parses the file.
    bad = _selection_file(tmp_path / "bad.json", "no_such_algorithm", ranks=2)
    refused = _allreduce(kernel, tmp_path, 2, 1024, {JSON_FILE_CVAR: str(bad)})
    assert refused.returncode != 0
    assert "unrecognized key algorithm=MPIR_Allreduce_intra_no_such_algorithm" in refused.stderr
    # `nb` runs MPI_Iallreduce's schedule, which MPIR_CVAR_COLL_SCHED_DUMP prints: the file
    # selects it at 2 ranks and 1024 B, and nowhere else.
    env = {"MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE": "0", "MPIR_CVAR_COLL_SCHED_DUMP": "1"}
    at_two = _selection_file(tmp_path / "two.json", "nb", ranks=2)
    at_three = _selection_file(tmp_path / "three.json", "nb", ranks=3)
    for rules, size, selected in [
        (at_two, 1024, True),
        (at_two, 1016, False),
        (at_two, 1032, False),
        (at_three, 1024, False),
    ]:
        done = _allreduce(kernel, tmp_path, 2, size, {**env, JSON_FILE_CVAR: str(rules)})
        assert done.returncode == 0, done.stderr
        assert ("s->entries[0]" in done.stdout + done.stderr) == selected, (rules.name, size)
