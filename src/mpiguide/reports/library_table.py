"""Table 2 of Manwade & Kulkarni 2018 from tests.csv: guideline x MPI library x size.

Their Table 2 marks each guideline, per MPI library and OSU message size, as verified (a tick) or
violated (a cross), over all the process counts they ran. Here a cell is every test of the guideline
with that mpi and that value of the varied parameter (analysis.varied, their message size),
across deployments and the other parameters: `violated` when any of them is, else `holds`.

library_table.csv is long (one row per guideline, mpi and size, with the counts behind the
verdict); library_table.md is the paper's wide layout, one column per (mpi, size).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpiguide.analysis.pairing import PAIR_SEPARATOR
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import LIBRARY_TABLE_FILES
from mpiguide.core.values import canonical_value

OUTPUTS = LIBRARY_TABLE_FILES
NO_TESTS = "-"
NOT_APPLICABLE = "n/a"  # the varied parameter does not apply to the guideline's operations


def verdicts(tests: pd.DataFrame, varied: str) -> pd.DataFrame:
    """Per guideline (in order of appearance), mpi and value of `varied` (ascending): tests,
    violated, holding and undecided tests, and the cell's verdict: violated if any test is,
    holds if all hold, else undecided."""
    needed = ("guideline", "relation", "mpi", varied, "violated", "verdict")
    missing = [c for c in needed if c not in tests]
    if missing:
        raise DataError(f"tests.csv lacks the columns {', '.join(missing)}")
    frame = tests.assign(
        violated=tests["violated"].astype(bool),
        _holds=tests["verdict"] == HOLDS,
        _undecided=tests["verdict"] == UNDECIDED,
        _order=tests["guideline"].map({g: i for i, g in enumerate(tests["guideline"].unique())}),
    )
    keys = ["_order", "guideline", "relation", "mpi", varied]
    table = (
        frame.groupby(keys, sort=True, dropna=False)
        .agg(
            tests=("violated", "size"),
            violated=("violated", "sum"),
            holds=("_holds", "sum"),
            undecided=("_undecided", "sum"),
        )
        .reset_index()
        .drop(columns="_order")
    )
    for column in ("violated", "holds", "undecided"):
        table[column] = table[column].astype(int)
    table["verdict"] = np.where(
        table["violated"] > 0,
        VIOLATED,
        np.where(table["holds"] == table["tests"], HOLDS, UNDECIDED),
    )
    return table


def _cell(row: Any) -> str:
    if row.verdict == VIOLATED:
        return f"{VIOLATED} ({row.violated}/{row.tests})"
    if row.verdict == UNDECIDED:
        return f"{UNDECIDED} ({row.undecided}/{row.tests})"
    return HOLDS


def _label(value: object) -> str:
    return NOT_APPLICABLE if pd.isna(value) else canonical_value(value)


def _escape(text: str) -> str:
    return text.replace(PAIR_SEPARATOR, "\\" + PAIR_SEPARATOR)


def markdown(table: pd.DataFrame, varied: str) -> str:
    """The wide layout: a row per guideline, a column per (mpi, size); a violated cell says
    how many of its tests are violated."""
    lines = [
        "# Guidelines per MPI library and " + varied,
        "",
        f"As Table 2 of Manwade & Kulkarni 2018, with three verdicts: `{VIOLATED} (violated/tests)`"
        f" when a test of the cell is violated, `{HOLDS}` when every test holds (the data rule out"
        f" a violation), else `{UNDECIDED} (undecided/tests)`: these runs cannot tell; "
        f"{NO_TESTS} where the campaign has no test.",
        "",
    ]
    ordered = table.assign(_missing=table[varied].isna()).sort_values(
        ["mpi", "_missing", varied], kind="stable"
    )
    columns = list(
        dict.fromkeys(
            (str(mpi), _label(size))
            for mpi, size in zip(ordered["mpi"], ordered[varied], strict=True)
        )
    )
    lines += [
        "| guideline | relation | " + " | ".join(f"{_escape(m)} {s}" for m, s in columns) + " |"
    ]
    lines.append("|---|---|" + "---|" * len(columns))
    for (guideline, relation), part in table.groupby(["guideline", "relation"], sort=False):
        cells = {
            (str(row.mpi), _label(getattr(row, varied))): _cell(row)
            for row in part.itertuples(index=False)
        }
        lines.append(
            f"| {guideline} | {relation} | "
            + " | ".join(cells.get(column, NO_TESTS) for column in columns)
            + " |"
        )
    return "\n".join(lines) + "\n"


def write_library_table(tests_csv: str | Path, varied: str, outdir: str | Path) -> Sequence[Path]:
    """Read tests.csv, write library_table.csv and library_table.md into outdir."""
    tests_csv, outdir = Path(tests_csv), Path(outdir)
    try:
        tests = pd.read_csv(tests_csv, dtype={"mpi": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{tests_csv}: cannot read tests: {exc}") from None
    try:
        table = verdicts(tests, varied)
    except DataError as exc:
        raise DataError(f"{tests_csv}: {exc}") from None
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = (outdir / name for name in OUTPUTS)
    with atomic_path(csv_path) as temporary:
        table.to_csv(temporary, index=False)
    with atomic_path(md_path) as temporary:
        Path(temporary).write_text(markdown(table, varied), encoding="utf-8")
    return csv_path, md_path
