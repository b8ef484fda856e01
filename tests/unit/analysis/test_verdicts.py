"""Three-way verdicts on synthetic run medians with known ratio and noise, and their bounds held
to scipy's and statsmodels' own single calls."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.weightstats import ttost_ind, ttost_paired

from mpiguide.analysis.comparisons import (
    HOLDS_BOUNDS,
    PAIRED_T,
    WELCH_T,
    RunMedians,
    compare,
)
from mpiguide.analysis.stats import adjust_pvalues, one_sided_bounds
from mpiguide.analysis.verdicts import (
    BEYOND_REACH,
    HOLDS,
    UNDECIDED,
    VIOLATED,
    Bounds,
    Thresholds,
    detectable_ratios,
    group_verdicts,
    runs_needed,
    runs_needed_text,
    shown_intervals,
    uncorrected_tail,
    verdicts,
    violation_tails,
)
from mpiguide.analysis.verdicts import decide as decide_tests

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
    tail = uncorrected_tail(approx, THRESHOLDS.p_thres)
    frame = compare(
        medians, lhs_rows, rhs_rows, alternative, THRESHOLDS.confidence,
        np.full(tests, paired), tail,
    )  # fmt: skip
    frame["p_adjusted"] = frame["p_value"]
    decide_tests(approx, frame, THRESHOLDS)
    return frame, frame["verdict"].to_numpy(), lhs, rhs


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


def assert_bounds_and_equivalence(
    row, low: float, high: float, violation_low: float, tost_pvalue: float
) -> None:
    """The row's holds bounds are the library's log interval at 2 confidence - 1, the shown lower
    bound the library's at the violation level (one-sided 1 - p_thres), the shown upper bound
    the holds bound; and an approx verdict holds exactly where the library's TOST rejects both
    one-sided nulls at 1 - confidence."""
    holds_low, holds_high = (row[c] for c in HOLDS_BOUNDS)
    assert np.log(holds_low) == pytest.approx(low, rel=1e-10, abs=1e-12)
    assert np.log(holds_high) == pytest.approx(high, rel=1e-10, abs=1e-12)
    assert np.log(row["ratio_low"]) == pytest.approx(violation_low, rel=1e-10, abs=1e-12)
    assert row["ratio_high"] == holds_high
    assert (row["low_level"], row["high_level"]) == (1 - THRESHOLDS.p_thres, 0.95)
    ratio = np.array([row["violation_ratio"]])
    nowhere = Bounds(np.array([np.nan]), np.array([np.nan]))
    holds = Bounds(np.array([holds_low]), np.array([holds_high]))
    approx = verdicts(True, ratio, nowhere, holds, THRESHOLDS)
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
        violation_low = scipy_stats.ttest_1samp(x - y, 0.0).confidence_interval(0.998).low
        tost = ttost_paired(x, y, -np.log(1.03), np.log(1.03))[0]
        assert_bounds_and_equivalence(frame.iloc[i], low, high, violation_low, tost)


@pytest.mark.parametrize(("ratio", "noise"), [(1.0, 0.01), (1.02, 0.02), (1.2, 0.05)])
def test_welch_bounds_are_statsmodels_ttost_ind(ratio, noise):
    frame, _, lhs, rhs = decide(ratio, noise, 8, paired=False, tests=12)
    assert (frame["test"] == WELCH_T).all()
    for i, (x, y) in enumerate(zip(np.log(lhs), np.log(rhs), strict=True)):
        result = scipy_stats.ttest_ind(x, y, equal_var=False, alternative="greater")
        assert frame["p_value"][i] == pytest.approx(result.pvalue, rel=1e-10)
        interval = scipy_stats.ttest_ind(x, y, equal_var=False).confidence_interval
        low, high = interval(0.90)
        tost = ttost_ind(x, y, -np.log(1.03), np.log(1.03), usevar="unequal")[0]
        assert_bounds_and_equivalence(frame.iloc[i], low, high, interval(0.998).low, tost)


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


def synthetic_rows(approx: bool, correction: str, seed: int, families: int = 40, size: int = 100):
    """Families of synthetic tests, as decide sees them: log effects, standard errors and degrees
    of freedom drawn at random, the p-value of the t model (or, for a quarter of the rows, one
    drawn at random, as a rank test's p-value need not match its bounds), corrected per family;
    the violation and holds bounds from the t model at their levels, and for a fifth of the rows
    an effect moved outside them (a rank-sum's ratio of medians). Some rows have no bounds."""
    rng = np.random.default_rng(seed)
    rows = families * size
    log_effect = rng.normal(0, 0.08, rows) * rng.choice([0.1, 1, 4], rows)
    se = np.exp(rng.uniform(np.log(1e-4), np.log(0.3), rows))
    df = rng.choice([0.0, 1.0, 4.0, 9.0, 29.0, 200.0], rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = log_effect / se
        model_p = 2 * scipy_stats.t.sf(np.abs(t), df) if approx else scipy_stats.t.sf(t, df)
    p_value = np.where(rng.random(rows) < 0.25, rng.random(rows) ** 4, model_p)
    p_adjusted = np.concatenate([
        adjust_pvalues(family, correction) for family in p_value.reshape(families, size)
    ])  # fmt: skip
    tails = np.concatenate([
        violation_tails(approx, p, adjusted, THRESHOLDS.p_thres)
        for p, adjusted in zip(
            p_value.reshape(families, size), p_adjusted.reshape(families, size), strict=True
        )
    ])  # fmt: skip
    violation = Bounds(*one_sided_bounds(log_effect, se, df, 1 - tails))
    holds = Bounds(*one_sided_bounds(log_effect, se, df, THRESHOLDS.confidence))
    moved = rng.random(rows) < 0.2
    ratio = np.exp(log_effect + np.where(moved, rng.normal(0, 0.2, rows), 0.0))
    return ratio, violation, holds, tails


@pytest.mark.parametrize("correction", ["none", "holm", "bh"])
@pytest.mark.parametrize("approx", [False, True])
def test_no_shown_interval_contradicts_its_verdict(approx, correction):
    """violated: the interval excludes 1 on the side of the effect; holds: it lies inside the
    holds region; undecided: it is neither wholly beyond v_thres nor wholly inside the holds
    region."""
    v = THRESHOLDS.v_thres
    for seed in range(5):
        ratio, violation, holds, tails = synthetic_rows(approx, correction, seed)
        verdict = verdicts(approx, ratio, violation, holds, THRESHOLDS)
        shown = shown_intervals(approx, verdict, ratio, violation, holds, tails, 0.95)
        low, high = shown.low, shown.high
        violated, held, undecided = (verdict == VIOLATED, verdict == HOLDS,
                                     verdict == UNDECIDED)  # fmt: skip
        assert violated.any() and held.any() and undecided.any()
        assert ((low <= ratio) & (ratio <= high))[~np.isnan(low)].all()
        if approx:
            assert ((low[violated] > 1) | (high[violated] < 1)).all()
            assert ((low[held] > 1 / v) & (high[held] < v)).all()
            assert not (low[undecided] >= v).any()
            assert not (high[undecided] <= 1 / v).any()
            assert not ((low[undecided] > 1 / v) & (high[undecided] < v)).any()
        else:
            assert (low[violated] > 1).all()
            assert (ratio[violated] >= v).all()
            assert (high[held] < v).all()
            assert not (low[undecided] >= v).any()
            assert not (high[undecided] < v).any()
        # each bound's level is the one of the rule it stands for
        assert (shown.high_level[held] == 0.95).all()
        assert np.allclose(shown.low_level[violated], 1 - tails[violated])
        if not approx:
            assert (shown.high_level == 0.95).all()


@pytest.mark.parametrize("correction", ["none", "holm", "bh"])
@pytest.mark.parametrize("approx", [False, True])
def test_the_violation_bound_decides_as_the_corrected_p_value(approx, correction):
    """For the t model the lower violation bound is above 1 exactly where p_adjusted <= p_thres
    (the test's own rule, on the side of the effect): reading the verdict off the shown bound
    changes none (rows within rounding of the level aside)."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        size = 200
        log_effect = rng.normal(0, 0.05, size)
        se = np.exp(rng.uniform(np.log(1e-3), np.log(0.05), size))
        df = np.full(size, 9.0)
        t = log_effect / se
        p = 2 * scipy_stats.t.sf(np.abs(t), df) if approx else scipy_stats.t.sf(t, df)
        adjusted = adjust_pvalues(p, correction)
        tails = violation_tails(approx, p, adjusted, THRESHOLDS.p_thres)
        assert ((p <= (2 if approx else 1) * tails) == (adjusted <= THRESHOLDS.p_thres)).all()
        violation = Bounds(*one_sided_bounds(log_effect, se, df, 1 - tails))
        holds = Bounds(*one_sided_bounds(log_effect, se, df, THRESHOLDS.confidence))
        ratio = np.exp(log_effect)
        verdict = verdicts(approx, ratio, violation, holds, THRESHOLDS)
        size_of = np.maximum(ratio, 1 / ratio) if approx else ratio
        by_p = (adjusted <= THRESHOLDS.p_thres) & (size_of >= THRESHOLDS.v_thres)
        margin = np.abs(p / ((2 if approx else 1) * tails) - 1) > 1e-9
        assert ((verdict == VIOLATED) == by_p)[margin].all()


def test_violation_tails_undo_the_correction():
    p = np.array([0.0, 1e-6, 2e-4, 4e-4, 0.3, 0.9, np.nan])
    assert violation_tails(False, p, p, 0.001)[:6] == pytest.approx(np.full(6, 0.001))
    assert np.isnan(violation_tails(False, p, p, 0.001)[6])
    assert violation_tails(True, p[:1], p[:1], 0.001)[0] == pytest.approx(0.0005)
    holm = adjust_pvalues(p[:6], "holm")
    tails = violation_tails(False, p[:6], holm, 0.001)
    # Holm's step-down: the smallest p-value against p_thres / 6, the next against / 5 ...
    assert tails[1] == pytest.approx(0.001 / 5)
    assert tails[2] == pytest.approx(0.001 / 4)
    assert ((p[:6] <= tails) == (holm <= 0.001)).all()
    rng = np.random.default_rng(11)
    for correction in ("holm", "bh"):
        for _ in range(200):
            family = rng.random(30) ** rng.choice([1, 4, 12])
            family[rng.random(30) < 0.05] = 0.0
            adjusted = adjust_pvalues(family, correction)
            tails = violation_tails(False, family, adjusted, 0.001)
            assert ((family <= tails) == (adjusted <= 0.001)).all()
            assert (tails <= 0.001).all()


def test_runs_needed_beyond_reach_is_said_in_words():
    assert runs_needed_text(40, 10, UNDECIDED) == "40"
    assert runs_needed_text("40", "10", UNDECIDED) == "40"
    assert runs_needed_text(120, 10, UNDECIDED) == BEYOND_REACH  # > 10x the runs
    assert runs_needed_text(1200, 500, UNDECIDED) == BEYOND_REACH  # > 1 000
    assert runs_needed_text("", 10, UNDECIDED) == BEYOND_REACH  # none up to MAX_RUNS
    assert runs_needed_text(float("nan"), 10, UNDECIDED) == BEYOND_REACH
    assert runs_needed_text("", 10, HOLDS) == ""
