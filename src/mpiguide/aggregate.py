"""Raw kernel output + grid.csv → timings.parquet and medians.parquet, with integrity checks.

Every raw file `raw/<mpi>/<nodes>x<ppn>/run<NN>.csv` is checked against its provenance JSON
(`run<NN>.json` beside it) and against the input it was measured from
(`inputs/<mpi>/<nodes>x<ppn>/run<NN>.csv`): the provenance's input checksum must match the
input file, every exp_id must belong to the input, and each experiment must have exactly the
repetitions the provenance says were done (≤ nrep; == nrep when it had no time budget).

The files are processed one at a time and streamed into the timings Parquet file in row groups
of about a million rows, so memory stays bounded however large the campaign is.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from mpiguide.atomic import atomic_path
from mpiguide.errors import DataError
from mpiguide.grid import INTEGER_PARAMETERS, PARAMETERS
from mpiguide.stats import tukey_medians

# Types of the grid.csv columns: integers, max_time in (fractional) seconds, the rest strings.
FLOAT_PARAMETERS = ("max_time",)
STRING_PARAMETERS = tuple(
    p for p in PARAMETERS if p not in INTEGER_PARAMETERS and p not in FLOAT_PARAMETERS
)
RAW_COLUMNS = ("exp_id", "rep", "time_s")

# Provenance keys (written by the kernel, src/kernel/output.c).
PROV_INPUT_SHA256 = "input_sha256"
PROV_NPROCS = "nprocs"
PROV_EXPERIMENTS = "experiments"
PROV_EXP_ID = "exp_id"
PROV_REPS = "reps_done"

_RAW_PATH = re.compile(
    r"^(?P<mpi>[^/]+)/(?P<nodes>[0-9]+)x(?P<ppn>[0-9]+)/run(?P<run>[0-9]{2,})\.csv$"
)
_CATEGORY = pa.dictionary(pa.int32(), pa.string())
# Runs are collected into row groups of about this many rows: one row group per (small) run
# file makes reading the whole file several times slower (measured: 2.4 s vs 12 s, 15 M rows).
ROW_GROUP_ROWS = 1 << 20


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


def locate_run(raw_csv: str | Path, raw_root: Path, inputs_root: Path) -> RunFile:
    """Parse `<mpi>/<nodes>x<ppn>/run<NN>.csv` below `raw_root`; name the provenance and input."""
    raw_csv = Path(raw_csv)
    try:
        relative = raw_csv.resolve().relative_to(raw_root.resolve()).as_posix()
    except ValueError:
        raise DataError(f"{raw_csv}: not below the raw directory {raw_root}") from None
    match = _RAW_PATH.match(relative)
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
    if "exp_id" not in grid.column_names:
        raise DataError(f"{grid_csv}: no exp_id column")
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


def _expected_repetitions(run: RunFile, grid_rows: np.ndarray, grid: pa.Table) -> np.ndarray:
    """Repetitions per grid row the provenance says were done (0 for experiments not run).

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
            f"{run.nodes}x{run.ppn} in its path needs {run.nodes * run.ppn}"
        )
    experiments = provenance[PROV_EXPERIMENTS]
    try:
        exp_ids = np.array([int(entry[PROV_EXP_ID]) for entry in experiments], dtype=np.int64)
        reps = np.array([int(entry[PROV_REPS]) for entry in experiments], dtype=np.int64)
    except (TypeError, KeyError, ValueError):
        raise DataError(
            f"{run.provenance}: '{PROV_EXPERIMENTS}' must be a list of objects with integer "
            f"'{PROV_EXP_ID}' and '{PROV_REPS}'"
        ) from None
    rows = _grid_rows_of(exp_ids, grid_rows)
    if (rows < 0).any():
        unknown = exp_ids[rows < 0][:5].tolist()
        raise DataError(f"{run.provenance}: experiments not in grid.csv: exp_id {unknown}")
    if np.unique(rows).size != rows.size:
        raise DataError(f"{run.provenance}: an exp_id is listed twice in '{PROV_EXPERIMENTS}'")
    nrep = grid["nrep"].to_numpy(zero_copy_only=False)[rows]
    no_budget = np.nan_to_num(grid["max_time"].to_numpy(zero_copy_only=False)[rows]) == 0
    bad = (reps < 0) | (reps > nrep) | (no_budget & (reps != nrep))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{run.provenance}: exp_id {exp_ids[i]} reports {reps[i]} repetitions, its nrep is "
            f"{nrep[i]}{' and it had no time budget' if no_budget[i] else ''}"
        )
    expected = np.zeros(grid.num_rows, dtype=np.int64)
    expected[rows] = reps
    return expected


