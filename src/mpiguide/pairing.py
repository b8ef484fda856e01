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


def canonical_strings(column: pd.Series) -> pd.Series:
    """Values as strings: integers without decimals (also in float columns), missing as ""."""
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column):
        numbers = column.astype("float64")
        integral = numbers.notna() & (numbers == np.round(numbers))
        text = numbers.astype(str)
        text[integral] = numbers[integral].astype("int64").astype(str)
        text[numbers.isna()] = ""
        return text.astype(object)
    return column.astype(object).where(column.notna(), "").astype(str).astype(object)


def selector_mask(experiments: pd.DataFrame, selector: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Rows of `experiments` (canonical strings) whose values are allowed by the selector."""
    mask = np.ones(len(experiments), dtype=bool)
    for key, allowed in selector.items():
        mask &= experiments[key].isin(list(allowed)).to_numpy()
    return mask


def _emptiness_patterns(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """One integer per row: bit i set when keys[i] has a value (is applicable)."""
    present = frame[keys].to_numpy() != ""
    weights = np.left_shift(np.int64(1), np.arange(len(keys), dtype=np.int64))
    return present.astype(np.int64) @ weights


def _shared_codes(
    left: pd.DataFrame, right: pd.DataFrame, keys: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`row` and the keys of both sides, each key's values as integer codes common to both
    sides, so the joins compare integers rather than strings."""
    columns = {"row": np.concatenate((left["row"].to_numpy(), right["row"].to_numpy()))}
    for key in keys:
        values = np.concatenate(
            (left[key].to_numpy(dtype=object), right[key].to_numpy(dtype=object))
        )
        columns[key] = pd.factorize(values)[0]
    codes = pd.DataFrame(columns)
    return codes.iloc[: len(left)], codes.iloc[len(left) :]


def match(left: pd.DataFrame, right: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """All (lhs_row, rhs_row) that agree on `keys`, an empty value on either side a wildcard.

    `left`/`right` hold the keys as canonical strings and a `row` column. Rows are split by
    which keys they have values for (a handful of patterns, set by parameter applicability);
    each pattern pair is one equi-join on the keys both sides have.
    """
    pieces = []
    left_patterns = _emptiness_patterns(left, keys)
    right_patterns = _emptiness_patterns(right, keys)
    left_codes, right_codes = _shared_codes(left, right, keys)
    for left_pattern in np.unique(left_patterns):
        left_part = left_codes.loc[left_patterns == left_pattern]
        for right_pattern in np.unique(right_patterns):
            right_part = right_codes.loc[right_patterns == right_pattern]
            common = left_pattern & right_pattern
            on = [key for bit, key in enumerate(keys) if common >> bit & 1]
            joined = pd.merge(
                left_part[["row", *on]].rename(columns={"row": "lhs_row"}),
                right_part[["row", *on]].rename(columns={"row": "rhs_row"}),
                how="inner" if on else "cross",
                on=on or None,
            )
            pieces.append(joined[["lhs_row", "rhs_row"]])
    if not pieces:
        return pd.DataFrame({"lhs_row": [], "rhs_row": []}, dtype=np.int64)
    return pd.concat(pieces, ignore_index=True)


def combined_values(
    experiments: pd.DataFrame, lhs_rows: np.ndarray, rhs_rows: np.ndarray, keys: Sequence[str]
) -> pd.DataFrame:
    """Per test and key: the shared value, or "lhs|rhs" where they differ (lossless: an empty,
    not-applicable side stays visible, e.g. "|LINEAR")."""
    columns = {}
    for key in keys:
        values = experiments[key].to_numpy()
        lhs, rhs = values[lhs_rows], values[rhs_rows]
        differ = lhs != rhs
        joined = lhs.astype(object)
        if differ.any():
            joined[differ] = lhs[differ] + PAIR_SEPARATOR + rhs[differ]
        columns[key] = joined
    return pd.DataFrame(columns)


def lhs_side(values: pd.Series) -> pd.Series:
    """Per cell of a column of `combined_values`, the lhs experiment's value."""
    text = values.astype(str)
    # Most keys are shared by both sides in every test; splitting them would only cost.
    if not text.str.contains(PAIR_SEPARATOR, regex=False).any():
        return text
    return text.str.partition(PAIR_SEPARATOR)[0]


def rhs_side(values: pd.Series) -> pd.Series:
    """Per cell of a column of `combined_values`, the rhs experiment's value."""
    text = values.astype(str)
    parts = text.str.partition(PAIR_SEPARATOR)
    return parts[2].where(parts[1] == PAIR_SEPARATOR, parts[0])


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
