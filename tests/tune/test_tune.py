"""libmpiguide-tune runs a collective as the mock-up its tuning file names, with the library's
own results, for exactly the calls the file and the mock-up cover; everything else goes to the
library; a bad tuning file stops the program at MPI_Init, naming the file and line. Real ranks
(2), Debian's two MPI libraries (the replacements on every library of tests/mpi_support.py). The
probe (probe.c) compares every result with the library's own collective, called through PMPI_,
and MPIGUIDE_TUNE_REPORT=1 makes each rank count what was replaced."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES
from mpiguide.tune.mockup_rules import REPLACEMENTS

from .conftest import TuneBuild

pytestmark = pytest.mark.kernel

# The tests that also run on the libraries `make setup-mpi` installs (the fixture's own
# parameters: Debian's two): every mock-up replaces its collective with each library's results.
EVERY_LIBRARY = pytest.mark.parametrize("tune_build", sorted(MPI_LIBRARIES), indirect=True)

RANKS = 2
COUNT = 64  # elements: 512 B of doubles, 256 B of ints; equal parts on 2 ranks
REPEATS = 3  # probe.c's REPEATS
REPLACED = re.compile(r"^mpiguide-tune: rank (\d+): line (\d+) (\w+) replaced (\d+) call", re.M)
LEFT = re.compile(r"^mpiguide-tune: rank (\d+): (MPI_\w+) left (\d+) call", re.M)


def replaced(stderr: str) -> dict[int, set[int]]:
    """Per line of the tuning file, the numbers of calls each rank replaced."""
    found: dict[int, set[int]] = {}
    for _rank, line, _name, calls in REPLACED.findall(stderr):
        found.setdefault(int(line), set()).add(int(calls))
    return found


def left(stderr: str) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for _rank, collective, calls in LEFT.findall(stderr):
        found.setdefault(collective, set()).add(int(calls))
    return found


def rules_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_exports_exactly_the_interposed_functions(tune_build: TuneBuild) -> None:
    """Only the replaceable collectives, MPI_Init/Finalize and MPI_Comm_dup_with_info (whose
    hint exempts a communicator); the mock-ups stay private, so a
    program that has its own (the kernel) keeps them."""
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(tune_build.library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert exported == {
        "MPI_Init",
        "MPI_Init_thread",
        "MPI_Finalize",
        "MPI_Bcast",
        "MPI_Allgather",
        "MPI_Allreduce",
        "MPI_Scan",
        "MPI_Comm_dup_with_info",
    }


# Two files that together name every mock-up the library has. The probe's calls per repetition:
# one MPI_Bcast of 512 B, one MPI_Allgather of 256 B per process, two MPI_Allreduce (512 B of
# doubles, MPI_SUM; 256 B of ints, MPI_MAX), one MPI_Scan of 256 B.
EVERY_MOCKUP = {
    "ranges": (
        "# a comment line, then rules with ranges and comments\n"
        "bcast_as_allgatherv ranks=2 bytes=512\n"
        "allgather_as_alltoall ranks=2,4 bytes=0-100000  # per process\n"
        "\n"
        "allreduce_as_reduce_scatter_allgather   ranks=2\tbytes=0-100000\n"
        "scan_as_exscan_reduce_local ranks=2 bytes=256\n",
        {2: REPEATS, 3: REPEATS, 5: 2 * REPEATS, 6: REPEATS},
    ),
    "points": (
        "bcast_as_scatter_allgather ranks=2 bytes=512\n"
        "allgather_as_gather_bcast ranks=2 bytes=256\n"
        "allreduce_as_reduce_bcast ranks=2 bytes=512\n"
        "allreduce_as_reduce_scatter_block_allgather ranks=2 bytes=256\n",
        {1: REPEATS, 2: REPEATS, 3: REPEATS, 4: REPEATS},
    ),
}


def test_the_files_name_every_mockup() -> None:
    lines = [
        line.split("#")[0].split()
        for text, _ in EVERY_MOCKUP.values()
        for line in text.splitlines()
    ]
    named = {fields[0] for fields in lines if fields}
    assert set(REPLACEMENTS) <= named


@pytest.mark.parametrize("case", sorted(EVERY_MOCKUP))
@EVERY_LIBRARY
def test_replaces_with_the_library_s_results(
    tune_build: TuneBuild, tmp_path: Path, case: str
) -> None:
    text, expected = EVERY_MOCKUP[case]
    rules = rules_file(tmp_path, f"{case}.tune", text)
    result = tune_build.launch(RANKS, [tune_build.probe, "replaceable", str(COUNT)], rules)
    assert result.returncode == 0, result.stderr
    assert "probe ok" in result.stdout
    assert f"mpiguide-tune: active: {rules}: {len(expected)} rule(s)" in result.stderr
    # Every rank replaced every call its rules cover, and no call of those collectives was
    # left to the library (scan has no rule in "points": its calls are not counted).
    assert replaced(result.stderr) == {line: {calls} for line, calls in expected.items()}
    assert all(calls == {0} for calls in left(result.stderr).values()), result.stderr


def test_leaves_what_it_does_not_handle_to_the_library(
    tune_build: TuneBuild, tmp_path: Path
) -> None:
    """The allreduce rule covers every call's message size, but MPI_IN_PLACE (also right after
    the same call replaced with a send buffer), a user-defined op, a derived datatype and a
    count that 2 ranks cannot split into equal parts fall through; the bcast rule is for 3 ranks
    only, so it replaces nothing either."""
    rules = rules_file(
        tmp_path,
        "unhandled.tune",
        "allreduce_as_reduce_scatter_allgather ranks=2 bytes=0-1000000\n"
        "bcast_as_allgatherv ranks=3 bytes=0-1000000\n",
    )
    result = tune_build.launch(RANKS, [tune_build.probe, "unhandled", str(COUNT)], rules)
    assert result.returncode == 0, result.stderr
    assert "probe ok" in result.stdout
    assert replaced(result.stderr) == {1: {REPEATS}, 2: {0}}
    assert left(result.stderr) == {"MPI_Allreduce": {4 * REPEATS}, "MPI_Bcast": {0}}


BAD_FILES = {
    "unknown mock-up": (
        "# fine\nallreduce_as_magic ranks=2 bytes=8\n",
        2,
        "unknown mock-up 'allreduce_as_magic': a rule starts with one of bcast_as_allgatherv",
    ),
    "rooted mock-up left out": (
        "reduce_as_allreduce ranks=2 bytes=8\n",
        1,
        "unknown mock-up 'reduce_as_allreduce'",
    ),
    "no bytes": ("allreduce_as_reduce_bcast ranks=2\n", 1, "lacks bytes="),
    "no ranks": ("allreduce_as_reduce_bcast bytes=8\n", 1, "lacks ranks="),
    "zero ranks": (
        "allreduce_as_reduce_bcast ranks=0 bytes=8\n",
        1,
        "bad 'ranks=0': ranks= takes communicator sizes >= 1",
    ),
    "reversed range": (
        "allreduce_as_reduce_bcast ranks=2 bytes=100-8\n",
        1,
        "bad 'bytes=100-8': bytes= takes a message size or an inclusive range LO-HI",
    ),
    "unit in size": ("allreduce_as_reduce_bcast ranks=2 bytes=64KiB\n", 1, "bad 'bytes=64KiB'"),
    "unknown key": (
        "allreduce_as_reduce_bcast ranks=2 bytes=8 root=0\n",
        1,
        "unexpected 'root=0': after the mock-up a rule takes ranks=",
    ),
    "overlap": (
        "allreduce_as_reduce_bcast ranks=2,4 bytes=8-64\n"
        "scan_as_exscan_reduce_local ranks=2 bytes=8-64\n"
        "allreduce_as_reduce_scatter_allgather ranks=4 bytes=64-128\n",
        3,
        "overlaps line 1: both replace MPI_Allreduce",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_refuses_a_bad_file_at_init(tune_build: TuneBuild, tmp_path: Path, case: str) -> None:
    """One rank, no launcher: the file is read in MPI_Init before the library starts."""
    text, line, message = BAD_FILES[case]
    rules = rules_file(tmp_path, "bad.tune", text)
    result = tune_build.launch(
        1, [tune_build.probe, "replaceable", str(COUNT)], rules, launcher=False
    )
    assert result.returncode == 2, result.stderr
    assert f"mpiguide-tune: {rules}:{line}: " in result.stderr
    assert message in result.stderr
    assert "probe ok" not in result.stdout


def test_refuses_a_missing_file_and_a_missing_variable(
    tune_build: TuneBuild, tmp_path: Path
) -> None:
    probe = [tune_build.probe, "replaceable", str(COUNT)]
    missing = tmp_path / "nowhere.tune"
    result = tune_build.launch(1, probe, missing, launcher=False)
    assert result.returncode == 2
    assert f"mpiguide-tune: {missing}: cannot open the tuning file" in result.stderr
    result = tune_build.launch(1, probe, None, launcher=False)
    assert result.returncode == 2
    assert "MPIGUIDE_TUNE is not set" in result.stderr


def test_a_bad_file_ends_the_job_cleanly(tune_build: TuneBuild, tmp_path: Path) -> None:
    """Under the launcher every rank stops with the message and the job with a failure, and no
    MPI abort trace buries the message."""
    rules = rules_file(tmp_path, "bad.tune", "allreduce_as_reduce_bcast ranks=2 bytes=8-\n")
    result = tune_build.launch(RANKS, [tune_build.probe, "replaceable", str(COUNT)], rules)
    assert result.returncode != 0
    assert f"mpiguide-tune: {rules}:1: bad 'bytes=8-'" in result.stderr
    assert "MPI_ABORT" not in result.stderr and "probe ok" not in result.stdout
