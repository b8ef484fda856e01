"""The stopping rule of adaptive campaigns on synthetic run medians with known effects: the whole
sequential procedure simulated for thousands of tests at once, its error rates held to the
nominal levels that repeated fixed-n decisions exceed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from mpiguide.analysis.comparisons import (
    BLOCK_SIGNED_RANK,
    NO_PAIRING,
    PAIR_RUNS,
    PAIRED_T,
    TEST_COLUMN,
    RunMedians,
    compare,
)
from mpiguide.analysis.sequential import (
    DECIDED,
    FUTILE,
    MAX_RUNS,
    OPEN,
    Looks,
    decision_chances,
    first_stops,
    stops,
)
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED, Thresholds, decide

LOOKS = Looks.planned(5, 30, 5)
DEFAULTS = Thresholds(p_thres=0.001, v_thres=1.03, confidence=0.95)
# Levels at which error rates are measurable with a few thousand simulated tests.
LOOSE = Thresholds(p_thres=0.05, v_thres=1.10, confidence=0.90)


@dataclass(frozen=True)
class Outcome:
    verdict: np.ndarray  # per test, at the look it stopped at
    stop: np.ndarray
    look: np.ndarray
    naive: np.ndarray  # (looks, tests): the verdicts at the fixed-n levels at every look
    by_look: np.ndarray  # (looks, tests): the verdicts at the spent levels at every look


def simulate(
    ratio: float,
    noise: float,
    thresholds: Thresholds,
    tests: int = 600,
    paired: bool = True,
    approx: bool = False,
    seed: int = 1,
) -> Outcome:
    """`tests` comparisons measured to LOOKS.last runs: rhs ~ launch x exp(N(0, noise)), lhs =
    ratio x launch x exp(N(0, noise)), the launch factor shared by both sides of a run when
    paired (one launch), drawn for each side otherwise. Every look sees each test's first n
    runs; a test stops at its first look that is not OPEN."""
    rng = np.random.default_rng(seed)
    launch = np.exp(rng.normal(0, 0.2, (tests, LOOKS.last)))
    other = launch if paired else np.exp(rng.normal(0, 0.2, launch.shape))
    rhs = 1e-5 * other * np.exp(rng.normal(0, noise, launch.shape))
    lhs = ratio * 1e-5 * launch * np.exp(rng.normal(0, noise, launch.shape))
    values = np.concatenate([lhs, rhs])
    lhs_rows, rhs_rows = np.arange(tests), np.arange(tests, 2 * tests)
    alternative = "two-sided" if approx else "greater"
    spent = LOOKS.spent(thresholds)
    verdicts, stop_codes, naive = [], [], []
    for look, n in enumerate(LOOKS.runs):
        rows = np.repeat(np.arange(2 * tests), n)
        runs = np.tile(np.arange(n), 2 * tests)
        medians = RunMedians.from_frame(rows, runs, values[:, :n].ravel(), 2 * tests)
        mode = np.full(tests, PAIR_RUNS if paired else NO_PAIRING)
        tail = spent.p_thres / (2 if approx else 1)
        frame = compare(medians, lhs_rows, rhs_rows, alternative, spent.confidence, mode, tail)
        frame["p_adjusted"] = frame["p_value"]
        decide(approx, frame, spent)
        frame["relation"] = "approx" if approx else "le"
        verdicts.append(frame["verdict"].to_numpy())
        stop_codes.append(stops(frame, look, LOOKS, spent))
        tail = thresholds.p_thres / (2 if approx else 1)
        fixed = compare(medians, lhs_rows, rhs_rows, alternative, thresholds.confidence, mode, tail)
        fixed["p_adjusted"] = fixed["p_value"]
        decide(approx, fixed, thresholds)
        naive.append(fixed["verdict"].to_numpy())
    stop_codes_array = np.array(stop_codes)
    at = first_stops(stop_codes_array)
    columns = np.arange(tests)
    by_look = np.array(verdicts)
    return Outcome(
        by_look[at, columns], stop_codes_array[at, columns], at, np.array(naive), by_look
    )


def test_looks_are_min_every_step_and_max():
    assert Looks.planned(5, 30, 5).runs == (5, 10, 15, 20, 25, 30)
    assert Looks.planned(5, 12, 5).runs == (5, 10, 12)
    assert Looks.planned(10, 10, 3).runs == (10,)
    assert Looks.planned(5, 30, 5).reached(np.array([0, 4, 5, 9, 30, 31])).tolist() == [
        -1, -1, 0, 0, 5, 5,
    ]  # fmt: skip


def test_each_look_spends_a_kth_of_both_error_budgets():
    spent = LOOKS.spent(DEFAULTS)
    assert spent.p_thres == pytest.approx(0.001 / 6)
    assert 1 - spent.confidence == pytest.approx(0.05 / 6)
    assert spent.v_thres == DEFAULTS.v_thres


def look_rows(
    verdict, ratio, low, high, runs, test=PAIRED_T, relation="le", looks=LOOKS
) -> pd.DataFrame:
    """Rows of evaluate at a look, with what stops reads (the upper bound at the looks' spent
    confidence)."""
    return pd.DataFrame({
        "relation": relation, TEST_COLUMN: test, "n_lhs": runs, "n_rhs": runs,
        "violation_ratio": ratio, "ratio_low": low, "ratio_high": high, "verdict": verdict,
        "high_level": looks.spent(DEFAULTS).confidence,
    })  # fmt: skip


def test_stop_reasons_at_a_look():
    spent = LOOKS.spent(DEFAULTS)
    rows = look_rows(
        verdict=[VIOLATED, HOLDS, UNDECIDED, UNDECIDED, UNDECIDED],
        # open: a tenth slower, a spread that 30 runs clear; futile: at the threshold, 25
        # runs in and wide; no spread yet (one run): open, nothing to predict from.
        ratio=[2.0, 1.0, 1.10, 1.03, 1.05],
        low=[1.9, 0.99, 0.95, 0.90, np.nan],
        high=[2.1, 1.01, 1.27, 1.18, np.nan],
        runs=[5, 5, 5, 25, 1],
    )
    assert stops(rows, 0, LOOKS, spent).tolist() == [DECIDED, DECIDED, OPEN, FUTILE, OPEN]
    assert stops(rows, 5, LOOKS, spent).tolist() == [
        DECIDED, DECIDED, MAX_RUNS, MAX_RUNS, MAX_RUNS,
    ]  # fmt: skip
    by_look = np.array([[OPEN, DECIDED, OPEN], [DECIDED, OPEN, OPEN], [OPEN, OPEN, MAX_RUNS]])
    assert first_stops(by_look).tolist() == [1, 0, 2]


def test_the_chance_of_a_decision_grows_with_the_distance_from_the_threshold():
    spent = LOOKS.spent(DEFAULTS)
    ratios = np.array([1.03, 1.06, 1.15, 0.95, 0.90])
    rows = look_rows(UNDECIDED, ratios, ratios / 1.05, ratios * 1.05, 10)
    chances = decision_chances(rows, LOOKS, spent)
    assert np.all((chances >= 0) & (chances <= 1))
    assert chances[0] < chances[1] < chances[2] and chances[0] < chances[3] < chances[4]
    # Both sides of an approx relation count: a 0.90 and a 1.11 are as far from 1.
    approx = look_rows(UNDECIDED, [0.90, 1 / 0.90], [0.90 / 1.05, 1 / 0.9 / 1.05],
                       [0.90 * 1.05, 1 / 0.9 * 1.05], 10, relation="approx")  # fmt: skip
    assert decision_chances(approx, LOOKS, spent) == pytest.approx([chances[4]] * 2, rel=0.05)


def test_a_signed_rank_test_that_max_runs_cannot_flag_has_no_chance_of_a_violation():
    # 20 % slower, measured tightly: a paired t-test is all but sure to be violated by 8 runs;
    # a signed-rank test cannot reach p_thres 0.001 below 10 pairs, nor can it hold here
    spent = Looks.planned(2, 8, 2).spent(DEFAULTS)
    rows = look_rows(UNDECIDED, [1.2, 1.2], [1.15, 1.15], [1.25, 1.25], 4,
                     test=[PAIRED_T, BLOCK_SIGNED_RANK], looks=Looks.planned(2, 8, 2))  # fmt: skip
    chances = decision_chances(rows, Looks.planned(2, 8, 2), spent)
    assert chances[0] > 0.9
    assert chances[1] < 1e-3  # only the slim chance of holding is left
    # the looks split p_thres: 10 looks of 2 to 20 runs ask for 2^-n <= 0.0001, 14 runs
    looks = Looks.planned(2, 20, 2)
    assert decision_chances(rows, looks, looks.spent(DEFAULTS))[1] > 0.5


@pytest.mark.parametrize(("ratio", "noise", "seed"), [(1.0, 0.05, 8), (1.08, 0.09, 9)])
def test_a_test_that_max_runs_decide_is_rarely_stopped_as_futile(ratio, noise, seed):
    # Half the tests (no slowdown) or a third (8 % slower, past v_thres 1.03) are decided by
    # some look when every test runs to max; the others are hopeless at max runs.
    outcome = simulate(ratio, noise, DEFAULTS, seed=seed)
    decidable = (outcome.by_look != UNDECIDED).any(axis=0)
    futile = outcome.stop == FUTILE
    assert decidable.mean() > 0.25
    assert (futile & decidable).sum() <= 0.03 * decidable.sum()
    # ... and the futile stop still saves: most hopeless tests stop before max.
    assert (futile & ~decidable).sum() >= 0.5 * (~decidable).sum()


@pytest.mark.parametrize("paired", [True, False])
def test_false_positives_stay_below_p_thres_where_repeated_looks_exceed_it(paired):
    # The least favourable null for `violated`: no slowdown and no margin (v_thres 1).
    levels = Thresholds(LOOSE.p_thres, 1.0, LOOSE.confidence)
    outcome = simulate(1.0, 0.05, levels, paired=paired, seed=2)
    rate = (outcome.verdict == VIOLATED).mean()
    # Repeated looks at the fixed-n level: violated at some look (what spending prevents).
    naive = (outcome.naive == VIOLATED).any(axis=0).mean()
    assert rate <= levels.p_thres
    assert naive > 1.5 * levels.p_thres


@pytest.mark.parametrize(("paired", "approx"), [(True, False), (False, False), (True, True)])
def test_false_all_clears_stay_below_one_minus_confidence(paired, approx):
    # The least favourable truth for `holds`: a slowdown of exactly v_thres.
    outcome = simulate(LOOSE.v_thres, 0.05, LOOSE, paired=paired, approx=approx, seed=3)
    rate = (outcome.verdict == HOLDS).mean()
    naive = (outcome.naive == HOLDS).any(axis=0).mean()
    assert rate <= 1 - LOOSE.confidence
    assert naive > 1 - LOOSE.confidence


def test_a_planted_tenth_is_rarely_called_holds_at_the_defaults():
    outcome = simulate(1.10, 0.05, DEFAULTS, seed=4)
    assert (outcome.verdict == HOLDS).mean() <= 1 - DEFAULTS.confidence
    assert (outcome.verdict == VIOLATED).mean() > 0.5


def test_a_twofold_gap_and_an_even_ratio_are_decided_at_the_first_look():
    gap = simulate(2.0, 0.05, DEFAULTS, tests=500, seed=5)
    assert (gap.verdict == VIOLATED).all()
    # At 5 runs a t-test has 4 degrees of freedom: a rare sample's spread hides even a 2x gap.
    assert (gap.look == 0).mean() >= 0.99
    even = simulate(1.0, 0.005, DEFAULTS, tests=500, seed=6)
    assert (even.verdict == HOLDS).all()
    assert (even.look == 0).all()


def test_a_test_too_noisy_for_max_runs_stops_futile_long_before_it():
    outcome = simulate(1.03, 0.30, DEFAULTS, tests=500, seed=7)
    futile = outcome.stop == FUTILE
    assert futile.mean() > 0.9
    # Never at the first look: at 5 runs the spread itself is too uncertain (4 degrees of
    # freedom) to rule out a decision at 30; mostly at the third.
    assert not (futile & (outcome.look == 0)).any()
    assert np.asarray(LOOKS.runs)[outcome.look].mean() <= 20  # of 30
    assert (outcome.verdict == HOLDS).mean() <= 1 - DEFAULTS.confidence  # truth: v_thres
