"""Writing kernel inputs and reading kernel outputs in the kernel tests."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from mpiguide.plan.grid import COLUMNS as GRID_COLUMNS

REPO = Path(__file__).resolve().parents[2]
OPERATIONS_TSV = REPO / "src" / "mpiguide" / "data" / "operations.tsv"

KERNEL_SOURCES = REPO / "src" / "kernel"

COLUMNS = list(GRID_COLUMNS)  # the kernel's input columns, in the grid's order

Row = dict[str, Any]


def operations() -> list[dict[str, str]]:
    """The rows of src/mpiguide/data/operations.tsv."""
    with OPERATIONS_TSV.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def write_input(path: Path, rows: list[Row], columns: list[str] | None = None) -> Path:
    """A kernel input with the given columns (default: all, in the grid's order); missing or
    None values become empty cells."""
    header = columns or COLUMNS
    lines = [",".join(header)]
    for row in rows:
        lines.append(",".join("" if row.get(c) is None else str(row[c]) for c in header))
    path.write_text("\n".join(lines) + "\n")
    return path


def read_times(path: Path) -> dict[int, list[tuple[int, float]]]:
    """OUTPUT.csv as exp_id -> [(rep, time_s), ...] in file order."""
    with path.open(newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == ["exp_id", "rep", "time_s"]
        rows: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for exp_id, rep, time_s in reader:
            rows[int(exp_id)].append((int(rep), float(time_s)))
    return dict(rows)


def read_provenance(output_csv: Path) -> dict[str, Any]:
    return json.loads(output_csv.with_suffix(".json").read_text())
