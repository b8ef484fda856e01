"""Three-way verdicts on synthetic run medians with known ratio and noise, and their bounds held
to scipy's and statsmodels' own single calls."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.weightstats import ttost_ind, ttost_paired

from mpiguide.analysis.comparisons import PAIRED_T, WELCH_T, RunMedians, compare
from mpiguide.analysis.verdicts import (
    HOLDS,
    UNDECIDED,
    VIOLATED,
    Thresholds,
    detectable_ratios,
    group_verdicts,
    runs_needed,
    verdicts,
)

THRESHOLDS = Thresholds(p_thres=0.001, v_thres=1.03, confidence=0.95)


def run_medians(ratio: float, noise: float, runs: int, tests: int, seed: int) -> tuple:
    """`tests` pairs of experiments: rhs ~ 1e-5 * exp(N(0, noise)), lhs = ratio x its own run's
    rhs x exp(N(0, noise)) (the same launches: a per-run factor shared by both sides)."""
    rng = np.random.default_rng(seed)
    launch = np.exp(rng.normal(0, 0.2, (tests, runs)))
    rhs = 1e-5 * launch * np.exp(rng.normal(0, noise, (tests, runs)))
    lhs = ratio * 1e-5 * launch * np.exp(rng.normal(0, noise, (tests, runs)))
    values = np.concatenate([lhs, rhs]).ravel()
    rows = np.repeat(np.arange(2 * tests), runs)
    runs_of = np.tile(np.arange(runs), 2 * tests)
    medians = RunMedians.from_frame(rows, runs_of, values, 2 * tests)
    return medians, np.arange(tests), np.arange(tests, 2 * tests), lhs, rhs


def decide(ratio, noise, runs, approx=False, paired=True, tests=40, seed=1):
    medians, lhs_rows, rhs_rows, lhs, rhs = run_medians(ratio, noise, runs, tests, seed)
    alternative = "two-sided" if approx else "greater"
    frame = compare(
        medians, lhs_rows, rhs_rows, alternative, THRESHOLDS.confidence,
        np.full(tests, paired),
    )  # fmt: skip
    verdict = verdicts(
        approx, frame["violation_ratio"].to_numpy(), frame["ratio_low"].to_numpy(),
        frame["ratio_high"].to_numpy(), frame["p_value"].to_numpy(), THRESHOLDS,
    )  # fmt: skip
    return frame, verdict, lhs, rhs


def test_no_difference_measured_tightly_holds():
    _, verdict, _, _ = decide(1.00, 0.005, 10)
    assert (verdict == HOLDS).all()


def test_no_difference_measured_noisily_is_undecided():
    # A `holds` here is a true statement (the ratio is 1.00 < v_thres) that only a lucky draw
    # can support: about as often as the bound's own error rate, 1 - confidence (a little more,
    # since the truth lies below v_thres), and far from the majority.
    _, verdict, _, _ = decide(1.00, 0.30, 10, tests=400)
    assert (verdict == UNDECIDED).mean() > 0.9
    assert (verdict == HOLDS).mean() <= 2 * (1 - THRESHOLDS.confidence)
    assert not (verdict == VIOLATED).any()


def test_a_quarter_slower_with_little_noise_is_violated():
    _, verdict, _, _ = decide(1.25, 0.01, 10)
    assert (verdict == VIOLATED).all()


def test_approx_inside_the_margin_holds_and_far_outside_is_violated():
    _, inside, _, _ = decide(1.00, 0.005, 10, approx=True)
    assert (inside == HOLDS).all()
    _, outside, _, _ = decide(1.30, 0.01, 10, approx=True)
    assert (outside == VIOLATED).all()
    _, faster, _, _ = decide(1 / 1.30, 0.01, 10, approx=True)
    assert (faster == VIOLATED).all()


def test_one_run_is_never_holds():
    frame, verdict, _, _ = decide(1.00, 0.001, 1, tests=5)
    assert not (verdict == HOLDS).any()
    assert frame["ratio_high"].isna().all()


def assert_bounds_and_equivalence(row, low: float, high: float, tost_pvalue: float) -> None:
    """The row's bounds are the library's log interval, and an approx verdict holds exactly
    where the library's TOST rejects both one-sided nulls at 1 - confidence."""
    assert np.log(row["ratio_low"]) == pytest.approx(low, rel=1e-10, abs=1e-12)
    assert np.log(row["ratio_high"]) == pytest.approx(high, rel=1e-10, abs=1e-12)
    approx = verdicts(
        True,
        np.array([row["violation_ratio"]]),
        np.array([row["ratio_low"]]),
        np.array([row["ratio_high"]]),
        np.ones(1),
        THRESHOLDS,
    )
    assert (approx[0] == HOLDS) == (tost_pvalue <= 1 - THRESHOLDS.confidence)


