"""Raw kernel output + grid.csv → timings.parquet and medians.parquet, with integrity checks.

Every raw file `raw/<mpi>/<nodes>x<ppn>/run<NN>.csv` is checked against its provenance JSON
(`run<NN>.json` beside it) and against the input it was measured from
(`inputs/<mpi>/<nodes>x<ppn>/run<NN>.csv`): the provenance's input checksum must match the
input file, its output checksum the raw file's bytes, every exp_id must belong to the input,
and each experiment must have exactly the repetitions the provenance says were done (≤ nrep;
== nrep when it had no time budget). No two raw files may hold the same bytes.

Raw files are read and checked a few at a time on worker threads (pyarrow's CSV reader and
sha256 release the GIL) while the main thread streams their timings into the Parquet file, so
memory stays bounded by a few runs however large the campaign is. Each run's Tukey-filtered
medians come from one matrix of its experiments by repetition number, sorted along its rows.
timings.parquet holds only the keys of a repetition and what was measured; the parameters of
an experiment are a join on exp_id with grid.csv (docs/analysis.md).
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import (
    BLOCK,
    BLOCK_ATTEMPT_COLUMN,
    GLOBAL_S,
    HEAP,
    HEAP_DEFAULT,
    INTERFERENCE_COLUMNS,
    PAGE_FAULT_VALUES,
    RAW_COLUMNS,
    STATUS,
    VALID,
)
from mpiguide.core.errors import DataError
from mpiguide.core.paths import BLOCK_RECORD_SUFFIX, RUN_PATH, block_path, deployment_name
from mpiguide.plan.grid import COLUMNS, INTEGER_PARAMETERS, PARAMETERS
from mpiguide.store.tukey import tukey_row_medians

# Types of the grid.csv columns: integers, max_time in (fractional) seconds, the rest strings.
FLOAT_PARAMETERS = ("max_time",)
STRING_PARAMETERS = tuple(
    p for p in PARAMETERS if p not in INTEGER_PARAMETERS and p not in FLOAT_PARAMETERS
)
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
# Block record keys (written by mpiguide.campaign.blocks, `blocks/<nodes>x<ppn>/run<NN>.json`).
BLOCK_LAUNCHES = "launches"
BLOCK_ATTEMPT = "attempt"
BLOCK_INTERFERENCE = "interference"


_CATEGORY = pa.dictionary(pa.int32(), pa.string())
# Runs are collected into row groups of about this many rows: one row group per (small) run
# file makes reading the whole file several times slower (figures: docs/analysis.md §6).
ROW_GROUP_ROWS = 1 << 20
# Raw files being read ahead of the Parquet writer: enough to keep both cores busy, few
# enough to bound memory.
READ_AHEAD = 2 * (os.cpu_count() or 1)

_log = logging.getLogger(__name__)


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
class BlockLaunch:
    """Where a run was launched: its block (empty: its own job) and the block's attempt
    (0: no block), and the interference its block record measured (NaN: unknown)."""

    block: str = ""
    attempt: int = 0
    interference: tuple[float, ...] = (np.nan,) * len(INTERFERENCE_COLUMNS)


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return np.nan
    return float(value)


def read_block_launches(runs: Sequence[RunFile], blocks_root: Path | None) -> list[BlockLaunch]:
    """Per run, its block and attempt from `blocks_root/<nodes>x<ppn>/run<NN>.json` when that
    record exists. DataError on a record that is not JSON or does not list the run's entry with
    a positive integer attempt."""
    launches = []
    records: dict[Path, dict] = {}
    for run in runs:
        if blocks_root is None:
            launches.append(BlockLaunch())
            continue
        name = block_path(run.nodes, run.ppn, run.run)
        path = blocks_root / f"{name}{BLOCK_RECORD_SUFFIX}"
        if path not in records:
            try:
                records[path] = json.loads(path.read_text())
            except FileNotFoundError:
                records[path] = {}
            except (OSError, ValueError) as error:
                raise DataError(f"{path}: not a readable block record: {error}") from None
        record = records[path]
        if not record:
            launches.append(BlockLaunch())
            continue
        listed = record.get(BLOCK_LAUNCHES) if isinstance(record, dict) else None
        launch = listed.get(run.mpi) if isinstance(listed, dict) else None
        launch = launch if isinstance(launch, dict) else {}
        attempt = launch.get(BLOCK_ATTEMPT)
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise DataError(
                f"{path}: '{BLOCK_LAUNCHES}' must hold entry {run.mpi!r} with a positive integer "
                f"'{BLOCK_ATTEMPT}' (the block record of {run.raw_csv})"
            )
        measured = launch.get(BLOCK_INTERFERENCE)
        measured = measured if isinstance(measured, dict) else {}
        loadavg = measured.get("loadavg_before")
        values = (
            _number(loadavg[0]) if isinstance(loadavg, list) and loadavg else np.nan,
            _number(measured.get("other_cpu_fraction")),
            _number(measured.get("steal_s")),
        )
        launches.append(BlockLaunch(name, attempt, values))
    return launches


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


def read_grid(grid_csv: str | Path) -> pa.Table:
    """grid.csv as an Arrow table: strings as dictionaries, empty cells as nulls."""
    grid_csv = Path(grid_csv)
    column_types = {"exp_id": pa.int64()}
    column_types |= {name: _CATEGORY for name in STRING_PARAMETERS}
    column_types |= {name: pa.int64() for name in INTEGER_PARAMETERS}
    column_types |= {name: pa.float64() for name in FLOAT_PARAMETERS}
    if not grid_csv.is_file():
        raise DataError(f"{grid_csv}: no such file (written by `mpiguide grid`)")
    try:
        grid = pacsv.read_csv(
            grid_csv,
            convert_options=pacsv.ConvertOptions(
                column_types=column_types, strings_can_be_null=True
            ),
        )
    except (pa.ArrowInvalid, OSError) as error:
        raise DataError(f"{grid_csv}: cannot read the grid: {error}") from None
    missing = [name for name in COLUMNS if name not in grid.column_names]
    if missing:
        raise DataError(
            f"{grid_csv}: no column {', '.join(missing)} (grid.csv is written by `mpiguide grid`)"
        )
    exp_ids = grid["exp_id"].to_numpy()
    if grid["exp_id"].null_count or exp_ids.min(initial=0) < 0:
        raise DataError(f"{grid_csv}: exp_id must be a non-negative integer on every row")
    if np.unique(exp_ids).size != exp_ids.size:
        raise DataError(f"{grid_csv}: exp_id values are not unique")
    return grid


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_provenance(run: RunFile, grid_rows: np.ndarray, grid: pa.Table) -> Provenance:
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
    rows = _grid_rows_of(exp_ids, grid_rows)
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


def _header_of(first_line: bytes) -> list[str]:
    return next(csv.reader([first_line.decode("utf-8", errors="replace").strip()]), [])


def _raw_header(raw_csv: Path) -> list[str]:
    """The column names of a raw file (its first line)."""
    try:
        with raw_csv.open("rb") as stream:
            return _header_of(stream.readline())
    except OSError as error:
        raise DataError(f"{raw_csv}: not readable: {error.strerror}") from None


def _read_raw(run: RunFile, data: bytes) -> pa.Table:
    """The raw file's bytes as a table: exp_id, rep, time_s, status (all VALID when the file
    has none) and global_s when the file has it. DataError on a bad header or empty cells."""
    end_of_header = data.find(b"\n")
    header = _header_of(data if end_of_header < 0 else data[:end_of_header])
    if tuple(header[: len(RAW_COLUMNS)]) != RAW_COLUMNS:
        raise DataError(
            f"{run.raw_csv}: header must start with {','.join(RAW_COLUMNS)}, got {','.join(header)}"
        )
    column_types = {"exp_id": pa.int64(), "rep": pa.int64(), "time_s": pa.float64()}
    column_types |= {STATUS: _CATEGORY, GLOBAL_S: pa.float64()}
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            convert_options=pacsv.ConvertOptions(
                column_types=column_types,
                include_columns=[c for c in column_types if c in header],
            ),
        )
    except (pa.ArrowInvalid, OSError) as error:
        raise DataError(f"{run.raw_csv}: not a readable kernel output: {error}") from None
    valid = _valid_mask(table)
    for name in RAW_COLUMNS:
        # An invalid repetition may lack a time (the kernel could not measure it).
        missing = table[name].is_null().to_numpy(zero_copy_only=False)
        if name == "time_s":
            missing &= valid
        if missing.any():
            line = int(np.flatnonzero(missing)[0])
            raise DataError(f"{run.raw_csv}:{line + 2}: {name} is empty or not a number")
    if STATUS not in table.column_names:
        table = table.append_column(STATUS, _constant(VALID, table.num_rows, category=True))
    return table


def _valid_mask(raw: pa.Table) -> np.ndarray:
    if STATUS not in raw.column_names:
        return np.ones(raw.num_rows, dtype=bool)
    status = raw[STATUS].combine_chunks()
    valid_code = status.dictionary.index(VALID).as_py()
    return status.indices.to_numpy(zero_copy_only=False) == valid_code


def _grid_rows_of(exp_ids: np.ndarray, grid_rows: np.ndarray) -> np.ndarray:
    """Grid row of each exp_id through the lookup array `grid_rows`; -1 for unknown ids."""
    in_range = (exp_ids >= 0) & (exp_ids < grid_rows.size)
    return np.where(in_range, grid_rows[np.clip(exp_ids, 0, grid_rows.size - 1)], -1)


def _check_rows(
    run: RunFile,
    raw: pa.Table,
    valid: np.ndarray,
    grid_rows: np.ndarray,
    grid: pa.Table,
    expected: np.ndarray,
) -> np.ndarray:
    """Grid row of every raw row. DataError on unknown exp_ids, missing or extra repetitions,
    repetition numbers other than 0 .. reps_done-1 once each, and times of valid repetitions
    that are not finite and non-negative."""
    exp_ids = raw["exp_id"].to_numpy()
    rows = _grid_rows_of(exp_ids, grid_rows)
    if (rows < 0).any():
        unknown = np.unique(exp_ids[rows < 0])[:5].tolist()
        raise DataError(f"{run.raw_csv}: exp_id not in grid.csv: {unknown}")
    counted = np.bincount(rows, minlength=expected.size)
    wrong = np.flatnonzero(counted != expected)
    if wrong.size:
        i = int(wrong[0])
        raise DataError(
            f"{run.raw_csv}: {wrong.size} experiment(s) with missing or extra rows, e.g. "
            f"exp_id {grid['exp_id'][i].as_py()} has {counted[i]} rows, its provenance "
            f"{run.provenance.name} says {expected[i]} repetitions were done"
        )
    reps = raw["rep"].to_numpy()
    in_range = (reps >= 0) & (reps < expected[rows])
    # (experiment, rep) pairs counted in a table of grid rows x nrep: O(n), unlike np.unique
    if not in_range.all() or np.bincount(rows * (expected.max() + 1) + reps).max() > 1:
        raise DataError(
            f"{run.raw_csv}: rep must number each experiment's repetitions 0 .. reps_done-1 "
            "once each"
        )
    times = raw["time_s"].to_numpy(zero_copy_only=False)
    bad_time = valid & ~(np.isfinite(times) & (times >= 0))
    if bad_time.any():
        line = int(np.flatnonzero(bad_time)[0]) + 2  # header is line 1
        raise DataError(f"{run.raw_csv}:{line}: time_s {times[line - 2]} is not a duration")
    return rows


def _constant(value: int | str, length: int, category: bool = False) -> pa.Array:
    if category:
        return pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(length, dtype=np.int32)), pa.array([value])
        )
    return pa.array(np.full(length, value, dtype=np.int32))


@dataclass(frozen=True)
class RunResult:
    """One checked run: its timings and its medians (without parameters and launch factor)."""

    timings: pa.Table
    medians: pd.DataFrame
    sha256: str


def _process_run(
    run: RunFile,
    provenance: Provenance,
    grid_rows: np.ndarray,
    grid: pa.Table,
    global_s: bool,
) -> RunResult:
    """Read, verify and check one raw file; its timings and its run medians."""
    try:
        data = run.raw_csv.read_bytes()
    except OSError as error:
        raise DataError(f"{run.raw_csv}: not readable: {error.strerror}") from None
    sha256 = hashlib.sha256(data).hexdigest()
    if provenance.output_sha256 is not None and sha256 != provenance.output_sha256:
        raise DataError(
            f"{run.raw_csv}: sha256 {sha256} differs from {PROV_OUTPUT_SHA256} "
            f"{provenance.output_sha256!r} of {run.provenance.name}: the file changed after "
            "the kernel wrote it"
        )
    raw = _read_raw(run, data)
    del data
    valid = _valid_mask(raw)
    rows = _check_rows(run, raw, valid, grid_rows, grid, provenance.repetitions)
    length = raw.num_rows
    columns = {
        "mpi": _constant(run.mpi, length, category=True),
        "nodes": _constant(run.nodes, length),
        "ppn": _constant(run.ppn, length),
        "run": _constant(run.run, length),
        "exp_id": raw["exp_id"].cast(pa.int32()),
        "rep": raw["rep"].cast(pa.int32()),
        "time_s": raw["time_s"],
        STATUS: raw[STATUS],
    }
    if global_s:
        columns[GLOBAL_S] = (
            raw[GLOBAL_S] if GLOBAL_S in raw.column_names else pa.nulls(length, pa.float64())
        )
    medians = _run_medians(run, rows, raw, valid, grid.num_rows)
    return RunResult(pa.table(columns), medians, sha256)


def _run_medians(
    run: RunFile, rows: np.ndarray, raw: pa.Table, valid: np.ndarray, n_grid: int
) -> pd.DataFrame:
    """Per experiment of the run with a valid repetition: grid row, Tukey-filtered median of
    its valid repetitions, how many it kept and how many were invalid."""
    reps = raw["rep"].to_numpy()
    times = raw["time_s"].to_numpy(zero_copy_only=False)
    count = np.bincount(rows[valid], minlength=n_grid)
    n_invalid = np.bincount(rows[~valid], minlength=n_grid)
    present = np.flatnonzero(count)
    unmeasured = np.flatnonzero((count == 0) & (n_invalid > 0))
    if unmeasured.size:
        _log.warning(
            "%s: %d experiment(s) without a valid repetition (e.g. grid row %d, %d invalid) "
            "have no median in this run",
            run.raw_csv, unmeasured.size, unmeasured[0], n_invalid[unmeasured[0]],
        )  # fmt: skip
    # The checks made (experiment, rep) unique, so the rep number is a column of the matrix.
    matrix = np.full((n_grid, int(reps.max(initial=0)) + 1), np.inf)
    matrix[rows[valid], reps[valid]] = times[valid]
    median, n_kept = tukey_row_medians(matrix[present], count[present])
    return pd.DataFrame(
        {"grid_row": present, "median_s": median, "n_kept": n_kept,
         "n_invalid": n_invalid[present]}
    )  # fmt: skip


def _processed_in_order(
    runs: Sequence[RunFile],
    provenances: Sequence[Provenance],
    grid_rows: np.ndarray,
    grid: pa.Table,
    global_s: bool,
):
    """RunResult of every run, in order, with up to READ_AHEAD runs read ahead on threads."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        pending: deque[Future[RunResult]] = deque()
        jobs = iter(zip(runs, provenances, strict=True))
        try:
            for run, provenance in jobs:
                pending.append(
                    pool.submit(_process_run, run, provenance, grid_rows, grid, global_s)
                )
                if len(pending) >= READ_AHEAD:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def aggregate(
    grid_csv: str | Path,
    raw_csvs: Sequence[str | Path],
    raw_root: str | Path,
    inputs_root: str | Path,
    timings_out: str | Path,
    medians_out: str | Path,
    blocks_root: str | Path | None = None,
) -> None:
    """Check every raw CSV; write timings and run medians (Parquet).

    timings: mpi, nodes, ppn, run, exp_id, rep, time_s, status (+ global_s when a raw file has
    it), one row per repetition; the parameters are grid.csv's row of the same exp_id.
    medians: exp_id, mpi, nodes, ppn, run, median_s, n_kept, n_invalid, launch_factor, the
    page faults (PAGE_FAULT_VALUES), block, block_attempt, the interference columns (from the
    block records below `blocks_root`), heap and the parameters (one row per experiment and run
    with a valid repetition, Tukey-filtered median of its valid repetitions).
    """
    raw_root, inputs_root = Path(raw_root), Path(inputs_root)
    runs = sorted(
        (locate_run(path, raw_root, inputs_root) for path in raw_csvs),
        key=lambda r: (r.mpi, r.nodes, r.ppn, r.run),
    )
    if not runs:
        raise DataError(f"{raw_root}: no raw output files to aggregate")
    grid = read_grid(grid_csv)
    grid_exp_ids = grid["exp_id"].to_numpy()
    if grid_exp_ids.max() > np.iinfo(np.int32).max:
        raise DataError(f"{grid_csv}: exp_id above {np.iinfo(np.int32).max}")
    grid_rows = np.full(int(grid_exp_ids.max()) + 1, -1, dtype=np.int64)
    grid_rows[grid_exp_ids] = np.arange(grid_exp_ids.size)

    # Provenance and checksums of every run first: a bad file fails before any work is done.
    provenances = [_read_provenance(run, grid_rows, grid) for run in runs]
    _check_heap(runs, provenances)
    blocks = read_block_launches(runs, None if blocks_root is None else Path(blocks_root))
    unverified = [run for run, p in zip(runs, provenances, strict=True) if p.output_sha256 is None]
    if unverified:
        _log.warning(
            "%d raw file(s) have no '%s' in their provenance (written by an older kernel), "
            "e.g. %s: their bytes are not verified, only checked for duplicates",
            len(unverified), PROV_OUTPUT_SHA256, unverified[0].provenance,
        )  # fmt: skip
    global_s = any(GLOBAL_S in _raw_header(run.raw_csv) for run in runs)
    run_medians: list[pd.DataFrame] = []
    seen: dict[str, Path] = {}
    pending: list[pa.Table] = []
    with atomic_path(timings_out) as timings_tmp:
        writer: pq.ParquetWriter | None = None
        try:
            results = _processed_in_order(runs, provenances, grid_rows, grid, global_s)
            for index, (run, result) in enumerate(zip(runs, results, strict=True)):
                if result.sha256 in seen:
                    raise DataError(
                        f"{run.raw_csv}: same bytes (sha256 {result.sha256}) as "
                        f"{seen[result.sha256]}: one run's output given twice"
                    )
                seen[result.sha256] = run.raw_csv
                run_medians.append(result.medians.assign(run_index=index))
                pending.append(result.timings)
                if sum(t.num_rows for t in pending) >= ROW_GROUP_ROWS or run is runs[-1]:
                    batch = pa.concat_tables(pending)
                    if writer is None:
                        # Measured times repeat no value: dictionary-encoding them only costs.
                        exact = ("time_s", GLOBAL_S)
                        dictionary = [c for c in batch.column_names if c not in exact]
                        writer = pq.ParquetWriter(
                            timings_tmp, batch.schema, use_dictionary=dictionary
                        )
                    writer.write_table(batch, row_group_size=ROW_GROUP_ROWS)
                    pending.clear()
        finally:
            if writer is not None:
                writer.close()
        medians = _medians_table(
            runs, provenances, blocks, pd.concat(run_medians, ignore_index=True), grid
        )
        with atomic_path(medians_out) as medians_tmp:
            pq.write_table(medians, medians_tmp)


