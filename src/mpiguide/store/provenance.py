"""A run's raw file located in the campaign, and its provenance checked against the input it was
measured from and against grid.csv.

The provenance JSON (`run<NN>.json` beside `raw/<mpi>/<nodes>x<ppn>/run<NN>.csv`) must name the
checksum of the input (`inputs/<mpi>/<nodes>x<ppn>/run<NN>.csv`), the deployment's number of
processes, and per experiment of the grid the repetitions done (≤ nrep; == nrep when it had no
time budget, every chunk of an interleaved experiment once); an mpi entry's runs share one
allocator setting.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from mpiguide.core.columns import HEAP_DEFAULT, PAGE_FAULT_VALUES
from mpiguide.core.errors import DataError
from mpiguide.core.paths import RUN_PATH, deployment_name

# Provenance keys (written by the kernel, src/kernel/io/output.c).
PROV_INPUT_SHA256 = "input_sha256"
PROV_OUTPUT_SHA256 = "output_sha256"
PROV_NPROCS = "nprocs"
PROV_EXPERIMENTS = "experiments"
PROV_EXP_ID = "exp_id"
PROV_REPS = "reps_done"
# An interleaved experiment has one entry per chunk (written only when interleave > 1).
PROV_INTERLEAVE = "interleave"
PROV_CHUNK = "chunk"
PROV_HEAP = "heap"  # {"setting": ...}: the launch's --heap
PROV_PAGE_FAULTS = "page_faults"  # per experiment: {"minor_max", "minor_sum", ...}
# medians.parquet's page-fault column of each provenance key
PAGE_FAULT_KEYS = dict(
    zip(("minor_max", "minor_sum", "major_max", "major_sum"), PAGE_FAULT_VALUES, strict=True)
)


@dataclass(frozen=True)
class RunFile:
    """One raw output file and where it sits in the campaign."""

    raw_csv: Path
    provenance: Path
    input_csv: Path
    mpi: str
    nodes: int
    ppn: int
    run: int


@dataclass(frozen=True)
class Provenance:
    """What a run's provenance promises about its raw file."""

    repetitions: np.ndarray  # repetitions done per grid row (0: not in this run)
    output_sha256: str | None  # None: written by a kernel that did not record it
    heap: str  # the launch's allocator setting
    # per PAGE_FAULT_VALUES column, per grid row; None: a kernel that did not count them
    page_faults: dict[str, np.ndarray] | None


