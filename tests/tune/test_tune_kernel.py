"""The kernel under --verify with libmpiguide-tune preloaded: every collective the tuning file
names runs as its mock-up, including the collectives the kernel's own mock-ups are made of
(allreduce_as_reduce_bcast's MPI_Bcast), and every result is still the collective's; an
experiment with `algorithm: untuned` runs the library's own call in the same launch. 2 ranks,
Debian's two MPI libraries (the replacements under --verify on every library of
tests/mpi_support.py), one short launch each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kernel.kernel_files import write_input
from mpiguide.core.values import UNTUNED

from .conftest import TuneBuild
from .test_tune import EVERY_LIBRARY, left, replaced

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

RANKS = 2
RULES = (
    "allreduce_as_reduce_scatter_allgather ranks=2 bytes=8-65536\n"
    "bcast_as_scatter_allgather ranks=2 bytes=8-65536\n"
    "allgather_as_alltoall ranks=2 bytes=8-65536\n"
    "scan_as_exscan_reduce_local ranks=2 bytes=8-65536\n"
)
OPS = [
    ("allreduce", {}),
    ("bcast", {"root": 1}),
    ("allgather", {}),
    ("scan", {}),
    ("allreduce_as_reduce_bcast", {}),
    ("allgather_as_gather_bcast", {}),
]
# Sizes every rule covers (equal parts on 2 ranks) and 13 chars, which allreduce and bcast cannot
# split into equal parts: those calls fall through, and --verify checks them too.
SIZES = [("int", 4096), ("double", 64), ("char", 13)]


@EVERY_LIBRARY
def test_kernel_verifies_what_the_library_replaces(
    tune_build: TuneBuild, kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for(tune_build.mpi.name)
    rows = [
        {"exp_id": i, "op": op, "nrep": 2, "dtype": dtype, "msg_size": size, **extra}
        for i, ((op, extra), (dtype, size)) in enumerate(
            (pair, size) for pair in OPS for size in SIZES
        )
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    rules = tmp_path / "kernel.tune"
    rules.write_text(RULES)
    argv = [kernel.binary, "--verify", "--nprocs", str(RANKS), infile, tmp_path / "out.csv"]
    result = tune_build.launch(RANKS, argv, rules)
    assert result.returncode == 0, result.stderr
    found = replaced(result.stderr)
    # Each rule replaced calls on both ranks (the same number on both: `found` holds one count
    # per line).
    assert set(found) == {1, 2, 3, 4}, result.stderr
    assert all(len(calls) == 1 and min(calls) > 0 for calls in found.values()), found


def test_an_untuned_experiment_runs_the_library_s_own_call(
    tune_build: TuneBuild, kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """Two experiments alike but for `algorithm: untuned`, in one launch: every call of the first
    is replaced, every call of the second left to the library (the kernel calls MPI_Scan for
    nothing else, so both make the same number of calls: verify, warm-up, repetitions)."""
    kernel = kernel_for(tune_build.mpi.name)
    rows = [
        {"exp_id": i, "op": "scan", "nrep": 5, "dtype": "int", "msg_size": 4096,
         "algorithm": algorithm}
        for i, algorithm in enumerate(("", UNTUNED))
    ]  # fmt: skip
    infile = write_input(tmp_path / "in.csv", rows)
    rules = tmp_path / "scan.tune"
    rules.write_text("scan_as_exscan_reduce_local ranks=2 bytes=8-65536\n")
    argv = [kernel.binary, "--verify", "--nprocs", str(RANKS), infile, tmp_path / "out.csv"]
    result = tune_build.launch(RANKS, argv, rules)
    assert result.returncode == 0, result.stderr
    calls = replaced(result.stderr)[1]
    assert len(calls) == 1 and min(calls) > 0, result.stderr
    assert left(result.stderr) == {"MPI_Scan": calls}, result.stderr
