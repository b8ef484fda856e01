"""Large CSV tables (tests.csv, slowdown.csv) as `DataFrame.to_csv(index=False)` writes them.

pandas formats every cell in Python: at tens of thousands of tests that was a quarter of
`check`. Here each column is made text the way pandas makes it (floats by numpy's shortest
round-trip repr, bools as True/False, missing as an empty cell) and pyarrow writes the rows.
pyarrow quotes every string it may quote, or none at all; pandas quotes only cells that need it.
Without quotes is right for every cell the workflow writes (names, levels, numbers); a table with
a cell that would need them (a comma, a quote, a line break) is handed to pandas' writer, so the
file is the same either way.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from mpiguide.atomic import atomic_path

_NO_QUOTES = pacsv.WriteOptions(include_header=False, quoting_style="none")


def _as_arrow(column: pd.Series) -> pa.Array:
    """The cells of `column` as pandas' to_csv renders them: integers as they are, the rest as
    text."""
    dtype = column.dtype
    if pd.api.types.is_integer_dtype(dtype) and isinstance(dtype, np.dtype):
        return pa.array(column.to_numpy())
    if pd.api.types.is_float_dtype(dtype) and isinstance(dtype, np.dtype):
        values = column.to_numpy()
        text = values.astype(str).astype(object)
        text[np.isnan(values)] = ""
        return pa.array(text, type=pa.string())
    if pd.api.types.is_bool_dtype(dtype) and isinstance(dtype, np.dtype):
        return pa.array(np.where(column.to_numpy(), "True", "False"), type=pa.string())
    text = column.astype(object).where(column.notna(), "").to_numpy()
    try:
        return pa.array(text, type=pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # not all str: pandas writes str(value)
        return pa.array([str(value) for value in text], type=pa.string())


def _header(columns: pd.Index) -> bytes:
    line = io.StringIO()
    csv.writer(line, lineterminator="\n").writerow([str(name) for name in columns])
    return line.getvalue().encode()


def write_csv_table(frame: pd.DataFrame, path: str | Path) -> None:
    """`frame` without its index to `path` (atomically), byte for byte as pandas writes it."""
    table = pa.table([_as_arrow(frame[name]) for name in frame.columns],
                     names=[str(name) for name in frame.columns])  # fmt: skip
    body = io.BytesIO()
    try:
        pacsv.write_csv(table, body, _NO_QUOTES)
    except pa.ArrowInvalid:  # a cell needs quotes
        with atomic_path(path) as temporary:
            frame.to_csv(temporary, index=False)
        return
    with atomic_path(path) as temporary:
        temporary.write_bytes(_header(frame.columns) + body.getvalue())
