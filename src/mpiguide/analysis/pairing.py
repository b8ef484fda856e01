"""Pair lhs experiments with rhs experiments for a guideline (docs/analysis.md).

A test pairs one experiment selected by the lhs selector with one selected by the rhs selector
that agrees with it on every key the selectors do not fix — mpi, nodes, ppn and every grid
parameter — and on every key both selectors fix to the same values (`matched_keys`). An empty
(not-applicable) value on either side matches any value. Tests that differ only in the varied
parameter form a group.

All comparisons are on canonical strings (`Experiments`: integers without decimals, also in float
columns, missing as ""), so a selector value `1` matches an integer column, `0` matches a float
column holding 0.0, and "" is "not applicable". The pairing itself joins their integer codes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from mpiguide.core.values import canonical_values

# Keys that change with a process count: nodes at fixed ppn changes nprocs, and nprocs changes
# nodes or ppn. A series or group along one of them spans these too.
LINKED_KEYS = {"nprocs": ("nodes", "ppn"), "nodes": ("nprocs",), "ppn": ("nprocs",)}

# Separates the lhs and rhs values of a key where they differ: fixed differently by the
# selectors ("1|0" for reorder), or not applicable on one side ("|LINEAR").
PAIR_SEPARATOR = "|"


@dataclass(frozen=True)
class Experiments:
    """Experiments (rows) by their keys, as integer codes: row r's value of keys[k] is the
    canonical string levels[k][codes[r, k]]. Each key's levels are sorted, so codes order as
    their strings do, and "" (not applicable) is code 0 where a key has it."""

    keys: tuple[str, ...]
    codes: np.ndarray  # (rows, keys) int64
    levels: tuple[np.ndarray, ...]  # per key: its distinct canonical strings, ascending

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, keys: Sequence[str]) -> Experiments:
        codes = np.empty((len(frame), len(keys)), dtype=np.int64)
        levels = []
        for index, key in enumerate(keys):
            # each distinct value is made a string once (a parameter column holds a few)
            factorised, distinct = pd.factorize(frame[key], use_na_sentinel=False)
            text = canonical_values(pd.Series(distinct))
            # values with one canonical string (1 and 1.0) become one level
            key_levels, level_of = np.unique(text, return_inverse=True)
            codes[:, index] = level_of[factorised]
            levels.append(key_levels)
        return cls(tuple(keys), codes, tuple(levels))

    def __len__(self) -> int:
        return self.codes.shape[0]

    def column(self, key: str) -> int:
        return self.keys.index(key)

    def strings(self, key: str) -> np.ndarray:
        """The canonical strings of `key`, a row each."""
        index = self.column(key)
        return self.levels[index][self.codes[:, index]]

    def present(self, keys: Sequence[str]) -> np.ndarray:
        """(rows, keys) whether each row has a value (not "") for each of `keys`."""
        columns = [self.column(key) for key in keys]
        empty = np.array([0 if self.levels[c][:1].tolist() == [""] else -1 for c in columns])
        return self.codes[:, columns] != empty

    def selected(self, selector: Mapping[str, Sequence[str]]) -> np.ndarray:
        """Whether each row's values are allowed by the selector."""
        mask = np.ones(len(self), dtype=bool)
        for key, allowed in selector.items():
            index = self.column(key)
            mask &= np.isin(self.levels[index], list(allowed))[self.codes[:, index]]
        return mask


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


Pairs = tuple[np.ndarray, np.ndarray]  # (lhs rows, rhs rows) of experiments, a test each


def match(experiments: Experiments, left: np.ndarray, right: np.ndarray, keys: list[str]) -> Pairs:
    """All (lhs row, rhs row), lhs from `left` and rhs from `right` (rows of `experiments`),
    that agree on `keys`, an empty value on either side a wildcard.

    Rows are split by which keys they have values for (a handful of patterns, set by parameter
    applicability); each pattern pair is one equi-join on the keys both sides have: pairs in
    the order of the lhs rows, then of the rhs rows.
    """
    rows = np.concatenate((left, right)).astype(np.int64)
    codes = experiments.codes[rows][:, [experiments.column(key) for key in keys]]
    weights = np.left_shift(np.int64(1), np.arange(len(keys), dtype=np.int64))
    patterns = experiments.present(keys)[rows].astype(np.int64) @ weights
    left_side = np.arange(left.size)
    right_side = np.arange(left.size, rows.size)
    lhs_pieces, rhs_pieces = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
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
    return np.concatenate(lhs_pieces), np.concatenate(rhs_pieces)


# Per key, the distinct combined values among a set of tests (strings: the shared value, or
# "lhs|rhs") and which of them each test has.
CombinedKeys = dict[str, tuple[np.ndarray, np.ndarray]]


