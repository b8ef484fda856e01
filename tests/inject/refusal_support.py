"""libmpiguide-inject refusing a bad spec under a launcher, with the machine's cores kept busy:
the case of tests/inject/test_inject.py and of benchmarks/inject_refusal.py, which counts how
often the refusal's message reaches the user. Under MPICH's mpiexec a rank that exits while the
launcher is still starting the job can make mpiexec die of SIGPIPE before it forwards the ranks'
output (src/common/preload.h); busy cores widen that window by delaying mpiexec."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from preload_support import PreloadBuild

RANKS = 2
BAD_SPEC = "MPI_Allreduce:usec=five"
# What every rank must say about BAD_SPEC.
REFUSAL = f"entry 1 '{BAD_SPEC}': usec must be a number"
# The probe's cheapest run: the refusal comes before any of it.
PROBE_ARGS = ("blocking", "3", "8")
# A busy process stops by itself after this long, should the one that started it die first.
BUSY_BACKSTOP_S = 300
BUSY_LOOP = (
    "import time\n"
    f"end = time.monotonic() + {BUSY_BACKSTOP_S}\n"
    "print('spinning', flush=True)\n"
    "while time.monotonic() < end:\n"
    "    pass\n"
)


@contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """`count` processes spinning on the CPU for the duration of the block, each already
    spinning when the block starts; killed when it ends."""
    spinners: list[subprocess.Popen[str]] = []
    try:
        for _ in range(count):
            spinner = subprocess.Popen(
                [sys.executable, "-c", BUSY_LOOP], stdout=subprocess.PIPE, text=True
            )
            spinners.append(spinner)
        for spinner in spinners:
            assert spinner.stdout is not None
            if spinner.stdout.readline() != "spinning\n":
                raise RuntimeError(f"a busy-loop process did not start: {spinner.args}")
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
            if spinner.stdout is not None:
                spinner.stdout.close()


def refuse(build: PreloadBuild) -> subprocess.CompletedProcess[str]:
    """The probe launched on RANKS ranks under the library with MPIGUIDE_INJECT=BAD_SPEC."""
    return build.run(
        RANKS, [build.probe, *PROBE_ARGS], {"MPIGUIDE_INJECT": BAD_SPEC}, ("MPIGUIDE_INJECT",)
    )