def launch_factors(deployment: np.ndarray, experiment: np.ndarray, run: np.ndarray,
                   median: np.ndarray) -> np.ndarray:  # fmt: skip
    """Per median, the launch factor of its run: the median over the run's experiments of
    (the experiment's run median / the median over all runs of that experiment's run
    medians). Runs are numbered across deployments; experiments within one."""
    frame = pd.DataFrame({"d": deployment, "e": experiment, "r": run, "m": median})
    typical = frame.groupby(["d", "e"], sort=False)["m"].transform("median")
    relative = frame["m"] / typical
    return relative.groupby(frame["r"], sort=False).transform("median").to_numpy()


def _page_fault_columns(
    provenances: Sequence[Provenance], index: np.ndarray, grid_rows: np.ndarray
) -> dict[str, pa.Array]:
    """PAGE_FAULT_VALUES of each median: its run's counts of its experiment, null where the
    run's kernel did not count them."""
    columns = {}
    for column in PAGE_FAULT_VALUES:
        values = np.zeros(index.size, dtype=np.int64)
        missing = np.zeros(index.size, dtype=bool)
        for run_index, provenance in enumerate(provenances):
            mine = index == run_index
            if provenance.page_faults is None:
                missing[mine] = True
            else:
                values[mine] = provenance.page_faults[column][grid_rows[mine]]
        columns[column] = pa.array(values, mask=missing)
    return columns


