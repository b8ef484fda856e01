"""Experiments as codes; match: every pair that agrees on the keys, "" a wildcard, whatever the
column types; groups numbered as the combined values sort."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from mpiguide.analysis.pairing import (
    Experiments,
    _inner_join,
    combined_keys,
    combined_values,
    group_ids,
    match,
    pair_monotone,
    series_keys,
)

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
    keyed = Experiments.from_frame(experiments, KEYS)
    lhs, rhs = match(keyed, np.arange(25), np.arange(25, 60), keys)
    found = list(zip(lhs.tolist(), rhs.tolist(), strict=True))
    assert len(found) == len(set(found))
    assert set(found) == brute_force(experiments.iloc[:25], experiments.iloc[25:], keys)


def test_experiments_are_canonical_strings_in_sorted_codes() -> None:
    frame = pd.DataFrame(
        {
            "nodes": [4, 16, 4, 8],
            "size": [1.0, np.nan, 1.5, 0.0],
            "op": pd.Series(["b", None, "a", "b"], dtype="str"),
        }
    )
    experiments = Experiments.from_frame(frame, ["nodes", "size", "op"])
    assert experiments.strings("nodes").tolist() == ["4", "16", "4", "8"]
    assert experiments.strings("size").tolist() == ["1", "", "1.5", "0"]
    assert experiments.strings("op").tolist() == ["b", "", "a", "b"]
    # codes order as the strings do: "16" < "4" < "8"
    assert experiments.codes[:, 0].tolist() == [1, 0, 1, 2]
    assert experiments.present(["size", "nodes"]).tolist() == [
        [True, True], [False, True], [True, True], [True, True],
    ]  # fmt: skip
    assert experiments.selected({"nodes": ["4"], "size": ["1", "1.5"]}).tolist() == [
        True, False, True, False,
    ]  # fmt: skip


def test_groups_number_as_pandas_groups_the_combined_values() -> None:
    """group_ids is groupby(["comparison", *series keys], sort=True).ngroup() of the tests'
    combined values, as strings."""
    rng = np.random.default_rng(7)
    experiments = Experiments.from_frame(random_experiments(rng, 80), KEYS)
    lhs, rhs = rng.integers(0, 80, 300), rng.integers(0, 80, 300)
    comparison = rng.integers(0, 3, 300)
    combined = combined_keys(experiments, lhs, rhs)
    tests = pd.DataFrame(combined_values(combined)).assign(comparison=comparison)
    for varied in KEYS:
        by = ["comparison", *series_keys(KEYS, varied)]
        expected = tests.groupby(by, sort=True).ngroup().to_numpy()
        assert group_ids(combined, comparison, varied).tolist() == expected.tolist()


def test_monotone_pairs_neighbours_along_the_varied_key() -> None:
    frame = pd.DataFrame(
        {
            "op": ["a", "a", "a", "b", "b", "a"],
            "msg_size": [64, 8, 1024, 8, 64, ""],
        }
    ).astype(str)
    experiments = Experiments.from_frame(frame, ["op", "msg_size"])
    lhs, rhs = pair_monotone(experiments, {}, "msg_size")
    # numerically along msg_size within each op; the row without a size is in no series
    assert list(zip(lhs.tolist(), rhs.tolist(), strict=True)) == [(1, 0), (0, 2), (3, 4)]


def test_inner_join_keeps_left_order_then_right_order() -> None:
    left, right = np.array([5, 1, 5, 9]), np.array([1, 5, 5, 2, 1])
    i, j = _inner_join(left, right)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [
        (0, 1), (0, 2), (1, 0), (1, 4), (2, 1), (2, 2),
    ]  # fmt: skip
