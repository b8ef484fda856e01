"""libmpiguide-tune stacks with a PMPI tool preloaded after it: the tool's MPI_Init runs, and a
call the tuning library leaves alone reaches the tool (here libmpiguide-inject planting a delay),
as the verify campaign of a planted slowdown needs (2 ranks, both MPI libraries)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from preload_support import build_library

from .conftest import TuneBuild
from .test_tune import COUNT, RANKS, REPEATS, left

pytestmark = pytest.mark.kernel

DELAY_S = 0.3
# probe.c's `unhandled` makes 4 MPI_Allreduce calls per repetition that the rule below covers but
# the library must leave alone.
FALLTHROUGH_CALLS = 4 * REPEATS


def test_a_call_left_alone_reaches_the_next_tool(tune_build: TuneBuild, tmp_path: Path) -> None:
    inject_library = build_library(tune_build.mpi, "inject", tmp_path / "inject")
    rules = tmp_path / "stack.tune"
    rules.write_text("allreduce_as_reduce_scatter_allgather ranks=2 bytes=0-1000000\n")
    env = tune_build.mpi.environment(
        RANKS,
        {
            "LD_PRELOAD": f"{tune_build.library}:{inject_library}",
            "MPIGUIDE_TUNE": str(rules),
            "MPIGUIDE_TUNE_REPORT": "1",
            "MPIGUIDE_INJECT": f"MPI_Allreduce:usec={int(DELAY_S * 1e6)}",
        },
    )
    start = time.monotonic()
    result = subprocess.run(
        tune_build.mpi.command(RANKS, [tune_build.probe, "unhandled", str(COUNT)]),
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    assert "mpiguide-inject: active: MPI_Allreduce +" in result.stderr
    assert left(result.stderr) == {"MPI_Allreduce": {FALLTHROUGH_CALLS}}
    # Every call left alone paid the injector's busy-wait: a lower bound, whatever the load.
    assert elapsed >= FALLTHROUGH_CALLS * DELAY_S, (elapsed, result.stderr)
