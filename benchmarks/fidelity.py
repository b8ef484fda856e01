"""Measurement fidelity of the kernel, measured with real MPI on this machine.

    python benchmarks/fidelity.py sync [--mpi openmpi mpich] [--nprocs 2] [--nrep 200]
    python benchmarks/fidelity.py buffers [--mpi openmpi] [--baseline main] [--launches 2]

`sync`: per op and size, the default `dissemination` barriers against each clock-synchronised
method (`hca3_roundtime`, `jk_roundtime`), all in one launch in a shuffled order: medians of
time_s (the slowest rank's local duration; valid repetitions only), their ratio, the median
global run time (latest end - earliest start on the synchronised clocks) and the share of valid
repetitions.
Then the cost of one repetition of each method: repetitions of the empty op that fit in a
budget (max_time), which includes the synchronisation, the loop and the budget broadcast.

`buffers`: the median of allgather 64 KiB, alone or after other experiments, under several
`GLIBC_TUNABLES=glibc.malloc.mmap_threshold` values, for this worktree's kernel and for a
baseline revision's (built from `git archive`): the spread of the medians over the conditions
shows whether buffer placement still depends on what ran before or on the allocator.

Each subcommand takes a couple of minutes with its defaults. Timings on a shared machine are
noisy: compare rows measured in the same run, never against fixed numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from mpi_support import MPI_LIBRARIES, MpiLibrary  # noqa: E402

SYNC_METHODS = ("dissemination", "hca3_roundtime", "jk_roundtime")
SYNC_OPS = ("allreduce", "bcast", "alltoall", "allgather")
SYNC_SIZES = (8, 1024, 65536)
COST_BUDGET_S = 0.5
TUNABLES = {
    "default": None,
    "mmap≥4KiB": "glibc.malloc.mmap_threshold=4096",
    "heap≤32MiB": "glibc.malloc.mmap_threshold=33554432",
}
PROBE = {"op": "allgather", "msg_size": 65536}
# Experiments that leave the heap in different states before the probe.
HISTORIES: dict[str, list[dict]] = {
    "alone": [],
    "after large": [
        {"op": "alltoall", "msg_size": 262144},
        {"op": "bcast", "msg_size": 1000000},
        {"op": "reduce", "msg_size": 100000},
    ],
    "after small": [
        {"op": "bcast", "msg_size": 3000},
        {"op": "gather", "msg_size": 100},
        {"op": "allgather", "msg_size": 24},
    ],
}


def build(mpi: MpiLibrary, sources: Path, build_dir: Path) -> Path:
    subprocess.run(
        ["make", "-s", "-C", str(sources), f"MPICC={mpi.mpicc}", f"BUILD={build_dir}"],
        check=True,
        capture_output=True,
    )
    return build_dir / "mpiguide-bench"


def build_revision(mpi: MpiLibrary, revision: str, workdir: Path) -> Path:
    """The kernel of a git revision, built from `git archive` (the worktree is not touched)."""
    tree = workdir / f"rev-{revision.replace('/', '_')}"
    tree.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "src/kernel"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return build(mpi, tree / "src" / "kernel", tree / "build" / mpi.name)


def run_kernel(
    mpi: MpiLibrary,
    binary: Path,
    nprocs: int,
    rows: Sequence[dict],
    workdir: Path,
    env: dict[str, str] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Runs one input (columns: the union of the rows' keys) and returns OUTPUT.csv and .json."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    infile = workdir / "in.csv"
    lines = [",".join(columns)]
    lines += [",".join(str(row.get(c, "")) for c in columns) for row in rows]
    infile.write_text("\n".join(lines) + "\n")
    outfile = workdir / "out.csv"
    subprocess.run(
        mpi.command(nprocs, [binary, infile, outfile]),
        env=mpi.environment(nprocs, env),
        check=True,
        capture_output=True,
        timeout=600,
    )
    return pd.read_csv(outfile, keep_default_na=False), json.loads(
        outfile.with_suffix(".json").read_text()
    )


def valid(times: pd.DataFrame) -> pd.DataFrame:
    return times if "status" not in times else times[times["status"] == "valid"]


def sync_table(
    mpi: MpiLibrary, binary: Path, nprocs: int, nrep: int, workdir: Path
) -> pd.DataFrame:
    cases = list(itertools.product(SYNC_OPS, SYNC_SIZES, SYNC_METHODS))
    random.Random(1).shuffle(cases)
    rows = [
        {"exp_id": i, "op": op, "msg_size": size, "nrep": nrep, "sync": sync}
        for i, (op, size, sync) in enumerate(cases)
    ]
    times, _ = run_kernel(mpi, binary, nprocs, rows, workdir)
    exp_of = {case: i for i, case in enumerate(cases)}
    records = []
    for op, size in itertools.product(SYNC_OPS, SYNC_SIZES):
        record: dict = {"mpi": mpi.name, "op": op, "size": size}
        for sync in SYNC_METHODS:
            mine = times[times["exp_id"] == exp_of[op, size, sync]]
            ok = valid(mine)
            record[f"{sync}_us"] = ok["time_s"].astype(float).median() * 1e6
            if sync == "dissemination":
                continue
            record[f"{sync}_ratio"] = record[f"{sync}_us"] / record["dissemination_us"]
            record[f"{sync}_global_us"] = ok["global_s"].astype(float).median() * 1e6
            record[f"{sync}_valid"] = len(ok) / len(mine)
        records.append(record)
    return pd.DataFrame.from_records(records)


def cost_table(mpi: MpiLibrary, binary: Path, nprocs: int, workdir: Path) -> pd.DataFrame:
    """Microseconds per repetition of the empty op: the synchronisation's cost."""
    methods = ("dissemination", "barrier", *SYNC_METHODS[1:])
    rows = [
        {"exp_id": i, "op": "empty", "nrep": 10_000_000, "sync": sync, "max_time": COST_BUDGET_S}
        for i, sync in enumerate(methods)
    ]
    _, provenance = run_kernel(mpi, binary, nprocs, rows, workdir)
    done = {e["exp_id"]: e["reps_done"] for e in provenance["experiments"]}
    return pd.DataFrame(
        [
            {"mpi": mpi.name, "sync": sync, "us_per_repetition": COST_BUDGET_S / done[i] * 1e6}
            for i, sync in enumerate(methods)
        ]
    )


