"""Tukey-filtered medians: how a run's repetitions of one experiment become its run median.

- `tukey_medians`: Tukey-filtered median of every group of a flat array (one sort, no loop);
  `tukey_row_medians` the same for groups already laid out as the rows of a padded matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Tukey's fences: values outside [q1 - k*IQR, q3 + k*IQR] are outliers.
TUKEY_K = 1.5


@dataclass(frozen=True)
class GroupMedians:
    """Per group (in the order of the sorted group codes): filtered median and values kept."""

    codes: np.ndarray  # the group codes present, ascending
    median: np.ndarray  # float64
    n_kept: np.ndarray  # int64


def _row_quantile(rows: np.ndarray, count: np.ndarray, q: float) -> np.ndarray:
    """Quantile q of each row's first count[i] values (rows sorted ascending).

    Linear interpolation between order statistics, as numpy's default ('linear') method.
    """
    position = (count - 1) * q
    low = np.floor(position).astype(np.int64)
    high = np.ceil(position).astype(np.int64)
    index = np.arange(rows.shape[0])
    v_low = rows[index, low]
    return v_low + (rows[index, high] - v_low) * (position - low)


def tukey_medians(codes: np.ndarray, values: np.ndarray) -> GroupMedians:
    """Median of each group after dropping values outside Tukey's fences.

    `codes` labels each value with its group (any integer). The groups become the rows of a
    matrix padded with +inf and sorted along its rows (one vectorised sort; repetitions of an
    experiment are about equally many, so padding wastes little). The kept values of a sorted
    row are contiguous, so the filtered median is read off by index arithmetic.
    """
    codes = np.asarray(codes)
    values = np.asarray(values, dtype=np.float64)
    if codes.shape != values.shape or codes.ndim != 1:
        raise ValueError("codes and values must be 1-D arrays of the same length")
    if values.size == 0:
        empty = np.empty(0)
        return GroupMedians(codes[:0], empty, empty.astype(np.int64))
    group_codes, group_of_value, count = np.unique(codes, return_inverse=True, return_counts=True)
    order = np.argsort(group_of_value, kind="stable")
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    grouped = group_of_value[order]
    rows = np.full((group_codes.size, int(count.max())), np.inf)
    rows[grouped, np.arange(values.size) - start[grouped]] = values[order]
    median, n_kept = tukey_row_medians(rows, count)
    return GroupMedians(group_codes, median, n_kept)


def tukey_row_medians(rows: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tukey-filtered median and number of kept values of each row's first count[i] values.

    `rows` (groups, width) holds each group's values in any order, padded with +inf; it is
    sorted in place. Every count must be at least 1.
    """
    rows.sort(axis=1)
    q1 = _row_quantile(rows, count, 0.25)
    q3 = _row_quantile(rows, count, 0.75)
    iqr = q3 - q1
    n_below = (rows < (q1 - TUKEY_K * iqr)[:, None]).sum(axis=1)
    n_above = (rows > (q3 + TUKEY_K * iqr)[:, None]).sum(axis=1) - (rows.shape[1] - count)
    n_kept = count - n_below - n_above
    # The median always lies inside the fences, so every group keeps at least one value.
    index = np.arange(rows.shape[0])
    middle_low = rows[index, n_below + (n_kept - 1) // 2]
    middle_high = rows[index, n_below + n_kept // 2]
    return 0.5 * (middle_low + middle_high), n_kept.astype(np.int64)
