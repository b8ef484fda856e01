"""libmpiguide-inject slows down exactly what MPIGUIDE_INJECT names, by the amount it names, and
refuses a bad spec before MPI starts. Real mpirun, Debian's two MPI libraries (the announcement
and the refusal under a launcher on every library of tests/mpi_support.py).

The timing tests run one rank: the library's arithmetic is per process, and on a loaded 2-core
machine two busy-polling ranks are descheduled for milliseconds at a time, which would bury a
200 µs delay. The tests that need a job (announcement, refusal) run two ranks."""

from __future__ import annotations

import re
import subprocess

import pytest

from mpi_support import MPI_LIBRARIES, program_stdout
from preload_support import REPO

from .conftest import InjectBuild
from .refusal_support import RANKS, REFUSAL, refuse

pytestmark = pytest.mark.kernel

# The tests that also run on the libraries `make setup-mpi` installs (the fixture's own
# parameters: Debian's two): the library works under each launcher, and refuses under it.
EVERY_LIBRARY = pytest.mark.parametrize("inject_build", sorted(MPI_LIBRARIES), indirect=True)

NREP = "200"
# Completion functions and the request bookkeeping the library also wraps (not injectable).
COMPLETION_WRAPPERS = {
    "MPI_Wait",
    "MPI_Test",
    "MPI_Waitall",
    "MPI_Testall",
    "MPI_Waitany",
    "MPI_Testany",
    "MPI_Waitsome",
    "MPI_Testsome",
    "MPI_Request_free",
    "MPI_Init",
    "MPI_Init_thread",
}


def interposed_names() -> set[str]:
    text = (REPO / "src" / "inject" / "interposed.def").read_text()
    return {f"MPI_{name}" for name in re.findall(r"^INJECT_(?:NON)?BLOCKING\((\w+),", text, re.M)}