def buffers_table(
    mpi: MpiLibrary, kernels: dict[str, Path], nrep: int, launches: int, workdir: Path
) -> pd.DataFrame:
    records = []
    for (kernel, binary), (history, before), (tunable, setting), launch in itertools.product(
        kernels.items(), HISTORIES.items(), TUNABLES.items(), range(launches)
    ):
        rows = [{"exp_id": i, **row, "nrep": 5} for i, row in enumerate(before)]
        rows.append({"exp_id": len(before), **PROBE, "nrep": nrep})
        env = {"GLIBC_TUNABLES": setting} if setting else None
        times, _ = run_kernel(mpi, binary, 2, rows, workdir, env)
        probe = times[times["exp_id"] == len(before)]["time_s"].astype(float)
        records.append(
            {"kernel": kernel, "history": history, "tunable": tunable, "launch": launch,
             "median_us": probe.median() * 1e6}
        )  # fmt: skip
    return pd.DataFrame.from_records(records)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("sync", "buffers"))
    parser.add_argument("--mpi", nargs="+", choices=sorted(MPI_LIBRARIES))
    parser.add_argument("--nprocs", type=int, default=2)
    parser.add_argument("--nrep", type=int, default=200)
    parser.add_argument("--baseline", default="main", help="git revision to compare (buffers)")
    parser.add_argument("--launches", type=int, default=2, help="launches per condition")
    parser.add_argument("--workdir", type=Path, help="keep the builds and files here")
    args = parser.parse_args(argv)
    names = args.mpi or (["openmpi", "mpich"] if args.what == "sync" else ["openmpi"])
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mpiguide-fidelity-"))
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    try:
        for name in names:
            mpi = MPI_LIBRARIES[name]
            here = build(mpi, REPO / "src" / "kernel", workdir / "build" / name)
            if args.what == "sync":
                print(sync_table(mpi, here, args.nprocs, args.nrep, workdir).round(3).to_string())
                print(cost_table(mpi, here, args.nprocs, workdir).round(2).to_string())
                continue
            kernels = {"worktree": here, args.baseline: build_revision(mpi, args.baseline, workdir)}
            table = buffers_table(mpi, kernels, args.nrep, args.launches, workdir)
            print(f"{name}: allgather 64 KiB median (us), 2 ranks, per launch")
            print(table.pivot_table(index=["history", "tunable"], columns=["kernel", "launch"],
                                    values="median_us").round(1).to_string())  # fmt: skip
            spread = table.groupby("kernel")["median_us"].agg(["min", "max"])
            spread["max/min"] = spread["max"] / spread["min"]
            print(spread.round(2).to_string())
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
