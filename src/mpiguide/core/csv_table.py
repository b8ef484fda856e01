"""Large CSV tables (tests.csv, slowdown.csv) as `DataFrame.to_csv(index=False)` writes them.

pandas formats every cell in Python, which at tens of thousands of tests is a large part of
`check`; pyarrow's writer is fast but spells cells its own way (docs/analysis.md §6 has both
measured). Here each column is made text the way pandas makes it (floats by numpy's shortest
round-trip repr, bools as True/False, missing as an empty cell) and pyarrow writes the rows.
Formatting floats is most of what remains, so each distinct float of the table is formatted once
(tests repeat their experiments' medians, and p_adjusted is often p_value).
pyarrow quotes every string it may quote, or none at all; pandas quotes only cells that need it.
Without quotes is right for every cell the workflow writes (names, levels, numbers); a table with
a cell that would need them (a comma, a quote, a line break) is handed to pandas' writer, so the
file is the same either way.
"""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from mpiguide.core.atomic import atomic_path

_NO_QUOTES = pacsv.WriteOptions(include_header=False, quoting_style="none")


def _is_float(column: pd.Series) -> bool:
    """Whether `column` holds float64s, the floats this module formats."""
    return column.dtype == np.float64


def float_reprs(values: np.ndarray) -> pa.Array:
    """numpy's str() of each float (Python's repr), NaN as "".

    Both write the shortest digits that read back as the same double, positional from 1e-4 to
    below 1e16 and scientific with an exponent of at least two digits elsewhere. Arrow's cast to
    string writes the same digits faster (docs/analysis.md §6), but spells some numbers
    differently: an integer without ".0", 1e-05 as 0.00001, 1.5e-07 as 1.5e-7, 1e15 as 1e+15.
    Its text is kept where the two spellings cannot differ; numpy formats the rest (NaN
    included).
    """
    arrow_text = pc.cast(pa.array(values, type=pa.float64()), pa.string())
    scientific = pc.match_substring(arrow_text, "e").to_numpy(zero_copy_only=False)
    has_point = pc.match_substring(arrow_text, ".").to_numpy(zero_copy_only=False)
    magnitude = np.abs(values)
    same = (
        np.isinf(values)
        | (scientific & ((magnitude < 1e-9) | (magnitude >= 1e16)))
        | (has_point & ~scientific & (magnitude >= 1e-4))
    )
    others = values[~same]
    other_text = others.astype(str).astype(object)
    other_text[np.isnan(others)] = ""
    return pc.replace_with_mask(arrow_text, pa.array(~same), pa.array(other_text, pa.string()))


def _float_texts(columns: list[pd.Series]) -> list[pa.Array]:
    """Float columns as to_csv renders them: numpy's shortest round-trip repr, NaN empty. Each
    distinct bit pattern is formatted once (bits, not values: -0.0 is written as such)."""
    if not columns:
        return []
    values = np.concatenate([column.to_numpy(dtype=np.float64) for column in columns])
    codes, distinct_bits = pd.factorize(values.view(np.int64))
    texts = float_reprs(distinct_bits.view(np.float64))
    bounds = np.cumsum([0, *(len(column) for column in columns)])
    return [texts.take(codes[begin:end]) for begin, end in itertools.pairwise(bounds)]


def _as_arrow(column: pd.Series) -> pa.Array:
    """The cells of a column other than a float one as pandas' to_csv renders them: integers as
    they are, the rest as text."""
    dtype = column.dtype
    if pd.api.types.is_integer_dtype(dtype) and isinstance(dtype, np.dtype):
        return pa.array(column.to_numpy())
    if pd.api.types.is_bool_dtype(dtype) and isinstance(dtype, np.dtype):
        return pa.array(np.where(column.to_numpy(), "True", "False"), type=pa.string())
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return pa.array(column.array)  # the strings as they are; a missing cell is written empty
    text = column.astype(object).where(column.notna(), "").to_numpy()
    try:
        return pa.array(text, type=pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # not all str: pandas writes str(value)
        return pa.array([str(value) for value in text], type=pa.string())


def _header(columns: pd.Index) -> bytes:
    line = io.StringIO()
    csv.writer(line, lineterminator="\n").writerow([str(name) for name in columns])
    return line.getvalue().encode()


def _pandas_writes(frame: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as temporary:
        frame.to_csv(temporary, index=False)


def write_csv_table(frame: pd.DataFrame, path: str | Path) -> None:
    """`frame` without its index to `path` (atomically), byte for byte as pandas writes it."""
    columns = [frame.iloc[:, index] for index in range(frame.shape[1])]
    if any(pd.api.types.is_float_dtype(c.dtype) and not _is_float(c) for c in columns):
        _pandas_writes(frame, path)  # float32 and nullable floats: pandas' own spelling
        return
    floats = [index for index, column in enumerate(columns) if _is_float(column)]
    texts = dict(zip(floats, _float_texts([columns[index] for index in floats]), strict=True))
    arrays = [texts[i] if i in texts else _as_arrow(column) for i, column in enumerate(columns)]
    table = pa.table(arrays, names=[str(name) for name in frame.columns])
    body = io.BytesIO()
    try:
        pacsv.write_csv(table, body, _NO_QUOTES)
    except pa.ArrowInvalid:  # a cell needs quotes
        _pandas_writes(frame, path)
        return
    with atomic_path(path) as temporary:
        temporary.write_bytes(_header(frame.columns) + body.getvalue())
