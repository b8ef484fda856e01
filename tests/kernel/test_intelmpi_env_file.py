"""Intel MPI 2021.19 runs the presets data/intelmpi-presets.tsv names under the numbers it gives
them (its own reference stopped numbering them after 2021.12, whose numbers the table keeps); it
reads the env file `tune` writes (mpiguide.tune.intelmpi_settings) and runs its preset for every
call; and it does not apply the per-size conditions its Developer Reference documents for
I_MPI_ADJUST_<OP>, which is why the file writes none. A user-defined sum in MPI_Allreduce on 2
ranks tells which ranks reduce: preset 3 (Reduce + Bcast) the root alone, preset 1 (recursive
doubling) both; Intel's own selection (the variable unset) the root alone up to 32 B and both from
64 B."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES
from mpiguide.tune.choose import Choice
from mpiguide.tune.intelmpi_presets import adjust_variable, documented_presets
from mpiguide.tune.intelmpi_settings import intelmpi_env
from mpiguide.tune.library_algorithms import Algorithm, AlgorithmSetting

pytestmark = pytest.mark.kernel

INTEL = MPI_LIBRARIES["intelmpi-2021.19"]
PROBE = Path(__file__).with_name("allreduce_op_count.c")
RECURSIVE_DOUBLING, REDUCE_BCAST = Algorithm("recursive_doubling", 1), Algorithm("reduce_bcast", 3)
# Elements of MPI_INT per call: 8 B, 32 B, 64 B, 1 KiB, 4 KiB, 16 KiB.
COUNTS = (2, 8, 16, 256, 1024, 4096)
ROOT, BOTH = {0}, {0, 1}
PRESET_RANKS = {1: BOTH, 3: ROOT}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not INTEL.available():
        pytest.skip(f"Intel MPI is not installed ({INTEL.mpicc}): run `make setup-mpi` first")
    binary = tmp_path_factory.mktemp("intelmpi") / "allreduce_op_count"
    subprocess.run(
        [INTEL.mpicc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
         str(PROBE)],
        env=INTEL.build_environment(), check=True,
    )  # fmt: skip
    return binary


def _reducing(probe: Path, setup: str = "") -> dict[int, set[int]]:
    """Per size in bytes, the ranks whose user-defined sum ran, after the shell line `setup`."""
    launch = shlex.join(INTEL.command(2, [probe, *map(str, COUNTS)]))
    done = subprocess.run(
        ["bash", "-c", f"unset I_MPI_ADJUST_ALLREDUCE; {setup} exec {launch}"],
        env=INTEL.environment(2), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    reducing: dict[int, set[int]] = {4 * count: set() for count in COUNTS}
    for rank, count, calls in re.findall(r"^rank (\d+) count (\d+) invocations (\d+)$",
                                         done.stdout, re.MULTILINE):  # fmt: skip
        if int(calls):
            reducing[4 * int(count)].add(int(rank))
    return reducing


def _with(value: str) -> str:
    return f"export I_MPI_ADJUST_ALLREDUCE={shlex.quote(value)};"


@pytest.mark.parametrize("name", ["recursive_doubling", "reduce_bcast"])
def test_the_table_s_preset_numbers_run_their_algorithm(probe: Path, name: str) -> None:
    (preset,) = [p for p in documented_presets()["allreduce"] if p.name == name]
    reducing = _reducing(probe, f"export {adjust_variable('allreduce')}={preset.number};")
    assert reducing == dict.fromkeys(reducing, PRESET_RANKS[preset.number])


def test_intel_mpi_runs_the_files_preset_for_every_call(probe: Path, tmp_path: Path) -> None:
    own = _reducing(probe)
    assert own == {8: ROOT, 32: ROOT, 64: BOTH, 1024: BOTH, 4096: BOTH, 16384: BOTH}
    for algorithm in (RECURSIVE_DOUBLING, REDUCE_BCAST):
        setting = AlgorithmSetting("intel", "intelmpi", "allreduce", algorithm)
        picks = [Choice("intel", "allreduce", 2, size, setting, 2.0, 1.5, 2.5) for size in (8, 64)]
        text, applied, untunable = intelmpi_env("intel", picks)
        assert len(applied) == 2 and not untunable
        env_file = tmp_path / f"{algorithm.name}.intelmpi.env"
        env_file.write_text(text)
        reducing = _reducing(probe, f"set -a; . {shlex.quote(str(env_file))}; set +a;")
        assert reducing == dict.fromkeys(own, PRESET_RANKS[algorithm.number]), text


def test_intel_mpi_does_not_apply_the_documented_conditions(probe: Path) -> None:
    """What each value would mean as documented, and what runs: a size below a range's lower
    bound, or above every range, should keep Intel's selection; a condition on 3 processes should
    not hold on 2; preset 0 should be Intel's selection."""
    own = _reducing(probe)
    assert own == {8: ROOT, 32: ROOT, 64: BOTH, 1024: BOTH, 4096: BOTH, 16384: BOTH}
    # 8 B and 32 B lie below the range 64-1023, yet preset 1 runs there
    below = _reducing(probe, _with("1:64-1023;3:1024-100000"))
    assert below[8] == below[32] == BOTH != own[8]
    # 4 KiB and 16 KiB lie above every range, yet the last range's preset 3 runs there
    above = _reducing(probe, _with("1:0-63;3:64-1023"))
    assert above[4096] == above[16384] == ROOT != own[4096]
    # a range for 3 processes holds on 2, and at sizes outside it
    ranks = _reducing(probe, _with("1:0-63@3-3;3:64-100000"))
    assert set(map(frozenset, ranks.values())) == {frozenset(BOTH)} and ranks[8] != own[8]
    # preset 0 is not the selection Intel makes with the variable unset
    assert _reducing(probe, _with("0"))[8] == BOTH != own[8]
