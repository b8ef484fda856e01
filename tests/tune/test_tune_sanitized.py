"""libmpiguide-tune linked into a program rather than preloaded, library and program built with
ASan and UBSan: every mock-up replaces its collective with the library's results and no
out-of-bounds access or undefined arithmetic (2 ranks; Open MPI runs one file of rules, MPICH the
other, so that together they cover every mock-up on both libraries); communicators made and
freed in turn never leave the library holding rules MPI has freed, and threads that call at once
and end before the report leave their counts readable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES
from preload_support import build_library

from .conftest import PROBE_SOURCE, TuneBuild
from .test_tune import COUNT, EVERY_MOCKUP, RANKS, left, replaced
from .test_tune_communicators import (
    EXPECTED_LEFT,
    EXPECTED_REPLACED,
    NO_THREAD_MULTIPLE,
    THREAD_CALLS,
    THREADS,
)
from .test_tune_communicators import RULES as COMMUNICATOR_RULES

pytestmark = pytest.mark.kernel

SANITIZE = "-fsanitize=address,undefined"
# The MPI libraries' own allocations outlive MPI_Finalize: leak reports would be theirs.
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
# The file of EVERY_MOCKUP each library runs.
CASES = {"openmpi": "ranges", "mpich": "points"}


@pytest.fixture(scope="module", params=sorted(CASES))
def sanitized(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> TuneBuild:
    library = MPI_LIBRARIES[request.param]
    if not library.available():
        pytest.skip(f"{library.mpicc} or {library.launcher} not installed")
    build = tmp_path_factory.mktemp(f"sanitized-{library.name}")
    flags = f"-O1 -g -fno-omit-frame-pointer {SANITIZE} -fno-sanitize-recover=undefined"
    built = build_library(library, "tune", build, f"CFLAGS={flags}")
    probe = build / "probe"
    # mpicc puts the MPI library after these arguments, so the probe's MPI_ calls bind to
    # libmpiguide-tune, and its PMPI_ calls to the MPI library.
    subprocess.run(
        [library.mpicc, "-std=c11", *flags.split(), "-Wall", "-Wextra", "-Werror", "-o", probe,
         PROBE_SOURCE, f"-L{build}", "-lmpiguide-tune", f"-Wl,-rpath,{build}"],
        check=True,
    )  # fmt: skip
    return TuneBuild(library, built, probe)


def launch_clean(sanitized: TuneBuild, mode: str, rules: Path) -> subprocess.CompletedProcess[str]:
    """The probe in `mode` under the rules, checked to end well with no sanitizer report."""
    result = sanitized.launch(
        RANKS,
        [sanitized.probe, mode, str(COUNT)],
        rules,
        preload=False,
        extra_env=SANITIZER_ENV,
    )
    if mode == "threads" and result.returncode == NO_THREAD_MULTIPLE:
        pytest.skip(f"{sanitized.mpi.name} does not provide MPI_THREAD_MULTIPLE")
    assert result.returncode == 0, result.stderr
    assert "runtime error" not in result.stderr and "AddressSanitizer" not in result.stderr
    assert "probe ok" in result.stdout
    return result


def test_linked_under_the_sanitizers(sanitized: TuneBuild, tmp_path: Path) -> None:
    case = CASES[sanitized.mpi.name]
    text, expected = EVERY_MOCKUP[case]
    rules = tmp_path / f"{case}.tune"
    rules.write_text(text)
    result = launch_clean(sanitized, "replaceable", rules)
    assert replaced(result.stderr) == {line: {calls} for line, calls in expected.items()}
    assert all(calls == {0} for calls in left(result.stderr).values()), result.stderr


def test_communicators_under_the_sanitizers(sanitized: TuneBuild, tmp_path: Path) -> None:
    rules = tmp_path / "communicators.tune"
    rules.write_text(COMMUNICATOR_RULES)
    result = launch_clean(sanitized, "communicators", rules)
    assert replaced(result.stderr) == EXPECTED_REPLACED, result.stderr
    assert left(result.stderr) == EXPECTED_LEFT, result.stderr


def test_threads_under_the_sanitizers(sanitized: TuneBuild, tmp_path: Path) -> None:
    rules = tmp_path / "threads.tune"
    rules.write_text(COMMUNICATOR_RULES)
    result = launch_clean(sanitized, "threads", rules)
    assert replaced(result.stderr) == {1: {THREADS * THREAD_CALLS}, 2: {0}}, result.stderr