def combined_keys(
    experiments: Experiments, lhs_rows: np.ndarray, rhs_rows: np.ndarray
) -> CombinedKeys:
    """The combined values of every key for the tests (lhs_rows[i], rhs_rows[i]), each distinct
    one spelled once: the key columns of tests.csv and the groups both come from them."""
    combined = {}
    for index, key in enumerate(experiments.keys):
        levels = experiments.levels[index]
        lhs_codes = experiments.codes[lhs_rows, index]
        rhs_codes = experiments.codes[rhs_rows, index]
        pairs, pair_of_test = np.unique(lhs_codes * len(levels) + rhs_codes, return_inverse=True)
        lhs_level, rhs_level = np.divmod(pairs, len(levels))
        text = np.where(
            lhs_level == rhs_level,
            levels[lhs_level],
            levels[lhs_level] + PAIR_SEPARATOR + levels[rhs_level],
        )
        combined[key] = (text, pair_of_test)
    return combined


def _strings(text: Sequence[str], index: np.ndarray) -> pd.Series:
    """text[index] as pandas' own string column, built by Arrow (not from Python objects)."""
    return pa.array(text, pa.large_string()).take(index).to_pandas()


def combined_values(combined: CombinedKeys) -> dict[str, pd.Series]:
    """Per key and test: the shared value, or "lhs|rhs" where they differ (lossless: an empty,
    not-applicable side stays visible, e.g. "|LINEAR")."""
    return {key: _strings(text.tolist(), of_test) for key, (text, of_test) in combined.items()}


def lhs_side(values: pd.Series) -> pd.Series:
    """Per cell of a column of `combined_values`, as text, the lhs experiment's value. A column
    holds a few distinct cells: each is split once."""
    codes, cells = pd.factorize(values, use_na_sentinel=False)
    sides = [split_pair(str(cell))[0] for cell in cells]
    return _strings(sides, codes).set_axis(values.index)


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
    experiments: Experiments,
    lhs: Mapping[str, Sequence[str]],
    rhs: Mapping[str, Sequence[str]],
) -> Pairs:
    """The tests of one lhs/rhs comparison."""
    lhs_rows, rhs_rows = match(
        experiments,
        np.flatnonzero(experiments.selected(lhs)),
        np.flatnonzero(experiments.selected(rhs)),
        matched_keys(experiments.keys, lhs, rhs),
    )
    # An experiment compared with itself is no test (selectors that fix nothing distinct).
    distinct = lhs_rows != rhs_rows
    return lhs_rows[distinct], rhs_rows[distinct]


def series_keys(keys: Sequence[str], varied: str) -> list[str]:
    """The keys that stay fixed along a series of `varied` (a group, docs/analysis.md)."""
    moving = {varied, *LINKED_KEYS.get(varied, ())}
    return [key for key in keys if key not in moving]


def pair_monotone(
    experiments: Experiments, select: Mapping[str, Sequence[str]], varied: str
) -> Pairs:
    """Consecutive points of every series along `varied`: lhs = smaller value, rhs = next."""
    varied_column = experiments.column(varied)
    chosen = np.flatnonzero(experiments.selected(select) & experiments.present([varied])[:, 0])
    fixed_columns = [experiments.column(key) for key in series_keys(experiments.keys, varied)]
    fixed = experiments.codes[chosen][:, fixed_columns]
    values = pd.to_numeric(pd.Series(experiments.levels[varied_column]), errors="coerce")
    position = values.to_numpy(dtype=np.float64)[experiments.codes[chosen, varied_column]]
    # By series (their keys' strings), then position; np.lexsort's last key is the first.
    order = np.lexsort((position, *fixed.T[::-1]))
    rows, fixed = chosen[order], fixed[order]
    same_series = (fixed[1:] == fixed[:-1]).all(axis=1)
    return rows[:-1][same_series], rows[1:][same_series]


def group_ids(combined: CombinedKeys, comparison: np.ndarray, varied: str) -> np.ndarray:
    """Group number per test: tests of one comparison equal on every key but `varied` (and
    the keys linked to it) share it; numbered 0, 1, ... in the order of the comparison, then of
    the keys' combined values (combined_values) as strings."""
    # Dense ranks of the tuples (comparison, key values so far), extended one key at a time:
    # ranking (rank so far, rank of the key's value) pairs keeps their lexicographic order.
    group = np.unique(np.asarray(comparison, dtype=np.int64), return_inverse=True)[1]
    for key in series_keys(list(combined), varied):
        text, pair_of_test = combined[key]
        # the rank of each test's combined value among the distinct strings (equal, equal)
        rank = np.unique(text, return_inverse=True)[1][pair_of_test]
        group = np.unique(group * (len(text) + 1) + rank, return_inverse=True)[1]
    return group.astype(np.int64)
