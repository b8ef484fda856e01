"""Intel MPI 2021.19 runs the presets data/intelmpi-presets.tsv names under the numbers it gives
them: its own reference stopped numbering them after 2021.12, whose numbers the table keeps. A
user-defined sum that counts its calls tells where MPI_Allreduce reduces: on every rank under
Recursive doubling, on one rank under Reduce + Bcast."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES, program_stdout
from mpiguide.tune.intelmpi_presets import adjust_variable, documented_presets

pytestmark = pytest.mark.kernel

INTEL = MPI_LIBRARIES["intelmpi-2021.19"]
RANKS = 2
PROGRAM = Path(__file__).with_name("preset_reductions.c")
REDUCTIONS = re.compile(r"^rank (\d+) reductions (\d+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not INTEL.available():
        pytest.skip("Intel MPI 2021.19 is not installed: run `make setup-mpi`")
    binary = tmp_path_factory.mktemp("presets") / "preset_reductions"
    built = subprocess.run(
        [INTEL.mpicc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(PROGRAM)],
        env=INTEL.build_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return binary


def _reducing_ranks(program: Path, preset: int) -> list[int]:
    """The ranks on which the user-defined sum ran under `preset` of MPI_Allreduce."""
    env = {adjust_variable("allreduce"): str(preset)}
    done = subprocess.run(
        INTEL.command(RANKS, [program]),
        env=INTEL.environment(RANKS, env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    counts = {int(rank): int(n) for rank, n in REDUCTIONS.findall(program_stdout(done))}
    assert sorted(counts) == list(range(RANKS)), done.stdout
    return sorted(rank for rank, n in counts.items() if n)


@pytest.mark.parametrize(("name", "reducing"), [("recursive_doubling", 2), ("reduce_bcast", 1)])
def test_the_table_s_preset_numbers_run_their_algorithm(
    program: Path, name: str, reducing: int
) -> None:
    (preset,) = [p for p in documented_presets()["allreduce"] if p.name == name]
    assert len(_reducing_ranks(program, preset.number)) == reducing
