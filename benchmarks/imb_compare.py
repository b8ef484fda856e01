"""The kernel against the Intel MPI Benchmarks (IMB-MPI1): the same collectives, sizes and
repetitions on the same library, launched alternately.

Prints, does not assert. Per library, `--rounds` rounds of two launches on 2 ranks, IMB-MPI1 and
the kernel (src/kernel) in alternating order (IMB first in even rounds, the kernel first in odd
ones), so that a drift of the shared machine falls on both. Each launch measures Allreduce,
Bcast, Allgather, Alltoall and Reduce at 8 B to 1 MiB (powers of two), in IMB's order
(benchmark by benchmark, sizes ascending), `--iter` timed repetitions each.

Like with like:
- IMB runs `-iter N -iter_policy off` (N repetitions at every size, not fewer for large
  messages) and `-zero_size off`; its defaults stay: MPI_BYTE data, MPI_FLOAT reductions with
  MPI_SUM, root 0 (`-root_shift off`), an MPI_Barrier after every repetition (`-sync on`) and,
  per size, N/10 untimed warm-up repetitions (at least 10). The kernel's input has the same
  sizes (`msg_size`: the whole buffer for Bcast, Allreduce, Reduce; the block per process for
  Allgather and Alltoall, as IMB's #bytes), dtype `float` for the reductions and `char` (MPI's
  unsigned char) for the rest, `nrep` N and `warmup` N/10, its default synchronisation
  (`--sync`; a dissemination barrier before and after every repetition).
- The statistic: IMB times each repetition on each rank around the call alone, averages over
  its repetitions per rank and prints the least, largest and mean of these per-rank means over
  the ranks (t_min, t_max, t_avg). The kernel writes one time per repetition, already the
  largest over the ranks (docs/kernel.md, "Output"): no per-rank time is left to average. So
  IMB's t_max (the slowest rank's mean) is compared with the kernel's mean of time_s (the mean
  of the slowest rank per repetition). The two agree when the same rank is the slower one in
  every repetition (the receiver of a Bcast, the root of a Reduce at 2 ranks); where the slower
  rank changes from repetition to repetition (the symmetric collectives) the kernel's mean is
  the larger by up to the mean difference between the ranks' times. Means on both sides: IMB
  prints no median. The kernel's median is shown beside it, to tell a mean moved by a few long
  repetitions (the machine is shared) from a shift of the whole distribution.

Which IMB-MPI1 runs on which library: Intel MPI's own binary (bin/IMB-MPI1 of its install,
IMB 2021.11 with Intel MPI 2021.19) is linked to `libmpi.so.12`, the MPICH ABI. It runs on MPICH
5's `libmpi.so.12` and on Debian's MPICH 4.0 (`libmpich.so.12`, offered to it under the name
`libmpi.so.12` from a temporary directory): the script takes the very library file the kernel
built for that library loads (`ldd`) and puts it first on IMB's LD_LIBRARY_PATH, and prints
it. Open MPI (`libmpi.so.40`, another ABI) needs IMB built from its sources with that library's
compiler wrappers; neither the package registries this project installs from (PyPI has no IMB
package: its `imb` is unrelated) nor Debian ship them, so Open MPI 4.1 and 5 are compared only
with `--imb-source DIR`, a checkout of github.com/intel/mpi-benchmarks, which the script builds
(`make -C src_cpp TARGET=MPI1`) with each Open MPI's mpicc and mpicxx. MPICH's Hydra launches
both sides with `-bind-to core` (it leaves ranks unbound otherwise); Open MPI and Intel MPI bind
by default.

The table, per library, op and size: IMB's t_max and the kernel's mean in µs (each the median
over the rounds, with the range over the rounds as % of it: the launch-to-launch spread), the
kernel's median, the ratio kernel / IMB, the ratio of each side's best round, and `gap` for a
ratio off by more than 10 %: `within spreads` if the two ranges over the rounds overlap,
`OUTSIDE` if they do not (such a gap is a difference between the two benchmarks to explain, not
noise). The load average is printed at the start, around every launch and at the end.

Run it alone on the machine (no builds or tests beside it), with the venv's Python and
PYTHONPATH=src: `python benchmarks/imb_compare.py [--libraries intelmpi-2021.19 mpich-5.0.2
mpich] [--rounds 5] [--iter 200] [--max-log 20] [--sync dissemination] [--imb-source DIR]`.
About 2 minutes per library with the defaults at load 7-15 (12 minutes for all five).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from _common import REPO, load

sys.path.insert(0, str(REPO / "tests"))

from mpi_support import MPI_LIBRARIES, MpiLibrary, build_kernel
from mpiguide.campaign.installs import INSTALLS

RANKS = 2
MIN_LOG = 3  # 8 B
# IMB's benchmark name -> the kernel's op.
OPS = {
    "Allreduce": "allreduce",
    "Bcast": "bcast",
    "Allgather": "allgather",
    "Alltoall": "alltoall",
    "Reduce": "reduce",
}
# IMB reduces MPI_FLOAT and moves MPI_BYTE otherwise.
REDUCTIONS = {"allreduce", "reduce"}
# IMB's warm-up: a tenth of the repetitions, at least 10 (IMB_settings.h, IMB_warm_up.c).
WARMUP_PERCENT = 10
MIN_WARMUP = 10
GAP = 0.10
# The library the MPICH ABI's programs load, by the name they link.
MPICH_ABI_NAME = "libmpi.so.12"
MPICH_ABI_FILES = re.compile(r"^\s*(libmpi\.so\.12|libmpich\.so\.12) => (\S+)", re.M)
# Its install ships IMB-MPI1 (bin/), built by Intel for the MPICH ABI.
INTEL = next(install for install in INSTALLS.values() if install.library == "intelmpi")

# IMB-MPI1's output: a block per benchmark, one row per size.
BENCHMARK = re.compile(r"^# Benchmarking (\S+)\s*$")
PROCESSES = re.compile(r"^# #processes = (\d+)\s*$")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
MPI_VERSION = re.compile(r"^# MPI Version\s*:\s*(\S+)", re.M)
IMB_COLUMNS = ["benchmark", "processes", "bytes", "repetitions", "t_min", "t_max", "t_avg"]


def parse_imb(text: str) -> pd.DataFrame:
    """IMB-MPI1's tables of `text` as rows (IMB_COLUMNS, times in µs); rows IMB could not
    measure (out of memory, time-out) are left out."""
    rows = []
    benchmark, processes = None, None
    for line in text.splitlines():
        if match := BENCHMARK.match(line):
            benchmark, processes = match[1], None
        elif match := PROCESSES.match(line):
            processes = int(match[1])
        elif benchmark is not None and processes is not None and (match := ROW.match(line)):
            size, reps = int(match[1]), int(match[2])
            t_min, t_max, t_avg = (float(match[i]) for i in (3, 4, 5))
            rows.append([benchmark, processes, size, reps, t_min, t_max, t_avg])
    return pd.DataFrame(rows, columns=IMB_COLUMNS)


@dataclass(frozen=True)
class Side:
    """How one library runs IMB-MPI1: the binary, what its launch adds to the environment, and
    which library file it loads (shown)."""

    binary: Path
    env: dict[str, str]
    loads: str


def mpich_abi_file(kernel: Path, mpi: MpiLibrary) -> Path | None:
    """The MPICH-ABI library file the kernel loads, or None (another ABI)."""
    ldd = subprocess.run(
        ["ldd", str(kernel)], env=mpi.environment(RANKS), capture_output=True, text=True
    )
    match = MPICH_ABI_FILES.search(ldd.stdout)
    return Path(match[2]) if match else None


def imb_side(mpi: MpiLibrary, kernel: Path, source: Path | None, work: Path) -> Side | None:
    """IMB-MPI1 for `mpi`: Intel's binary on a library of the MPICH ABI, else one built from
    `source`; None where there is neither."""
    library = mpich_abi_file(kernel, mpi)
    if library is not None:
        if library.name == MPICH_ABI_NAME:
            directory = library.parent  # its own directory: libraries beside it stay found
        else:
            directory = work / f"abi-{mpi.name}"
            directory.mkdir()
            (directory / MPICH_ABI_NAME).symlink_to(library)
        path = os.pathsep.join(filter(None, [str(directory), os.environ.get("LD_LIBRARY_PATH")]))
        return Side(Path(INTEL.program("IMB-MPI1")), {"LD_LIBRARY_PATH": path}, str(library))
    if source is None:
        return None
    tree = work / f"imb-{mpi.name}"
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".git"))
    mpicxx = mpi.mpicc.replace("mpicc", "mpicxx")
    command = ["make", "-j", str(RANKS), "-C", str(tree / "src_cpp"), "TARGET=MPI1"]
    # IMB builds with -Werror, which Open MPI 4.1's C++ bindings (pulled in by mpi.h, unused by
    # IMB) do not pass.
    flags = ["CPPFLAGS=-DOMPI_SKIP_MPICXX", f"CC={mpi.mpicc}", f"CXX={mpicxx}"]
    result = subprocess.run(
        [*command, *flags],
        env=mpi.build_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        print(f"{mpi.name}: building IMB-MPI1 failed:\n{result.stdout[-2000:]}{result.stderr}")
        return None
    binary = tree / "src_cpp" / "IMB-MPI1"
    return Side(binary, {}, f"built from {source} with {mpi.mpicc}")


def launch_command(mpi: MpiLibrary, argv: list[str | Path]) -> list[str]:
    command = mpi.command(RANKS, argv)
    if mpi.library == "mpich":
        # Hydra leaves ranks unbound: two ranks then share a core now and then.
        command[1:1] = ["-bind-to", "core"]
    return command


def run(mpi: MpiLibrary, argv: list[str | Path], env: dict[str, str]) -> str:
    command = launch_command(mpi, argv)
    result = subprocess.run(
        command, env=mpi.environment(RANKS, env), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr}")
    return result.stdout


def sizes(max_log: int) -> list[int]:
    return [1 << log for log in range(MIN_LOG, max_log + 1)]


def experiments(max_log: int) -> list[tuple[str, int]]:
    """(IMB benchmark, bytes) in the order IMB measures them; exp_id is the position."""
    return [(benchmark, size) for benchmark in OPS for size in sizes(max_log)]


def write_input(path: Path, max_log: int, nrep: int, sync: str) -> None:
    warmup = max(nrep // WARMUP_PERCENT, min(MIN_WARMUP, nrep))
    lines = ["exp_id,op,msg_size,dtype,nrep,warmup,sync"]
    for exp_id, (benchmark, size) in enumerate(experiments(max_log)):
        op = OPS[benchmark]
        dtype = "float" if op in REDUCTIONS else "char"
        lines.append(f"{exp_id},{op},{size},{dtype},{nrep},{warmup},{sync}")
    path.write_text("\n".join(lines) + "\n")


def imb_launch(mpi: MpiLibrary, side: Side, args: argparse.Namespace) -> pd.DataFrame:
    """IMB's t_max per (benchmark, bytes) of one launch, in µs."""
    argv: list[str | Path] = [side.binary, "-npmin", str(RANKS), "-msglog"]
    argv += [f"{MIN_LOG}:{args.max_log}", "-iter", str(args.iter), "-iter_policy", "off"]
    argv += ["-zero_size", "off", "-time", "600", *OPS]
    text = run(mpi, argv, side.env)
    table = parse_imb(text)
    short = table[table["repetitions"] != args.iter]
    if not short.empty:
        print(f"  IMB ran other repetitions than {args.iter}:\n{short.to_string(index=False)}")
    version = MPI_VERSION.search(text)
    print(f"  IMB: MPI version {version[1] if version else '?'}; loads {side.loads}")
    return table.set_index(["benchmark", "bytes"])[["t_max"]]


