"""Pair lhs experiments with rhs experiments for a guideline (docs/analysis.md).

A test pairs one experiment selected by the lhs selector with one selected by the rhs selector
that agrees with it on every key the selectors do not fix — mpi, nodes, ppn and every grid
parameter — and on every key both selectors fix to the same values (`matched_keys`). An empty
(not-applicable) value on either side matches any value. Tests that differ only in the varied
parameter form a group.

All comparisons are on canonical strings (`canonical_strings`), so a selector value `1` matches
an integer column, `0` matches a float column holding 0.0, and "" is "not applicable".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

# Keys that change with a process count: nodes at fixed ppn changes nprocs, and nprocs changes
# nodes or ppn. A series or group along one of them spans these too.
LINKED_KEYS = {"nprocs": ("nodes", "ppn"), "nodes": ("nprocs",), "ppn": ("nprocs",)}

# Separates the lhs and rhs values of a key where they differ: fixed differently by the
# selectors ("1|0" for reorder), or not applicable on one side ("|LINEAR").
PAIR_SEPARATOR = "|"


def _canonical(values: pd.Series) -> pd.Series:
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values):
        numbers = values.astype("float64")
        integral = numbers.notna() & (numbers == np.round(numbers))
        text = numbers.astype(str)
        text[integral] = numbers[integral].astype("int64").astype(str)
        text[numbers.isna()] = ""
        return text.astype(object)
    return values.astype(object).where(values.notna(), "").astype(str).astype(object)


def canonical_strings(column: pd.Series) -> pd.Series:
    """Values as strings: integers without decimals (also in float columns), missing as "".
    Each distinct value is converted once (a parameter column holds a few)."""
    codes, distinct = pd.factorize(column, use_na_sentinel=False)
    text = _canonical(pd.Series(distinct)).to_numpy(dtype=object)
    return pd.Series(text[codes], index=column.index, dtype=object)


def selector_mask(experiments: pd.DataFrame, selector: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Rows of `experiments` (canonical strings) whose values are allowed by the selector."""
    mask = np.ones(len(experiments), dtype=bool)
    for key, allowed in selector.items():
        mask &= experiments[key].isin(list(allowed)).to_numpy()
    return mask


def key_codes(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, keys) integer codes of the canonical strings of `keys` (equal strings, equal
    codes) and whether each value is present (not ""). A categorical column's codes are used as
    they are; any other column is factorised."""
    shape = (len(frame), len(keys))
    codes, present = np.empty(shape, dtype=np.int64), np.empty(shape, dtype=bool)
    for index, key in enumerate(keys):
        column = frame[key]
        if isinstance(column.dtype, pd.CategoricalDtype):
            categories = column.cat.categories
            codes[:, index] = column.cat.codes.to_numpy()
            empty = categories.get_loc("") if "" in categories else -1
        else:
            factorised, levels = pd.factorize(column.to_numpy(dtype=object))
            codes[:, index] = factorised
            empty = int(np.flatnonzero(levels == "")[0]) if (levels == "").any() else -1
        present[:, index] = codes[:, index] != empty
    return codes, present


def _combination_ids(codes: np.ndarray) -> np.ndarray:
    """One integer per row, equal where the rows of `codes` are equal (hashing, not sorting)."""
    ids = codes[:, 0]
    for column in codes[:, 1:].T:
        ids = pd.factorize(ids * (int(column.max()) + 1) + column)[0]
    return ids


def _inner_join(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (i, j) with left[i] == right[j], in the order of i, then of j."""
    order = np.argsort(right, kind="stable")
    ordered = right[order]
    low = np.searchsorted(ordered, left, side="left")
    count = np.searchsorted(ordered, left, side="right") - low
    lhs = np.repeat(np.arange(left.size), count)
    # Within each left position, consecutive positions in `ordered` from its `low`.
    offset = np.arange(lhs.size) - np.repeat(np.cumsum(count) - count, count)
    return lhs, order[np.repeat(low, count) + offset]


