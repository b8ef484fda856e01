"""The vectorised Shapiro-Wilk test gives scipy.stats.shapiro's p-value on every row."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from mpiguide.analysis.shapiro import MAX_SIZE, shapiro_pvalues
from mpiguide.analysis.stats import NORMALITY_ALPHA


def scipy_pvalues(samples: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # range zero: scipy warns and returns 1
        return np.array([stats.shapiro(row).pvalue for row in samples])


def samples_of(size: int, rng: np.random.Generator) -> np.ndarray:
    """Normal, skewed, heavily tied, tiny-spread and constant rows of one size."""
    rows = 40
    return np.vstack(
        (
            rng.normal(size=(rows, size)),
            rng.lognormal(sigma=1.5, size=(rows, size)),
            np.round(rng.normal(size=(rows, size)), 1),
            3 + 1e-7 * rng.exponential(size=(rows, size)),
            np.full((1, size), 0.25),
        )
    )


@pytest.mark.parametrize("size", [*range(3, 41), 50, 100, 257])
def test_pvalues_are_scipys(size: int) -> None:
    samples = samples_of(size, np.random.default_rng(size))
    ours, theirs = shapiro_pvalues(samples), scipy_pvalues(samples)
    # Same algorithm, same order of summation; numpy's and libm's exp/log may differ by an ulp.
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300)
    assert np.array_equal(ours > NORMALITY_ALPHA, theirs > NORMALITY_ALPHA)


def test_extreme_departures_reach_the_tails() -> None:
    rng = np.random.default_rng(7)
    samples = np.vstack((np.r_[np.zeros(9), 1e6][None, :], rng.normal(size=(3, 10)) ** 9))
    np.testing.assert_allclose(shapiro_pvalues(samples), scipy_pvalues(samples), rtol=1e-12)


@pytest.mark.parametrize("size", [2, MAX_SIZE + 1])
def test_sizes_outside_the_algorithm_are_refused(size: int) -> None:
    with pytest.raises(ValueError, match="Shapiro-Wilk needs 3"):
        shapiro_pvalues(np.ones((1, size)))
