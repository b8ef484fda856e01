"""Shuffled kernel inputs: one per (mpi, deployment, run), each holding every experiment.

The order is a permutation drawn by numpy's Generator seeded with a SHA-256 digest of
(seed, mpi, nodes, ppn, run) — never Python's salted `hash` — so an input depends on its own
coordinates only: adding runs or deployments never changes an existing input.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np

from mpiguide.atomic import atomic_path
from mpiguide.errors import DataError
from mpiguide.grid import COLUMNS


def run_seed(seed: int, mpi: str, nodes: int, ppn: int, run: int) -> int:
    """A 128-bit seed that is stable across processes, platforms and Python versions."""
    key = json.dumps([seed, mpi, nodes, ppn, run]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:16], "little")


def read_grid(grid_csv: str | Path) -> list[dict[str, str]]:
    """grid.csv rows with their cells as written (empty = not applicable)."""
    grid_csv = Path(grid_csv)
    try:
        with grid_csv.open(newline="", encoding="utf-8") as stream:
            reader = csv.DictReader(stream)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise DataError(f"{grid_csv}:1: missing columns {', '.join(missing)}")
            rows = list(reader)
    except OSError as exc:
        raise DataError(f"{grid_csv}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{grid_csv}: not a grid.csv: not UTF-8 text ({exc.reason})") from None
    if not rows:
        raise DataError(f"{grid_csv}: holds no experiment")
    return rows


def write_run_input(
    grid_csv: str | Path, seed: int, mpi: str, nodes: int, ppn: int, run: int, out: str | Path
) -> None:
    """Write the shuffled input of one run atomically, columns in the kernel's order."""
    rows = read_grid(grid_csv)
    ranks = nodes * ppn
    for line, row in enumerate(rows, start=2):
        if row["root"] and int(row["root"]) >= ranks:
            raise DataError(
                f"{grid_csv}:{line}: root {row['root']} is not a rank of {nodes}x{ppn} "
                f"({ranks} ranks)"
            )
    order = np.random.default_rng(run_seed(seed, mpi, nodes, ppn, run)).permutation(len(rows))
    with atomic_path(out) as temporary, temporary.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[i] for i in order)