def match(left: pd.DataFrame, right: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """All (lhs_row, rhs_row) that agree on `keys`, an empty value on either side a wildcard.

    `left`/`right` hold the keys as canonical strings (categorical columns of one frame, or
    plain ones) and a `row` column. Rows are split by which keys they have values for (a
    handful of patterns, set by parameter applicability); each pattern pair is one equi-join on
    the keys both sides have: pairs in the order of the lhs rows, then of the rhs rows.
    """
    codes, present = key_codes(pd.concat([left[keys], right[keys]], ignore_index=True), keys)
    weights = np.left_shift(np.int64(1), np.arange(len(keys), dtype=np.int64))
    patterns = present.astype(np.int64) @ weights
    rows = np.concatenate((left["row"].to_numpy(), right["row"].to_numpy())).astype(np.int64)
    left_side = np.arange(len(left))
    right_side = np.arange(len(left), len(left) + len(right))
    lhs_pieces, rhs_pieces = [], []
    for left_pattern in np.unique(patterns[left_side]):
        left_part = left_side[patterns[left_side] == left_pattern]
        for right_pattern in np.unique(patterns[right_side]):
            right_part = right_side[patterns[right_side] == right_pattern]
            on = [bit for bit in range(len(keys)) if (left_pattern & right_pattern) >> bit & 1]
            if on:
                combined = _combination_ids(codes[np.concatenate((left_part, right_part))][:, on])
                i, j = _inner_join(combined[: left_part.size], combined[left_part.size :])
            else:
                i = np.repeat(np.arange(left_part.size), right_part.size)
                j = np.tile(np.arange(right_part.size), left_part.size)
            lhs_pieces.append(rows[left_part[i]])
            rhs_pieces.append(rows[right_part[j]])
    if not lhs_pieces:
        return pd.DataFrame({"lhs_row": [], "rhs_row": []}, dtype=np.int64)
    return pd.DataFrame(
        {"lhs_row": np.concatenate(lhs_pieces), "rhs_row": np.concatenate(rhs_pieces)}
    )


def combined_values(
    experiments: pd.DataFrame, lhs_rows: np.ndarray, rhs_rows: np.ndarray, keys: Sequence[str]
) -> pd.DataFrame:
    """Per test and key: the shared value, or "lhs|rhs" where they differ (lossless: an empty,
    not-applicable side stays visible, e.g. "|LINEAR")."""
    codes, _ = key_codes(experiments, keys)
    columns = {}
    for index, key in enumerate(keys):
        values = experiments[key].to_numpy(dtype=object)
        differ = np.flatnonzero(codes[lhs_rows, index] != codes[rhs_rows, index])
        joined = values[lhs_rows]
        if differ.size:
            joined[differ] = joined[differ] + PAIR_SEPARATOR + values[rhs_rows[differ]]
        columns[key] = joined
    return pd.DataFrame(columns)


def _side(values: pd.Series, side: int) -> pd.Series:
    """Per cell of a column of `combined_values`, as text, the value of one side (0: lhs,
    1: rhs). A column holds a few distinct cells: each is split once."""
    codes, cells = pd.factorize(values, use_na_sentinel=False)
    sides = np.array([split_pair(str(cell))[side] for cell in cells], dtype=object)
    return pd.Series(sides[codes], index=values.index).astype(str)


def lhs_side(values: pd.Series) -> pd.Series:
    """Per cell of a column of `combined_values`, the lhs experiment's value."""
    return _side(values, 0)


def rhs_side(values: pd.Series) -> pd.Series:
    """Per cell of a column of `combined_values`, the rhs experiment's value."""
    return _side(values, 1)


def split_pair(value: str) -> tuple[str, str]:
    """Inverse of `combined_values` for one cell: (lhs value, rhs value)."""
    lhs, separator, rhs = value.partition(PAIR_SEPARATOR)
    return (lhs, rhs) if separator else (lhs, lhs)


def matched_keys(
    keys: Sequence[str], lhs: Mapping[str, Sequence[str]], rhs: Mapping[str, Sequence[str]]
) -> list[str]:
    """The keys a test's two experiments must agree on: those neither selector fixes, and
    those both fix to the same values. `op: [a, b]` on both sides pins the set of operations
    compared without comparing a with b (a key fixed differently, as reorder 1 vs 0, is what
    the comparison is about)."""
    return [
        key
        for key in keys
        if (key not in lhs and key not in rhs)
        or (key in lhs and key in rhs and set(lhs[key]) == set(rhs[key]))
    ]


def pair_comparison(
    experiments: pd.DataFrame,
    keys: list[str],
    lhs: Mapping[str, Sequence[str]],
    rhs: Mapping[str, Sequence[str]],
) -> pd.DataFrame:
    """(lhs_row, rhs_row) of every test of one lhs/rhs comparison."""
    left = experiments.loc[selector_mask(experiments, lhs)]
    right = experiments.loc[selector_mask(experiments, rhs)]
    pairs = match(left, right, matched_keys(keys, lhs, rhs))
    # An experiment compared with itself is no test (selectors that fix nothing distinct).
    return pairs.loc[pairs["lhs_row"] != pairs["rhs_row"]]


def series_keys(keys: Sequence[str], varied: str) -> list[str]:
    """The keys that stay fixed along a series of `varied` (a group, docs/analysis.md)."""
    moving = {varied, *LINKED_KEYS.get(varied, ())}
    return [key for key in keys if key not in moving]


def pair_monotone(
    experiments: pd.DataFrame,
    keys: list[str],
    select: Mapping[str, Sequence[str]],
    varied: str,
) -> pd.DataFrame:
    """Consecutive points of every series along `varied`: lhs = smaller value, rhs = next."""
    chosen = experiments.loc[selector_mask(experiments, select) & (experiments[varied] != "")]
    fixed = series_keys(keys, varied)
    position = pd.to_numeric(chosen[varied], errors="coerce")
    ordered = chosen.assign(_position=position).sort_values([*fixed, "_position"])
    rows = ordered["row"].to_numpy()
    series = ordered.groupby(fixed, sort=False).ngroup().to_numpy()
    same_series = series[1:] == series[:-1]
    return pd.DataFrame({"lhs_row": rows[:-1][same_series], "rhs_row": rows[1:][same_series]})


def group_ids(tests: pd.DataFrame, keys: Sequence[str], varied: str) -> np.ndarray:
    """Group number per test: tests equal on every key but `varied` (and the keys linked to
    it) share it (0, 1, ...)."""
    by = ["comparison", *series_keys(keys, varied)]
    return tests.groupby(by, sort=True).ngroup().to_numpy()
