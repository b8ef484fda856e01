"""How often libmpiguide-inject's refusal of a bad spec reaches the user with the cores busy.

Prints, does not assert. Per MPI library (2 ranks each), the probe of tests/inject is launched
`--tries` times under the library with a bad MPIGUIDE_INJECT while one busy-loop process more
than there are cores runs beside it (tests/inject/refusal_support.py: the case, the message and
the load, shared with the test). For each library it prints the tries, in how many every rank's
message arrived, the messages arrived of those expected, the launcher's exit codes (-13: killed
by SIGPIPE) and the load average before and after.

`--tree` builds the library from another tree holding src/inject and src/common, e.g. the base
commit's (`git archive BASE src/inject src/common | tar -x -C /tmp/base`); the probe is always
this checkout's.

Run it with the venv's Python: `.venv/bin/python benchmarks/inject_refusal.py [--tries 20]
[--libraries openmpi mpich] [--tree DIR]`; by default Debian's two libraries, and those
`make setup-mpi` installs by name (`--libraries mpich-5.0.2 intelmpi-2021.19`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _common import REPO, load

sys.path.insert(0, str(REPO / "tests"))

from inject.refusal_support import RANKS, REFUSAL, busy_cores, refuse
from mpi_support import CORES, DEBIAN_MPI, MPI_LIBRARIES, MpiLibrary
from preload_support import PROBE_COMPILE, PreloadBuild

PROBE_SOURCE = REPO / "tests" / "inject" / "probe.c"


def build(tree: Path, mpi: MpiLibrary, into: Path) -> PreloadBuild:
    """libmpiguide-inject from `tree` and this checkout's probe, built with `mpi` into `into`."""
    command = ["make", "-C", str(tree / "src" / "inject"), f"MPICC={mpi.mpicc}", f"BUILD={into}"]
    result = subprocess.run(
        command, env=mpi.build_environment(), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    probe = into / "probe"
    compile_probe = [mpi.mpicc, *PROBE_COMPILE, "-o", str(probe), str(PROBE_SOURCE)]
    subprocess.run(compile_probe, env=mpi.build_environment(), check=True)
    return PreloadBuild(mpi, into / "libmpiguide-inject.so", probe)


def measure(library: PreloadBuild, tries: int) -> None:
    before = load("load before")
    complete = messages = 0
    codes: Counter[int] = Counter()
    for _ in range(tries):
        result = refuse(library)
        arrived = result.stderr.count(REFUSAL)
        messages += arrived
        complete += arrived == RANKS
        codes[result.returncode] += 1
    shown = ", ".join(f"{code}: {count}" for code, count in sorted(codes.items()))
    print(
        f"{library.mpi.name}: {tries} tries, every rank's message in {complete}, "
        f"{messages}/{tries * RANKS} messages; exit codes {{{shown}}}; "
        f"{before}, {load('after')}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--libraries", nargs="+", choices=sorted(MPI_LIBRARIES), default=None)
    parser.add_argument("--tree", type=Path, default=REPO)
    args = parser.parse_args()
    names = args.libraries or DEBIAN_MPI
    with tempfile.TemporaryDirectory(prefix="inject-refusal-") as scratch:
        libraries = [build(args.tree, MPI_LIBRARIES[n], Path(scratch) / n) for n in names]
        print(f"library from {args.tree.resolve()}; {CORES + 1} busy processes on {CORES} cores")
        with busy_cores(CORES + 1):
            for library in libraries:
                measure(library, args.tries)


if __name__ == "__main__":
    main()
