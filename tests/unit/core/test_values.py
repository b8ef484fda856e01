"""One canonical text per parameter value: the scalar rule and the column rule agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mpiguide.core.values import canonical_value, canonical_values

SAMPLES = [
    pd.Series([8, 1024, 16384], dtype="int64"),
    pd.Series([8.0, 0.5, 1e15, -3.0, 2.25]),
    pd.Series(["cart", "FMAJ", "1"]),
    pd.Series([True, False]),
]


@pytest.mark.parametrize("column", SAMPLES, ids=["int", "float", "str", "bool"])
def test_column_rule_is_the_scalar_rule(column: pd.Series) -> None:
    assert list(canonical_values(column)) == [canonical_value(value) for value in column]


def test_integral_floats_lose_their_decimals_and_missing_is_empty() -> None:
    assert canonical_value(8.0) == "8"
    assert canonical_value(np.float64(64.0)) == "64"
    assert canonical_value(0.5) == "0.5"
    assert list(canonical_values(pd.Series([8.0, np.nan]))) == ["8", ""]
    assert list(canonical_values(pd.Series(["a", None]))) == ["a", ""]
