"""write_csv_table writes what DataFrame.to_csv(index=False) writes, byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mpiguide.core.csv_table import float_reprs, write_csv_table


def pandas_bytes(frame: pd.DataFrame, path: Path) -> bytes:
    frame.to_csv(path, index=False)
    return path.read_bytes()


FRAMES = {
    "tests.csv-like": pd.DataFrame(
        {
            "guideline": ["GL4", "GL5", "GL6"],
            "op": pd.Series(["a|b", "", None], dtype="str"),
            "nodes": np.array([4, 8, 16], dtype=np.int64),
            "group": np.array([0, 1, 2], dtype=np.int32),
            "p_value": [4.011431177678088e-06, np.nan, 1e16],
            "ratio": [np.inf, -0.0, 123456789012345678.0],
            "violated": [True, False, True],
            "combined": np.array(["4", "4|8", ""], dtype=object),
        }
    ),
    "mixed objects": pd.DataFrame({"x": np.array([1, 2.5, None], dtype=object), "y": [1, 2, 3]}),
    "nullable and categorical": pd.DataFrame(
        {
            "n": pd.array([1, None, 3], dtype="Int64"),
            "c": pd.Categorical(["low", None, "high"]),
            "t": pd.array([True, None, False], dtype="boolean"),
        }
    ),
    "single and nullable floats": pd.DataFrame(
        {
            "single": np.array([0.1, 1e-6, np.nan], dtype=np.float32),
            "nullable": pd.array([0.5, None, 1e-7], dtype="Float64"),
        }
    ),
    "header needing quotes": pd.DataFrame({"a,b": [1], 'say "x"': ["y"]}),
    "empty": pd.DataFrame({"a": pd.Series([], dtype=float), "b": pd.Series([], dtype=object)}),
}


@pytest.mark.parametrize("name", FRAMES)
def test_bytes_are_pandas(name: str, tmp_path: Path) -> None:
    frame = FRAMES[name]
    write_csv_table(frame, tmp_path / "ours.csv")
    assert (tmp_path / "ours.csv").read_bytes() == pandas_bytes(frame, tmp_path / "pandas.csv")


@pytest.mark.parametrize("cell", ["a,b", 'say "x"', "two\nlines", "cr\r"])
def test_cells_that_need_quotes_are_quoted_as_pandas_does(cell: str, tmp_path: Path) -> None:
    frame = pd.DataFrame({"op": ["plain", cell], "n": [1, 2]})
    write_csv_table(frame, tmp_path / "ours.csv")
    assert (tmp_path / "ours.csv").read_bytes() == pandas_bytes(frame, tmp_path / "pandas.csv")


def test_written_atomically(tmp_path: Path) -> None:
    write_csv_table(pd.DataFrame({"a": [1.5]}), tmp_path / "out" / "t.csv")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["t.csv"]


def test_floats_repeated_within_and_across_columns(tmp_path: Path) -> None:
    """Distinct floats are formatted once for the whole table: a value's text does not depend on
    where else it occurs, and 0.0, -0.0 and NaN stay apart."""
    frame = pd.DataFrame(
        {
            "a": [0.0, -0.0, 1e-06, np.nan, 0.1, 1e-06],
            "b": [-0.0, 0.0, 0.1, 1e-06, np.nan, 2.5],
            "n": [1, 2, 3, 4, 5, 6],
            "c": [np.float64(np.nan), -np.nan, np.inf, -np.inf, 1e16, 5e-324],
        }
    )
    write_csv_table(frame, tmp_path / "ours.csv")
    assert (tmp_path / "ours.csv").read_bytes() == pandas_bytes(frame, tmp_path / "pandas.csv")


def _numpy_reprs(values: np.ndarray) -> list[str]:
    text = values.astype(str).astype(object)
    text[np.isnan(values)] = ""
    return text.tolist()


def test_float_reprs_are_numpys_at_every_magnitude() -> None:
    rng = np.random.default_rng(3)
    boundaries = np.array([1e-9, 1e-4, 1e-5, 1e-7, 1e15, 1e16, 1.0, 0.1])
    near = np.concatenate(
        [np.nextafter(boundaries, 0), boundaries, np.nextafter(boundaries, np.inf)]
    )
    values = np.concatenate(
        [
            rng.integers(0, 2**64, 200_000, dtype=np.uint64).view(np.float64),  # any bits
            rng.random(200_000) * 10.0 ** rng.integers(-12, 20, 200_000),  # every decade
            np.arange(-1000, 1000, dtype=np.float64),  # integral values
            10.0 ** np.arange(-30, 30),
            near,
            -near,
            [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308],
        ]
    )
    assert float_reprs(values).to_pylist() == _numpy_reprs(values)