def _read_raw(run: RunFile) -> pa.Table:
    try:
        table = pacsv.read_csv(
            run.raw_csv,
            convert_options=pacsv.ConvertOptions(
                column_types={"exp_id": pa.int64(), "rep": pa.int64(), "time_s": pa.float64()}
            ),
        )
    except (pa.ArrowInvalid, OSError) as error:
        raise DataError(f"{run.raw_csv}: not a readable kernel output: {error}") from None
    if tuple(table.column_names) != RAW_COLUMNS:
        raise DataError(
            f"{run.raw_csv}: header must be {','.join(RAW_COLUMNS)}, "
            f"got {','.join(table.column_names)}"
        )
    for name in RAW_COLUMNS:
        if table[name].null_count:
            line = int(np.flatnonzero(table[name].is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(f"{run.raw_csv}:{line + 2}: {name} is empty or not a number")
    return table


def _grid_rows_of(exp_ids: np.ndarray, grid_rows: np.ndarray) -> np.ndarray:
    """Grid row of each exp_id through the lookup array `grid_rows`; -1 for unknown ids."""
    in_range = (exp_ids >= 0) & (exp_ids < grid_rows.size)
    return np.where(in_range, grid_rows[np.clip(exp_ids, 0, grid_rows.size - 1)], -1)


def _check_rows(
    run: RunFile, raw: pa.Table, grid_rows: np.ndarray, grid: pa.Table, expected: np.ndarray
) -> np.ndarray:
    """Grid row of every raw row. DataError on unknown exp_ids, missing or extra repetitions,
    repetition numbers other than 0 .. reps_done-1 once each, and times that are not finite
    and non-negative."""
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
    times = raw["time_s"].to_numpy()
    bad_time = ~np.isfinite(times) | (times < 0)
    if bad_time.any():
        line = int(np.flatnonzero(bad_time)[0]) + 2  # header is line 1
        raise DataError(f"{run.raw_csv}:{line}: time_s {times[line - 2]} is not a duration")
    return rows


def _constant(value: int | str, length: int, category: bool = False) -> pa.Array:
    if category:
        return pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(length, dtype=np.int32)), pa.array([value])
        )
    return pa.array(np.full(length, value, dtype=np.int64))


def _with_campaign_columns(table: pa.Table, run: RunFile, nprocs: bool) -> pa.Table:
    length = table.num_rows
    columns = {
        "mpi": _constant(run.mpi, length, category=True),
        "nodes": _constant(run.nodes, length),
        "ppn": _constant(run.ppn, length),
    }
    if nprocs:
        columns["nprocs"] = _constant(run.nodes * run.ppn, length)
    columns["run"] = _constant(run.run, length)
    for name, array in columns.items():
        table = table.append_column(name, array)
    return table


def aggregate(
    grid_csv: str | Path,
    raw_csvs: Sequence[str | Path],
    raw_root: str | Path,
    inputs_root: str | Path,
    timings_out: str | Path,
    medians_out: str | Path,
) -> None:
    """Check and join every raw CSV with the grid; write timings and run medians (Parquet).

    timings: exp_id, every grid parameter, mpi, nodes, ppn, nprocs, run, rep, time_s (one row per
    repetition). medians: exp_id, mpi, nodes, ppn, run, median_s, n_kept and the parameters
    (one row per experiment and run, Tukey-filtered median of its repetitions).
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
    grid_rows = np.full(int(grid_exp_ids.max()) + 1, -1, dtype=np.int64)
    grid_rows[grid_exp_ids] = np.arange(grid_exp_ids.size)

    # Provenance and checksums of every run first: a bad file fails before any work is done.
    expectations = [_expected_repetitions(run, grid_rows, grid) for run in runs]
    median_tables: list[pa.Table] = []
    pending: list[pa.Table] = []
    with atomic_path(timings_out) as timings_tmp:
        writer: pq.ParquetWriter | None = None
        try:
            for run, expected in zip(runs, expectations, strict=True):
                raw = _read_raw(run)
                rows = _check_rows(run, raw, grid_rows, grid, expected)
                timings = grid.take(pa.array(rows))
                timings = _with_campaign_columns(timings, run, nprocs=True)
                timings = timings.append_column("rep", raw["rep"])
                pending.append(timings.append_column("time_s", raw["time_s"]))
                median_tables.append(_run_medians(run, rows, raw, grid))
                if sum(t.num_rows for t in pending) >= ROW_GROUP_ROWS or run is runs[-1]:
                    batch = pa.concat_tables(pending)
                    if writer is None:
                        # Every column but time_s repeats few values; dictionary-encoding the
                        # measured times only costs time.
                        dictionary = [c for c in batch.column_names if c != "time_s"]
                        writer = pq.ParquetWriter(
                            timings_tmp, batch.schema, use_dictionary=dictionary
                        )
                    writer.write_table(batch, row_group_size=ROW_GROUP_ROWS)
                    pending.clear()
        finally:
            if writer is not None:
                writer.close()
        medians = pa.concat_tables(median_tables, promote_options="permissive")
        with atomic_path(medians_out) as medians_tmp:
            pq.write_table(medians, medians_tmp)


def _run_medians(run: RunFile, rows: np.ndarray, raw: pa.Table, grid: pa.Table) -> pa.Table:
    """Tukey-filtered median of each experiment's repetitions in one run."""
    result = tukey_medians(rows, raw["time_s"].to_numpy())
    table = pa.table({"exp_id": grid["exp_id"].take(pa.array(result.codes))})
    table = _with_campaign_columns(table, run, nprocs=False)
    table = table.append_column("median_s", pa.array(result.median))
    table = table.append_column("n_kept", pa.array(result.n_kept))
    parameters = grid.drop_columns(["exp_id"]).take(pa.array(result.codes))
    for name in parameters.column_names:
        table = table.append_column(name, parameters[name])
    return table
