"""Synthetic campaign output in the kernel's on-disk format, for tests and benchmarks.

Writes grid.csv, the shuffled inputs (through inputs.py, as the workflow does), raw outputs with
lognormal noise around a chosen typical time per experiment, and the provenance JSON beside
each raw file, with exactly the keys store/provenance.py checks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import RAW_COLUMNS
from mpiguide.core.paths import deployment_name, run_number
from mpiguide.plan.grid import COLUMNS, INTEGER_PARAMETERS, PARAMETERS, write_grid
from mpiguide.plan.inputs import write_run_input
from mpiguide.store import provenance as run_provenance


@dataclass(frozen=True)
class Deployment:
    mpi: str
    nodes: int
    ppn: int

    @property
    def path(self) -> str:
        return f"{self.mpi}/{deployment_name(self.nodes, self.ppn)}"


def grid_frame(rows: Sequence[dict], exp_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """A grid as build_grid returns it, from rows of parameters (None or left out = not
    applicable)."""
    grid = pd.DataFrame(list(rows)).reindex(columns=list(PARAMETERS))
    grid["exp_id"] = np.arange(len(grid)) if exp_ids is None else np.asarray(exp_ids)
    dtypes = {p: "Int64" for p in INTEGER_PARAMETERS} | {"max_time": "float64"}
    return grid.astype(dtypes)[list(COLUMNS)]


def neighbor_grid() -> pd.DataFrame:
    """A grid of neighbor_allgather and neighbor_alltoall on a 1-D Cartesian topology, reorder 0
    and 1, at 64, 1024 and 16384 bytes: the figures' tests plant effects in it."""
    rows = [
        dict(op=op, msg_size=size, dtype="char", nrep=10, work=None, topology="cart", ndim=1,
             nfin=0, radius=None, ordering=None, constructor="cart", reorder=reorder, root=None,
             sync="dissemination", max_time=0.0)
        for op in ("neighbor_allgather", "neighbor_alltoall")
        for reorder in (0, 1)
        for size in (64, 1024, 16384)
    ]  # fmt: skip
    return grid_frame(rows)


def run_name(run: int) -> str:
    return f"run{run_number(run)}"


def write_raw_run(
    raw_csv: Path, input_csv: Path, nprocs: int, exp_ids: np.ndarray, times: np.ndarray
) -> None:
    """One raw output (exp_id, rep, time_s) and its provenance, for times (experiments, reps).

    The bytes are the kernel's (src/kernel/io/output.c): its header and "%lld,%d,%.9e" rows, so
    that parsing them costs what parsing a real run costs.
    """
    n_exp, n_rep = times.shape
    rows = zip(np.repeat(exp_ids, n_rep).tolist(), np.tile(np.arange(n_rep), n_exp).tolist(),
               times.ravel().tolist(), strict=True)  # fmt: skip
    body = "".join([f"{exp_id},{rep},{time_s:.9e}\n" for exp_id, rep, time_s in rows])
    with atomic_path(raw_csv) as temporary:
        temporary.write_text(",".join(RAW_COLUMNS) + "\n" + body)
    provenance = {
        run_provenance.PROV_INPUT_SHA256: run_provenance.sha256_of(input_csv),
        run_provenance.PROV_NPROCS: nprocs,
        run_provenance.PROV_EXPERIMENTS: [
            {run_provenance.PROV_EXP_ID: int(e), run_provenance.PROV_REPS: n_rep} for e in exp_ids
        ],
        run_provenance.PROV_OUTPUT_SHA256: run_provenance.sha256_of(raw_csv),
    }
    with atomic_path(raw_csv.with_suffix(".json")) as temporary:
        temporary.write_text(json.dumps(provenance))


def write_campaign(
    root: Path,
    grid: pd.DataFrame,
    typical_s: np.ndarray,
    deployments: Sequence[Deployment],
    runs: int,
    sigma: float,
    seed: int,
) -> list[Path]:
    """grid.csv, inputs/ and raw/ below root; returns the raw CSV paths.

    Each repetition of experiment i takes typical_s[i] * exp(N(0, sigma)); all experiments
    share nrep = grid["nrep"].max() repetitions (grid rows should agree on nrep).
    """
    rng = np.random.default_rng(seed)
    write_grid(grid, str(root / "grid.csv"))
    exp_ids = grid["exp_id"].to_numpy()
    n_rep = int(grid["nrep"].max())
    raw_csvs = []
    for deployment in deployments:
        for run in range(runs):
            relative = Path(deployment.path) / f"{run_name(run)}.csv"
            input_csv = root / "inputs" / relative
            write_run_input(
                root / "grid.csv", seed, deployment.mpi, deployment.nodes, deployment.ppn, run,
                input_csv,
            )  # fmt: skip
            noise = rng.standard_normal((exp_ids.size, n_rep), dtype=np.float64) * sigma
            times = typical_s[:, None] * np.exp(noise)
            raw_csv = root / "raw" / relative
            write_raw_run(raw_csv, input_csv, deployment.nodes * deployment.ppn, exp_ids, times)
            raw_csvs.append(raw_csv)
    return raw_csvs