def _check_heap(runs: Sequence[RunFile], provenances: Sequence[Provenance]) -> None:
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


def _medians_table(
    runs: Sequence[RunFile],
    provenances: Sequence[Provenance],
    blocks: Sequence[BlockLaunch],
    medians: pd.DataFrame,
    grid: pa.Table,
) -> pa.Table:
    """medians.parquet: exp_id, the run's keys, MEDIAN_VALUES (page faults and block columns
    included), heap, the parameters."""
    index = medians["run_index"].to_numpy()
    grid_row = pa.array(medians["grid_row"].to_numpy())
    deployments = pd.factorize(pd.Series([(r.mpi, r.nodes, r.ppn) for r in runs]))[0]
    mpi_names, mpi_codes = np.unique([r.mpi for r in runs], return_inverse=True)
    columns = {
        "exp_id": grid["exp_id"].take(grid_row),
        "mpi": pa.DictionaryArray.from_arrays(
            pa.array(mpi_codes.astype(np.int32)[index]), pa.array(mpi_names)
        ),
        "nodes": pa.array(np.array([r.nodes for r in runs], dtype=np.int64)[index]),
        "ppn": pa.array(np.array([r.ppn for r in runs], dtype=np.int64)[index]),
        "run": pa.array(np.array([r.run for r in runs], dtype=np.int64)[index]),
        "median_s": pa.array(medians["median_s"].to_numpy()),
        "n_kept": pa.array(medians["n_kept"].to_numpy()),
        "n_invalid": pa.array(medians["n_invalid"].to_numpy()),
        "launch_factor": pa.array(
            launch_factors(
                deployments[index],
                medians["grid_row"].to_numpy(),
                index,
                medians["median_s"].to_numpy(),
            )
        ),
    }
    columns |= _page_fault_columns(provenances, index, medians["grid_row"].to_numpy())
    block_names, block_codes = np.unique([b.block for b in blocks], return_inverse=True)
    columns[BLOCK] = pa.DictionaryArray.from_arrays(
        pa.array(block_codes.astype(np.int32)[index]), pa.array(block_names)
    )
    columns[BLOCK_ATTEMPT_COLUMN] = pa.array(
        np.array([b.attempt for b in blocks], dtype=np.int64)[index]
    )
    interference = np.array([b.interference for b in blocks], dtype=np.float64)
    interference = interference.reshape(len(blocks), len(INTERFERENCE_COLUMNS))
    for position, name in enumerate(INTERFERENCE_COLUMNS):
        columns[name] = pa.array(interference[index, position])
    heap_names, heap_codes = np.unique([p.heap for p in provenances], return_inverse=True)
    columns[HEAP] = pa.DictionaryArray.from_arrays(
        pa.array(heap_codes.astype(np.int32)[index]), pa.array(heap_names)
    )
    parameters = grid.drop_columns(["exp_id"]).take(grid_row)
    columns |= {name: parameters[name] for name in parameters.column_names}
    return pa.table(columns)
