"""Shuffled kernel inputs: one per (mpi, deployment, run), each holding every experiment.

The order is a permutation drawn by numpy's Generator seeded with a SHA-256 digest of
(seed, mpi, nodes, ppn, run) — never Python's salted `hash` — so an input depends on its own
coordinates only: adding runs or deployments never changes an existing input.

An experiment with `interleave` K > 1 is K rows, its chunks 0 … K - 1 (docs/kernel.md,
"Interleaved repetitions"), spread over the launch: the permutation gives every row a place p
of n, and chunk c of K sits at (c + p/n)/K of the launch, so the launch measures one chunk of
each such experiment per K-th of its length, in shuffled order. Without interleaved
experiments that is the permutation itself, and the input has the columns it had before
`interleave` existed: byte for byte the same file. Likewise `warmup` is a column only when some
experiment has warm-up repetitions, and `algorithm` only when some experiment names one of the
library's algorithms (empty: the library's own choice).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Collection
from pathlib import Path

import numpy as np

from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import deployment_name
from mpiguide.core.values import UNTUNED
from mpiguide.plan.grid import CHUNK, COLUMNS, INPUT_COLUMNS
from mpiguide.plan.limits import kernel_limits

RANK = re.compile(r"[0-9]+")
INTERLEAVE = "interleave"
WARMUP = "warmup"
ALGORITHM = "algorithm"
# The columns of every input; the others only when some experiment of the grid uses them (the
# kernel's defaults stand in).
PLAIN_COLUMNS = tuple(c for c in COLUMNS if c not in (INTERLEAVE, WARMUP, ALGORITHM))


def run_seed(seed: int, mpi: str, nodes: int, ppn: int, run: int) -> int:
    """A 128-bit seed that is stable across processes, platforms and Python versions."""
    key = json.dumps([seed, mpi, nodes, ppn, run]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:16], "little")


def read_grid_cells(grid_csv: str | Path) -> dict[int, dict[str, str]]:
    """grid.csv rows by line number, cells as written (empty = not applicable). The kernel checks
    the values; here the file's shape: every column, and as many cells per row as columns (a
    short or long row would reach the kernel as a silently shifted experiment)."""
    grid_csv = Path(grid_csv)
    try:
        with grid_csv.open(newline="", encoding="utf-8") as stream:
            reader = csv.reader(stream)
            header = next(reader, [])
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise DataError(f"{grid_csv}:1: missing columns {', '.join(missing)}")
            rows = {}
            for cells in reader:
                if not cells:
                    continue  # a blank line
                if len(cells) != len(header):
                    raise DataError(
                        f"{grid_csv}:{reader.line_num}: {len(cells)} cells, the header has "
                        f"{len(header)}"
                    )
                rows[reader.line_num] = dict(zip(header, cells, strict=True))
    except OSError as exc:
        raise DataError(f"{grid_csv}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{grid_csv}: not a grid.csv: not UTF-8 text ({exc.reason})") from None
    if not rows:
        raise DataError(f"{grid_csv}: holds no experiment")
    return rows


def write_run_input(
    grid_csv: str | Path,
    seed: int,
    mpi: str,
    nodes: int,
    ppn: int,
    run: int,
    out: str | Path,
    exp_ids: Collection[int] | None = None,
    library_choice_only: bool = False,
    ops: Collection[str] | None = None,
) -> None:
    """Write the shuffled input of one run atomically, columns in the kernel's order: every
    experiment, or (a later round of an adaptive campaign) only those of `exp_ids`, in the
    order the run's permutation of the whole grid gives them; with `library_choice_only`, none
    that forces one of the library's algorithms (an entry whose library would not run it: verify's
    Open MPI `<entry>.applied`, mpiguide.tune.applied); with `ops`, only the experiments of those
    ops (an Intel MPI preset entry: the ops that call its collective). The columns stay those of
    the whole grid."""
    rows_by_line = read_grid_cells(grid_csv)
    ranks = nodes * ppn
    for line, row in rows_by_line.items():
        root = row["root"]
        if root and not (RANK.fullmatch(root) and int(root) < ranks):
            raise DataError(
                f"{grid_csv}:{line}: root {root} is not a rank of "
                f"{deployment_name(nodes, ppn)} (0 to {ranks - 1})"
            )
    chunks = [
        {**row, CHUNK: str(chunk)}
        for line, row in rows_by_line.items()
        for chunk in range(_interleave(grid_csv, line, row))
    ]
    order = np.random.default_rng(run_seed(seed, mpi, nodes, ppn, run)).permutation(len(chunks))
    interleaved = len(chunks) > len(rows_by_line)
    if interleaved:
        order = _spread(order, chunks)
    # Over the whole grid, so that every round of a campaign has the same columns; the kernel
    # checks the values.
    warmed = any(row[WARMUP] not in ("", "0") for row in rows_by_line.values())
    forced = any(row[ALGORITHM] for row in rows_by_line.values())
    used = {INTERLEAVE: interleaved, CHUNK: interleaved, WARMUP: warmed, ALGORITHM: forced}
    columns = [c for c in INPUT_COLUMNS if c in PLAIN_COLUMNS or used[c]]
    if exp_ids is not None:
        # The planned experiments keep their places in the run's full order.
        wanted = {str(exp_id) for exp_id in exp_ids}
        unknown = wanted - {row["exp_id"] for row in rows_by_line.values()}
        if unknown:
            raise DataError(f"{grid_csv}: no experiment {sorted(unknown, key=int)[0]}")
        order = order[[chunks[i]["exp_id"] in wanted for i in order]]
    if library_choice_only:
        order = order[[chunks[i][ALGORITHM] in ("", UNTUNED) for i in order]]
    if ops is not None:
        kept = set(ops)
        unknown = kept - {row["op"] for row in rows_by_line.values()}
        if unknown:
            raise DataError(f"{grid_csv}: no experiment of op {sorted(unknown)[0]}")
        order = order[[chunks[i]["op"] in kept for i in order]]
    with atomic_path(out) as temporary, temporary.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(chunks[i] for i in order)


def _interleave(grid_csv: str | Path, line: int, row: dict[str, str]) -> int:
    """The chunks of a grid row (1 when its cell is empty, as the kernel reads it)."""
    cell = row[INTERLEAVE] or "1"
    most = kernel_limits()["max_interleave"]
    if not (RANK.fullmatch(cell) and 1 <= int(cell) <= most):
        raise DataError(f"{grid_csv}:{line}: interleave {cell!r} is not an integer 1 to {most}")
    return int(cell)


def _spread(order: np.ndarray, chunks: list[dict[str, str]]) -> np.ndarray:
    """The order of the rows when chunk c of K sits at (c + p/n)/K, p its place in `order`."""
    n = len(chunks)
    place = np.empty(n, dtype=np.int64)
    place[order] = np.arange(n)
    chunk = np.array([int(row[CHUNK]) for row in chunks])
    parts = np.array([int(row[INTERLEAVE] or "1") for row in chunks])
    position = (chunk + place / n) / parts
    return np.lexsort((place, position))
