"""libmpiguide-tune finds a communicator's rules once and keeps them with it: a communicator of
another size gets the rules of its own size, one freed and followed by a new one under the same
handle gives that one fresh rules, duplicates never inherit them, more communicators than a
thread remembers at once are told apart, and an intercommunicator is left to the library even
where a rule names its local size. Threads calling at once each find their communicator's rules,
and the report counts the calls of every thread, also of one that has ended. The probe
(probe.c, `communicators` and `threads`) makes the communicators and threads and compares every
result with the library's own; MPIGUIDE_TUNE_REPORT=1 counts what each rule replaced (2 ranks,
both MPI libraries)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import TuneBuild
from .test_tune import COUNT, RANKS, REPEATS, left, replaced, rules_file

pytestmark = pytest.mark.kernel

# probe.c's MANY: duplicates of MPI_COMM_WORLD alive at once; THREADS, THREAD_CALLS: the threads
# of `threads` and the calls each makes; the exit status of `threads` without
# MPI_THREAD_MULTIPLE.
MANY = 20
THREADS = 2
THREAD_CALLS = 100
NO_THREAD_MULTIPLE = 77
RULES = (
    "allreduce_as_reduce_bcast ranks=2 bytes=0-1000000\n"
    "allreduce_as_reduce_scatter_allgather ranks=1 bytes=0-1000000\n"
)
# Per repetition: MPI_COMM_WORLD, a duplicate, a duplicate again and the MANY duplicates have 2
# ranks (line 1); the split communicator has 1 (line 2); the intercommunicator, whose local group
# has 1 rank, is the library's.
EXPECTED_REPLACED = {1: {REPEATS * (3 + MANY)}, 2: {REPEATS}}
EXPECTED_LEFT = {"MPI_Allreduce": {REPEATS}}
REUSED = re.compile(r"^handles reused (\d+) of (\d+)$", re.M)


def test_each_communicator_gets_the_rules_of_its_own(tune_build: TuneBuild, tmp_path: Path) -> None:
    rules = rules_file(tmp_path, "communicators.tune", RULES)
    result = tune_build.launch(RANKS, [tune_build.probe, "communicators", str(COUNT)], rules)
    assert result.returncode == 0, result.stderr
    assert "probe ok" in result.stdout
    assert replaced(result.stderr) == EXPECTED_REPLACED, result.stderr
    assert left(result.stderr) == EXPECTED_LEFT, result.stderr
    # The library did give a new communicator the handle of the one freed before it, of the
    # other size each time: without that the counts above would not show that a freed
    # communicator's rules are forgotten.
    reused = REUSED.search(result.stdout)
    assert reused and int(reused[1]) > 0, result.stdout


def test_every_thread_s_calls_are_replaced_and_counted(
    tune_build: TuneBuild, tmp_path: Path
) -> None:
    rules = rules_file(tmp_path, "threads.tune", RULES)
    result = tune_build.launch(RANKS, [tune_build.probe, "threads", str(COUNT)], rules)
    if result.returncode == NO_THREAD_MULTIPLE:
        pytest.skip(f"{tune_build.mpi.name} does not provide MPI_THREAD_MULTIPLE")
    assert result.returncode == 0, result.stderr
    assert "probe ok" in result.stdout
    assert replaced(result.stderr) == {1: {THREADS * THREAD_CALLS}, 2: {0}}, result.stderr
    assert left(result.stderr) == {"MPI_Allreduce": {0}}, result.stderr
