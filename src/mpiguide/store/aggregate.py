"""Raw kernel output + grid.csv → timings.parquet and medians.parquet, with integrity checks.

Every raw file `raw/<mpi>/<nodes>x<ppn>/run<NN>.csv` is checked against its provenance JSON and
the input it was measured from (mpiguide.store.provenance) before any is read, then read and
checked a few at a time (mpiguide.store.raw_files) while its timings stream into the Parquet
file, so memory stays bounded by a few runs however large the campaign is. No two raw files may
hold the same bytes. timings.parquet holds only the keys of a repetition and what was measured;
the parameters of an experiment are a join on exp_id with grid.csv (docs/analysis.md).
medians.parquet adds to each run median its run's launch factor, page faults, block record
(mpiguide.store.block_records) and heap, and the experiment's parameters.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
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
    INTERFERENCE_COLUMNS,
    PAGE_FAULT_VALUES,
)
from mpiguide.core.errors import DataError
from mpiguide.plan.grid import COLUMNS, INTEGER_PARAMETERS, PARAMETERS
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.store.block_records import BlockLaunch, read_block_launches
from mpiguide.store.provenance import (
    PROV_OUTPUT_SHA256,
    Provenance,
    RunFile,
    check_heap,
    locate_run,
    read_provenance,
)
from mpiguide.store.raw_files import CATEGORY, processed_in_order, raw_header

# Types of the grid.csv columns: integers, max_time in (fractional) seconds, the rest strings.
FLOAT_PARAMETERS = ("max_time",)
STRING_PARAMETERS = tuple(
    p for p in PARAMETERS if p not in INTEGER_PARAMETERS and p not in FLOAT_PARAMETERS
)
# Runs are collected into row groups of about this many rows: one row group per (small) run
# file makes reading the whole file several times slower (figures: docs/analysis.md §6).
ROW_GROUP_ROWS = 1 << 20
_log = logging.getLogger(__name__)


def read_grid(grid_csv: str | Path) -> pa.Table:
    """grid.csv as an Arrow table: strings as dictionaries, empty cells as nulls; without the
    column `algorithm` where it is empty throughout."""
    grid_csv = Path(grid_csv)
    column_types = {"exp_id": pa.int64()}
    column_types |= {name: CATEGORY for name in STRING_PARAMETERS}
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
    if grid[ALGORITHM].null_count == grid.num_rows:
        # No experiment names a library algorithm: the tables keep the columns they had
        # before the parameter existed.
        grid = grid.drop_columns([ALGORITHM])
    exp_ids = grid["exp_id"].to_numpy()
    if grid["exp_id"].null_count or exp_ids.min(initial=0) < 0:
        raise DataError(f"{grid_csv}: exp_id must be a non-negative integer on every row")
    if np.unique(exp_ids).size != exp_ids.size:
        raise DataError(f"{grid_csv}: exp_id values are not unique")
    return grid


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
    provenances = [read_provenance(run, grid_rows, grid) for run in runs]
    check_heap(runs, provenances)
    blocks = read_block_launches(runs, None if blocks_root is None else Path(blocks_root))
    unverified = [run for run, p in zip(runs, provenances, strict=True) if p.output_sha256 is None]
    if unverified:
        _log.warning(
            "%d raw file(s) have no '%s' in their provenance (written by an older kernel), "
            "e.g. %s: their bytes are not verified, only checked for duplicates",
            len(unverified), PROV_OUTPUT_SHA256, unverified[0].provenance,
        )  # fmt: skip
    global_s = any(GLOBAL_S in raw_header(run.raw_csv) for run in runs)
    run_medians: list[pd.DataFrame] = []
    seen: dict[str, Path] = {}
    pending: list[pa.Table] = []
    with atomic_path(timings_out) as timings_tmp:
        writer: pq.ParquetWriter | None = None
        try:
            results = processed_in_order(runs, provenances, grid_rows, grid, global_s)
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
