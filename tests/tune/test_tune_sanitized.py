"""libmpiguide-tune linked into a program rather than preloaded, library and program built with
ASan and UBSan: every mock-up replaces its collective with the library's results and no
out-of-bounds access or undefined arithmetic (2 ranks; Open MPI runs one file of rules, MPICH the
other, so that together they cover every mock-up on both libraries)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mpi_support import MPI_LIBRARIES
from preload_support import build_library

from .conftest import PROBE_SOURCE, TuneBuild
from .test_tune import COUNT, EVERY_MOCKUP, RANKS, left, replaced

pytestmark = pytest.mark.kernel

SANITIZE = "-fsanitize=address,undefined"
# The MPI libraries' own allocations outlive MPI_Finalize: leak reports would be theirs.
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "print_stacktrace=1"}


@pytest.mark.parametrize(("mpi", "case"), [("openmpi", "ranges"), ("mpich", "points")])
def test_linked_under_the_sanitizers(tmp_path: Path, mpi: str, case: str) -> None:
    library = MPI_LIBRARIES[mpi]
    if not library.available():
        pytest.skip(f"{library.mpicc} or {library.launcher} not installed")
    build = tmp_path / "build"
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
    text, expected = EVERY_MOCKUP[case]
    rules = tmp_path / f"{case}.tune"
    rules.write_text(text)
    tune = TuneBuild(library, built, probe)
    result = tune.launch(
        RANKS, [probe, "replaceable", str(COUNT)], rules, preload=False, extra_env=SANITIZER_ENV
    )
    assert result.returncode == 0, result.stderr
    assert "runtime error" not in result.stderr and "AddressSanitizer" not in result.stderr
    assert "probe ok" in result.stdout
    assert replaced(result.stderr) == {line: {calls} for line, calls in expected.items()}
    assert all(calls == {0} for calls in left(result.stderr).values()), result.stderr
