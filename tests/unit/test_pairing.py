"""match: every pair that agrees on the keys, "" a wildcard, whatever the column types."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from mpiguide.pairing import _inner_join, match

KEYS = ["op", "msg_size", "root", "ordering"]


def random_experiments(rng: np.random.Generator, rows: int) -> pd.DataFrame:
    levels = {"op": ["bcast", "reduce"], "msg_size": ["8", "64", "1024"],
              "root": ["", "0", "1"], "ordering": ["", "FMAJ", "RAND"]}  # fmt: skip
    frame = pd.DataFrame({key: rng.choice(values, rows) for key, values in levels.items()})
    return frame.assign(row=np.arange(rows))


def brute_force(left: pd.DataFrame, right: pd.DataFrame, keys: list[str]) -> set[tuple[int, int]]:
    pairs = set()
    for (_, lhs), (_, rhs) in itertools.product(left.iterrows(), right.iterrows()):
        if all(lhs[k] == rhs[k] or "" in (lhs[k], rhs[k]) for k in keys):
            pairs.add((int(lhs["row"]), int(rhs["row"])))
    return pairs


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("keys", [KEYS, ["op"], []])
def test_match_is_the_wildcard_join(categorical: bool, keys: list[str]) -> None:
    experiments = random_experiments(np.random.default_rng(len(keys)), 60)
    if categorical:
        experiments[KEYS] = experiments[KEYS].astype("category")
    left, right = experiments.iloc[:25], experiments.iloc[25:]
    pairs = match(left, right, keys)
    found = list(zip(pairs["lhs_row"], pairs["rhs_row"], strict=True))
    assert len(found) == len(set(found))
    assert set(found) == brute_force(left, right, keys)


def test_inner_join_keeps_left_order_then_right_order() -> None:
    left, right = np.array([5, 1, 5, 9]), np.array([1, 5, 5, 2, 1])
    i, j = _inner_join(left, right)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [
        (0, 1), (0, 2), (1, 0), (1, 4), (2, 1), (2, 2),
    ]  # fmt: skip