def kernel_launch(
    mpi: MpiLibrary, kernel: Path, args: argparse.Namespace, work: Path, index: int
) -> pd.DataFrame:
    """The kernel's mean and median of time_s per (benchmark, bytes) of one launch, in µs."""
    infile, outfile = work / f"in-{mpi.name}-{index}.csv", work / f"out-{mpi.name}-{index}.csv"
    write_input(infile, args.max_log, args.iter, args.sync)
    run(mpi, [kernel, "--nprocs", str(RANKS), infile, outfile], {})
    times = pd.read_csv(outfile).groupby("exp_id")["time_s"].agg(["mean", "median"]) * 1e6
    times.index = pd.MultiIndex.from_tuples(
        [experiments(args.max_log)[i] for i in times.index], names=["benchmark", "bytes"]
    )
    return times


def spread(values: np.ndarray) -> str:
    """The range of `values` as % of their median: `-3/+12 %`."""
    centre = np.median(values)
    return f"{100 * (values.min() / centre - 1):+.0f}/{100 * (values.max() / centre - 1):+.0f} %"


def table_rows(name: str, imb: list[pd.DataFrame], kernel: list[pd.DataFrame]) -> list[str]:
    imb_us = pd.concat([t["t_max"] for t in imb], axis=1)  # (benchmark, bytes) x rounds
    mean_us = pd.concat([t["mean"] for t in kernel], axis=1)
    median_us = pd.concat([t["median"] for t in kernel], axis=1)
    lines = []
    for key in mean_us.index:
        benchmark, size = key
        if key not in imb_us.index:
            lines.append(f"| {name} | {benchmark} | {size} | (IMB: no result) |||||||")
            continue
        theirs, ours = imb_us.loc[key].to_numpy(), mean_us.loc[key].to_numpy()
        ratio = np.median(ours) / np.median(theirs)
        best = ours.min() / theirs.min()
        gap = ""
        if abs(ratio - 1) > GAP:
            overlap = ours.min() <= theirs.max() and theirs.min() <= ours.max()
            gap = "within spreads" if overlap else "OUTSIDE"
        lines.append(
            f"| {name} | {benchmark} | {size} | {np.median(theirs):.2f} | {spread(theirs)} | "
            f"{np.median(ours):.2f} | {spread(ours)} | "
            f"{np.median(median_us.loc[key].to_numpy()):.2f} | {ratio:.2f} | {best:.2f} | {gap} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--libraries",
        nargs="+",
        choices=sorted(MPI_LIBRARIES),
        default=list(reversed(MPI_LIBRARIES)),  # Intel MPI, whose IMB-MPI1 this is, first
    )
    parser.add_argument("--rounds", type=int, default=5, help="launches per side and library")
    parser.add_argument("--iter", type=int, default=200, help="timed repetitions per size")
    parser.add_argument("--max-log", type=int, default=20, help="largest size: 2^max-log B")
    parser.add_argument("--sync", default="dissemination", help="the kernel's sync column")
    parser.add_argument("--imb-source", type=Path, help="IMB's sources, built for Open MPI")
    args = parser.parse_args()
    print(
        f"imb_compare: {RANKS} ranks, {2**MIN_LOG} B to {2**args.max_log} B, {args.iter} "
        f"repetitions, {args.rounds} rounds, kernel sync {args.sync}, {os.cpu_count()} CPUs; "
        f"start {load()}",
        flush=True,
    )
    table = [
        "| library | IMB benchmark | bytes | IMB t_max µs | IMB spread | kernel mean µs | "
        "kernel spread | kernel median µs | kernel / IMB | best / best | gap > 10 % |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as workdir:
        work = Path(workdir)
        for name in args.libraries:
            mpi = MPI_LIBRARIES[name]
            if not mpi.available():
                print(f"{name}: not installed, left out")
                continue
            kernel = build_kernel(mpi)
            side = imb_side(mpi, kernel, args.imb_source, work)
            if side is None:
                print(f"{name}: no IMB-MPI1 for this library (--imb-source builds one), left out")
                continue
            imb: list[pd.DataFrame] = []
            ours: list[pd.DataFrame] = []
            for index in range(args.rounds):
                order = ("imb", "kernel") if index % 2 == 0 else ("kernel", "imb")
                for which in order:
                    before, start = load(), time.perf_counter()
                    if which == "imb":
                        imb.append(imb_launch(mpi, side, args))
                    else:
                        ours.append(kernel_launch(mpi, kernel, args, work, index))
                    seconds = time.perf_counter() - start
                    print(
                        f"{name} round {index} {which:6}: {seconds:.0f} s, {before} -> {load()}",
                        flush=True,
                    )
            table.extend(table_rows(name, imb, ours))
    print(f"end {load()}")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
