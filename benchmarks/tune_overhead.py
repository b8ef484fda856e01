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
control: measured the same way, its ratio to the first should land near 1, and how far it lies
from 1 shows what the method cannot resolve in this sitting.

The statistic pairs the sides round by round, so that a drift of the machine within a launch
(another program, a change of clock speed) falls on both sides of a ratio rather than on one, and
one between launches on both sides of every ratio alike. Round c holds chunk c of every experiment
in shuffled order, so the tuned and the mock-up chunk of a round ran within 1/`--interleave` of the
launch of each other. Per launch, size and round: the tuned chunk's median over its repetitions
divided by the mock-up chunk's (the null's likewise); the launch's ratio is the median of its
rounds' ratios. Medians on both levels, because they were the steadier: in a short sitting beside
other work (openmpi, 6 launches of 2000 repetitions in 20 chunks, load about 5) the sd over
launches of the null's log ratio was 0.016 with medians, 0.033 pooling the rounds by their
geometric mean, 0.10 and 0.24 with chunk means (a repetition or two thousands of times a chunk's
median decide its mean), and 0.028 for the previous statistic (per launch each side's median over
all its repetitions, no pairing). OUTPUT.csv has no chunk column: `rounds` reads a repetition's
chunk, thus its round, from the provenance beside it (OUTPUT.json lists every chunk with
`first_rep` and `reps_done`).

