"""The Shapiro-Wilk test of many samples of one size at once.

`scipy.stats.shapiro` takes one sample per call (its `axis` argument loops over the rows in
Python), and the paired tests run it on every test's per-run log-ratios: tens of thousands of
calls, far slower than one vectorised pass (docs/analysis.md §6 has the figures). This is the
same algorithm, Royston's AS R94 ("A Remark on Algorithm AS 181: The W-test for Normality",
Applied Statistics 44, 1995), with the same approximations scipy uses (AS 111 for the normal
quantiles of the coefficients, AS 66 for the normal tail of the p-value) and the same order of
summation, vectorised over the rows: tests/unit/test_shapiro.py holds it to scipy's W and
p-value on every row. Only full samples (no censoring, scipy's only use) and sizes up to 5000
(scipy warns above) are handled.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

MAX_SIZE = 5000

# AS R94's polynomial coefficients, lowest order first.
_C1 = (0.0, 0.221157, -0.147981, -2.07119, 4.434685, -2.706056)
_C2 = (0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633)
_C3 = (0.5440, -0.39978, 0.025054, -0.0006714)
_C4 = (1.3822, -0.77857, 0.062767, -0.0020322)
_C5 = (-1.5861, -0.31082, -0.083751, 0.0038915)
_C6 = (-0.4803, -0.082676, 0.0030302)
_GAMMA = (-2.273, 0.459)
# p-value of a W beyond the reach of the small-sample transformation.
_SMALL = 1e-19


def _poly(coefficients: tuple[float, ...], x: float) -> float:
    """c0 + c1 x + c2 x^2 + ..., evaluated in AS R94's order (Horner from the top, c0 last)."""
    if len(coefficients) == 1:
        return coefficients[0]
    p = x * coefficients[-1]
    for c in reversed(coefficients[1:-1]):
        p = (p + c) * x
    return coefficients[0] + p


def _normal_quantile(p: float) -> float:
    """AS 111 (Beasley & Springer 1977): the standard normal quantile of p."""
    q = p - 0.5
    if abs(q) <= 0.42:
        r = q * q
        numerator = q * (((-25.44106049637 * r + 41.39119773534) * r - 18.61500062529) * r
                         + 2.50662823884)  # fmt: skip
        return numerator / ((((3.13082909833 * r - 21.06224101826) * r + 23.08336743743) * r
                             - 8.47351093090) * r + 1.0)  # fmt: skip
    r = 1 - p if q > 0 else p
    if r <= 0:
        return 0.0
    r = math.sqrt(-math.log(r))
    value = (((2.32121276858 * r + 4.85014127135) * r - 2.29796479134) * r - 2.78718931138) / (
        (1.63706781897 * r + 3.54388924762) * r + 1.0
    )
    return -value if q < 0 else value


def _upper_normal_tail(x: np.ndarray) -> np.ndarray:
    """AS 66 (Hill 1973, range extended to 38 as scipy does): P(Z > x) of every element."""
    lower = ~(x > 0)  # NaN too, as AS 66 has it
    z = np.where(lower, -x, x)
    y = 0.5 * z * z
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        near = 0.5 - z * (
            0.398942280444
            - 0.399903438504 * y
            / (y + 5.75885480458 - 29.8213557808 / (y + 2.62433121679 + 48.6959930692
                                                     / (y + 5.92885724438)))
        )  # fmt: skip
        far = (
            0.398942280385 * np.exp(-y)
            / (z - 3.8052e-8 + 1.00000615302 / (z + 3.98064794e-4 + 1.98615381364
               / (z - 0.151679116635 + 5.29330324926 / (z + 4.8385912808 - 15.1508972451
               / (z + 0.742380924027 + 30.789933034 / (z + 3.99019417011))))))
        )  # fmt: skip
    tail = np.where(z <= 1.28, near, far)
    out_of_range = ~((z <= 7.0) | (~lower & (z <= 38.0)))
    tail = np.where(out_of_range, 0.0, tail)
    return np.where(lower, 1.0 - tail, tail)