def locate_run(raw_csv: str | Path, raw_root: Path, inputs_root: Path) -> RunFile:
    """Parse `<mpi>/<nodes>x<ppn>/run<NN>.csv` below `raw_root`; name the provenance and input."""
    raw_csv = Path(raw_csv)
    try:
        relative = raw_csv.resolve().relative_to(raw_root.resolve()).as_posix()
    except ValueError:
        raise DataError(f"{raw_csv}: not below the raw directory {raw_root}") from None
    match = RUN_PATH.match(relative.removesuffix(".csv")) if relative.endswith(".csv") else None
    if match is None:
        raise DataError(
            f"{raw_csv}: path below {raw_root} must be <mpi>/<nodes>x<ppn>/run<NN>.csv, "
            f"got {relative}"
        )
    return RunFile(
        raw_csv=raw_csv,
        provenance=raw_csv.with_suffix(".json"),
        input_csv=inputs_root / relative,
        mpi=match["mpi"],
        nodes=int(match["nodes"]),
        ppn=int(match["ppn"]),
        run=int(match["run"]),
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_provenance(run: RunFile, grid_rows: np.ndarray, grid: pa.Table) -> Provenance:
    """Repetitions per grid row the provenance says were done, and the output checksum.

    Checks the provenance against its input file and against nrep/max_time of the grid.
    """
    try:
        provenance = json.loads(run.provenance.read_text())
    except FileNotFoundError:
        raise DataError(f"{run.provenance}: provenance missing for {run.raw_csv}") from None
    except (OSError, ValueError) as error:  # ValueError: JSONDecodeError, UnicodeDecodeError
        raise DataError(f"{run.provenance}: not readable JSON: {error}") from None
    if not isinstance(provenance, dict):
        raise DataError(f"{run.provenance}: must be a JSON object (the kernel's provenance)")
    for key in (PROV_INPUT_SHA256, PROV_NPROCS, PROV_EXPERIMENTS):
        if key not in provenance:
            raise DataError(f"{run.provenance}: key '{key}' missing")
    output_sha256 = provenance.get(PROV_OUTPUT_SHA256)
    if output_sha256 is not None and not isinstance(output_sha256, str):
        raise DataError(f"{run.provenance}: '{PROV_OUTPUT_SHA256}' must be a hex string")
    if not run.input_csv.is_file():
        raise DataError(f"{run.provenance}: its input {run.input_csv} does not exist")
    actual_sha = sha256_of(run.input_csv)
    if provenance[PROV_INPUT_SHA256] != actual_sha:
        raise DataError(
            f"{run.provenance}: {PROV_INPUT_SHA256} {provenance[PROV_INPUT_SHA256]!r} does not "
            f"match {run.input_csv} (sha256 {actual_sha}): the raw output was not measured "
            "from this input"
        )
    if provenance[PROV_NPROCS] != run.nodes * run.ppn:
        raise DataError(
            f"{run.provenance}: {PROV_NPROCS} is {provenance[PROV_NPROCS]!r}, the deployment "
            f"{deployment_name(run.nodes, run.ppn)} in its path needs {run.nodes * run.ppn}"
        )
    experiments = provenance[PROV_EXPERIMENTS]
    try:
        exp_ids = np.array([int(entry[PROV_EXP_ID]) for entry in experiments], dtype=np.int64)
        reps = np.array([int(entry[PROV_REPS]) for entry in experiments], dtype=np.int64)
        chunks = np.array([int(entry.get(PROV_CHUNK, 0)) for entry in experiments], dtype=np.int64)
        parts = np.array(
            [int(entry.get(PROV_INTERLEAVE, 1)) for entry in experiments], dtype=np.int64
        )
    except (TypeError, KeyError, ValueError, AttributeError):
        raise DataError(
            f"{run.provenance}: '{PROV_EXPERIMENTS}' must be a list of objects with integer "
            f"'{PROV_EXP_ID}' and '{PROV_REPS}'"
        ) from None
    rows = grid_rows_of(exp_ids, grid_rows)
    if (rows < 0).any():
        unknown = exp_ids[rows < 0][:5].tolist()
        raise DataError(f"{run.provenance}: experiments not in grid.csv: exp_id {unknown}")
    expected = _repetitions(run, exp_ids, rows, reps, chunks, parts, grid)
    return Provenance(
        expected,
        output_sha256,
        _heap_of(run, provenance),
        _page_faults(run, experiments, rows, grid.num_rows),
    )


def _repetitions(
    run: RunFile,
    exp_ids: np.ndarray,
    rows: np.ndarray,
    reps: np.ndarray,
    chunks: np.ndarray,
    parts: np.ndarray,
    grid: pa.Table,
) -> np.ndarray:
    """Repetitions done per grid row: the sum over the chunks of its provenance entries (one
    entry, chunk 0 of 1, when it is not interleaved). DataError unless every experiment has
    each chunk of the grid's interleave once, and reps ≤ nrep (== nrep without a budget)."""
    # An empty cell is the kernel's default, one chunk.
    interleave = grid["interleave"].fill_null(1).to_numpy()
    planned = interleave[rows]
    wrong = (parts != planned) | (chunks < 0) | (chunks >= parts) | (reps < 0)
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise DataError(
            f"{run.provenance}: exp_id {exp_ids[i]} lists chunk {chunks[i]} of interleave "
            f"{parts[i]} with {reps[i]} repetitions; grid.csv plans interleave {planned[i]}"
        )
    # (grid row, chunk) pairs counted in a table of grid rows x chunks, as the raw rows are
    if np.bincount(rows * (planned.max(initial=0) + 1) + chunks).max(initial=0) > 1:
        raise DataError(
            f"{run.provenance}: an exp_id is listed twice in '{PROV_EXPERIMENTS}' (with the "
            "same chunk)"
        )
    listed = np.bincount(rows, minlength=grid.num_rows)
    incomplete = np.flatnonzero((listed > 0) & (listed != interleave))
    if incomplete.size:
        i = int(incomplete[0])
        raise DataError(
            f"{run.provenance}: exp_id {grid['exp_id'][i].as_py()} has {listed[i]} of its "
            f"{interleave[i]} chunks in '{PROV_EXPERIMENTS}'"
        )
    done = np.bincount(rows, weights=reps, minlength=grid.num_rows).astype(np.int64)
    nrep = grid["nrep"].to_numpy(zero_copy_only=False)
    no_budget = np.nan_to_num(grid["max_time"].to_numpy(zero_copy_only=False)) == 0
    bad = (listed > 0) & ((done > nrep) | (no_budget & (done != nrep)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{run.provenance}: exp_id {grid['exp_id'][i].as_py()} reports {done[i]} "
            f"repetitions, its nrep is {nrep[i]}"
            f"{' and it had no time budget' if no_budget[i] else ''}"
        )
    return done


def _heap_of(run: RunFile, provenance: dict) -> str:
    """The launch's allocator setting; `default` from a kernel without --heap (glibc's own)."""
    heap = provenance.get(PROV_HEAP)
    if heap is None:
        return HEAP_DEFAULT
    setting = heap.get("setting") if isinstance(heap, dict) else None
    if not isinstance(setting, str) or not setting:
        raise DataError(f"{run.provenance}: '{PROV_HEAP}' must be an object with a 'setting'")
    return setting


def _page_faults(
    run: RunFile, experiments: list, rows: np.ndarray, n_grid: int
) -> dict[str, np.ndarray] | None:
    """Page-fault counts per grid row, or None when the kernel did not record them. Over the
    chunks of an interleaved experiment: the sums (over ranks) summed, the most of one rank the
    largest of one chunk."""
    if not experiments or PROV_PAGE_FAULTS not in experiments[0]:
        return None
    counts = {column: np.zeros(n_grid, dtype=np.int64) for column in PAGE_FAULT_VALUES}
    try:
        for row, entry in zip(rows, experiments, strict=True):
            for key, column in PAGE_FAULT_KEYS.items():
                value = entry[PROV_PAGE_FAULTS][key]
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise ValueError
                if key.endswith("_sum"):
                    counts[column][row] += value
                else:
                    counts[column][row] = max(counts[column][row], value)
    except (TypeError, KeyError, ValueError):
        raise DataError(
            f"{run.provenance}: every experiment's '{PROV_PAGE_FAULTS}' must hold non-negative "
            f"integers {', '.join(PAGE_FAULT_KEYS)}"
        ) from None
    return counts


def grid_rows_of(exp_ids: np.ndarray, grid_rows: np.ndarray) -> np.ndarray:
    """Grid row of each exp_id through the lookup array `grid_rows`; -1 for unknown ids."""
    in_range = (exp_ids >= 0) & (exp_ids < grid_rows.size)
    return np.where(in_range, grid_rows[np.clip(exp_ids, 0, grid_rows.size - 1)], -1)


def check_heap(runs: Sequence[RunFile], provenances: Sequence[Provenance]) -> None:
    """Every run of an mpi entry has the entry's one allocator setting."""
    first: dict[str, tuple[str, RunFile]] = {}
    for run, provenance in zip(runs, provenances, strict=True):
        heap, seen = first.setdefault(run.mpi, (provenance.heap, run))
        if provenance.heap != heap:
            raise DataError(
                f"{run.provenance}: heap {provenance.heap!r}, but {seen.provenance} of the same "
                f"mpi entry {run.mpi!r} has {heap!r}: an entry's runs must share one setting "
                "(re-run them all after changing mpi.<entry>.heap)"
            )
