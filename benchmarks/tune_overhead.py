"""What libmpiguide-tune's replacement costs over the mock-up it runs, inside one launch.

Prints, does not assert. The kernel (src/kernel) runs with libmpiguide-tune preloaded and a
tuning file that replaces MPI_Allreduce by allreduce_as_reduce_bcast at 8 B to 64 KiB, over an
input holding at each size (8 B, 64 B, 1 KiB, 8 KiB, 64 KiB of doubles) both the op `allreduce`
(MPI_Allreduce, which the library replaces) and the op `allreduce_as_reduce_bcast` (the kernel's
own mock-up: the same MPI_Reduce and MPI_Bcast called directly), each split into `--interleave`
chunks spread over the launch in shuffled rounds (docs/kernel.md, "Interleaved repetitions").
Both sides run the same mock-up code (src/mockups) on the same ranks in the same launch: what
remains between them is the library's own cost per call (interposition, checks, rule look-up,
counters). A second experiment of the kernel's mock-up, identical to the first, is the null
control: its ratio to the first shows how far two medians of the same thing lie apart in this
sitting. The goal is a ratio within GOAL at every size; each ratio is printed beside it.

`--behind inject` preloads libmpiguide-inject after libmpiguide-tune, as a verify campaign of a
planted slowdown stacks them, planting nothing (INJECT_SPEC: the library refuses an empty spec):
every call either side makes then passes through both libraries.

Two builds of the library are compared in the same sitting: the current tree's (`after`) and
the one of `--base` (`before`, built from `git archive` of that commit into a temporary
directory), launched alternately (before, after, after, before, ...) so that a drift of the
machine falls on both. Per library (2 ranks each; Debian's two and the three `make setup-mpi`
installs, tests/mpi_support.py, those not installed skipped), stack, size and build it prints
the median over launches of each side's median, their ratio (and its range over the launches),
the difference in ns per call and the null control's ratio, and the load average around every
launch. The library's report (MPIGUIDE_TUNE_REPORT=1) confirms each launch replaced the calls.

Run it alone on the machine (no builds or tests beside it), with the venv's Python:
`.venv/bin/python benchmarks/tune_overhead.py [--nrep 20000] [--interleave 20] [--launches 4]
[--base 8ad0e00] [--libraries openmpi mpich ...] [--behind nothing inject]`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _common import REPO, load

sys.path.insert(0, str(REPO / "tests"))

from mpi_support import MPI_LIBRARIES, MpiLibrary

RANKS = 2
SIZES = (8, 64, 1024, 8192, 65536)
DTYPE = "double"
TUNED_OP = "allreduce"
MOCKUP_OP = "allreduce_as_reduce_bcast"
# Per size, three experiments: the tuned collective, the kernel's mock-up, and the mock-up again.
SIDES = {"tuned": TUNED_OP, "mockup": MOCKUP_OP, "null": MOCKUP_OP}
RULES = f"{MOCKUP_OP} ranks={RANKS} bytes={min(SIZES)}-{max(SIZES)}\n"
# The largest ratio tuned / mock-up the library should cost at any size.
GOAL = 1.02
# The library's source and what it builds on: enough of a tree to build it from.
LIBRARY_SOURCES = ("src/tune", "src/common", "src/mockups")
# A spec planting nothing, on the collective the tuned calls replace: those never reach it.
INJECT_SPEC = "MPI_Allreduce:fraction=0"
BEHIND = ("nothing", "inject")
REPLACED = re.compile(r"^mpiguide-tune: rank \d+: line 1 \w+ replaced (\d+) call", re.M)


def make(source: Path, mpi: MpiLibrary, build: Path) -> Path:
    """`make -C source` with `mpi`'s compiler into `build`; `build`."""
    command = ["make", "-C", str(source), f"MPICC={mpi.mpicc}", f"BUILD={build}"]
    result = subprocess.run(
        command, env=mpi.build_environment(), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return build


def base_tree(commit: str, into: Path) -> Path:
    """The library's sources at `commit`, unpacked below `into`."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, *LIBRARY_SOURCES],
        capture_output=True,
        check=True,
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def experiments() -> dict[int, tuple[str, int]]:
    """exp_id -> (side, msg_size)."""
    return dict(enumerate((side, size) for size in SIZES for side in SIDES))


def write_input(path: Path, nrep: int, interleave: int, seed: int) -> None:
    """Every experiment in `interleave` chunks: round c holds chunk c of each, in an order drawn
    afresh per round."""
    rng = np.random.default_rng(seed)
    lines = ["exp_id,op,msg_size,dtype,nrep,interleave,chunk"]
    for chunk in range(interleave):
        for exp_id in rng.permutation(len(experiments())):
            side, size = experiments()[int(exp_id)]
            op = SIDES[side]
            lines.append(f"{exp_id},{op},{size},{DTYPE},{nrep},{interleave},{chunk}")
    path.write_text("\n".join(lines) + "\n")


def launch(
    mpi: MpiLibrary, kernel: Path, preload: list[Path], rules: Path, infile: Path, out: Path
) -> tuple[pd.Series, int]:
    """The median time per exp_id of one launch, and the calls rank 0 had replaced."""
    env = mpi.environment(
        RANKS,
        {
            "LD_PRELOAD": ":".join(map(str, preload)),
            "MPIGUIDE_TUNE": str(rules),
            "MPIGUIDE_TUNE_REPORT": "1",
            "MPIGUIDE_INJECT": INJECT_SPEC,  # read only where libmpiguide-inject is preloaded
        },
    )
    command = mpi.command(RANKS, [kernel, "--nprocs", str(RANKS), infile, out])
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    replaced = REPLACED.search(result.stderr)
    if not replaced:
        sys.exit(f"no replacement reported:\n{result.stderr}")
    return pd.read_csv(out).groupby("exp_id")["time_s"].median(), int(replaced[1])


def summary(row: str, build: str, runs: list[pd.Series]) -> list[str]:
    """One line per size: medians over the launches, ratio and its range beside the goal, ns per
    call, the null control's ratio."""
    medians = pd.concat(runs, axis=1)  # exp_id x launches
    ids = {pair: exp_id for exp_id, pair in experiments().items()}
    lines = []
    for size in SIZES:
        tuned, mockup, null = (medians.loc[ids[(side, size)]].to_numpy() for side in SIDES)
        ratios = tuned / mockup
        tuned_s, mockup_s = float(np.median(tuned)), float(np.median(mockup))
        ratio = tuned_s / mockup_s
        lines.append(
            f"| {row} | {size} B | {build} | {1e6 * tuned_s:.3f} | {1e6 * mockup_s:.3f} | "
            f"{ratio:.3f} ({ratios.min():.3f}-{ratios.max():.3f}) | "
            f"{'≤' if ratio <= GOAL else '>'} {GOAL} | "
            f"{1e9 * (tuned_s - mockup_s):+.0f} | {float(np.median(null)) / mockup_s:.3f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nrep", type=int, default=20000, help="repetitions per experiment")
    parser.add_argument("--interleave", type=int, default=20, help="chunks per experiment")
    parser.add_argument("--launches", type=int, default=4, help="launches per build")
    parser.add_argument("--base", default="8ad0e00", help="the commit measured as `before`")
    parser.add_argument(
        "--libraries", nargs="+", choices=sorted(MPI_LIBRARIES), default=list(MPI_LIBRARIES)
    )
    parser.add_argument(
        "--behind",
        nargs="+",
        choices=BEHIND,
        default=[BEHIND[0]],
        help="what is preloaded after libmpiguide-tune (each one measured in turn)",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    libraries = [MPI_LIBRARIES[name] for name in args.libraries]
    missing = [mpi.name for mpi in libraries if not mpi.available()]
    print(
        f"tune_overhead: {RANKS} ranks, {DTYPE}, nrep {args.nrep} in {args.interleave} "
        f"interleaved chunks, {args.launches} launches per build, before = {args.base}, "
        f"behind: {', '.join(args.behind)}, {os.cpu_count()} CPUs; start {load()}"
        + (f"; not installed, skipped: {', '.join(missing)}" if missing else ""),
        flush=True,
    )
    table = [
        "| library, behind | size | build | tuned median µs | mock-up median µs | ratio (range "
        "over launches) | goal | ns per call | null ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as workdir:
        work = Path(workdir)
        base = base_tree(args.base, work / "base")
        rules = work / "overhead.tune"
        rules.write_text(RULES)
        for mpi in (mpi for mpi in libraries if mpi.name not in missing):
            kernel = make(REPO / "src" / "kernel", mpi, work / f"kernel-{mpi.name}")
            tune = {
                "before": make(base / "src" / "tune", mpi, work / f"before-{mpi.name}"),
                "after": make(REPO / "src" / "tune", mpi, work / f"after-{mpi.name}"),
            }
            inject = make(REPO / "src" / "inject", mpi, work / f"inject-{mpi.name}")
            for behind in args.behind:
                after_tune = [inject / "libmpiguide-inject.so"] if behind == "inject" else []
                runs: dict[str, list[pd.Series]] = {build: [] for build in tune}
                for index in range(args.launches):
                    order = list(tune) if index % 2 == 0 else list(reversed(tune))
                    for build in order:
                        name = f"{mpi.name}-{behind}-{build}-{index}"
                        infile = work / f"in-{name}.csv"
                        write_input(infile, args.nrep, args.interleave, args.seed + index)
                        before_load = load()
                        medians, replaced = launch(
                            mpi,
                            kernel / "mpiguide-bench",
                            [tune[build] / "libmpiguide-tune.so", *after_tune],
                            rules,
                            infile,
                            work / f"out-{name}.csv",
                        )
                        runs[build].append(medians)
                        print(
                            f"{mpi.name} behind {behind} launch {index} {build:6}: {replaced} "
                            f"calls replaced on rank 0; {before_load} -> {load()}",
                            flush=True,
                        )
                for build in tune:
                    table.extend(summary(f"{mpi.name}, {behind}", build, runs[build]))
    print(f"end {load()}")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