@lru_cache(maxsize=64)
def _coefficients(n: int) -> np.ndarray:
    """The n weights of the ordered sample in W (antisymmetric: -a_1 .. 0 .. a_1)."""
    half = n // 2
    if n == 3:
        a = [math.sqrt(0.5)]
    else:
        m = [_normal_quantile((i + 1 - 0.375) / (n + 0.25)) for i in range(half)]
        summ2 = 2.0 * sum(value**2 for value in m)
        ssumm2 = math.sqrt(summ2)
        rsn = 1 / math.sqrt(n)
        a1 = _poly(_C1, rsn) - m[0] / ssumm2
        if n > 5:
            a2 = -m[1] / ssumm2 + _poly(_C2, rsn)
            fac = math.sqrt((summ2 - 2 * m[0] ** 2 - 2 * m[1] ** 2) / (1 - 2 * a1**2 - 2 * a2**2))
            a = [a1, a2] + [value * (-1.0 / fac) for value in m[2:]]
        else:
            fac = math.sqrt((summ2 - 2 * m[0] ** 2) / (1 - 2 * a1**2))
            a = [a1] + [value * (-1.0 / fac) for value in m[1:]]
    weights = np.zeros(n)
    weights[:half] = -np.asarray(a)
    weights[n - half :] = np.asarray(a)[::-1]
    return weights


def _sequential_sum(values: np.ndarray) -> np.ndarray:
    """Row sums added left to right (np.sum adds pairwise: other roundings than AS R94's)."""
    return np.cumsum(values, axis=1)[:, -1]


def shapiro_pvalues(samples: np.ndarray) -> np.ndarray:
    """p-value of the Shapiro-Wilk test of every row of `samples` (T, n), 3 <= n <= MAX_SIZE:
    what scipy.stats.shapiro gives for that row alone (1.0 for a row without range)."""
    tests, n = samples.shape
    if not 3 <= n <= MAX_SIZE:
        raise ValueError(f"Shapiro-Wilk needs 3 to {MAX_SIZE} values per sample, got {n}")
    # Sorted and shifted by the value at position n // 2 of the unsorted row, as scipy does.
    x = np.sort(samples, axis=1) - samples[:, n // 2 : n // 2 + 1]
    span = x[:, -1] - x[:, 0]
    flat = ~(span >= _SMALL)
    span = np.where(flat, 1.0, span)
    weights = _coefficients(n)
    scaled = x / span[:, None]
    mean_weight = _sequential_sum(np.broadcast_to(weights, (1, n)))[0] / n
    centred_weights = weights - mean_weight
    centred = scaled - (_sequential_sum(scaled) / n)[:, None]
    ssa = _sequential_sum(np.broadcast_to(centred_weights * centred_weights, (1, n)))[0]
    ssx = _sequential_sum(centred * centred)
    sax = _sequential_sum(centred_weights * centred)
    ssassx = np.sqrt(ssa * ssx)
    with np.errstate(divide="ignore", invalid="ignore"):  # rows without range: p = 1 below
        w1 = (ssassx - sax) * (ssassx + sax) / (ssa * ssx)
    if n == 3:
        w = 1 - w1
        pvalue = np.where(w < 0.75, 0.0, 1.0 - 6 / math.pi * np.arccos(np.sqrt(w)))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.log(w1)
        if n <= 11:
            gamma = _poly(_GAMMA, n)
            beyond = y >= gamma
            with np.errstate(divide="ignore", invalid="ignore"):
                y = -np.log(gamma - y)
            mean, scale = _poly(_C3, n), math.exp(_poly(_C4, n))
        else:
            beyond = np.zeros(tests, dtype=bool)
            mean, scale = _poly(_C5, math.log(n)), math.exp(_poly(_C6, math.log(n)))
        pvalue = np.where(beyond, _SMALL, _upper_normal_tail((y - mean) / scale))
    return np.where(flat, 1.0, pvalue)