Per cell (library, stack, size, build) it prints the median over the launches of the launches'
ratios and their range, and a 95 % interval of the ratio pooled over every round of every launch:
the percentile interval of a two-stage bootstrap (numpy; the launches drawn with replacement, then
the rounds within each drawn launch, the median of the drawn log ratios taken each time). Launches
are drawn, not only rounds, because a launch can carry a ratio of its own that pairing within it
cannot cancel (the libraries' code and the buffers at other addresses): rounds drawn alone would
count every round as independent and claim more than the launches show. The goal's verdict comes
from that interval alone: `≤ 1.02` when its upper end is at most GOAL, `> 1.02` when its lower end
is above GOAL, `cannot tell` otherwise. Beside them: each side's time (the median over the launches
of the launch's median over all its repetitions), the ratio's cost in ns per call (the mock-up's
time times (ratio - 1)), the null control's ratio, range and interval, and the load average around
every launch. The null's interval should hold 1 in about 95 % of the cells: where many miss it,
something in the sitting was not shared by the paired chunks and the verdicts beside them claim
more than the data.

`--behind inject` preloads libmpiguide-inject after libmpiguide-tune, as a verify campaign of a
planted slowdown stacks them, planting nothing (INJECT_SPEC: the library refuses an empty spec):
every call either side makes then passes through both libraries.

Two builds of the library are compared in the same sitting: the current tree's (`after`) and
the one of `--base` (`before`, built from `git archive` of that commit into a temporary
directory), launched alternately (before, after, after, before, ...) so that a drift of the
machine falls on both. Libraries: 2 ranks each; Debian's two and the three `make setup-mpi`
installs (tests/mpi_support.py), those not installed skipped. The library's report
(MPIGUIDE_TUNE_REPORT=1) confirms each launch replaced the calls.

Run it alone on the machine (no builds or tests beside it), with the venv's Python:
`.venv/bin/python benchmarks/tune_overhead.py [--nrep 20000] [--interleave 20] [--launches 4]
[--base 8ad0e00] [--libraries openmpi mpich ...] [--behind nothing inject]`.
"""

from __future__ import annotations

import argparse
import json
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
# What stands for a chunk's repetitions in the paired ratio of its round.
CHUNK = "median"
# The interval's coverage, and the bootstrap draws it is read from.
LEVEL = 0.95
BOOTSTRAP_DRAWS = 10_000
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
) -> tuple[pd.DataFrame, int]:
    """Every repetition of one launch with its round (`rounds`), and the calls rank 0 had
    replaced."""
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
    return rounds(out), int(replaced[1])


def rounds(out: Path) -> pd.DataFrame:
    """The repetitions of the kernel's OUTPUT.csv `out`, each with the round it ran in:
    `exp_id`, `round`, `time_s`. The CSV has no chunk column, but the provenance beside it lists
    every chunk with its `exp_id`, `chunk`, `first_rep` and `reps_done`, and a chunk's
    repetitions are numbered from its `first_rep` on (docs/kernel.md, "Interleaved
    repetitions"): a repetition belongs to the chunk of its experiment with the largest
    `first_rep` not above its `rep`. Chunk c is in round c (`write_input`)."""
    chunks = pd.DataFrame(
        json.loads(out.with_suffix(".json").read_text())["experiments"],
        columns=["exp_id", "chunk", "first_rep", "reps_done"],
    )
    frame = pd.merge_asof(
        pd.read_csv(out).sort_values("rep"),
        chunks.sort_values("first_rep"),
        left_on="rep",
        right_on="first_rep",
        by="exp_id",
    )
    counted = frame.groupby(["exp_id", "chunk"]).size().sort_index()
    if not counted.equals(chunks.set_index(["exp_id", "chunk"])["reps_done"].sort_index()):
        sys.exit(f"{out}: its repetitions per chunk are not the provenance's reps_done")
    return frame.rename(columns={"chunk": "round"})[["exp_id", "round", "time_s"]]


def round_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Per size, launch and round (the index), the tuned chunk's CHUNK statistic over the
    mock-up chunk's (`tuned`) and the null chunk's over the mock-up chunk's (`null`). `frame`:
    `launch`, `exp_id`, `round`, `time_s`, one row per repetition."""
    chunks = frame.groupby(["launch", "exp_id", "round"])["time_s"].agg(CHUNK).reset_index()
    design = pd.DataFrame.from_dict(experiments(), orient="index", columns=["side", "size"])
    wide = chunks.join(design, on="exp_id").pivot(
        index=["size", "launch", "round"], columns="side", values="time_s"
    )
    return wide[["tuned", "null"]].div(wide["mockup"], axis=0)


def pooled(log_ratios: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    """The one ratio for many paired log ratios along `axis`: the exp of their median."""
    return np.exp(np.median(log_ratios, axis=axis))


def paired(ratios: pd.Series, rng: np.random.Generator) -> tuple[np.ndarray, tuple[float, float]]:
    """Of one side's paired ratios of one size (`ratios`, indexed by launch and round): each
    launch's pooled ratio, and the LEVEL interval of the ratio pooled over every round of every
    launch, the percentile interval of a two-stage bootstrap (the launches drawn with
    replacement, then the rounds within each drawn launch)."""
    logs = np.log(ratios.unstack("round").to_numpy())  # launches x rounds
    launches, rounds_per_launch = logs.shape
    drawn_launches = rng.integers(launches, size=(BOOTSTRAP_DRAWS, launches, 1))
    drawn_rounds = rng.integers(
        rounds_per_launch, size=(BOOTSTRAP_DRAWS, launches, rounds_per_launch)
    )
    draws = pooled(logs[drawn_launches, drawn_rounds], axis=(1, 2))
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return pooled(logs, axis=1), (float(low), float(high))


def verdict(low: float, high: float) -> str:
    """The goal's verdict from a ratio's interval: met or missed only where all of the interval
    says so."""
    if high <= GOAL:
        return f"≤ {GOAL}"
    if low > GOAL:
        return f"> {GOAL}"
    return "cannot tell"


def summary(
    row: str, build: str, frames: list[pd.DataFrame], rng: np.random.Generator
) -> list[str]:
    """One line per size: each side's median time (the median over the launches of the launch's
    median), the paired ratio (median over the launches, their range) with its interval and the
    goal's verdict, what that ratio makes in ns per call of the mock-up's time, and the null
    control's ratio, range and interval. `frames`: one per launch, as `launch` returns them."""
    frame = pd.concat(frames, keys=range(len(frames)), names=["launch"]).reset_index("launch")
    ratios = round_ratios(frame)
    medians = frame.groupby(["exp_id", "launch"])["time_s"].median().groupby("exp_id").median()
    ids = {pair: exp_id for exp_id, pair in experiments().items()}
    lines = []
    for size in SIZES:
        cells = {side: paired(ratios.loc[size, side], rng) for side in ("tuned", "null")}
        (tuned, (low, high)), (null, (null_low, null_high)) = cells["tuned"], cells["null"]
        ratio = float(np.median(tuned))
        tuned_s, mockup_s = (medians[ids[(side, size)]] for side in ("tuned", "mockup"))
        lines.append(
            f"| {row} | {size} B | {build} | {1e6 * tuned_s:.3f} | {1e6 * mockup_s:.3f} | "
            f"{ratio:.3f} ({tuned.min():.3f}-{tuned.max():.3f}) | {low:.3f}-{high:.3f} | "
            f"{verdict(low, high)} | {1e9 * mockup_s * (ratio - 1):+.0f} | "
            f"{float(np.median(null)):.3f} ({null.min():.3f}-{null.max():.3f}) | "
            f"{null_low:.3f}-{null_high:.3f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nrep", type=int, default=20000, help="repetitions per experiment")
    parser.add_argument(
        "--interleave", type=int, default=20, help="chunks per experiment: rounds per launch"
    )
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
    parser.add_argument("--seed", type=int, default=1, help="of the inputs and the bootstrap")
    args = parser.parse_args()
    if args.interleave < 2:
        parser.error("--interleave must be at least 2: the sides are paired by round")
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
        "| library, behind | size | build | tuned median µs | mock-up median µs | paired ratio "
        f"(range over launches) | {100 * LEVEL:.0f} % interval | goal {GOAL} | ns per call | "
        f"null ratio (range over launches) | null {100 * LEVEL:.0f} % interval |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rng = np.random.default_rng(args.seed)
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
                runs: dict[str, list[pd.DataFrame]] = {build: [] for build in tune}
                for index in range(args.launches):
                    order = list(tune) if index % 2 == 0 else list(reversed(tune))
                    for build in order:
                        name = f"{mpi.name}-{behind}-{build}-{index}"
                        infile = work / f"in-{name}.csv"
                        write_input(infile, args.nrep, args.interleave, args.seed + index)
                        before_load = load()
                        repetitions, replaced = launch(
                            mpi,
                            kernel / "mpiguide-bench",
                            [tune[build] / "libmpiguide-tune.so", *after_tune],
                            rules,
                            infile,
                            work / f"out-{name}.csv",
                        )
                        runs[build].append(repetitions)
                        print(
                            f"{mpi.name} behind {behind} launch {index} {build:6}: {replaced} "
                            f"calls replaced on rank 0; {before_load} -> {load()}",
                            flush=True,
                        )
                for build in tune:
                    table.extend(summary(f"{mpi.name}, {behind}", build, runs[build], rng))
    print(f"end {load()}")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
