"""A communicator made by MPI_Comm_dup_with_info with the info hint mpiguide_tune=off is exempt
from libmpiguide-tune: its calls of a replaced collective go to the library (counted as left to
it) while the same call on MPI_COMM_WORLD is replaced, and a plain duplicate of it is not exempt
(the probe's `hinted`). Any other value of the key is refused with a message naming the key and
the one value allowed (`misspelt`). 2 ranks, both MPI libraries."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import TuneBuild
from .test_tune import COUNT, RANKS, REPEATS, left, replaced, rules_file

pytestmark = pytest.mark.kernel

RULES = "allreduce_as_reduce_bcast ranks=2 bytes=0-1000000\n"


def test_a_hinted_communicator_s_calls_are_left_to_the_library(
    tune_build: TuneBuild, tmp_path: Path
) -> None:
    rules = rules_file(tmp_path, "hinted.tune", RULES)
    result = tune_build.launch(RANKS, [tune_build.probe, "hinted", str(COUNT)], rules)
    assert result.returncode == 0, result.stderr
    assert "probe ok" in result.stdout
    # per repetition: MPI_COMM_WORLD and the plain duplicate replaced, the exempt one left
    assert replaced(result.stderr) == {1: {2 * REPEATS}}, result.stderr
    assert left(result.stderr) == {"MPI_Allreduce": {REPEATS}}, result.stderr


def test_a_misspelt_hint_is_refused(tune_build: TuneBuild, tmp_path: Path) -> None:
    rules = rules_file(tmp_path, "misspelt.tune", RULES)
    result = tune_build.launch(RANKS, [tune_build.probe, "misspelt", str(COUNT)], rules)
    assert result.returncode != 0
    assert "probe ok" not in result.stdout
    assert (
        "mpiguide-tune: MPI_Comm_dup_with_info: info key 'mpiguide_tune' is 'of'; the one value "
        "allowed is 'off'"
    ) in result.stderr, result.stderr