def test_exports_exactly_the_wrappers(inject_build: InjectBuild) -> None:
    """Every listed function is wrapped, and no helper leaks into the program's namespace."""
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(inject_build.library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert exported == interposed_names() | COMPLETION_WRAPPERS


@pytest.mark.timing
def test_fixed_delay_adds_its_microseconds(inject_build: InjectBuild) -> None:
    times = inject_build.probe_times(1, ["blocking", NREP, "8"], "MPI_Allreduce:usec=200")
    # Bounds leave room for a loaded machine, not for a delay paid twice (400) or never (0).
    assert 150 <= times["allreduce"] - times["allreduce_pmpi"] <= 350, times


@pytest.mark.timing
def test_fraction_scales_the_call(inject_build: InjectBuild) -> None:
    # 2 MiB: long enough (tens of µs) that the ratio is not lost in timer and loop overhead.
    times = inject_build.probe_times(1, ["blocking", NREP, "2097152"], "MPI_Allreduce:fraction=0.5")
    # Never paid gives 1.0, paid twice 2.0.
    assert 1.3 <= times["allreduce"] / times["allreduce_pmpi"] <= 1.75, times


@pytest.mark.timing
def test_only_named_functions_slow_down(inject_build: InjectBuild) -> None:
    times = inject_build.probe_times(1, ["blocking", NREP, "8"], "MPI_Bcast:usec=500")
    assert times["allreduce"] < 100, times


@pytest.mark.timing
def test_datatype_filter_slows_only_that_datatype(inject_build: InjectBuild) -> None:
    """The probe's MPI_Allreduce moves doubles: a rule for MPI_DOUBLE delays it, one for MPI_INT
    times it alike and delays nothing."""
    probe = ["blocking", NREP, "8"]
    slowed = inject_build.probe_times(1, probe, "MPI_Allreduce:usec=200:datatype=MPI_DOUBLE")
    assert 150 <= slowed["allreduce"] - slowed["allreduce_pmpi"] <= 350, slowed
    other = inject_build.probe_times(1, probe, "MPI_Allreduce:usec=200:datatype=MPI_INT")
    assert other["allreduce"] < 100, other


@pytest.mark.timing
def test_without_the_library_nothing_changes(inject_build: InjectBuild) -> None:
    """The probe's reference is sound: MPI_ and PMPI_ calls time alike when nothing is loaded."""
    times = inject_build.probe_times(1, ["blocking", NREP, "2097152"], None)
    assert 0.8 <= times["allreduce"] / times["allreduce_pmpi"] <= 1.25, times


@pytest.mark.timing
def test_nonblocking_delay_goes_into_the_wait(inject_build: InjectBuild) -> None:
    times = inject_build.probe_times(
        2, ["nonblocking", NREP, "1024"], "MPI_Ineighbor_alltoall:usec=200"
    )
    assert times["ineighbor_alltoall_start"] < 100, times
    assert 190 <= times["ineighbor_alltoall_wait"] <= 390, times


@pytest.mark.timing
def test_every_completion_function_pays_once(inject_build: InjectBuild) -> None:
    """Wait, Test, and their all/any/some forms each pay the collective's delay exactly once,
    also when the collective sits among point-to-point requests; those alone pay nothing."""
    times = inject_build.probe_times(1, ["completions", "50"], "MPI_Iallreduce:usec=300")
    completions = {label: value for label, value in times.items() if label.startswith("i")}
    assert len(completions) == 8
    for label, value in completions.items():
        # Paid twice (in two of the calls of a Test or Waitsome loop) would be 600 or more.
        assert 290 <= value < 600, (label, times)
    assert times["p2p_waitall"] < 100, times


@pytest.mark.timing
def test_freed_request_does_not_pass_its_delay_on(inject_build: InjectBuild) -> None:
    """One rank: MPICH then recycles a freed send's handle for the next send, so a library that
    forgot freed requests would delay that unrelated send."""
    times = inject_build.probe_times(1, ["request_free", "50"], "MPI_Isend:usec=300")
    assert times["after_request_free"] < 100, times


@EVERY_LIBRARY
def test_announces_what_it_slows_down(inject_build: InjectBuild) -> None:
    result = inject_build.launch(
        2,
        [str(inject_build.probe), "blocking", "3", "8"],
        "MPI_Allreduce:usec=5, MPI_Ineighbor_alltoall:fraction=0.1",
    )
    assert result.returncode == 0, result.stderr
    announcements = [line for line in result.stderr.splitlines() if "mpiguide-inject" in line]
    assert announcements == [
        "mpiguide-inject: active: MPI_Allreduce +5 us, MPI_Ineighbor_alltoall +10% of its duration"
    ]


def test_announces_a_datatype_filter(inject_build: InjectBuild) -> None:
    result = inject_build.launch(
        1,
        [str(inject_build.probe), "blocking", "3", "8"],
        "MPI_Allgather:fraction=0.1:datatype=MPI_INT",
        launcher=False,
    )
    assert result.returncode == 0, result.stderr
    assert "active: MPI_Allgather +10% of its duration for MPI_INT" in result.stderr


BAD_SPECS = [
    ("", "MPIGUIDE_INJECT is empty"),
    ("   ", "MPIGUIDE_INJECT is empty"),
    ("MPI_Allreduce", "entry 1 'MPI_Allreduce': expected NAME:usec="),
    ("MPI_Allreduce=5", "expected NAME:usec=MICROSECONDS or NAME:fraction=FRACTION"),
    ("MPI_Allreduce:usec=5,", "entry 2 '': is empty"),
    ("MPI_Allreduce:usec=5,,MPI_Bcast:usec=1", "entry 2 '': is empty"),
    ("MPI_Foo:usec=5", "'MPI_Foo' is not a function libmpiguide-inject can slow down"),
    ("MPI_Comm_rank:usec=5", "'MPI_Comm_rank' is not a function libmpiguide-inject can"),
    ("MPI_Wait:usec=5", "'MPI_Wait' is not a function libmpiguide-inject can slow down"),
    ("mpi_allreduce:usec=5", "'mpi_allreduce' is not a function"),
    ("MPI_Allreduce:usecs=5", "unknown key 'usecs'"),
    ("MPI_Allreduce:usec=-1", "usec must be a number of microseconds from 0 to 10000000"),
    ("MPI_Allreduce:usec=2e7", "usec must be a number of microseconds from 0 to 10000000"),
    ("MPI_Allreduce:usec=5us", "usec must be a number"),
    ("MPI_Allreduce:usec=", "usec must be a number"),
    ("MPI_Allreduce:fraction=nan", "fraction must be a number from 0 to 100"),
    ("MPI_Allreduce:fraction=inf", "fraction must be a number from 0 to 100"),
    ("MPI_Allreduce:fraction=0x1p3", "fraction must be a number from 0 to 100"),
    ("MPI_Allreduce:fraction=10%", "fraction must be a number from 0 to 100"),
    ("MPI_Allreduce:usec=5,MPI_Allreduce:fraction=0.1", "MPI_Allreduce is named more than once"),
    ("MPI_Allreduce:usec=5;MPI_Bcast:usec=1", "usec must be a number"),
    ("MPI_Allreduce:usec=5:datatype=MPI_LONG", "'MPI_LONG' is not a datatype a filter can name"),
    ("MPI_Allreduce:usec=5:datatype=", "'' is not a datatype a filter can name; use: MPI_CHAR"),
    ("MPI_Allreduce:usec=5:dtype=MPI_INT", "unknown field 'dtype=MPI_INT' after the delay"),
    ("MPI_Allreduce:usec=5:datatype=MPI_INT:x", "too many fields"),
    ("MPI_Barrier:usec=5:datatype=MPI_INT", "MPI_Barrier moves no data of one datatype"),
    ("MPI_Alltoallw:usec=5:datatype=MPI_INT", "MPI_Alltoallw moves no data of one datatype"),
]


@pytest.mark.parametrize(
    ("spec", "message"), BAD_SPECS, ids=[spec or "empty" for spec, _ in BAD_SPECS]
)
def test_bad_spec_exits_2_before_measuring(
    inject_build: InjectBuild, spec: str, message: str
) -> None:
    # A singleton: the parser's messages need no job, and a launcher would add seconds of
    # teardown (test_bad_spec_fails_the_job covers it).
    result = inject_build.launch(
        1, [str(inject_build.probe), "blocking", "3", "8"], spec, launcher=False
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "MPIGUIDE_INJECT" in result.stderr
    assert result.stdout == ""


def assert_refused(result: subprocess.CompletedProcess[str]) -> None:
    """The job exited 2, measured nothing, and every rank's message reached stderr."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.count(REFUSAL) == RANKS, result.stderr
    assert program_stdout(result) == ""


@EVERY_LIBRARY
def test_bad_spec_fails_the_job(inject_build: InjectBuild) -> None:
    """Under the launcher, on every rank."""
    assert_refused(refuse(inject_build))


# Tries per MPI library: each loses the message with some chance if the refusal comes too early
# for the launcher (refusal_support), so one try could pass by luck.
TRIES_UNDER_LOAD = 5


def test_bad_spec_message_survives_busy_cores(
    inject_build: InjectBuild, busy_machine: None
) -> None:
    """With every core busy, the launcher is slow to finish starting the job; a refusal that came
    before that could lose every rank's message (MPICH's mpiexec died of SIGPIPE)."""
    for _ in range(TRIES_UNDER_LOAD):
        assert_refused(refuse(inject_build))


def test_preloaded_without_spec_is_refused(inject_build: InjectBuild) -> None:
    result = inject_build.launch(1, [str(inject_build.probe), "blocking", "3", "8"], None)
    assert result.returncode == 2
    assert "MPIGUIDE_INJECT is not set, but libmpiguide-inject is preloaded" in result.stderr
    assert result.stdout == ""
