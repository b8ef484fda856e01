"""One run's raw kernel output read and checked against its provenance, and its timings and
Tukey-filtered run medians.

The raw file's bytes must be those the provenance's output checksum names, each experiment must
have exactly the repetitions the provenance says were done, numbered 0 .. reps_done-1, and every
valid repetition a duration. Raw files are read and checked a few at a time on worker threads
(pyarrow's CSV reader and sha256 release the GIL), in order, so that the caller can stream them
with memory bounded by a few runs. Each run's medians come from one matrix of its experiments by
repetition number, sorted along its rows.
"""

from __future__ import annotations

import csv
import hashlib
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

from mpiguide.core.columns import GLOBAL_S, RAW_COLUMNS, STATUS, VALID
from mpiguide.core.errors import DataError
from mpiguide.store.provenance import PROV_OUTPUT_SHA256, Provenance, RunFile, grid_rows_of
from mpiguide.store.tukey import tukey_row_medians

CATEGORY = pa.dictionary(pa.int32(), pa.string())
# Raw files being read ahead of the Parquet writer: enough to keep both cores busy, few
# enough to bound memory.
READ_AHEAD = 2 * (os.cpu_count() or 1)

_log = logging.getLogger(__name__)


def _header_of(first_line: bytes) -> list[str]:
    return next(csv.reader([first_line.decode("utf-8", errors="replace").strip()]), [])


def raw_header(raw_csv: Path) -> list[str]:
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
    column_types |= {STATUS: CATEGORY, GLOBAL_S: pa.float64()}
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
    rows = grid_rows_of(exp_ids, grid_rows)
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


def processed_in_order(
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