@pytest.mark.parametrize(("ratio", "noise"), [(1.0, 0.01), (1.02, 0.02), (1.1, 0.05)])
def test_paired_bounds_are_scipys_one_sample_t_interval(ratio, noise):
    frame, _, lhs, rhs = decide(ratio, noise, 10, tests=12)
    assert (frame["test"] == PAIRED_T).all()
    for i, (x, y) in enumerate(zip(np.log(lhs), np.log(rhs), strict=True)):
        result = scipy_stats.ttest_1samp(x - y, 0.0, alternative="greater")
        assert frame["p_value"][i] == pytest.approx(result.pvalue, rel=1e-10)
        # the two one-sided 95 % bounds: the two-sided 90 % interval
        low, high = scipy_stats.ttest_1samp(x - y, 0.0).confidence_interval(0.90)
        tost = ttost_paired(x, y, -np.log(1.03), np.log(1.03))[0]
        assert_bounds_and_equivalence(frame.iloc[i], low, high, tost)


@pytest.mark.parametrize(("ratio", "noise"), [(1.0, 0.01), (1.02, 0.02), (1.2, 0.05)])
def test_welch_bounds_are_statsmodels_ttost_ind(ratio, noise):
    frame, _, lhs, rhs = decide(ratio, noise, 8, paired=False, tests=12)
    assert (frame["test"] == WELCH_T).all()
    for i, (x, y) in enumerate(zip(np.log(lhs), np.log(rhs), strict=True)):
        result = scipy_stats.ttest_ind(x, y, equal_var=False, alternative="greater")
        assert frame["p_value"][i] == pytest.approx(result.pvalue, rel=1e-10)
        low, high = scipy_stats.ttest_ind(x, y, equal_var=False).confidence_interval(0.90)
        tost = ttost_ind(x, y, -np.log(1.03), np.log(1.03), usevar="unequal")[0]
        assert_bounds_and_equivalence(frame.iloc[i], low, high, tost)


def test_no_test_is_both_violated_and_holding():
    for ratio in (0.9, 1.0, 1.03, 1.05, 1.2):
        for noise in (0.001, 0.05, 0.3):
            frame, verdict, _, _ = decide(ratio, noise, 6, tests=30, seed=int(ratio * 100))
            ratio_col = frame["violation_ratio"].to_numpy()
            violated = (frame["p_value"] <= THRESHOLDS.p_thres) & (ratio_col >= 1.03)
            assert ((verdict == VIOLATED) == violated).all()
            assert not ((verdict == HOLDS) & (frame["ratio_high"] >= 1.03)).any()


def test_detectable_ratio_is_found_with_its_power_in_simulation():
    """At the detectable ratio, about POWER of fresh tests with the same spread are violated."""
    noise, runs = 0.02, 10
    frame, _, _, _ = decide(1.0, noise, runs, tests=400, seed=3)
    se = np.log(frame["ratio_high"] / frame["violation_ratio"]) / scipy_stats.t.ppf(0.95, runs - 1)
    detectable = detectable_ratios(False, se.to_numpy(), np.full(400, runs - 1.0), THRESHOLDS)
    _, verdict, _, _ = decide(float(np.median(detectable)), noise, runs, tests=400, seed=4)
    assert 0.6 < (verdict == VIOLATED).mean() < 0.95


def test_runs_needed_gives_even_odds_of_a_decision():
    """An undecided test whose estimate is the truth: at runs_needed, fresh tests with the same
    true ratio and noise are decided about half the time."""
    noise, runs = 0.05, 5
    spread = noise * np.sqrt(2)  # sd of a per-run log-ratio: two independent noises
    se = np.array([spread / np.sqrt(runs)])
    needed = runs_needed(
        False, np.zeros(1), se, np.array([runs]), np.ones(1, dtype=bool), THRESHOLDS
    )
    assert needed[0] > runs
    _, later, _, _ = decide(1.0, noise, int(needed[0]), tests=300, seed=6)
    assert 0.3 <= (later != UNDECIDED).mean() <= 0.8


def test_group_verdicts():
    verdict = np.array([HOLDS, HOLDS, HOLDS, UNDECIDED, VIOLATED, UNDECIDED, HOLDS])
    groups = np.array([0, 0, 1, 1, 2, 2, 3])
    assert list(group_verdicts(verdict, groups)) == [
        HOLDS, HOLDS, UNDECIDED, UNDECIDED, VIOLATED, VIOLATED, HOLDS,
    ]  # fmt: skip
