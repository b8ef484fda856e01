"""Slow launches: how much one launch of the kernel differs from the next, per launcher setting.

Runs the kernel `--launches` times per setting (Open MPI with its default binding, bound to
cores, unbound, unbound and yielding when idle; MPICH's default), each launch over the same
small input (allgather and alltoall of 8 B to 8 KiB, 2 ranks). Per launch it reports the launch
factor as medians.parquet defines it: the median over the launch's experiments of (the
experiment's median in this launch / its median over the setting's launches); 1.0 is a typical
launch, 2.0 a launch in which everything took twice as long. And the CPUs each rank was allowed
to run on (the provenance's `ranks`), which shows the binding.

Per setting it prints the typical time (median over launches and experiments, µs), the spread of
the launch factors, the share of launches at least 1.5x a typical one, and the CPU sets seen.
Usage: python benchmarks/launch_effects.py [--launches 12] [--openmpi BIN] [--mpich BIN]
(the kernels: make -C src/kernel MPICC=mpicc.openmpi BUILD=build/openmpi, and mpich likewise)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _common import REPO

OPENMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# name -> (library, launcher words, extra environment)
SETTINGS: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "openmpi default": ("openmpi", ["mpirun.openmpi"], {}),
    "openmpi --bind-to core": ("openmpi", ["mpirun.openmpi", "--bind-to", "core"], {}),
    "openmpi --bind-to none": ("openmpi", ["mpirun.openmpi", "--bind-to", "none"], {}),
    "openmpi --bind-to none, yield_when_idle": (
        "openmpi",
        ["mpirun.openmpi", "--bind-to", "none"],
        {"OMPI_MCA_mpi_yield_when_idle": "1"},
    ),
    "mpich default": ("mpich", ["mpiexec.mpich"], {}),
}
COLUMNS = "exp_id,op,msg_size,dtype,nrep,topology,sync"
NREP = 200


def write_input(path: Path) -> None:
    rows = [
        f"{exp_id},{op},{size},char,{NREP},none,dissemination"
        for exp_id, (op, size) in enumerate(
            (op, size) for op in ("allgather", "alltoall") for size in (8, 64, 512, 4096, 8192)
        )
    ]
    path.write_text("\n".join([COLUMNS, *rows]) + "\n")


def launch(binary: Path, words: list[str], env: dict[str, str], infile: Path, out: Path):
    command = [*words, "-n", "2", str(binary), "--nprocs", "2", str(infile), str(out)]
    result = subprocess.run(
        command, env={**os.environ, **env}, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    times = pd.read_csv(out)
    medians = times.groupby("exp_id")["time_s"].median()
    provenance = json.loads(out.with_suffix(".json").read_text())
    cpus = "|".join(",".join(map(str, rank["cpus"] or ["?"])) for rank in provenance["ranks"])
    return medians, cpus


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=12)
    parser.add_argument("--openmpi", type=Path, default=REPO / "build/openmpi/mpiguide-bench")
    parser.add_argument("--mpich", type=Path, default=REPO / "build/mpich/mpiguide-bench")
    args = parser.parse_args()
    binaries = {"openmpi": args.openmpi, "mpich": args.mpich}
    with tempfile.TemporaryDirectory() as workdir:
        infile = Path(workdir) / "in.csv"
        write_input(infile)
        print(f"{args.launches} launches per setting, 2 ranks, {os.cpu_count()} CPUs")
        print(
            f"{'setting':42} {'typical µs':>10} {'factor p10':>10} {'median':>7} "
            f"{'p90':>6} {'max':>6} {'≥1.5x':>6}  rank CPUs"
        )
        for name, (library, words, extra) in SETTINGS.items():
            env = {**(OPENMPI_ENV if library == "openmpi" else {}), **extra}
            runs, cpu_sets = [], set()
            for index in range(args.launches):
                out = Path(workdir) / f"out{index}.csv"
                medians, cpus = launch(binaries[library], words, env, infile, out)
                runs.append(medians)
                cpu_sets.add(cpus)
            medians = pd.concat(runs, axis=1)  # experiments x launches
            relative = medians.div(medians.median(axis=1), axis=0)
            factor = relative.median(axis=0).to_numpy()
            p10, p50, p90 = np.percentile(factor, [10, 50, 90])
            print(
                f"{name:42} {1e6 * np.median(medians.to_numpy()):10.2f} {p10:10.2f} {p50:7.2f} "
                f"{p90:6.2f} {factor.max():6.2f} {np.mean(factor >= 1.5):6.0%}  "
                f"{' '.join(sorted(cpu_sets))}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
